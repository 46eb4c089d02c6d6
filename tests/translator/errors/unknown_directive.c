/* An unknown directive. */
int main(void)
{
#pragma omp frobnicate
    return 0;
}
/* expect: unknown_directive.c:4:13: error: unknown OpenMP directive 'frobnicate' */
