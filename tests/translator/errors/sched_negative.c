/* schedule(profiled, chunk, eval_size, eval_skip): a negative constant is
 * an error, also when it comes from a macro. */
#define EVAL (-4)
double a[100];
int main(void)
{
    int i;
#pragma omp parallel for schedule(profiled, -1)
    for (i = 0; i < 100; i++)
        a[i] = i;
#pragma omp parallel for schedule(profiled, 2, EVAL)
    for (i = 0; i < 100; i++)
        a[i] = i;
    return 0;
}
/* expect: sched_negative.c:8:45: error: schedule(profiled) chunk size must not be negative (it is -1) */
/* expect: sched_negative.c:11:48: error: schedule(profiled) eval_size must not be negative (it is -4) */
