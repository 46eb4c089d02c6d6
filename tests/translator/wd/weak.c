/* weak.c - a program built with the write-detection pass and linked with
 * no runtime that defines the OMPDSM_wd_* symbols (an older libompdsm):
 * the pass's references are weak, so it links and runs as it would
 * without the pass (wd.py checks its output). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static volatile int vn = 100;

int main(void)
{
    int n = vn;
    double *a = malloc(sizeof *a * (size_t)n);
    char *s = malloc(64);
    long *x = malloc(sizeof *x);
    if (!a || !s || !x)
        return 2;
    for (int i = 0; i < n; i++)
        a[i] = i * 0.5;
    memset(s, 0, 64);
    snprintf(s, 64, "sum %g", a[n - 1] + a[1]);
    *x = 1;
    __atomic_fetch_add(x, 41, __ATOMIC_SEQ_CST);
    printf("%s %ld\n", s, *x);
    return 0;
}
