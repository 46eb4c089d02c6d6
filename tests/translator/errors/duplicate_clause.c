/* A variable in two data-sharing clauses; a clause given twice. */
int main(void)
{
    int a = 0, i;
#pragma omp parallel private(a) shared(a)
    a++;
#pragma omp parallel for schedule(static) schedule(dynamic)
    for (i = 0; i < 4; i++)
        a++;
    return a;
}
/* expect: duplicate_clause.c:5:40: error: variable 'a' appears in both 'private' and 'shared' */
/* expect: duplicate_clause.c:7:43: error: more than one 'schedule' clause */
