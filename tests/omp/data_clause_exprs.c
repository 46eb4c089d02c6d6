/* clause expressions name variables of the enclosing context (issue 36: a
   task's final(expr) naming a variable shared from the enclosing region
   did not compile): final, if and num_threads of nested constructs and
   the chunk of schedule(static, chunk), each with a variable shared from
   the region, private to it, firstprivate in it, a global, a worksharing
   loop's own variable and an enclosing task's firstprivate variable.
   Observable without relying on unspecified behaviour: an if(false) task
   and a task created in a final task are complete when their construct
   ends; an inactive nested region has a team of one; static,c gives
   iteration k to thread (k / c) % T. */
#include <stdio.h>
#include <omp.h>

#define N 48
static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

int g_two = 2, g_chunk = 5;
int owner[4][N];

/* every task created in a final task is included: done at once */
static int included(void)
{
    int x = 0;
#pragma omp task shared(x)
    x = 1;
    return x;
}

/* the body of a final task: adds its included child's result to *fin */
static void final_body(int *fin)
{
    int r = included();
#pragma omp atomic
    *fin += r;
}

int main(void)
{
    int i, n = 0, fin = 0, sh_two = 2, sh_chunk = 3, fp = 4, pv = 0, team = 0;
    int bad = 0, nested_one = 0, nested_bad = 0, loopvar_final = 0;

    /* the program: i is shared from the region */
#pragma omp parallel
#pragma omp single
    for (i = 0; i < 4; i++) {
#pragma omp task final(i >= 2)
        {
#pragma omp atomic
            n++;
        }
    }

#pragma omp parallel firstprivate(fp) private(pv) reduction(+:bad, nested_one, loopvar_final)
    {
        int k, me = omp_get_thread_num();
        pv = me + 1;
#pragma omp master
        team = omp_get_num_threads();
#pragma omp single
        {
            /* (x, y, z, w live on this thread's stack: these tasks run in
               place; the ones that update fin are outlined) */
            int x = 0, y = 0, z = 0, w = 0;
            /* if(false), undeferred: each is done before the next line */
#pragma omp task if(sh_two < 0) shared(x)
            x = 1;
            bad += x != 1;
#pragma omp task if(pv < 0) shared(y)
            y = 2;
            bad += y != 2;
#pragma omp task if(fp > 100) shared(z)
            z = 3;
            bad += z != 3;
#pragma omp task if(g_two == 0) shared(w)
            w = 4;
            bad += w != 4;
            /* final(true) with each kind of variable */
#pragma omp task final(sh_two == 2)
            final_body(&fin);
#pragma omp task final(pv > 0)
            final_body(&fin);
#pragma omp task final(fp == 4)
            final_body(&fin);
#pragma omp task final(g_two > 1)
            final_body(&fin);
            /* an enclosing task's firstprivate in a nested task's final */
#pragma omp task firstprivate(fp)
            {
                int inner = 0;
#pragma omp task final(fp + sh_two == 6) if(fp == 0) shared(inner)
                inner = included();
#pragma omp atomic
                fin += inner;
            }
#pragma omp taskwait
        }
        /* a worksharing loop's own variable in a task's final and if */
#pragma omp for
        for (k = 0; k < N; k++) {
            int got = 0;
#pragma omp task final(k >= 0) if(k < 0) shared(got)
            got = included();
            loopvar_final += got;
        }
        /* nested regions: if(false) gives a team of one; num_threads(e)
           a team of at most e threads (nested may be off) */
#pragma omp parallel if(pv < 0) num_threads(sh_two)
        {
            if (omp_get_num_threads() == 1)
                nested_one++;
        }
#pragma omp parallel num_threads(fp - pv % 2)
        {
            if (omp_get_num_threads() > 4) {
#pragma omp atomic
                nested_bad++;
            }
        }
#pragma omp parallel num_threads(g_two) if(fp == 4)
        {
            if (omp_get_num_threads() > 2) {
#pragma omp atomic
                nested_bad++;
            }
        }
        /* schedule(static, chunk) with the chunk of each kind */
#pragma omp for schedule(static, sh_chunk)
        for (k = 0; k < N; k++)
            owner[0][k] = me;
#pragma omp for schedule(static, pv - me + 1)
        for (k = 0; k < N; k++)
            owner[1][k] = me;
#pragma omp for schedule(static, fp)
        for (k = 0; k < N; k++)
            owner[2][k] = me;
#pragma omp for schedule(static, g_chunk)
        for (k = 0; k < N; k++)
            owner[3][k] = me;
    }
    for (i = 0; i < N; i++) {
        bad += owner[0][i] != (i / 3) % team;
        bad += owner[1][i] != (i / 2) % team;
        bad += owner[2][i] != (i / 4) % team;
        bad += owner[3][i] != (i / 5) % team;
    }
    CHECK(n == 4, "tasks with final(shared i)");
    CHECK(bad == 0, "if(false) tasks and static chunks");
    CHECK(fin == 5, "final(true) tasks include their children");
    CHECK(loopvar_final == N, "final(loop variable)");
    CHECK(nested_one == team, "if(false) nested region");
    CHECK(nested_bad == 0, "num_threads(e) nested region");
    printf("n %d fin %d loop %d bad %d %d\n", n, fin, loopvar_final, bad,
           nested_bad);
    printf("data_clause_exprs: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
