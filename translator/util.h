/* util.h - growable strings and arrays, allocation that cannot fail, and
 * the translator's diagnostics (file:line:col: error: ...). */
#ifndef OMPCC_UTIL_H
#define OMPCC_UTIL_H

#include <stdarg.h>
#include <stddef.h>

#if defined(__GNUC__)
#define OMPCC_PRINTF(a, b) __attribute__((format(printf, a, b)))
#define OMPCC_NORETURN __attribute__((noreturn))
#else
#define OMPCC_PRINTF(a, b)
#define OMPCC_NORETURN
#endif

/* Allocation failures end the program with an internal error. */
void *tr_xmalloc(size_t n);
void *tr_xcalloc(size_t n, size_t size);
void *tr_xrealloc(void *p, size_t n);
char *tr_xstrdup(const char *s);
char *tr_xstrndup(const char *s, size_t n);
char *tr_xasprintf(const char *fmt, ...) OMPCC_PRINTF(1, 2);

/* Growable NUL-terminated string. */
typedef struct tr_sbuf {
    char *s;
    size_t n, cap;
} tr_sbuf;

void tr_sb_init(tr_sbuf *b);
void tr_sb_putn(tr_sbuf *b, const char *s, size_t n);
void tr_sb_puts(tr_sbuf *b, const char *s);
void tr_sb_putc(tr_sbuf *b, char c);
void tr_sb_printf(tr_sbuf *b, const char *fmt, ...) OMPCC_PRINTF(2, 3);
/* s as a C string literal: quoted, with " and \\ escaped. */
void tr_sb_cstring(tr_sbuf *b, const char *s);
/* Returns the string and leaves b empty; the caller frees the string. */
char *tr_sb_take(tr_sbuf *b);
void tr_sb_free(tr_sbuf *b);

/* Growable array: VEC(int) v = {0}; VEC_PUSH(v, 3); v.v[0], v.n. */
#define VEC(T) struct { T *v; int n, cap; }
#define VEC_GROW(vec)                                                        \
    do {                                                                     \
        if ((vec).n == (vec).cap) {                                          \
            (vec).cap = (vec).cap ? 2 * (vec).cap : 8;                       \
            (vec).v = tr_xrealloc((vec).v, (size_t)(vec).cap * sizeof *(vec).v); \
        }                                                                    \
    } while (0)
#define VEC_PUSH(vec, x)                                                     \
    do {                                                                     \
        VEC_GROW(vec);                                                       \
        (vec).v[(vec).n++] = (x);                                            \
    } while (0)

/* Internal failures: "ompcc: internal error: ..." and exit status 1. */
void tr_internal_error(const char *fmt, ...) OMPCC_PRINTF(1, 2) OMPCC_NORETURN;

/* Warnings and errors about the user's program are printed as
 * "file:line:col: error: msg".  tr_diag_errors counts the errors. */
extern int tr_diag_errors;
/* -w: warnings are not printed; -Werror: they are errors (-w wins, as
 * with cc) */
extern int tr_diag_no_warnings, tr_diag_werror;
void tr_diag_print(const char *file, int line, int col, const char *severity,
                   const char *fmt, va_list ap);
/* "ompcc: warning: msg", for the command line */
void tr_diag_warning(const char *fmt, ...) OMPCC_PRINTF(1, 2);

#endif
