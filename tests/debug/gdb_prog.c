/* tests/debug/gdb_prog.c - debugged by gdb_test.py: a shared local, a
 * shared global and a function static, read by the user's names. */
#include <stdio.h>

int g = 5;

static int count(int n)
{
    static int calls;
    int s = 0;
    int i;
#pragma omp parallel for reduction(+ : s)
    for (i = 0; i < n; i++)
        s += i;
    calls++;
    g = g + s; /* BREAK_MAIN */
#pragma omp parallel shared(s)
    {
#pragma omp master
        s = s + calls; /* BREAK_REGION */
    }
    return s; /* AFTER_REGION */
}

int main(void)
{
    int r = count(10);
    printf("%d %d\n", r, g);
    return 0;
}
