/* firstprivate on structs: nested structs, arrays inside structs, a union
   member and a pointer member (copied shallowly: it still points to the
   shared original); also an array of structs. */
#include <stdio.h>
#include <omp.h>

static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

struct inner { short a; double b[2]; };
union num { long l; double d; };
struct outer {
    int id;
    struct inner in;
    union num u;
    char tag[5];
    int *ptr;
};

int main(void)
{
    int shared_val = 64, bad = 0;
    struct outer o = {7, {3, {0.5, 0.25}}, {0}, "abcd", &shared_val};
    struct inner arr[3] = {{1, {1, 1}}, {2, {2, 2}}, {3, {3, 3}}};
    o.u.d = 6.125;
#pragma omp parallel firstprivate(o, arr) reduction(+:bad)
    {
        int me = omp_get_thread_num();
        if (o.id != 7 || o.in.a != 3 || o.in.b[0] != 0.5 || o.in.b[1] != 0.25 ||
            o.u.d != 6.125 || o.tag[3] != 'd' || o.tag[4] != 0 ||
            o.ptr != &shared_val || *o.ptr != 64)
            bad++;
        if (arr[0].a != 1 || arr[2].b[1] != 3)
            bad++;
        o.id = me;
        o.in.b[1] = me;
        o.u.l = me;
        arr[2].a = (short)me;
#pragma omp barrier
        if (o.id != me || o.in.b[1] != me || o.u.l != me || arr[2].a != me)
            bad++;
    }
    CHECK(bad == 0, "struct copies");
    CHECK(o.id == 7 && o.in.b[1] == 0.25 && o.u.d == 6.125 && arr[2].a == 3,
          "originals modified");
    printf("id %d b %.2f u %.3f tag %s ptr-> %d\n", o.id, o.in.b[1], o.u.d,
           o.tag, *o.ptr);
    printf("data_firstprivate_struct: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
