/* pexpr.c - tokens of `#pragma omp` lines, C expressions in clause
 * arguments (syntax only: types are the backend's business), and integer
 * constant expressions (collapse, the profiled schedule's arguments). */
#include "pragma_int.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------
 * Lexer
 * ------------------------------------------------------------------------ */

static const char *const puncts3[] = {"<<=", ">>=", "...", NULL};
static const char *const puncts2[] = {"->", "++", "--", "<<", ">>", "<=", ">=",
                                      "==", "!=", "&&", "||", "*=", "/=", "%=",
                                      "+=", "-=", "&=", "^=", "|=", "##", NULL};

/* C allows UTF-8 identifiers: any byte of a multi-byte sequence is taken
 * as part of the name (clang has checked that the sequence is valid) */
static int ident_start(char c)
{
    return isalpha((unsigned char)c) || c == '_' || c == '$' || (unsigned char)c >= 0x80;
}

static int ident_char(char c)
{
    return ident_start(c) || isdigit((unsigned char)c);
}

int tr_pragma_lex(const char *text, unsigned b, unsigned e, tok **out)
{
    VEC(tok) v = {0};
    unsigned i = b;
    while (i < e) {
        unsigned s = i;
        char c = text[i];
        tok t;
        if (isspace((unsigned char)c)) {
            i++;
            continue;
        }
        if (ident_start(c)) {
            while (i < e && ident_char(text[i]))
                i++;
            t.kind = T_IDENT;
        } else if (isdigit((unsigned char)c) ||
                   (c == '.' && i + 1 < e && isdigit((unsigned char)text[i + 1]))) {
            i++;
            while (i < e) {
                char d = text[i];
                if ((d == '+' || d == '-') &&
                    strchr("eEpP", text[i - 1]) != NULL)
                    i++;
                else if (isalnum((unsigned char)d) || d == '_' || d == '.')
                    i++;
                else
                    break;
            }
            t.kind = T_NUM;
        } else if (c == '"' || c == '\'') {
            i++;
            while (i < e && text[i] != c) {
                if (text[i] == '\\' && i + 1 < e)
                    i++;
                i++;
            }
            if (i < e)
                i++;
            t.kind = c == '"' ? T_STR : T_CHAR;
        } else {
            int k, done = 0;
            for (k = 0; puncts3[k] && !done; k++)
                if (i + 3 <= e && !strncmp(text + i, puncts3[k], 3))
                    i += 3, done = 1;
            for (k = 0; puncts2[k] && !done; k++)
                if (i + 2 <= e && !strncmp(text + i, puncts2[k], 2))
                    i += 2, done = 1;
            if (!done)
                i++;
            t.kind = T_PUNCT;
        }
        t.b = s;
        t.e = i;
        VEC_PUSH(v, t);
    }
    {
        tok t = {T_EOF, e, e};
        VEC_PUSH(v, t);
    }
    *out = v.v;
    return v.n;
}

/* ------------------------------------------------------------------------
 * Parser helpers
 * ------------------------------------------------------------------------ */

tok *tr_pp_cur(parser *p)
{
    return &p->t[p->i];
}

int tr_pp_is(parser *p, int k, const char *s)
{
    tok *t = &p->t[k];
    size_t n = strlen(s);
    return t->kind != T_EOF && t->e - t->b == n && !memcmp(p->text + t->b, s, n);
}

int tr_pp_at(parser *p, const char *s)
{
    return tr_pp_is(p, p->i, s);
}

char *tr_pp_tok_str(parser *p, tok *t)
{
    return tr_xstrndup(p->text + t->b, t->e - t->b);
}

void tr_pp_fail(parser *p, unsigned off, const char *fmt, ...)
{
    va_list ap;
    if (p->failed)
        return;
    p->failed = 1;
    p->err->off = off;
    va_start(ap, fmt);
    vsnprintf(p->err->msg, sizeof p->err->msg, fmt, ap);
    va_end(ap);
}

void tr_pp_warn(parser *p, unsigned off, const char *fmt, ...)
{
    va_list ap;
    if (!p->warns || *p->nwarns >= p->maxwarns)
        return;
    p->warns[*p->nwarns].off = off;
    va_start(ap, fmt);
    vsnprintf(p->warns[*p->nwarns].msg, sizeof p->warns[0].msg, fmt, ap);
    va_end(ap);
    (*p->nwarns)++;
}

int tr_pp_expect(parser *p, const char *s, const char *what)
{
    if (tr_pp_at(p, s)) {
        p->i++;
        return 1;
    }
    if (tr_pp_cur(p)->kind == T_EOF)
        tr_pp_fail(p, tr_pp_cur(p)->b, "expected '%s' %s", s, what);
    else
        tr_pp_fail(p, tr_pp_cur(p)->b, "expected '%s' %s, found '%.*s'", s, what,
             (int)(tr_pp_cur(p)->e - tr_pp_cur(p)->b), p->text + tr_pp_cur(p)->b);
    return 0;
}

/* Index of the token that closes the bracket at index k, or -1. */
int tr_pp_match_close(parser *p, int k)
{
    int depth = 0;
    for (; k < p->nt && p->t[k].kind != T_EOF; k++) {
        if (p->t[k].kind != T_PUNCT)
            continue;
        if (tr_pp_is(p, k, "(") || tr_pp_is(p, k, "[") || tr_pp_is(p, k, "{"))
            depth++;
        else if (tr_pp_is(p, k, ")") || tr_pp_is(p, k, "]") || tr_pp_is(p, k, "}")) {
            if (--depth == 0)
                return k;
            if (depth < 0)
                return -1;
        }
    }
    return -1;
}

/* ------------------------------------------------------------------------
 * Expression validation (syntax only; types are the backend's business)
 * ------------------------------------------------------------------------ */

static int expr_assign(parser *p, int end);

static int starts_unary(parser *p, int k)
{
    tok *t = &p->t[k];
    if (t->kind == T_IDENT || t->kind == T_NUM || t->kind == T_STR ||
        t->kind == T_CHAR)
        return 1;
    return tr_pp_is(p, k, "(") || tr_pp_is(p, k, "++") || tr_pp_is(p, k, "--") ||
           tr_pp_is(p, k, "&") || tr_pp_is(p, k, "*") || tr_pp_is(p, k, "+") ||
           tr_pp_is(p, k, "-") || tr_pp_is(p, k, "~") || tr_pp_is(p, k, "!");
}

static int expr_fail(parser *p, int end)
{
    if (p->i >= end)
        tr_pp_fail(p, p->t[end].b, "expected an expression");
    else
        tr_pp_fail(p, tr_pp_cur(p)->b, "unexpected '%.*s' in expression",
             (int)(tr_pp_cur(p)->e - tr_pp_cur(p)->b), p->text + tr_pp_cur(p)->b);
    return 0;
}

static int skip_group(parser *p, int end)
{
    int c = tr_pp_match_close(p, p->i);
    if (c < 0 || c >= end) {
        tr_pp_fail(p, tr_pp_cur(p)->b, "unbalanced '%.*s'",
                   (int)(tr_pp_cur(p)->e - tr_pp_cur(p)->b), p->text + tr_pp_cur(p)->b);
        return 0;
    }
    p->i = c + 1;
    return 1;
}

static int expr_unary(parser *p, int end)
{
    if (p->i >= end)
        return expr_fail(p, end);
    if (tr_pp_at(p, "++") || tr_pp_at(p, "--") || tr_pp_at(p, "&") || tr_pp_at(p, "*") ||
        tr_pp_at(p, "+") || tr_pp_at(p, "-") || tr_pp_at(p, "~") || tr_pp_at(p, "!") ||
        tr_pp_at(p, "__extension__") || tr_pp_at(p, "__real__") || tr_pp_at(p, "__imag__")) {
        p->i++;
        return expr_unary(p, end);
    }
    if (tr_pp_at(p, "sizeof") || tr_pp_at(p, "_Alignof") || tr_pp_at(p, "__alignof__") ||
        tr_pp_at(p, "__alignof")) {
        p->i++;
        if (p->i < end && tr_pp_at(p, "("))
            return skip_group(p, end);
        return expr_unary(p, end);
    }
    if (tr_pp_at(p, "(")) {
        int c = tr_pp_match_close(p, p->i);
        if (c < 0 || c >= end)
            return skip_group(p, end);
        if (c + 1 < end && (starts_unary(p, c + 1) || tr_pp_is(p, c + 1, "{"))) {
            /* a cast or a compound literal: the part in parentheses is a
             * type name, which only the backend can check */
            p->i = c + 1;
            if (tr_pp_at(p, "{")) {
                if (!skip_group(p, end))
                    return 0;
                goto postfix;
            }
            return expr_unary(p, end);
        }
        if (c == p->i + 1) {
            p->i++;
            return expr_fail(p, c);
        }
        if (tr_pp_is(p, p->i + 1, "{")) { /* GNU statement expression */
            p->i = c + 1;
            goto postfix;
        }
        p->i++;
        if (!expr_assign(p, c))
            return 0;
        while (p->i < c && tr_pp_at(p, ",")) { /* comma expression in parentheses */
            p->i++;
            if (!expr_assign(p, c))
                return 0;
        }
        if (p->i != c)
            return expr_fail(p, c);
        p->i = c + 1;
        goto postfix;
    }
    if (tr_pp_cur(p)->kind == T_IDENT || tr_pp_cur(p)->kind == T_NUM ||
        tr_pp_cur(p)->kind == T_CHAR) {
        p->i++;
    } else if (tr_pp_cur(p)->kind == T_STR) {
        while (p->i < end && tr_pp_cur(p)->kind == T_STR)
            p->i++;
    } else {
        return expr_fail(p, end);
    }
postfix:
    while (p->i < end) {
        if (tr_pp_at(p, "[")) {
            int c = tr_pp_match_close(p, p->i);
            if (c < 0 || c >= end)
                return skip_group(p, end);
            p->i++;
            if (!expr_assign(p, c))
                return 0;
            if (p->i != c)
                return expr_fail(p, c);
            p->i = c + 1;
        } else if (tr_pp_at(p, "(")) {
            if (!skip_group(p, end)) /* call arguments may be type names */
                return 0;
        } else if (tr_pp_at(p, ".") || tr_pp_at(p, "->")) {
            p->i++;
            if (p->i >= end || tr_pp_cur(p)->kind != T_IDENT)
                return expr_fail(p, end);
            p->i++;
        } else if (tr_pp_at(p, "++") || tr_pp_at(p, "--")) {
            p->i++;
        } else {
            break;
        }
    }
    return 1;
}

static const char *const binops[] = {"*", "/", "%", "+", "-", "<<", ">>", "<",
                                     ">", "<=", ">=", "==", "!=", "&", "^", "|",
                                     "&&", "||", NULL};
static const char *const assignops[] = {"=", "*=", "/=", "%=", "+=", "-=",
                                        "<<=", ">>=", "&=", "^=", "|=", NULL};

static int at_any(parser *p, const char *const *ops)
{
    int k;
    for (k = 0; ops[k]; k++)
        if (tr_pp_at(p, ops[k]))
            return 1;
    return 0;
}

static int expr_cond(parser *p, int end)
{
    if (!expr_unary(p, end))
        return 0;
    while (p->i < end && at_any(p, binops)) {
        p->i++;
        if (!expr_unary(p, end))
            return 0;
    }
    if (p->i < end && tr_pp_at(p, "?")) {
        p->i++;
        if (!expr_assign(p, end))
            return 0;
        if (p->i >= end || !tr_pp_at(p, ":"))
            return expr_fail(p, end);
        p->i++;
        return expr_cond(p, end);
    }
    return 1;
}

static int expr_assign(parser *p, int end)
{
    if (!expr_cond(p, end))
        return 0;
    if (p->i < end && at_any(p, assignops)) {
        p->i++;
        return expr_assign(p, end);
    }
    return 1;
}

/* Validates tokens [p->i, end) as one expression and records its range. */
int tr_pp_parse_expr(parser *p, int end, prange *r)
{
    int start = p->i;
    if (start >= end) {
        tr_pp_fail(p, p->t[end].b, "expected an expression");
        return 0;
    }
    if (!expr_assign(p, end))
        return 0;
    if (p->i != end) {
        expr_fail(p, end);
        return 0;
    }
    r->b = p->t[start].b;
    r->e = p->t[end - 1].e;
    return 1;
}

/* ------------------------------------------------------------------------
 * Constant evaluation
 * ------------------------------------------------------------------------ */

typedef struct ceval {
    const char *text;
    tok *t;
    int n, i;
    int nonconst, isfloat, bad;
} ceval;

static int ce_is(ceval *c, const char *s)
{
    tok *t = &c->t[c->i];
    size_t n = strlen(s);
    return t->kind == T_PUNCT && t->e - t->b == n && !memcmp(c->text + t->b, s, n);
}

static long long ce_expr(ceval *c, int prec);

static long long ce_primary(ceval *c)
{
    tok *t = &c->t[c->i];
    if (t->kind == T_NUM) {
        char buf[64], *endp;
        size_t n = t->e - t->b;
        long long v;
        c->i++;
        if (n >= sizeof buf) {
            c->bad = 1;
            return 0;
        }
        memcpy(buf, c->text + t->b, n);
        buf[n] = 0;
        if (buf[0] == '0' && (buf[1] == 'x' || buf[1] == 'X')) {
            if (strpbrk(buf, ".pP")) {
                c->isfloat = 1;
                return 0;
            }
        } else if (strpbrk(buf, ".eEfF")) {
            c->isfloat = 1;
            return 0;
        }
        v = (long long)strtoull(buf, &endp, 0);
        while (*endp && strchr("uUlL", *endp))
            endp++;
        if (*endp)
            c->bad = 1;
        return v;
    }
    if (ce_is(c, "(")) {
        long long v;
        c->i++;
        v = ce_expr(c, 0);
        if (ce_is(c, ")"))
            c->i++;
        else
            c->bad = 1;
        return v;
    }
    if (ce_is(c, "-")) {
        c->i++;
        return -ce_primary(c);
    }
    if (ce_is(c, "+")) {
        c->i++;
        return ce_primary(c);
    }
    if (ce_is(c, "~")) {
        c->i++;
        return ~ce_primary(c);
    }
    if (t->kind == T_IDENT || t->kind == T_CHAR)
        c->nonconst = 1;
    else
        c->bad = 1;
    c->i++;
    return 0;
}

static int ce_prec(ceval *c)
{
    if (ce_is(c, "*") || ce_is(c, "/") || ce_is(c, "%"))
        return 3;
    if (ce_is(c, "+") || ce_is(c, "-"))
        return 2;
    if (ce_is(c, "<<") || ce_is(c, ">>"))
        return 1;
    return -1;
}

static long long ce_expr(ceval *c, int prec)
{
    long long v = ce_primary(c);
    for (;;) {
        int q = ce_prec(c);
        char op;
        long long r;
        if (q < prec || q < 0 || c->bad)
            return v;
        op = c->text[c->t[c->i].b];
        c->i++;
        r = ce_expr(c, q + 1);
        switch (op) {
        case '*': v = (long long)((unsigned long long)v * (unsigned long long)r); break;
        case '+': v = (long long)((unsigned long long)v + (unsigned long long)r); break;
        case '-': v = (long long)((unsigned long long)v - (unsigned long long)r); break;
        case '/': if (r) v /= r; else c->bad = 1; break;
        case '%': if (r) v %= r; else c->bad = 1; break;
        case '<': v = r >= 0 && r < 64 ? (long long)((unsigned long long)v << r) : 0; break;
        default: v = r >= 0 && r < 64 ? v >> r : 0; break;
        }
    }
}

int tr_pragma_const_eval(const char *text, unsigned b, unsigned e, long long *val)
{
    ceval c;
    long long v;
    int k;
    memset(&c, 0, sizeof c);
    c.text = text;
    c.n = tr_pragma_lex(text, b, e, &c.t);
    for (k = 0; k < c.n; k++) { /* a floating literal anywhere: not integer */
        if (c.t[k].kind == T_NUM) {
            const char *s = text + c.t[k].b;
            size_t n = c.t[k].e - c.t[k].b;
            int hex = n > 1 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
            size_t j;
            for (j = 0; j < n; j++)
                if (s[j] == '.' || (!hex && (s[j] == 'e' || s[j] == 'E')) ||
                    (hex && (s[j] == 'p' || s[j] == 'P')))
                    c.isfloat = 1;
        }
    }
    if (c.isfloat) {
        free(c.t);
        return -1;
    }
    v = ce_expr(&c, 0);
    if (c.t[c.i].kind != T_EOF)
        c.bad = 1;
    free(c.t);
    if (c.isfloat)
        return -1;
    if (c.nonconst || c.bad)
        return 0;
    *val = v;
    return 1;
}
