/* extlib.h - extlib.c's functions, compiled without the pass. */
#ifndef EXTLIB_H
#define EXTLIB_H
void ext_fill(double *p, int n, double v);
void ext_copy(double *dst, const double *src, int n, char *tag);
/* pure: the pass leaves calls to it alone */
double ext_sum(const double *p, int n) __attribute__((pure));
void ext_cleanup(int *p);
#endif
