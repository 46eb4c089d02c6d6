/* wdrt.h - the write-detection tests' stand-in for libompdsm (wdrt.c): a
 * fake shared heap at a fixed address with its shadow map and page bytes,
 * the OMPDSM_wd_* globals and functions that ompcc's pass (ompdsm-wd.so)
 * calls, recording those calls, and the check of one test case: every heap
 * byte whose value changed is marked, no byte is marked that the case did
 * not say it stores, every marked byte's page byte is set.
 * wdrt.c is compiled without the pass (it is the runtime). */
#ifndef WDRT_H
#define WDRT_H

#include <stddef.h>

#define WDRT_HEAP_BASE 0x3e0000000000UL
#define WDRT_HEAP_SIZE (16UL << 20)
/* small pages, so that stores straddle page boundaries in a few KiB */
#define WDRT_PAGE_SHIFT 12

/* One call of OMPDSM_wd_guard. */
struct wdrt_guard {
    const void *callee;
    unsigned n;
    const void *args[8];
    unsigned long tok;  /* what it returned */
    int unguards;       /* OMPDSM_wd_unguard calls with tok */
};

extern unsigned long wdrt_marks;        /* OMPDSM_wd_mark calls */
extern struct wdrt_guard wdrt_guards[64];
extern int wdrt_nguards;
extern unsigned long wdrt_strided;       /* OMPDSM_wd_mark_strided calls */
extern int wdrt_nregistered;            /* OMPDSM_wd_register calls */

/* n bytes aligned to align in the heap, filled with 0xA5. */
void *wdrt_alloc(size_t n, size_t align);
/* Starts a case: snapshots the heap, clears marks, page bytes, logs and
 * the expected ranges. */
void wdrt_begin(const char *name);
/* The case stores (or may store) bytes [p, p + len). */
void wdrt_expect(const void *p, size_t len);
/* Checks the case; prints one FAIL line per kind of error (with the first
 * offending offset) or one ok line; returns the number of errors.  Flags:
 * WDRT_CHANGES: the case's stores change at least one byte (a case that
 * stores nothing cannot pass by accident); WDRT_OFF: marking was off, so
 * nothing may be marked, no mark or guard called, whatever changed;
 * WDRT_GUARDED: what changed was written under a guard (the runtime, not
 * the marks, finds it). */
enum { WDRT_CHANGES = 1, WDRT_OFF = 2, WDRT_GUARDED = 4 };
int wdrt_end(int flags);
/* Marking off (OMPDSM_wd_size = 0) or on. */
void wdrt_off(int off);
/* Whether some module registered fn (OMPDSM_wd_register). */
int wdrt_registered(const void *fn);
/* Prints the summary; the exit status. */
int wdrt_finish(void);

#endif
