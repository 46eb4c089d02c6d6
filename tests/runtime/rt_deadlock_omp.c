/* rt_deadlock_omp.c - deadlocks in an OpenMP program built by ompcc, for
 * deadlock_test.py's `translated` case on two nodes of one thread: the
 * report names each lock by the argument written at its call, and a
 * named critical section by its name, with the lines marked @NAME.
 *   locks     thread 0 holds locks[3] and wants locks[2]; thread 1 holds
 *             locks[2] and wants locks[3] (the second as a nestable lock)
 *   critical  thread 0 holds critical(update) while it spins on a flag
 *             nobody sets; thread 1 waits to enter the section
 *   nested    as locks, after a nested region of 2 threads on each node:
 *             the nested team's idle pool thread must not hide the
 *             deadlock (it counts as waiting) */
#include <omp.h>
#include <stdio.h>
#include <string.h>

omp_lock_t locks[4];
omp_nest_lock_t nest;
int counter, go;

int main(int argc, char **argv)
{
    int crit = argc > 1 && !strcmp(argv[1], "critical");
    int nested = argc > 1 && !strcmp(argv[1], "nested");
    for (int i = 0; i < 4; i++)
        omp_init_lock(&locks[i]);
    omp_init_nest_lock(&nest);
#pragma omp parallel
    {
        int me = omp_get_thread_num();
        if (crit) {
            if (me == 0) {
#pragma omp critical(update)
                {
                    counter++;
                    while (!go) {
#pragma omp flush(go)
                    }
                }
            } else {
                volatile long spin = 0;
                while (spin < 20000000) /* let thread 0 enter first */
                    spin++;
#pragma omp critical(update)
                counter++; /* @CRIT1 */
            }
        } else {
            if (nested) {
                omp_set_nested(1);
#pragma omp parallel num_threads(2)
                {
#pragma omp atomic
                    counter++;
                }
            }
            if (me == 0)
                omp_set_lock(&locks[3]);
            else
                omp_set_nest_lock(&nest);
#pragma omp barrier
            if (me == 0)
                omp_set_nest_lock(&nest); /* @OMP_LOCK0 */
            else
                omp_set_lock( &locks[3] ); /* @OMP_LOCK1 */
        }
    }
    printf("finished\n");
    return 0;
}
