/* ordered needs a loop with the ordered clause, and not inside critical. */
int main(void)
{
    int i, x = 0;
#pragma omp parallel for
    for (i = 0; i < 10; i++) {
#pragma omp ordered
        x++;
    }
#pragma omp parallel for ordered
    for (i = 0; i < 10; i++) {
#pragma omp critical
        {
#pragma omp ordered
            x++;
        }
    }
    return x;
}
/* gcc: rejects */
/* expect: nest_ordered.c:7:13: error: '#pragma omp ordered' must be closely nested inside a loop with an 'ordered' clause (add 'ordered' to the '#pragma omp parallel for' of line 5) */
/* expect: nest_ordered.c:14:13: error: '#pragma omp ordered' cannot be closely nested inside the '#pragma omp critical' of line 12: ordered cannot be inside a critical or task region */
