/* Data sharing of a parallel region: read-only scalars by value, written
 * locals in the shared heap, firstprivate through the frame, reductions,
 * copyin, a local of a type declared in the function, a nested region. */
int printf(const char *, ...);
int omp_get_thread_num(void);

double results[64];
int tp;
#pragma omp threadprivate(tp)

static void scale(double *v, int n, double f)
{
    int i;
#pragma omp parallel for
    for (i = 0; i < n; i++)
        v[i] *= f;
}

int main(int argc, char **argv)
{
    int n = 64, i, total = 0, nt = argc + 1;
    double base = 1.5, sum = 0.0;
    int hist[4] = {0};
    struct { int a; double b; } cfg = {3, 0.5};

    tp = 7;
#pragma omp parallel num_threads(nt) if(n > 8) firstprivate(base) \
        reduction(+:sum) private(i) copyin(tp)
    {
        for (i = 0; i < n; i++)
            sum += base * i + tp;
#pragma omp critical
        {
            total++;
            hist[total % 4]++;
        }
    }
#pragma omp parallel shared(cfg)
    {
#pragma omp single
        cfg.a++;
#pragma omp parallel
        results[omp_get_thread_num()] = cfg.b;
    }
    scale(results, n, base);
    printf("%s %f %d %d %d\n", argv[0], sum, total, hist[0], cfg.a);
    return 0;
}
