/* rules.c - the rules of OpenMP 3.0 sections 2.9 (data sharing) and 2.10
 * (nesting) that gcc enforces, and no jump into or out of a structured
 * block, checked on the constructs analysis.c made: a program breaking
 * them is rejected here, at the user's line and in the user's names, not
 * later by the compiler on generated code or by a deadlock at run time. */
#include "tu.h"

#include <stdlib.h>
#include <string.h>

static int is_worksharing(int dir)
{
    return dir == DIR_FOR || dir == DIR_SECTIONS || dir == DIR_SECTION ||
           dir == DIR_SINGLE;
}

/* "parallel for" rather than "for" for the part of a combined construct */
static const char *con_spelling(const tu *t, int k)
{
    return t->cons.v[k].p->dir_spelling;
}

static void nesting_error(tu *t, int k, int outer, const char *why)
{
    construct *c = &t->cons.v[k];
    tr_tu_error(t, c->p->dir_off, "'#pragma omp %s' cannot be closely nested "
                "inside the '#pragma omp %s' of line %d: %s", c->p->dir_spelling,
                con_spelling(t, outer), t->cons.v[outer].line, why);
}

static void check_nesting(tu *t, int k)
{
    construct *c = &t->cons.v[k];
    int up = c->parent, pd = up >= 0 ? t->cons.v[up].dir : -1, q;
    switch (c->dir) {
    case DIR_FOR: case DIR_SECTIONS: case DIR_SINGLE: case DIR_BARRIER:
        if (c->combined == 2 || up < 0)
            break;
        if (is_worksharing(pd) || pd == DIR_CRITICAL || pd == DIR_ORDERED ||
            pd == DIR_MASTER || pd == DIR_TASK)
            nesting_error(t, k, up, "a work-sharing construct or a barrier "
                          "cannot be inside a work-sharing, critical, "
                          "ordered, master or task region (a barrier there "
                          "would not be met by every thread)");
        break;
    case DIR_MASTER:
        if (up >= 0 && (is_worksharing(pd) || pd == DIR_TASK))
            nesting_error(t, k, up, "master cannot be inside a work-sharing "
                          "or task region");
        break;
    case DIR_ORDERED:
        if (up < 0)
            break; /* orphaned: the loop is in a caller */
        if (pd == DIR_CRITICAL || pd == DIR_TASK)
            nesting_error(t, k, up, "ordered cannot be inside a critical or "
                          "task region");
        else if (pd != DIR_FOR || !t->cons.v[up].ordered)
            tr_tu_error(t, c->p->dir_off, "'#pragma omp ordered' must be closely "
                        "nested inside a loop with an 'ordered' clause (add "
                        "'ordered' to the '#pragma omp %s' of line %d)",
                        con_spelling(t, up), t->cons.v[up].line);
        break;
    case DIR_CRITICAL:
        /* critical sections of one name share one lock: the inner one
         * would wait for ever */
        for (q = up; q >= 0; q = t->cons.v[q].parent) {
            const char *a = c->p->critical_name, *b;
            if (t->cons.v[q].dir != DIR_CRITICAL)
                continue;
            b = t->cons.v[q].p->critical_name;
            if ((!a && !b) || (a && b && !strcmp(a, b))) {
                tr_tu_error(t, c->p->dir_off, "'#pragma omp critical%s%s%s' "
                            "cannot be nested inside the critical section of "
                            "the same name of line %d (it would wait for "
                            "itself)", a ? "(" : "", a ? a : "", a ? ")" : "",
                            t->cons.v[q].line);
                break;
            }
        }
        break;
    default:
        break;
    }
}

/* named in a threadprivate directive */
static int is_threadprivate(const tu *t, int v)
{
    int i;
    for (i = 0; i < t->cons.n; i++)
        if (t->cons.v[i].dir == DIR_THREADPRIVATE &&
            tr_con_in_list(t->cons.v[i].priv.v, t->cons.v[i].priv.n, v))
            return 1;
    return 0;
}

/* The construct at or around the work-sharing construct k in which v is
 * private (up to the parallel region k binds to), or -1. */
static int private_outside(tu *t, int k, int v)
{
    int q;
    for (q = t->cons.v[k].parent; q >= 0; q = t->cons.v[q].parent) {
        construct *c = &t->cons.v[q];
        var *vv = &t->vars.v[v];
        if (tr_con_privatizes(c, v))
            return q;
        if (c->dir == DIR_PARALLEL) {
            int d = vv->decls.n ? vv->decls.v[0] : -1;
            if (vv->kind == VK_LOCAL && d >= 0 &&
                t->nodes.v[d].b >= c->sb && t->nodes.v[d].b < c->se)
                return q;
            return -1;
        }
        if (c->dir == DIR_TASK)
            return -1;
    }
    return -1;
}

static void check_clauses(tu *t, int k)
{
    construct *c = &t->cons.v[k];
    const omp_pragma *p = c->p;
    int i, j;
    if (c->combined == 2) /* its pragma is checked with the parallel part */
        return;
    for (i = 0; i < p->nclauses; i++) {
        const omp_clause *cl = &p->clauses[i];
        for (j = 0; j < cl->nvars; j++) {
            int v = tr_analysis_lookup(t, cl->vars[j].name, cl->vars[j].off, c->func);
            int tp, q;
            var *vv;
            if (v < 0)
                continue; /* reported already */
            vv = &t->vars.v[v];
            tp = is_threadprivate(t, v);
            switch (cl->kind) {
            case CL_PRIVATE: case CL_FIRSTPRIVATE: case CL_LASTPRIVATE:
            case CL_SHARED: case CL_REDUCTION:
                if (tp) {
                    tr_tu_error(t, cl->vars[j].off, "'%s' is threadprivate: it "
                                "may appear in copyin and copyprivate only, not "
                                "in '%s'", vv->name, cl->spelling);
                    continue;
                }
                break;
            case CL_COPYIN:
                if (!tp && !vv->tls)
                    tr_tu_error(t, cl->vars[j].off, "'%s' in copyin must be "
                                "threadprivate (declare it with '#pragma omp "
                                "threadprivate(%s)')", vv->name, vv->name);
                continue;
            default:
                continue;
            }
            if (vv->is_const && cl->kind != CL_FIRSTPRIVATE && cl->kind != CL_SHARED) {
                tr_tu_error(t, cl->vars[j].off, "'%s' is const: it may appear in "
                            "shared and firstprivate only, not in '%s'", vv->name,
                            cl->spelling);
                continue;
            }
            /* a work-sharing construct's reduction, firstprivate and
             * lastprivate refer to the variable of its parallel region */
            if ((cl->kind == CL_REDUCTION || cl->kind == CL_FIRSTPRIVATE ||
                 cl->kind == CL_LASTPRIVATE) && !c->combined &&
                (c->dir == DIR_FOR || c->dir == DIR_SECTIONS || c->dir == DIR_SINGLE) &&
                (q = private_outside(t, k, v)) >= 0)
                tr_tu_error(t, cl->vars[j].off, "'%s' in '%s' must be shared in "
                            "the enclosing parallel region, but it is private in "
                            "the '#pragma omp %s' of line %d", vv->name,
                            cl->spelling, con_spelling(t, q), t->cons.v[q].line);
        }
    }
}

static void check_threadprivate(tu *t, int k)
{
    construct *c = &t->cons.v[k];
    int j, n;
    if (c->dir != DIR_THREADPRIVATE || c->priv.n != c->p->nvars)
        return;
    for (j = 0; j < c->priv.n; j++)
        for (n = 0; n < t->nodes.n; n++)
            if (t->nodes.v[n].kind == CXCursor_DeclRefExpr &&
                t->nodes.v[n].var == c->priv.v[j] && t->nodes.v[n].b < c->p->begin) {
                int line;
                tr_srcmap_presumed(&t->map, t->nodes.v[n].b, NULL, &line, NULL);
                tr_tu_error(t, c->p->vars[j].off, "'%s' declared threadprivate "
                            "after its first use (line %d): put the directive "
                            "before any use", c->p->vars[j].name, line);
                break;
            }
}

static int is_loop_kind(enum CXCursorKind k)
{
    return k == CXCursor_ForStmt || k == CXCursor_WhileStmt || k == CXCursor_DoStmt;
}

/* the loop of a '#pragma omp for' (one of a collapsed nest), or -1 */
static int omp_loop_of(const tu *t, int n)
{
    int i, m;
    for (i = 0; i < t->cons.n; i++)
        if (t->cons.v[i].dir == DIR_FOR)
            for (m = 0; m < t->cons.v[i].nloops; m++)
                if (t->cons.v[i].loops[m].node == n)
                    return i;
    return -1;
}

/* the LabelStmt a goto names, or -1 */
static int goto_target(tu *t, int g)
{
    int ch, i;
    for (ch = t->nodes.v[g].first; ch >= 0; ch = t->nodes.v[ch].next)
        if (t->nodes.v[ch].kind == CXCursor_LabelRef) {
            CXCursor l = clang_getCursorReferenced(t->nodes.v[ch].c);
            unsigned off;
            /* cursors made by clang_getCursorReferenced do not compare
             * equal to the visited ones: compare locations */
            clang_getSpellingLocation(clang_getCursorLocation(l), NULL, NULL,
                                      NULL, &off);
            for (i = t->funcs.v[t->nodes.v[g].func].node; i < t->nodes.n; i++)
                if (t->nodes.v[i].kind == CXCursor_LabelStmt &&
                    t->nodes.v[i].loc == off)
                    return i;
        }
    return -1;
}

static char *label_name(tu *t, int n)
{
    CXString s = clang_getCursorSpelling(t->nodes.v[n].c);
    char *r = tr_xstrdup(clang_getCString(s));
    clang_disposeString(s);
    return r;
}

/* goto, break, continue and return may not enter or leave a structured
 * block: the block becomes a function of its own */
static void check_jump(tu *t, int n)
{
    tr_node *nd = &t->nodes.v[n];
    int k = nd->func >= 0 ? tr_con_at(t, nd->func, nd->b) : -1;
    if (nd->kind == CXCursor_ReturnStmt) {
        if (k >= 0 && t->cons.v[k].dir != DIR_THREADPRIVATE)
            tr_tu_error(t, nd->b, "'return' cannot leave the block of '#pragma "
                        "omp %s' (line %d)", con_spelling(t, k), t->cons.v[k].line);
    } else if (nd->kind == CXCursor_GotoStmt) {
        int l = goto_target(t, n), lk;
        char *name;
        if (l < 0)
            return;
        lk = tr_con_at(t, nd->func, t->nodes.v[l].b);
        if (lk == k)
            return;
        name = label_name(t, l);
        if (k >= 0 && !tr_con_contains(t, k, lk))
            tr_tu_error(t, nd->b, "'goto %s' cannot leave the block of '#pragma "
                        "omp %s' (line %d)", name, con_spelling(t, k),
                        t->cons.v[k].line);
        else
            tr_tu_error(t, nd->b, "'goto %s' cannot jump into the block of "
                        "'#pragma omp %s' (line %d)", name, con_spelling(t, lk),
                        t->cons.v[lk].line);
        free(name);
    } else if (nd->kind == CXCursor_BreakStmt || nd->kind == CXCursor_ContinueStmt) {
        int brk = nd->kind == CXCursor_BreakStmt, p, w;
        const char *what = brk ? "break" : "continue";
        for (p = nd->parent; p >= 0; p = t->nodes.v[p].parent)
            if (is_loop_kind(t->nodes.v[p].kind) ||
                (brk && t->nodes.v[p].kind == CXCursor_SwitchStmt))
                break;
        if (p < 0 || k < 0)
            return;
        if (brk && (w = omp_loop_of(t, p)) >= 0)
            tr_tu_error(t, nd->b, "'break' cannot leave the loop of '#pragma omp "
                        "%s' (line %d): its iterations are shared among threads",
                        con_spelling(t, w), t->cons.v[w].line);
        else if (t->nodes.v[p].b < t->cons.v[k].sb)
            tr_tu_error(t, nd->b, "'%s' cannot leave the block of '#pragma omp "
                        "%s' (line %d)", what, con_spelling(t, k), t->cons.v[k].line);
    }
}

void tr_rules_check(tu *t)
{
    int i;
    for (i = 0; i < t->cons.n; i++) {
        if (t->cons.v[i].dir == DIR_THREADPRIVATE) {
            check_threadprivate(t, i);
            continue;
        }
        if (t->cons.v[i].func < 0)
            continue;
        check_nesting(t, i);
        check_clauses(t, i);
    }
    for (i = 0; i < t->nodes.n; i++)
        check_jump(t, i);
}
