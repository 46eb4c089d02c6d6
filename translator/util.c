/* util.c - growable strings, allocation helpers and diagnostics output. */
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int diag_errors;

void internal_error(const char *fmt, ...)
{
    va_list ap;
    fputs("ompcc: internal error: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(1);
}

void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        internal_error("out of memory (%zu bytes)", n);
    return p;
}

void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p)
        internal_error("out of memory (%zu x %zu bytes)", n, size);
    return p;
}

void *xrealloc(void *p, size_t n)
{
    p = realloc(p, n ? n : 1);
    if (!p)
        internal_error("out of memory (%zu bytes)", n);
    return p;
}

char *xstrdup(const char *s)
{
    return xstrndup(s, strlen(s));
}

char *xstrndup(const char *s, size_t n)
{
    char *p = xmalloc(n + 1);
    memcpy(p, s, n);
    p[n] = 0;
    return p;
}

static void sb_vprintf(sbuf *b, const char *fmt, va_list ap);

char *xasprintf(const char *fmt, ...)
{
    sbuf b;
    va_list ap;
    sb_init(&b);
    va_start(ap, fmt);
    sb_vprintf(&b, fmt, ap);
    va_end(ap);
    return sb_take(&b);
}

void sb_init(sbuf *b)
{
    b->s = NULL;
    b->n = b->cap = 0;
}

static void sb_reserve(sbuf *b, size_t extra)
{
    if (b->n + extra + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 64;
        while (cap < b->n + extra + 1)
            cap *= 2;
        b->s = xrealloc(b->s, cap);
        b->cap = cap;
    }
}

void sb_putn(sbuf *b, const char *s, size_t n)
{
    sb_reserve(b, n);
    memcpy(b->s + b->n, s, n);
    b->n += n;
    b->s[b->n] = 0;
}

void sb_puts(sbuf *b, const char *s)
{
    sb_putn(b, s, strlen(s));
}

void sb_putc(sbuf *b, char c)
{
    sb_putn(b, &c, 1);
}

static void sb_vprintf(sbuf *b, const char *fmt, va_list ap)
{
    va_list ap2;
    int n;
    va_copy(ap2, ap);
    n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    if (n < 0)
        internal_error("bad format string '%s'", fmt);
    sb_reserve(b, (size_t)n);
    vsnprintf(b->s + b->n, (size_t)n + 1, fmt, ap);
    b->n += (size_t)n;
}

void sb_printf(sbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sb_vprintf(b, fmt, ap);
    va_end(ap);
}

void sb_cstring(sbuf *b, const char *s)
{
    sb_putc(b, '"');
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            sb_putc(b, '\\');
        sb_putc(b, *s);
    }
    sb_putc(b, '"');
}

char *sb_take(sbuf *b)
{
    char *s = b->s ? b->s : xstrdup("");
    sb_init(b);
    return s;
}

void sb_free(sbuf *b)
{
    free(b->s);
    sb_init(b);
}

int diag_no_warnings, diag_werror;

void diag_print(const char *file, int line, int col, const char *severity,
                const char *fmt, va_list ap)
{
    int werror = 0;
    if (!strcmp(severity, "warning")) {
        if (diag_no_warnings)
            return;
        if (diag_werror) {
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
        diag_errors++;
}

void diag_warning(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    diag_print(NULL, 0, 0, "warning", fmt, ap);
    va_end(ap);
}
