/* The loop of a work-sharing construct must be in canonical form. */
int main(void)
{
    int i, n = 10, s = 0;
#pragma omp parallel for reduction(+:s)
    for (i = 0; i != n; i++)
        s += i;
#pragma omp parallel for reduction(+:s)
    for (i = 0; i < n; i *= 2)
        s += i;
    return s;
}
/* expect: loop_form.c:6:17: error: the test of a '#pragma omp for' loop must compare 'i' with <, <=, > or >= */
/* expect: loop_form.c:9:24: error: the increment of a '#pragma omp for' loop must be i++, i--, i += step, i -= step or i = i +/- step */
