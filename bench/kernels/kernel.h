/* bench/kernels/kernel.h - what every NPB-style kernel here shares: the
 * problem class chosen at compile time (-DCLASS=S|W|A|B|C) and the
 * schedule report.  Included by ep.c, cg.c, is.c, mg.c and himeno.c
 * (himeno has sizes, not classes, and uses only STR and the report). */
#ifndef BENCH_KERNEL_H
#define BENCH_KERNEL_H

#include <stdio.h>
#include <stdlib.h>
#include <omp.h>

/* Without OMP_SCHEDULE, "schedule(runtime)" follows an implementation
 * default (libgomp: dynamic with chunk 1, ruinous for loops with millions of
 * tiny iterations); pin it to static so runs without the variable are
 * comparable.  Returns the schedule in force, for the report. */
__attribute__((unused)) static const char *schedule_in_use(void)
{
    static char buf[48];
    const char *name;
    omp_sched_t kind;
    int chunk;
    if (getenv("OMP_SCHEDULE") == NULL)
        omp_set_schedule(omp_sched_static, 0);
    omp_get_schedule(&kind, &chunk);
    switch (kind) {
    case omp_sched_static: name = "static"; break;
    case omp_sched_dynamic: name = "dynamic"; break;
    case omp_sched_guided: name = "guided"; break;
    case omp_sched_auto: name = "auto"; break;
    default: name = "implementation-defined"; break;
    }
    snprintf(buf, sizeof buf, "%s,%d", name, chunk);
    return buf;
}

#ifndef CLASS
#define CLASS S
#endif
#define CLASS_ID_S 1
#define CLASS_ID_W 2
#define CLASS_ID_A 3
#define CLASS_ID_B 4
#define CLASS_ID_C 5
#define CLASS_ID_(c) CLASS_ID_##c
#define CLASS_ID(c) CLASS_ID_(c)
#define STR_(x) #x
#define STR(x) STR_(x)

#endif
