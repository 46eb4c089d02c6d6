/* A directive with a block at the end of a compound statement. */
int main(void)
{
    int x = 0;
    x++;
#pragma omp critical
}
/* expect: no_statement.c:6:13: error: '#pragma omp critical' must be followed by a statement */
