/* global structs (nested, with arrays, initialised with designated and
   positional initialisers), unions, and an array of structs: read and
   updated in parallel. */
#include <stdio.h>
#include <omp.h>

#define NP 64
static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

struct vec { double x, y, z; };
struct body { int id; struct vec pos; struct vec vel; char kind; };
union word { unsigned u; float f; unsigned char b[4]; };
struct config { int n; double dt; struct vec g; int flags[4]; };

struct config cfg = {NP, 0.5, {0.0, -1.0, 0.0}, {1, 0, 1, 0}};
struct config cfg2 = {.dt = 0.25, .flags = {[2] = 7}, .n = 3};
union word wu = {0x3f800000u};       /* first member initialised */
union word wz;
struct body bodies[NP];
static struct body origin = {0, {0, 0, 0}, {1, 2, 3}, 'o'};

int main(void)
{
    int i, bad = 0;
#pragma omp parallel for
    for (i = 0; i < cfg.n; i++) {
        bodies[i].id = i;
        bodies[i].pos.x = i;
        bodies[i].pos.y = 2 * i;
        bodies[i].pos.z = origin.vel.z;
        bodies[i].vel = origin.vel;
        bodies[i].kind = (i % 2) ? 'a' : 'b';
    }
    /* one step: every body moves by vel*dt + g*dt, using read-only globals */
#pragma omp parallel for reduction(+:bad)
    for (i = 0; i < NP; i++) {
        struct body *b = &bodies[NP - 1 - i];
        b->pos.x += b->vel.x * cfg.dt + cfg.g.x * cfg.dt;
        b->pos.y += b->vel.y * cfg.dt + cfg.g.y * cfg.dt;
        b->pos.z += b->vel.z * cfg.dt + cfg.g.z * cfg.dt;
        if (cfg2.n != 3 || cfg2.dt != 0.25 || cfg2.flags[2] != 7 ||
            cfg2.flags[1] != 0 || wu.f != 1.0f || wz.u != 0)
            bad++;
    }
#pragma omp parallel
    {
#pragma omp single
        wz.b[0] = 1;
#pragma omp atomic
        cfg.flags[3] += 1;
    }
    double sx = 0, sy = 0, sz = 0;
    int na = 0;
    for (i = 0; i < NP; i++) {
        sx += bodies[i].pos.x;
        sy += bodies[i].pos.y;
        sz += bodies[i].pos.z;
        na += bodies[i].kind == 'a';
        CHECK(bodies[i].id == i, "id");
    }
    int team = 0;
#pragma omp parallel
#pragma omp master
    team = omp_get_num_threads();
    CHECK(bad == 0, "initialised struct/union values");
    CHECK(sx == NP * (NP - 1) / 2.0 + NP * 0.5, "x");
    CHECK(sy == NP * (NP - 1) + NP * 0.5, "y");
    CHECK(sz == NP * 4.5, "z");
    CHECK(na == NP / 2, "kind");
    CHECK(wz.u == 1u || wz.u == 1u << 24, "union byte write");
    CHECK(cfg.flags[3] == team, "struct array member");
    printf("sx %.1f sy %.1f sz %.1f na %d\n", sx, sy, sz, na);
    printf("global_struct_union: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
