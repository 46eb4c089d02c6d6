/* OpenMP 4 offloading would change the program's meaning: an error. */
int a[10];
int main(void)
{
    int i;
#pragma omp target teams distribute parallel for
    for (i = 0; i < 10; i++)
        a[i] = i;
    return 0;
}
/* expect: unsupported_directive.c:6:13: error: unsupported OpenMP directive 'target teams' */
