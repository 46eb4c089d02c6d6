/* An unknown schedule kind. */
double a[100];
int main(void)
{
    int i;
#pragma omp parallel for schedule(foo)
    for (i = 0; i < 100; i++)
        a[i] = i;
    return 0;
}
/* expect: sched_unknown.c:6:35: error: unknown schedule kind 'foo' (expected static, dynamic, guided, runtime, auto or profiled) */
