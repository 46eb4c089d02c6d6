/* A critical section inside one of the same name waits for itself. */
int main(void)
{
    int x = 0;
#pragma omp parallel
    {
#pragma omp critical(a)
        {
            if (x < 10) {
#pragma omp critical(a)
                x++;
            }
        }
#pragma omp critical
        {
#pragma omp critical
            x++;
        }
    }
    return x;
}
/* gcc: rejects */
/* expect: critical_same_name.c:10:13: error: '#pragma omp critical(a)' cannot be nested inside the critical section of the same name of line 7 (it would wait for itself) */
/* expect: critical_same_name.c:16:13: error: '#pragma omp critical' cannot be nested inside the critical section of the same name of line 14 (it would wait for itself) */
