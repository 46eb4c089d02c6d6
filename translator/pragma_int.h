/* pragma_int.h - what pragma.c (directives, clauses) and pexpr.c (tokens,
 * expressions, constants) share: the token list and the parser state. */
#ifndef OMPCC_PRAGMA_INT_H
#define OMPCC_PRAGMA_INT_H

#include "pragma.h"

enum tok_kind { T_EOF, T_IDENT, T_NUM, T_STR, T_CHAR, T_PUNCT };

typedef struct tok {
    int kind;
    unsigned b, e;
} tok;

typedef struct parser {
    const char *text;
    tok *t;
    int nt, i;
    pragma_msg *err;
    int failed;
    pragma_msg *warns;
    int *nwarns, maxwarns;
} parser;


/* Splits text[b, e) into tokens ending with a T_EOF token; returns the
 * count (the caller frees *out). */
int tr_pragma_lex(const char *text, unsigned b, unsigned e, tok **out);

tok *tr_pp_cur(parser *p);
int tr_pp_is(parser *p, int k, const char *s);  /* token k is the punctuator or word s */
int tr_pp_at(parser *p, const char *s);         /* the current token is s */
char *tr_pp_tok_str(parser *p, tok *t);
/* the first error wins; the parse stops at it */
void tr_pp_fail(parser *p, unsigned off, const char *fmt, ...) OMPCC_PRINTF(3, 4);
void tr_pp_warn(parser *p, unsigned off, const char *fmt, ...) OMPCC_PRINTF(3, 4);
int tr_pp_expect(parser *p, const char *s, const char *what);
/* index of the token closing the bracket at k, -1 */
int tr_pp_match_close(parser *p, int k);
/* Validates tokens [p->i, end) as one C expression and stores its text
 * range in *r; 0 (and tr_pp_fail()) when it is not one. */
int tr_pp_parse_expr(parser *p, int end, prange *r);

#endif
