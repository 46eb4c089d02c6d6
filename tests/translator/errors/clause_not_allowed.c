/* A clause the directive does not take. */
int main(void)
{
#pragma omp parallel nowait
    ;
    return 0;
}
/* expect: clause_not_allowed.c:4:22: error: clause 'nowait' is not valid on '#pragma omp parallel' */
