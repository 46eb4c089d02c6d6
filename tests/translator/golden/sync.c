/* sections, single with copyprivate, master, named critical, barrier,
 * flush with a list, atomic forms, tasks, an orphaned loop. */
int printf(const char *, ...);
int omp_get_thread_num(void);

int counter;
long flags[4];

static void orphan(int n)
{
    int i;
#pragma omp for nowait
    for (i = 0; i < n; i++)
        flags[i % 4] += i;
#pragma omp barrier
}

static int fib(int n)
{
    int x, y;
    if (n < 2)
        return n;
#pragma omp task shared(x)
    x = fib(n - 1);
#pragma omp task shared(y)
    y = fib(n - 2);
#pragma omp taskwait
    return x + y;
}

int main(void)
{
    int a = 0, b = 0, seed, f = 0;
    double d = 1.0;
    short s = 0;

#pragma omp parallel private(seed)
    {
#pragma omp sections reduction(+:a) lastprivate(b)
        {
#pragma omp section
            a += 1;
#pragma omp section
            {
                a += 2;
                b = 5;
            }
        }
#pragma omp single copyprivate(seed)
        seed = 42;
#pragma omp master
        counter = seed;
#pragma omp critical(update)
        counter++;
#pragma omp flush(counter, flags)
#pragma omp atomic
        d *= 1.5;
#pragma omp atomic
        s++;
#pragma omp atomic
        counter = counter - 3;
#pragma omp atomic
        counter = 2 | counter;
        orphan(16);
#pragma omp single nowait
        f = fib(10);
    }
    printf("%d %d %d %f %d %d\n", a, b, counter, d, s, f);
    return 0;
}
