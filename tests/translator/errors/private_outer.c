/* A work-sharing construct's reduction, firstprivate and lastprivate name
 * the variable of the parallel region, which must be shared there. */
int main(void)
{
    int i, s = 0, f = 1, l = 0;
#pragma omp parallel private(s)
    {
        int mine = 0;
        s = 0;
#pragma omp for reduction(+:s)
        for (i = 0; i < 10; i++)
            s += i;
#pragma omp for firstprivate(mine)
        for (i = 0; i < 10; i++)
            mine += i;
    }
#pragma omp parallel firstprivate(f, l)
    {
#pragma omp sections lastprivate(l)
        {
            l = f;
        }
    }
    return s + l;
}
/* gcc: rejects */
/* expect: private_outer.c:10:29: error: 's' in 'reduction' must be shared in the enclosing parallel region, but it is private in the '#pragma omp parallel' of line 6 */
/* expect: private_outer.c:13:30: error: 'mine' in 'firstprivate' must be shared in the enclosing parallel region, but it is private in the '#pragma omp parallel' of line 6 */
/* expect: private_outer.c:19:34: error: 'l' in 'lastprivate' must be shared in the enclosing parallel region, but it is private in the '#pragma omp parallel' of line 17 */
