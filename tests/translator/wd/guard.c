/* guard.c - the write-detection pass's guards around calls: a call to a
 * function compiled without the pass (extlib.c) with heap pointers calls
 * OMPDSM_wd_guard with the callee and every pointer argument, and
 * OMPDSM_wd_unguard once with its token; a call to a function of another
 * instrumented module passes a callee that module registered; calls that
 * cannot write, or pass no pointer that may be in the heap, and indirect
 * calls, get no guard.  Built by wd.py at -O0 and -O2, also with
 * -fexceptions (invokes), linked with stores_other.c and wdrt.c. */
#include "extlib.h"
#include "wdrt.h"

#include <stdio.h>
#include <string.h>

void other_put(double *p, double v); /* stores_other.c */

static int failures;

static void check(const char *what, int ok)
{
    if (!ok) {
        printf("FAIL %s (%d guards", what, wdrt_nguards);
        for (int i = 0; i < wdrt_nguards; i++)
            printf("; callee %p, %u pointers, %d unguards", wdrt_guards[i].callee,
                   wdrt_guards[i].n, wdrt_guards[i].unguards);
        printf(")\n");
        failures++;
    } else {
        printf("ok %s\n", what);
    }
}

static int guarded_once(const void *callee, unsigned n)
{
    return wdrt_nguards == 1 && wdrt_guards[0].callee == callee &&
           wdrt_guards[0].n == n && wdrt_guards[0].unguards == 1;
}

static void (*volatile indirect)(double *, int, double) = ext_fill;
static volatile int vn = 16;
static const char *volatile vsrc = "heap"; /* not a constant for strcpy */

/* each block clears the log first (wdrt_begin), calls, then checks */
int main(void)
{
    double *a = wdrt_alloc(8 * 64, 8), *b = wdrt_alloc(8 * 64, 8);
    char *s = wdrt_alloc(64, 8);
    int n = vn;

    check("registered: main, other_put; not ext_fill",
          wdrt_registered((const void *)main) && wdrt_registered((const void *)other_put) &&
              !wdrt_registered((const void *)ext_fill) && wdrt_nregistered == 2);

    wdrt_begin("guard");
    ext_fill(a, n, 2.5);
    check("external function with a heap pointer",
          guarded_once((const void *)ext_fill, 1) && wdrt_guards[0].args[0] == a &&
              a[n - 1] == 2.5);

    wdrt_begin("guard");
    ext_copy(b + 1, a, n, s);
    check("all pointer arguments, in order",
          guarded_once((const void *)ext_copy, 3) && wdrt_guards[0].args[0] == b + 1 &&
              wdrt_guards[0].args[1] == a && wdrt_guards[0].args[2] == s);

    wdrt_begin("guard");
    other_put(b, 1.0);
    check("function of an instrumented module: a registered callee",
          guarded_once((const void *)other_put, 1) &&
              wdrt_registered(wdrt_guards[0].callee));

    wdrt_begin("guard");
    double sum = ext_sum(a, n);
    check("pure function: no guard", wdrt_nguards == 0 && sum == 2.5 * n);

    wdrt_begin("guard");
    strcpy(s, vsrc);
    check("strcpy into the heap", guarded_once((const void *)strcpy, 2));
    wdrt_begin("guard");
    check("strlen: no guard", strlen(s) == 4 && wdrt_nguards == 0);

    wdrt_begin("guard");
    printf("no heap pointer: %d\n", n);
    check("printf without a heap pointer: no guard", wdrt_nguards == 0);

    wdrt_begin("guard");
    printf("a heap string: %s\n", s);
    check("printf with a heap string",
          guarded_once((const void *)printf, 2) && wdrt_guards[0].args[1] == s);

    wdrt_begin("guard");
    indirect(a, n, 1.0);
    check("indirect call: no guard", wdrt_nguards == 0);

    wdrt_begin("guard");
    {
        /* with -fexceptions, a call in the scope of a cleanup is an invoke */
        int tok __attribute__((cleanup(ext_cleanup))) = 0;
        ext_fill(b, n, 3.0);
        (void)tok;
    }
    check("call in a cleanup's scope", guarded_once((const void *)ext_fill, 1));

    printf("%d failed\n", failures);
    return failures ? 1 : 0;
}
