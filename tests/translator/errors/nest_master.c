/* master closely nested in a loop region. */
int main(void)
{
    int i, x = 0;
#pragma omp parallel for
    for (i = 0; i < 10; i++) {
#pragma omp master
        x++;
    }
    return x;
}
/* gcc: rejects */
/* expect: nest_master.c:7:13: error: '#pragma omp master' cannot be closely nested inside the '#pragma omp parallel for' of line 5: master cannot be inside a work-sharing or task region */
