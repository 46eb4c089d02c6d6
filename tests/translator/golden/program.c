/* Old-style C (implicit int, K&R main, implicit declarations), malloc &
 * co. and system calls routed to the runtime, a user function named like a
 * library one, ignored directives. */
typedef unsigned long size_t;
void *malloc(size_t);
void *calloc(size_t, size_t);
void free(void *);
char *strdup(const char *);
long read(int, void *, size_t);
int printf(const char *, ...);

static int release(void *p)      /* the program's own, not the library's */
{
    return p != 0;
}

static counts[8];                /* implicit int */

main(argc, argv)
    int argc;
    char **argv;
{
    int i, n = argc * 8;
    double *buf = malloc(n * sizeof *buf);
    char *name = strdup(argv[0]);
    int *z = calloc(4, sizeof(int));
    read(0, buf, 0);
#pragma omp parallel for simd
    for (i = 0; i < n; i++)
        buf[i] = counts[i % 8] + z[i % 4];
#pragma omp taskyield
    report(name, buf[0]);        /* implicitly declared */
    free(buf);
    free(z);
    return release(name) - 1;
}
