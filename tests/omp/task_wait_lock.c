/* taskwait runs only descendants of the waiting task: a task T holds a
   lock across its taskwait while an unrelated task U that takes the same
   lock is queued.  Were U run inside T's taskwait, it would wait forever
   for the lock its own thread holds; so U checks first whether its thread
   is inside T's taskwait, counts that as a violation and skips the lock.

   Each round, in a single: the creating thread makes T and waits (at most
   1 s) until another thread started it.  T takes the lock, creates C and
   waits (with three threads or more, at most 0.5 s) until U exists.  C,
   when another thread took it, waits (at most 2 s) until T has entered
   taskwait.  Once C started (at most 0.5 s), the creating thread makes U
   and waits (at most 2 s) for the end of T, so it does not run U itself.
   T's taskwait then has nothing of its own to run, and U is queued;
   rounds repeat, as other idle threads may take U first (they then wait
   for the lock until T is done) or T may run C itself.  With one or two
   threads the program checks only that everything ran: there is no
   third thread to take C.  With taskwait running any task it failed on 4
   and 8 nodes over shm. */
#include <stdio.h>
#include <omp.h>

#define ROUNDS 12
static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

static omp_lock_t lock;
static int in_wait;   /* this thread is inside T's taskwait */
#pragma omp threadprivate(in_wait)
static int t_started, c_started, u_made, t_waiting, round_done;
static int violations, u_ran, c_ran, t_ran;

static int read_flag(int *f)
{
    int v;
#pragma omp critical(task_wait_lock_flag)
    v = *f;
    return v;
}

static void set_flag(int *f)
{
#pragma omp critical(task_wait_lock_flag)
    *f = 1;
}

/* Waits until *f is set or limit seconds passed (not hammering the
   critical section the setter needs). */
static void wait_flag(int *f, double limit)
{
    double t0 = omp_get_wtime();
    while (!read_flag(f) && omp_get_wtime() - t0 < limit) {
        double t1 = omp_get_wtime();
        while (omp_get_wtime() - t1 < 0.0005)
            ;
    }
}

int main(void)
{
    int r;
    omp_init_lock(&lock);
#pragma omp parallel private(r)
    for (r = 0; r < ROUNDS; r++) {
#pragma omp single
        {
            int team = omp_get_num_threads();
            t_started = c_started = u_made = t_waiting = round_done = 0;
#pragma omp task
            {
                omp_set_lock(&lock);
#pragma omp task
                {
                    if (team > 2) {
                        set_flag(&c_started);
                        wait_flag(&t_waiting, 2.0);
                    }
#pragma omp atomic
                    c_ran++;
                }
                set_flag(&t_started);
                if (team > 2)
                    wait_flag(&u_made, 0.5);
                set_flag(&t_waiting);
                in_wait = 1;
#pragma omp taskwait
                in_wait = 0;
                t_ran++;
                omp_unset_lock(&lock);
                set_flag(&round_done);
            }
            if (team > 1)
                wait_flag(&t_started, 1.0);
            if (team > 2)
                wait_flag(&c_started, 0.5);
#pragma omp task
            {
                if (in_wait) {
#pragma omp atomic
                    violations++;
                } else {
                    omp_set_lock(&lock);
                    u_ran++;
                    omp_unset_lock(&lock);
                }
            }
            set_flag(&u_made);
            if (team > 1)
                wait_flag(&round_done, 2.0);
        }
        /* the single's barrier completes every task of the round */
    }
    omp_destroy_lock(&lock);
    CHECK(violations == 0, "no unrelated task ran inside a taskwait");
    CHECK(u_ran + violations == ROUNDS, "every U ran");
    CHECK(c_ran == ROUNDS && t_ran == ROUNDS, "every T and C ran");
    printf("violations %d, u %d, t %d, c %d\n", violations, u_ran, t_ran, c_ran);
    printf("task_wait_lock: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
