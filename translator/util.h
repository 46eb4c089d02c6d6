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
void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
char *xasprintf(const char *fmt, ...) OMPCC_PRINTF(1, 2);

/* Growable NUL-terminated string. */
typedef struct sbuf {
    char *s;
    size_t n, cap;
} sbuf;

void sb_init(sbuf *b);
void sb_putn(sbuf *b, const char *s, size_t n);
void sb_puts(sbuf *b, const char *s);
void sb_putc(sbuf *b, char c);
void sb_printf(sbuf *b, const char *fmt, ...) OMPCC_PRINTF(2, 3);
/* s as a C string literal: quoted, with " and \\ escaped. */
void sb_cstring(sbuf *b, const char *s);
/* Returns the string and leaves b empty; the caller frees the string. */
char *sb_take(sbuf *b);
void sb_free(sbuf *b);

/* Growable array: VEC(int) v = {0}; VEC_PUSH(v, 3); v.v[0], v.n. */
#define VEC(T) struct { T *v; int n, cap; }
#define VEC_GROW(vec)                                                        \
    do {                                                                     \
        if ((vec).n == (vec).cap) {                                          \
            (vec).cap = (vec).cap ? 2 * (vec).cap : 8;                       \
            (vec).v = xrealloc((vec).v, (size_t)(vec).cap * sizeof *(vec).v); \
        }                                                                    \
    } while (0)
#define VEC_PUSH(vec, x)                                                     \
    do {                                                                     \
        VEC_GROW(vec);                                                       \
        (vec).v[(vec).n++] = (x);                                            \
    } while (0)

/* Internal failures: "ompcc: internal error: ..." and exit status 1. */
void internal_error(const char *fmt, ...) OMPCC_PRINTF(1, 2) OMPCC_NORETURN;

/* Warnings and errors about the user's program are printed as
 * "file:line:col: error: msg".  diag_errors counts the errors. */
extern int diag_errors;
/* -w: warnings are not printed; -Werror: they are errors (-w wins, as
 * with cc) */
extern int diag_no_warnings, diag_werror;
void diag_print(const char *file, int line, int col, const char *severity,
                const char *fmt, va_list ap);
/* "ompcc: warning: msg", for the command line */
void diag_warning(const char *fmt, ...) OMPCC_PRINTF(1, 2);

#endif
