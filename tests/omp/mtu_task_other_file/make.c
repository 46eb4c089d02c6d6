/* creates the tasks for main.c's region (a unit of its own: main.c has
   no task construct) */
#include <omp.h>
#include "make.h"

#define NT 8
static int started_by[NT];
static int first_elsewhere;

static int read_started(int j)
{
    int v;
#pragma omp critical(mtu_other_file)
    v = started_by[j];
    return v;
}

/* Creates NT tasks from the calling thread; after the first, waits (at
   most 2 s, with more than one thread) until another thread started it:
   idle threads must take tasks while their creator is still creating.
   Returns 1 when that happened (or the team is one thread). */
int make_items(int team)
{
    int j, me = omp_get_thread_num();
    for (j = 0; j < NT; j++)
        started_by[j] = 0;
    for (j = 0; j < NT; j++) {
#pragma omp task firstprivate(j)
        {
#pragma omp critical(mtu_other_file)
            started_by[j] = omp_get_thread_num() + 1;
        }
        if (j == 0 && team > 1) {
            double t0 = omp_get_wtime();
            while (!read_started(0) && omp_get_wtime() - t0 < 2.0) {
                double t1 = omp_get_wtime();
                while (omp_get_wtime() - t1 < 0.0005)
                    ; /* (not hammering the critical section) */
            }
            first_elsewhere = read_started(0) && read_started(0) != me + 1;
        }
    }
    return team == 1 || first_elsewhere;
}
