/* nested parallel regions with more than one thread (omp_set_nested(1),
   num_threads(3) inside a team of N): every inner team has exactly 3
   threads, each inner thread number once; levels, active levels, ancestor
   thread numbers and team sizes at every level; work-sharing inside the
   inner teams (static, dynamic, guided and ordered loops, sections, single
   with copyprivate, barrier phases, master, critical, atomic, a lock, a
   reduction clause on the nested region, tasks, threadprivate with copyin);
   a third level of 2 threads; max-active-levels 1 and if(0) giving teams of
   one (no active level left, if(0)); what inner threads wrote to a global array is seen by the outer
   team after its barrier (on other nodes too).  Failed before
   runtime/nest.c, when every inner team had one thread. */
#include <stdio.h>
#include <omp.h>

#define MAXT 64
#define IN 3
#define NIT 100
static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

static int seen[MAXT][IN];          /* inner thread numbers that ran */
static int grid[MAXT][IN][NIT];     /* written by inner threads */
static int third[MAXT][IN][2];      /* level-3 threads that ran */
static int tp;
#pragma omp threadprivate(tp)

/* the inner region's checks for outer thread otid of a team of oteam;
   returns the failures */
static int inner(int otid, int oteam)
{
    int bad = 0, sum = 0, red = 0, crit = 0, atom = 0, locked = 0;
    int order[NIT], norder = 0, sect[3] = {0, 0, 0}, cp = -1, phase[IN];
    int tasks = 0;
    omp_lock_t lk;
    omp_init_lock(&lk);
    tp = 10 * otid + 1;
#pragma omp parallel num_threads(IN) reduction(+:red) copyin(tp) \
        shared(bad, sum, crit, atom, locked, order, norder, sect, cp, phase, tasks)
    {
        int it = omp_get_thread_num(), n = omp_get_num_threads(), i;
        int act = (oteam > 1) + 1, x;
        if (n != IN || it < 0 || it >= IN) {
#pragma omp atomic
            bad++;
        } else {
#pragma omp atomic
            seen[otid][it]++;
        }
        if (omp_get_level() != 2 || omp_get_active_level() != act ||
            omp_get_ancestor_thread_num(0) != 0 ||
            omp_get_ancestor_thread_num(1) != otid ||
            omp_get_ancestor_thread_num(2) != it ||
            omp_get_ancestor_thread_num(3) != -1 ||
            omp_get_team_size(0) != 1 || omp_get_team_size(1) != oteam ||
            omp_get_team_size(2) != IN || !omp_in_parallel()) {
#pragma omp atomic
            bad++;
        }
        if (tp != 10 * otid + 1) {  /* copyin from the encountering thread */
#pragma omp atomic
            bad++;
        }
        red += it + 1;
#pragma omp for schedule(static) reduction(+:sum)
        for (i = 0; i < NIT; i++)
            sum += i;
#pragma omp for schedule(dynamic, 3)
        for (i = 0; i < NIT; i++)
            grid[otid][i % IN][i] = 1000 * otid + i;
#pragma omp for schedule(guided, 2) reduction(+:sum)
        for (i = 0; i < NIT; i++)
            sum += i;
#pragma omp for schedule(dynamic) ordered
        for (i = 0; i < NIT; i++) {
#pragma omp ordered
            order[norder++] = i;
        }
#pragma omp sections
        {
#pragma omp section
            sect[0] += 1;
#pragma omp section
            sect[1] += 2;
#pragma omp section
            sect[2] += 3;
        }
#pragma omp single copyprivate(x)
        x = 7 * otid + 5;
        if (x != 7 * otid + 5) {
#pragma omp atomic
            bad++;
        }
        phase[it] = it * it;
#pragma omp barrier
        for (i = 0; i < IN; i++)
            if (phase[i] != i * i) {
#pragma omp atomic
                bad++;
            }
#pragma omp barrier
#pragma omp master
        cp = it;
#pragma omp critical
        crit++;
#pragma omp atomic
        atom += 2;
        omp_set_lock(&lk);
        locked += 3;
        omp_unset_lock(&lk);
#pragma omp task
        {
#pragma omp atomic
            tasks++;
        }
#pragma omp taskwait
        /* a third level */
#pragma omp parallel num_threads(2)
        {
            int t3 = omp_get_thread_num();
            if (omp_get_num_threads() != 2 || omp_get_level() != 3 ||
                omp_get_active_level() != act + 1 ||
                omp_get_ancestor_thread_num(1) != otid ||
                omp_get_ancestor_thread_num(2) != it ||
                omp_get_ancestor_thread_num(3) != t3 ||
                omp_get_team_size(3) != 2 || omp_get_team_size(2) != IN) {
#pragma omp atomic
                bad++;
            }
#pragma omp atomic
            third[otid][it][t3 & 1]++;
        }
    }
    omp_destroy_lock(&lk);
    bad += red != 1 + 2 + 3;
    bad += sum != 2 * (NIT * (NIT - 1) / 2);
    bad += crit != IN || atom != 2 * IN || locked != 3 * IN || tasks != IN;
    bad += cp != 0;
    bad += sect[0] != 1 || sect[1] != 2 || sect[2] != 3;
    bad += norder != NIT;
    for (int i = 0; i < norder && i < NIT; i++)
        bad += order[i] != i;
    for (int i = 0; i < IN; i++)
        bad += seen[otid][i] != 1 || third[otid][i][0] != 1 ||
               third[otid][i][1] != 1;
    return bad;
}

int main(void)
{
    int bad = 0, oteam = 0, ones = 0, gbad = 0;
    omp_set_dynamic(0);
    omp_set_nested(1);
    CHECK(omp_get_nested() == 1, "omp_get_nested after omp_set_nested(1)");
#pragma omp parallel reduction(+:bad)
    {
        int otid = omp_get_thread_num(), n = omp_get_num_threads();
#pragma omp master
        oteam = n;
        if (otid < MAXT)
            bad += inner(otid, n);
        /* no active level left: a team of one (the ICV is changed by the
           master alone, between barriers) */
#pragma omp barrier
#pragma omp master
        {
            omp_set_max_active_levels(omp_get_active_level());
#pragma omp parallel num_threads(IN)
            ones += omp_get_num_threads() == 1;
            omp_set_max_active_levels(8);
        }
#pragma omp barrier
#pragma omp parallel num_threads(IN) if(0)
        {
#pragma omp atomic
            ones += omp_get_num_threads() == 1 && omp_get_level() == 2;
        }
    }
    /* the inner teams' writes, read after the outer team's end by node 0 */
    for (int t = 0; t < oteam && t < MAXT; t++)
        for (int i = 0; i < NIT; i++)
            gbad += grid[t][i % IN][i] != 1000 * t + i;
    CHECK(bad == 0, "inner team checks");
    CHECK(gbad == 0, "inner teams' writes seen after the outer region");
    CHECK(ones == 1 + oteam, "teams of one with no active level left and with if(0)");
    CHECK(omp_get_level() == 0 && omp_get_active_level() == 0,
          "levels in serial code");
    printf("outer team %d, inner teams of %d\n", oteam, IN);
    printf("nested_teams: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
