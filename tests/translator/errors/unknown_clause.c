/* An unknown clause. */
int main(void)
{
    int s = 0;
#pragma omp parallel frobnicate(s)
    s++;
    return s;
}
/* expect: unknown_clause.c:5:22: error: unknown OpenMP clause 'frobnicate' */
