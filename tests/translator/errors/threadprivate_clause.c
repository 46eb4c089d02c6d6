/* A threadprivate variable may appear in copyin and copyprivate only. */
int t;
#pragma omp threadprivate(t)
int main(void)
{
    int i;
#pragma omp parallel private(t)
    t = 1;
#pragma omp parallel for reduction(+:t)
    for (i = 0; i < 4; i++)
        t += i;
#pragma omp parallel copyin(t)
    {
#pragma omp single copyprivate(t)
        t = 2;
    }
    return t;
}
/* gcc: rejects */
/* expect: threadprivate_clause.c:7:30: error: 't' is threadprivate: it may appear in copyin and copyprivate only, not in 'private' */
/* expect: threadprivate_clause.c:9:38: error: 't' is threadprivate: it may appear in copyin and copyprivate only, not in 'reduction' */
