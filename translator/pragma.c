/* pragma.c - parses `#pragma omp` lines: directive, clauses, arguments. */
#include "pragma_int.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------
 * Directives and clauses
 * ------------------------------------------------------------------------ */

static const char *const dir_names[DIR_NDIRS] = {
    "parallel", "for", "parallel for", "sections", "parallel sections",
    "section", "single", "master", "critical", "barrier", "atomic", "flush",
    "ordered", "threadprivate", "task", "taskwait", "taskyield", "taskgroup",
    "simd"};

static const char *const clause_names[CL_NKINDS] = {
    "if", "num_threads", "default", "private", "firstprivate", "lastprivate",
    "shared", "copyin", "copyprivate", "reduction", "schedule", "collapse",
    "ordered", "nowait", "untied", "final", "mergeable", "(ignored)"};

static const char *const redop_names[] = {"+", "-", "*", "&", "|", "^", "&&",
                                          "||", "max", "min"};

static const char *const sched_names[] = {"", "static", "dynamic", "guided",
                                          "runtime", "auto", "profiled"};

const char *tr_pragma_dir_name(int dir)
{
    return dir >= 0 && dir < DIR_NDIRS ? dir_names[dir] : "?";
}

const char *tr_pragma_redop_name(int op)
{
    return redop_names[op];
}

#define B(k) (1u << (k))
#define PAR_CL (B(CL_IF) | B(CL_NUM_THREADS) | B(CL_DEFAULT) | B(CL_PRIVATE) | \
                B(CL_FIRSTPRIVATE) | B(CL_SHARED) | B(CL_COPYIN) | B(CL_REDUCTION))
#define FOR_CL (B(CL_PRIVATE) | B(CL_FIRSTPRIVATE) | B(CL_LASTPRIVATE) | \
                B(CL_REDUCTION) | B(CL_SCHEDULE) | B(CL_COLLAPSE) |       \
                B(CL_ORDERED) | B(CL_NOWAIT))
#define SEC_CL (B(CL_PRIVATE) | B(CL_FIRSTPRIVATE) | B(CL_LASTPRIVATE) | \
                B(CL_REDUCTION) | B(CL_NOWAIT))

static unsigned allowed_clauses(int dir)
{
    switch (dir) {
    case DIR_PARALLEL: return PAR_CL;
    case DIR_FOR: return FOR_CL;
    case DIR_PARALLEL_FOR: return (PAR_CL | FOR_CL) & ~B(CL_NOWAIT);
    case DIR_SECTIONS: return SEC_CL;
    case DIR_PARALLEL_SECTIONS: return (PAR_CL | SEC_CL) & ~B(CL_NOWAIT);
    case DIR_SINGLE:
        return B(CL_PRIVATE) | B(CL_FIRSTPRIVATE) | B(CL_COPYPRIVATE) | B(CL_NOWAIT);
    case DIR_TASK:
        return B(CL_IF) | B(CL_UNTIED) | B(CL_DEFAULT) | B(CL_PRIVATE) |
               B(CL_FIRSTPRIVATE) | B(CL_SHARED) | B(CL_FINAL) | B(CL_MERGEABLE);
    default: return 0;
    }
}

/* Directives of later OpenMP versions that change a program's meaning. */
static const char *const unsupported_dirs[] = {
    "target", "teams", "distribute", "cancel", "cancellation", "declare",
    "loop", "scan", "requires", "masked", "scope", "tile", "unroll",
    "allocate", "depobj", "metadirective", "error", "interop", "dispatch",
    "assume", "assumes", "begin", "end", "nothing", NULL};

/* Clauses that may be dropped without changing a correct program's
 * meaning here (tasks run undeferred and in order; no SIMD semantics). */
static const char *const ignorable_clauses[] = {
    "proc_bind", "safelen", "simdlen", "aligned", "nontemporal", "order",
    "depend", "priority", NULL};

static int name_in(const char *s, const char *const *list)
{
    int k;
    for (k = 0; list[k]; k++)
        if (!strcmp(s, list[k]))
            return 1;
    return 0;
}

/* Parses "name, name, ..." up to the token at index close. */
static pname *parse_names_until(parser *p, int close, int *count,
                                const char *what)
{
    VEC(pname) v = {0};
    for (;;) {
        pname n;
        if (p->i >= close || tr_pp_cur(p)->kind != T_IDENT) {
            if (p->i >= close)
                tr_pp_fail(p, tr_pp_cur(p)->b, "expected a variable name %s", what);
            else
                tr_pp_fail(p, tr_pp_cur(p)->b, "expected a variable name %s, found '%.*s'",
                     what, (int)(tr_pp_cur(p)->e - tr_pp_cur(p)->b), p->text + tr_pp_cur(p)->b);
            break;
        }
        n.name = tr_pp_tok_str(p, tr_pp_cur(p));
        n.off = tr_pp_cur(p)->b;
        VEC_PUSH(v, n);
        p->i++;
        if (p->i < close && tr_pp_at(p, ",")) {
            p->i++;
            continue;
        }
        if (p->i != close)
            tr_pp_fail(p, tr_pp_cur(p)->b, "expected ',' or ')' %s, found '%.*s'", what,
                 (int)(tr_pp_cur(p)->e - tr_pp_cur(p)->b), p->text + tr_pp_cur(p)->b);
        break;
    }
    p->i = close + 1;
    if (p->failed) {
        int k;
        for (k = 0; k < v.n; k++)
            free(v.v[k].name);
        free(v.v);
        return NULL;
    }
    *count = v.n;
    return v.v;
}

static pname *parse_name_list(parser *p, int *count, const char *what)
{
    int close;
    if (!tr_pp_expect(p, "(", what))
        return NULL;
    close = tr_pp_match_close(p, p->i - 1);
    if (close < 0) {
        tr_pp_fail(p, p->t[p->i - 1].b, "missing ')' %s", what);
        return NULL;
    }
    return parse_names_until(p, close, count, what);
}

/* Splits the parenthesised arguments at top-level commas: fills starts and
 * ends with token indices; returns the number of arguments, -1 on error. */
static int split_args(parser *p, int open, int close, int *starts, int *ends,
                      int max)
{
    int n = 0, k = open + 1, depth = 0, s = k;
    for (; k <= close; k++) {
        if (k < close && (tr_pp_is(p, k, "(") || tr_pp_is(p, k, "[") || tr_pp_is(p, k, "{")))
            depth++;
        else if (k < close && (tr_pp_is(p, k, ")") || tr_pp_is(p, k, "]") || tr_pp_is(p, k, "}")))
            depth--;
        else if (k == close || (depth == 0 && tr_pp_is(p, k, ","))) {
            if (n == max) {
                tr_pp_fail(p, p->t[k].b, "too many arguments");
                return -1;
            }
            starts[n] = s;
            ends[n] = k;
            n++;
            s = k + 1;
        }
    }
    return n;
}

static int parse_schedule(parser *p, omp_clause *c)
{
    int open = p->i, close, starts[5], ends[5], n, k, maxargs;
    char *kind;
    if (!tr_pp_expect(p, "(", "after 'schedule'"))
        return 0;
    close = tr_pp_match_close(p, open);
    if (close < 0) {
        tr_pp_fail(p, p->t[open].b, "missing ')' after 'schedule('");
        return 0;
    }
    if (tr_pp_cur(p)->kind != T_IDENT) {
        tr_pp_fail(p, tr_pp_cur(p)->b, "expected a schedule kind (static, dynamic, guided, "
                           "runtime, auto or profiled)");
        return 0;
    }
    kind = tr_pp_tok_str(p, tr_pp_cur(p));
    for (k = 1; k <= SCHED_PROFILED; k++)
        if (!strcmp(kind, sched_names[k]))
            break;
    if (k > SCHED_PROFILED) {
        tr_pp_fail(p, tr_pp_cur(p)->b, "unknown schedule kind '%s' (expected static, "
                           "dynamic, guided, runtime, auto or profiled)", kind);
        free(kind);
        return 0;
    }
    free(kind);
    c->sched = k;
    if (p->i + 1 != close && !tr_pp_is(p, p->i + 1, ",")) {
        tr_pp_fail(p, p->t[p->i + 1].b, "expected ',' or ')' after the schedule kind");
        return 0;
    }
    n = split_args(p, open, close, starts, ends, 5);
    if (n < 0)
        return 0;
    maxargs = c->sched == SCHED_PROFILED ? 3
              : (c->sched == SCHED_RUNTIME || c->sched == SCHED_AUTO) ? 0 : 1;
    if (n - 1 > maxargs) {
        if (maxargs == 0)
            tr_pp_fail(p, p->t[starts[1]].b, "schedule(%s) takes no chunk size",
                 sched_names[c->sched]);
        else if (maxargs == 1)
            tr_pp_fail(p, p->t[starts[2]].b, "schedule(%s) takes at most a chunk "
                 "size", sched_names[c->sched]);
        else
            tr_pp_fail(p, p->t[starts[4]].b, "schedule(profiled) takes at most "
                 "chunk_size, eval_size and eval_skip");
        return 0;
    }
    for (k = 1; k < n; k++) {
        long long v;
        int r;
        p->i = starts[k];
        if (!tr_pp_parse_expr(p, ends[k], &c->args[k - 1]))
            return 0;
        r = tr_pragma_const_eval(p->text, c->args[k - 1].b, c->args[k - 1].e, &v);
        if (r < 0) {
            tr_pp_fail(p, c->args[k - 1].b, "schedule argument must be an integer "
                 "expression");
            return 0;
        }
        if (r == 1 && v < 0) {
            static const char *const what[] = {"chunk size", "eval_size",
                                               "eval_skip"};
            tr_pp_fail(p, c->args[k - 1].b, "schedule(%s) %s must not be negative "
                 "(it is %lld)", sched_names[c->sched], what[k - 1], v);
            return 0;
        }
        if (r == 1 && v == 0 && k == 1 && c->sched != SCHED_PROFILED) {
            tr_pp_fail(p, c->args[0].b, "schedule(%s) chunk size must be positive",
                 sched_names[c->sched]);
            return 0;
        }
    }
    c->nargs = n - 1;
    p->i = close + 1;
    return 1;
}

static int parse_reduction(parser *p, omp_clause *c)
{
    int k, close;
    if (!tr_pp_expect(p, "(", "after 'reduction'"))
        return 0;
    close = tr_pp_match_close(p, p->i - 1);
    if (close < 0) {
        tr_pp_fail(p, p->t[p->i - 1].b, "missing ')' after 'reduction('");
        return 0;
    }
    for (k = 0; k <= RED_MIN; k++)
        if (tr_pp_at(p, redop_names[k]))
            break;
    if (k > RED_MIN) {
        tr_pp_fail(p, tr_pp_cur(p)->b, "expected a reduction operator (+ - * & | ^ && || "
                           "max min)");
        return 0;
    }
    c->redop = k;
    p->i++;
    if (!tr_pp_at(p, ":")) {
        tr_pp_fail(p, tr_pp_cur(p)->b, "expected ':' after the reduction operator");
        return 0;
    }
    p->i++;
    c->vars = parse_names_until(p, close, &c->nvars, "in 'reduction'");
    return !p->failed;
}

static int parse_one_expr_arg(parser *p, omp_clause *c, const char *name)
{
    int open = p->i, close;
    char what[64];
    snprintf(what, sizeof what, "after '%s'", name);
    if (!tr_pp_expect(p, "(", what))
        return 0;
    close = tr_pp_match_close(p, open);
    if (close < 0) {
        tr_pp_fail(p, p->t[open].b, "missing ')' after '%s('", name);
        return 0;
    }
    if (close == open + 1) {
        tr_pp_fail(p, p->t[close].b, "expected an expression in '%s()'", name);
        return 0;
    }
    if (!tr_pp_parse_expr(p, close, &c->args[0]))
        return 0;
    c->nargs = 1;
    p->i = close + 1;
    return 1;
}

static void parse_clause(parser *p, omp_pragma *pr, unsigned allowed)
{
    omp_clause c;
    char *name;
    int k;
    memset(&c, 0, sizeof c);
    if (tr_pp_cur(p)->kind != T_IDENT) {
        tr_pp_fail(p, tr_pp_cur(p)->b, "expected an OpenMP clause, found '%.*s'",
             (int)(tr_pp_cur(p)->e - tr_pp_cur(p)->b), p->text + tr_pp_cur(p)->b);
        return;
    }
    name = tr_pp_tok_str(p, tr_pp_cur(p));
    c.off = tr_pp_cur(p)->b;
    c.spelling = name;
    for (k = 0; k < CL_IGNORED; k++)
        if (!strcmp(name, clause_names[k]))
            break;
    if (k == CL_IGNORED) {
        if ((pr->dir == DIR_IGNORED) ||
            (name_in(name, ignorable_clauses))) {
            int close;
            tr_pp_warn(p, c.off, "ignoring OpenMP clause '%s'", name);
            p->i++;
            if (tr_pp_at(p, "(")) {
                close = tr_pp_match_close(p, p->i);
                if (close < 0) {
                    tr_pp_fail(p, tr_pp_cur(p)->b, "missing ')' after '%s('", name);
                    free(name);
                    return;
                }
                p->i = close + 1;
            }
            free(name);
            return;
        }
        tr_pp_fail(p, c.off, "unknown OpenMP clause '%s'", name);
        free(name);
        return;
    }
    c.kind = k;
    if (!(allowed & B(k))) {
        tr_pp_fail(p, c.off, "clause '%s' is not valid on '#pragma omp %s'", name,
             pr->dir_spelling);
        free(name);
        return;
    }
    for (int j = 0; j < pr->nclauses; j++) {
        int o = pr->clauses[j].kind;
        if (o == k && (k == CL_IF || k == CL_NUM_THREADS || k == CL_DEFAULT ||
                       k == CL_SCHEDULE || k == CL_COLLAPSE || k == CL_ORDERED ||
                       k == CL_NOWAIT || k == CL_UNTIED || k == CL_FINAL ||
                       k == CL_MERGEABLE)) {
            tr_pp_fail(p, c.off, "more than one '%s' clause", name);
            free(name);
            return;
        }
    }
    p->i++;
    switch (k) {
    case CL_IF:
    case CL_NUM_THREADS:
    case CL_FINAL:
        parse_one_expr_arg(p, &c, name);
        break;
    case CL_COLLAPSE: {
        long long v;
        int r;
        if (!parse_one_expr_arg(p, &c, name))
            break;
        r = tr_pragma_const_eval(p->text, c.args[0].b, c.args[0].e, &v);
        if (r != 1 || v <= 0 || v > 16)
            tr_pp_fail(p, c.args[0].b, "collapse needs a positive integer constant");
        c.ival = v;
        break;
    }
    case CL_DEFAULT: {
        if (!tr_pp_expect(p, "(", "after 'default'"))
            break;
        if (tr_pp_at(p, "shared"))
            c.dflt = DEFAULT_SHARED;
        else if (tr_pp_at(p, "none"))
            c.dflt = DEFAULT_NONE;
        else {
            tr_pp_fail(p, tr_pp_cur(p)->b, "expected 'shared' or 'none' in 'default'");
            break;
        }
        p->i++;
        tr_pp_expect(p, ")", "after the default kind");
        break;
    }
    case CL_PRIVATE:
    case CL_FIRSTPRIVATE:
    case CL_LASTPRIVATE:
    case CL_SHARED:
    case CL_COPYIN:
    case CL_COPYPRIVATE: {
        char what[64];
        snprintf(what, sizeof what, "in '%s'", name);
        c.vars = parse_name_list(p, &c.nvars, what);
        break;
    }
    case CL_REDUCTION:
        parse_reduction(p, &c);
        break;
    case CL_SCHEDULE:
        parse_schedule(p, &c);
        break;
    case CL_ORDERED:
        if (tr_pp_at(p, "("))
            tr_pp_fail(p, tr_pp_cur(p)->b, "ordered(n) (OpenMP 4.5 doacross loops) is "
                               "not supported");
        break;
    default: /* nowait, untied, mergeable */
        if (tr_pp_at(p, "("))
            tr_pp_fail(p, tr_pp_cur(p)->b, "clause '%s' takes no arguments", name);
        break;
    }
    if (p->failed) {
        free(c.spelling);
        for (k = 0; k < c.nvars; k++)
            free(c.vars[k].name);
        free(c.vars);
        return;
    }
    pr->clauses = tr_xrealloc(pr->clauses, (size_t)(pr->nclauses + 1) * sizeof c);
    pr->clauses[pr->nclauses++] = c;
}

/* A variable may appear in at most one data-sharing clause (firstprivate
 * together with lastprivate is the exception). */
static void check_duplicates(parser *p, omp_pragma *pr)
{
    int a, b, i, j;
    for (a = 0; a < pr->nclauses; a++) {
        omp_clause *ca = &pr->clauses[a];
        for (i = 0; i < ca->nvars; i++) {
            for (b = a; b < pr->nclauses; b++) {
                omp_clause *cb = &pr->clauses[b];
                int dsa_a = ca->kind != CL_COPYIN && ca->kind != CL_COPYPRIVATE;
                int dsa_b = cb->kind != CL_COPYIN && cb->kind != CL_COPYPRIVATE;
                if (a != b && (!dsa_a || !dsa_b))
                    continue;
                if ((ca->kind == CL_FIRSTPRIVATE && cb->kind == CL_LASTPRIVATE) ||
                    (ca->kind == CL_LASTPRIVATE && cb->kind == CL_FIRSTPRIVATE))
                    continue;
                for (j = (a == b ? i + 1 : 0); j < cb->nvars; j++) {
                    if (!strcmp(ca->vars[i].name, cb->vars[j].name)) {
                        if (a == b)
                            tr_pp_fail(p, cb->vars[j].off, "variable '%s' appears "
                                 "more than once in '%s'", cb->vars[j].name,
                                 clause_names[cb->kind]);
                        else
                            tr_pp_fail(p, cb->vars[j].off, "variable '%s' appears in "
                                 "both '%s' and '%s'", cb->vars[j].name,
                                 clause_names[ca->kind], clause_names[cb->kind]);
                        return;
                    }
                }
            }
        }
    }
}

int tr_pragma_is_omp(const char *line, size_t len)
{
    size_t i = 0;
    while (i < len && (line[i] == ' ' || line[i] == '\t'))
        i++;
    if (i >= len || line[i] != '#')
        return 0;
    i++;
    while (i < len && (line[i] == ' ' || line[i] == '\t'))
        i++;
    if (len - i < 6 || strncmp(line + i, "pragma", 6))
        return 0;
    i += 6;
    if (i >= len || (line[i] != ' ' && line[i] != '\t'))
        return 0;
    while (i < len && (line[i] == ' ' || line[i] == '\t'))
        i++;
    if (len - i < 3 || strncmp(line + i, "omp", 3))
        return 0;
    i += 3;
    return i == len || !(isalnum((unsigned char)line[i]) || line[i] == '_');
}

/* Reads the directive words; sets pr->dir and pr->dir_spelling. */
static void parse_directive(parser *p, omp_pragma *pr)
{
    tr_sbuf sp;
    tok *t = tr_pp_cur(p);
    char *w;
    tr_sb_init(&sp);
    if (t->kind != T_IDENT) {
        tr_pp_fail(p, t->b, "expected an OpenMP directive after '#pragma omp'");
        return;
    }
    pr->dir_off = t->b;
    w = tr_pp_tok_str(p, t);
    p->i++;
    tr_sb_puts(&sp, w);
    if (!strcmp(w, "parallel")) {
        pr->dir = DIR_PARALLEL;
        if (tr_pp_at(p, "for")) {
            pr->dir = DIR_PARALLEL_FOR;
            tr_sb_puts(&sp, " for");
            p->i++;
            if (tr_pp_at(p, "simd")) {
                tr_pp_warn(p, tr_pp_cur(p)->b, "ignoring 'simd' in '#pragma omp parallel "
                                   "for simd'");
                tr_sb_puts(&sp, " simd");
                p->i++;
            }
        } else if (tr_pp_at(p, "sections")) {
            pr->dir = DIR_PARALLEL_SECTIONS;
            tr_sb_puts(&sp, " sections");
            p->i++;
        } else if (tr_pp_cur(p)->kind == T_IDENT &&
                   (tr_pp_at(p, "loop") || tr_pp_at(p, "master") || tr_pp_at(p, "masked") ||
                    tr_pp_at(p, "workshare"))) {
            tr_pp_fail(p, tr_pp_cur(p)->b, "unsupported OpenMP directive 'parallel %.*s'",
                 (int)(tr_pp_cur(p)->e - tr_pp_cur(p)->b), p->text + tr_pp_cur(p)->b);
        }
    } else if (!strcmp(w, "for")) {
        pr->dir = DIR_FOR;
        if (tr_pp_at(p, "simd")) {
            tr_pp_warn(p, tr_pp_cur(p)->b, "ignoring 'simd' in '#pragma omp for simd'");
            tr_sb_puts(&sp, " simd");
            p->i++;
        }
    } else if (!strcmp(w, "sections")) {
        pr->dir = DIR_SECTIONS;
    } else if (!strcmp(w, "section")) {
        pr->dir = DIR_SECTION;
    } else if (!strcmp(w, "single")) {
        pr->dir = DIR_SINGLE;
    } else if (!strcmp(w, "master")) {
        pr->dir = DIR_MASTER;
    } else if (!strcmp(w, "critical")) {
        pr->dir = DIR_CRITICAL;
        if (tr_pp_at(p, "(")) {
            p->i++;
            if (tr_pp_cur(p)->kind != T_IDENT) {
                tr_pp_fail(p, tr_pp_cur(p)->b, "expected a name in 'critical(...)'");
            } else {
                pr->critical_name = tr_pp_tok_str(p, tr_pp_cur(p));
                p->i++;
                tr_pp_expect(p, ")", "after the critical section's name");
            }
        }
    } else if (!strcmp(w, "barrier")) {
        pr->dir = DIR_BARRIER;
    } else if (!strcmp(w, "atomic")) {
        pr->dir = DIR_ATOMIC;
        pr->atomic_kind = ATOMIC_UPDATE;
        while (tr_pp_cur(p)->kind == T_IDENT || tr_pp_at(p, ",")) {
            if (tr_pp_at(p, ",")) {
                p->i++;
                continue;
            }
            if (tr_pp_at(p, "update"))
                pr->atomic_kind = ATOMIC_UPDATE;
            else if (tr_pp_at(p, "read") || tr_pp_at(p, "write") || tr_pp_at(p, "capture")) {
                tr_pp_fail(p, tr_pp_cur(p)->b, "'#pragma omp atomic %.*s' (OpenMP 3.1) is "
                     "not supported", (int)(tr_pp_cur(p)->e - tr_pp_cur(p)->b),
                     p->text + tr_pp_cur(p)->b);
                break;
            } else if (tr_pp_at(p, "seq_cst") || tr_pp_at(p, "relaxed") ||
                       tr_pp_at(p, "acq_rel") || tr_pp_at(p, "release") ||
                       tr_pp_at(p, "acquire")) {
                /* every atomic is sequentially consistent here */
            } else {
                tr_pp_fail(p, tr_pp_cur(p)->b, "unknown clause '%.*s' on '#pragma omp "
                     "atomic'", (int)(tr_pp_cur(p)->e - tr_pp_cur(p)->b),
                     p->text + tr_pp_cur(p)->b);
                break;
            }
            p->i++;
        }
    } else if (!strcmp(w, "flush")) {
        pr->dir = DIR_FLUSH;
        if (tr_pp_at(p, "("))
            pr->vars = parse_name_list(p, &pr->nvars, "in 'flush'");
    } else if (!strcmp(w, "ordered")) {
        pr->dir = DIR_ORDERED;
    } else if (!strcmp(w, "threadprivate")) {
        pr->dir = DIR_THREADPRIVATE;
        if (!tr_pp_at(p, "("))
            tr_pp_fail(p, tr_pp_cur(p)->b, "expected '(' after 'threadprivate'");
        else
            pr->vars = parse_name_list(p, &pr->nvars, "in 'threadprivate'");
    } else if (!strcmp(w, "task")) {
        pr->dir = DIR_TASK;
    } else if (!strcmp(w, "taskwait")) {
        pr->dir = DIR_TASKWAIT;
    } else if (!strcmp(w, "taskyield")) {
        pr->dir = DIR_TASKYIELD;
    } else if (!strcmp(w, "taskgroup")) {
        pr->dir = DIR_TASKGROUP;
        tr_pp_warn(p, pr->dir_off, "'#pragma omp taskgroup' has no effect here "
                             "(tasks run undeferred)");
    } else if (!strcmp(w, "simd")) {
        pr->dir = DIR_IGNORED;
        tr_pp_warn(p, pr->dir_off, "ignoring '#pragma omp simd'");
    } else if (!strcmp(w, "declare") && tr_pp_at(p, "simd")) {
        pr->dir = DIR_IGNORED;
        tr_sb_puts(&sp, " simd");
        p->i++;
        tr_pp_warn(p, pr->dir_off, "ignoring '#pragma omp declare simd'");
        if (tr_pp_at(p, "(") && tr_pp_match_close(p, p->i) > 0)
            p->i = tr_pp_match_close(p, p->i) + 1;
    } else if (name_in(w, unsupported_dirs)) {
        if (tr_pp_cur(p)->kind == T_IDENT && strcmp(w, "end") && strcmp(w, "begin"))
            tr_pp_fail(p, pr->dir_off, "unsupported OpenMP directive '%s %.*s'", w,
                 (int)(tr_pp_cur(p)->e - tr_pp_cur(p)->b), p->text + tr_pp_cur(p)->b);
        else
            tr_pp_fail(p, pr->dir_off, "unsupported OpenMP directive '%s'", w);
    } else {
        tr_pp_fail(p, pr->dir_off, "unknown OpenMP directive '%s'", w);
    }
    free(w);
    pr->dir_spelling = tr_sb_take(&sp);
}

int tr_pragma_parse(const char *text, unsigned begin, unsigned end,
                    omp_pragma *pr, pragma_msg *err, pragma_msg *warns,
                    int *nwarns, int maxwarns)
{
    parser p;
    unsigned allowed;
    int dummy = 0;
    memset(pr, 0, sizeof *pr);
    memset(&p, 0, sizeof p);
    pr->begin = begin;
    pr->end = end;
    p.text = text;
    p.err = err;
    p.warns = warns;
    p.nwarns = nwarns ? nwarns : &dummy;
    p.maxwarns = maxwarns;
    p.nt = tr_pragma_lex(text, begin, end, &p.t);
    /* "#", "pragma", "omp" */
    if (!(tr_pp_is(&p, 0, "#") && tr_pp_is(&p, 1, "pragma") && tr_pp_is(&p, 2, "omp"))) {
        free(p.t);
        err->off = begin;
        snprintf(err->msg, sizeof err->msg, "not an OpenMP pragma");
        return -1;
    }
    p.i = 3;
    parse_directive(&p, pr);
    allowed = allowed_clauses(pr->dir);
    while (!p.failed && tr_pp_cur(&p)->kind != T_EOF) {
        if (tr_pp_at(&p, ",")) {
            p.i++;
            continue;
        }
        if (pr->dir == DIR_IGNORED || allowed ||
            (tr_pp_cur(&p)->kind == T_IDENT)) {
            if (!allowed && pr->dir != DIR_IGNORED) {
                char *n = tr_pp_tok_str(&p, tr_pp_cur(&p));
                int known = 0, k;
                for (k = 0; k < CL_IGNORED; k++)
                    known |= !strcmp(n, clause_names[k]);
                if (known)
                    tr_pp_fail(&p, tr_pp_cur(&p)->b, "clause '%s' is not valid on "
                         "'#pragma omp %s'", n, pr->dir_spelling);
                else if (name_in(n, ignorable_clauses)) {
                    free(n);
                    parse_clause(&p, pr, allowed);
                    continue;
                } else
                    tr_pp_fail(&p, tr_pp_cur(&p)->b, "unexpected '%s' after '#pragma omp "
                         "%s'", n, pr->dir_spelling);
                free(n);
                break;
            }
            parse_clause(&p, pr, allowed);
        } else {
            tr_pp_fail(&p, tr_pp_cur(&p)->b, "unexpected '%.*s' after '#pragma omp %s'",
                 (int)(tr_pp_cur(&p)->e - tr_pp_cur(&p)->b), text + tr_pp_cur(&p)->b,
                 pr->dir_spelling ? pr->dir_spelling : "");
        }
    }
    if (!p.failed)
        check_duplicates(&p, pr);
    free(p.t);
    if (p.failed) {
        tr_pragma_free(pr);
        return -1;
    }
    return 0;
}

void tr_pragma_free(omp_pragma *p)
{
    int i, j;
    for (i = 0; i < p->nclauses; i++) {
        for (j = 0; j < p->clauses[i].nvars; j++)
            free(p->clauses[i].vars[j].name);
        free(p->clauses[i].vars);
        free(p->clauses[i].spelling);
    }
    for (j = 0; j < p->nvars; j++)
        free(p->vars[j].name);
    free(p->vars);
    free(p->clauses);
    free(p->critical_name);
    free(p->dir_spelling);
    memset(p, 0, sizeof *p);
}

const omp_clause *tr_pragma_find_clause(const omp_pragma *p, int kind)
{
    int i;
    for (i = 0; i < p->nclauses; i++)
        if (p->clauses[i].kind == kind)
            return &p->clauses[i];
    return NULL;
}

static void put_range(tr_sbuf *out, const char *text, prange r)
{
    tr_sb_putn(out, text + r.b, r.e - r.b);
}

static void put_names(tr_sbuf *out, const pname *v, int n)
{
    int i;
    for (i = 0; i < n; i++) {
        if (i)
            tr_sb_puts(out, ", ");
        tr_sb_puts(out, v[i].name);
    }
}

void tr_pragma_format(const omp_pragma *p, const char *text, tr_sbuf *out)
{
    int i, k;
    tr_sb_puts(out, tr_pragma_dir_name(p->dir));
    if (p->dir == DIR_CRITICAL && p->critical_name)
        tr_sb_printf(out, "(%s)", p->critical_name);
    if ((p->dir == DIR_FLUSH || p->dir == DIR_THREADPRIVATE) && p->nvars) {
        tr_sb_putc(out, '(');
        put_names(out, p->vars, p->nvars);
        tr_sb_putc(out, ')');
    }
    for (i = 0; i < p->nclauses; i++) {
        const omp_clause *c = &p->clauses[i];
        tr_sb_printf(out, " %s", clause_names[c->kind]);
        switch (c->kind) {
        case CL_DEFAULT:
            tr_sb_puts(out, c->dflt == DEFAULT_NONE ? "(none)" : "(shared)");
            break;
        case CL_REDUCTION:
            tr_sb_printf(out, "(%s: ", redop_names[c->redop]);
            put_names(out, c->vars, c->nvars);
            tr_sb_putc(out, ')');
            break;
        case CL_SCHEDULE:
            tr_sb_printf(out, "(%s", sched_names[c->sched]);
            for (k = 0; k < c->nargs; k++) {
                tr_sb_puts(out, ", ");
                put_range(out, text, c->args[k]);
            }
            tr_sb_putc(out, ')');
            break;
        default:
            if (c->nvars || c->kind == CL_PRIVATE || c->kind == CL_SHARED) {
                tr_sb_putc(out, '(');
                put_names(out, c->vars, c->nvars);
                tr_sb_putc(out, ')');
            } else if (c->nargs) {
                tr_sb_putc(out, '(');
                put_range(out, text, c->args[0]);
                tr_sb_putc(out, ')');
            }
        }
    }
}
