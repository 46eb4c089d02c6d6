/* Work-sharing loops: canonical forms, schedules (profiled too),
 * collapse, lastprivate, ordered, pointer and unsigned loop variables. */
int printf(const char *, ...);

#define N 100
double a[N][N], v[N];

static double sum_rows(int chunk)
{
    int i, j;
    double s = 0.0;
#pragma omp parallel for private(j) reduction(+:s) schedule(dynamic, chunk)
    for (i = 0; i < N; i++)
        for (j = 0; j < N; j++)
            s += a[i][j];
    return s;
}

int main(void)
{
    int i, j, last = -1;
    unsigned u;
    double *p, x = 0.0;

#pragma omp parallel
    {
#pragma omp for collapse(2) schedule(profiled, 4, 2, 1)
        for (i = 0; i < N; i++)
            for (j = N - 1; j >= 0; j -= 1)
                a[i][j] = i + j;
#pragma omp for lastprivate(last) nowait
        for (i = 0; i <= N - 1; i = i + 2)
            last = i;
#pragma omp for schedule(static, 8)
        for (p = v; p < v + N; p++)
            *p = 1.0;
#pragma omp for ordered schedule(guided)
        for (u = N; u > 0; u--) {
#pragma omp ordered
            x += v[u - 1];
        }
    }
#pragma omp parallel for lastprivate(i) schedule(runtime)
    for (i = 0; i < N; i++)
        v[i] = sum_rows(4);
    printf("%d %d %f\n", last, i, x);
    return 0;
}
