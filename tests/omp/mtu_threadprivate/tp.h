/* a threadprivate variable declared in several translation units: the
   threadprivate directive is repeated in every unit (OpenMP 3.0 2.9.2) */
#ifndef MTU_TP_H
#define MTU_TP_H
extern int tp_count;
extern double tp_acc[2];
#pragma omp threadprivate(tp_count, tp_acc)

void tp_bump(int by);
int tp_get(void);
#endif
