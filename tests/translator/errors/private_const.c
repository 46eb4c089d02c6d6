/* A const variable may be shared or firstprivate only. */
int main(void)
{
    const int c = 3;
    int i, x = 0;
#pragma omp parallel private(c)
    x = 1;
#pragma omp parallel for lastprivate(c)
    for (i = 0; i < 3; i++)
        x++;
#pragma omp parallel firstprivate(c)
    x += c;
    return x + c;
}
/* gcc: rejects */
/* expect: private_const.c:6:30: error: 'c' is const: it may appear in shared and firstprivate only, not in 'private' */
/* expect: private_const.c:8:38: error: 'c' is const: it may appear in shared and firstprivate only, not in 'lastprivate' */
