/* util.c - growable strings, allocation helpers and diagnostics output. */
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int tr_diag_errors;

void tr_internal_error(const char *fmt, ...)
{
    va_list ap;
    fputs("ompcc: internal error: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(1);
}

void *tr_xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        tr_internal_error("out of memory (%zu bytes)", n);
    return p;
}

void *tr_xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p)
        tr_internal_error("out of memory (%zu x %zu bytes)", n, size);
    return p;
}

void *tr_xrealloc(void *p, size_t n)
{
    p = realloc(p, n ? n : 1);
    if (!p)
        tr_internal_error("out of memory (%zu bytes)", n);
    return p;
}

char *tr_xstrdup(const char *s)
{
    return tr_xstrndup(s, strlen(s));
}

char *tr_xstrndup(const char *s, size_t n)
{
    char *p = tr_xmalloc(n + 1);
    memcpy(p, s, n);
    p[n] = 0;
    return p;
}

static void sb_vprintf(tr_sbuf *b, const char *fmt, va_list ap);

char *tr_xasprintf(const char *fmt, ...)
{
    tr_sbuf b;
    va_list ap;
    tr_sb_init(&b);
    va_start(ap, fmt);
    sb_vprintf(&b, fmt, ap);
    va_end(ap);
    return tr_sb_take(&b);
}

void tr_sb_init(tr_sbuf *b)
{
    b->s = NULL;
    b->n = b->cap = 0;
}

static void sb_reserve(tr_sbuf *b, size_t extra)
{
    if (b->n + extra + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 64;
        while (cap < b->n + extra + 1)
            cap *= 2;
        b->s = tr_xrealloc(b->s, cap);
        b->cap = cap;
    }
}

void tr_sb_putn(tr_sbuf *b, const char *s, size_t n)
{
    sb_reserve(b, n);
    memcpy(b->s + b->n, s, n);
    b->n += n;
    b->s[b->n] = 0;
}

void tr_sb_puts(tr_sbuf *b, const char *s)
{
    tr_sb_putn(b, s, strlen(s));
}

void tr_sb_putc(tr_sbuf *b, char c)
{
    tr_sb_putn(b, &c, 1);
}

static void sb_vprintf(tr_sbuf *b, const char *fmt, va_list ap)
{
    va_list ap2;
    int n;
    va_copy(ap2, ap);
    n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    if (n < 0)
        tr_internal_error("bad format string '%s'", fmt);
    sb_reserve(b, (size_t)n);
    vsnprintf(b->s + b->n, (size_t)n + 1, fmt, ap);
    b->n += (size_t)n;
}

void tr_sb_printf(tr_sbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sb_vprintf(b, fmt, ap);
    va_end(ap);
}

void tr_sb_cstring(tr_sbuf *b, const char *s)
{
    tr_sb_putc(b, '"');
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            tr_sb_putc(b, '\\');
        tr_sb_putc(b, *s);
    }
    tr_sb_putc(b, '"');
}

char *tr_sb_take(tr_sbuf *b)
{
    char *s = b->s ? b->s : tr_xstrdup("");
    tr_sb_init(b);
    return s;
}

void tr_sb_free(tr_sbuf *b)
{
    free(b->s);
    tr_sb_init(b);
}

int tr_diag_no_warnings, tr_diag_werror;

void tr_diag_print(const char *file, int line, int col, const char *severity,
                   const char *fmt, va_list ap)
{
    int werror = 0;
    if (!strcmp(severity, "warning")) {
        if (tr_diag_no_warnings)
            return;
        if (tr_diag_werror) {
            severity = "error";
            werror = 1;
        }
    }
    if (file && line > 0 && col > 0)
        fprintf(stderr, "%s:%d:%d: %s: ", file, line, col, severity);
    else if (file && line > 0)
        fprintf(stderr, "%s:%d: %s: ", file, line, severity);
    else if (file)
        fprintf(stderr, "%s: %s: ", file, severity);
    else
        fprintf(stderr, "ompcc: %s: ", severity);
    vfprintf(stderr, fmt, ap);
    fputs(werror ? " [-Werror]\n" : "\n", stderr);
    if (severity[0] == 'e')
        tr_diag_errors++;
}

void tr_diag_warning(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    tr_diag_print(NULL, 0, 0, "warning", fmt, ap);
    va_end(ap);
}
