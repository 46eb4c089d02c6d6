/* analysis.c - finds `#pragma omp` lines, maps each directive to the
 * statement it governs, resolves the variables its clauses name, and
 * recognises canonical loops. */
#include "tu.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------
 * scopes
 * ------------------------------------------------------------------------ */

/* The variable `name` visible at off (inside function func, or at file
 * scope when func < 0), or -1. */
int tr_analysis_lookup(tu *t, const char *name, unsigned off, int func)
{
    int i, best = -1;
    unsigned best_b = 0;
    for (i = 0; i < t->vars.n; i++) {
        var *v = &t->vars.v[i];
        if (strcmp(v->name, name))
            continue;
        if (v->kind == VK_LOCAL || v->kind == VK_PARAM || v->kind == VK_STATIC) {
            if (v->func != func || off < v->scope_b || off >= v->scope_e)
                continue;
            if (best < 0 || t->vars.v[best].kind == VK_GLOBAL ||
                t->vars.v[best].kind == VK_SYSTEM || v->scope_b > best_b) {
                best = i;
                best_b = v->scope_b;
            }
        } else if (best < 0) {
            int k;
            for (k = 0; k < v->decls.n; k++) {
                tr_node *d = &t->nodes.v[v->decls.v[k]];
                /* a file-scope declaration before off, or a block-scope
                 * extern visible here */
                if (d->loc < off && (d->func < 0 || d->func == func))
                    best = i;
            }
            if (v->kind == VK_SYSTEM && v->decls.n == 0)
                best = i;
        }
    }
    return best;
}

/* ------------------------------------------------------------------------
 * constructs
 * ------------------------------------------------------------------------ */

int tr_con_is_region(const construct *c)
{
    return c->dir == DIR_PARALLEL;
}

int tr_con_in_list(const int *list, int n, int var)
{
    int i;
    for (i = 0; i < n; i++)
        if (list[i] == var)
            return 1;
    return 0;
}

int tr_con_privatizes(const construct *c, int v)
{
    int i;
    if (tr_con_in_list(c->priv.v, c->priv.n, v) ||
        tr_con_in_list(c->fpriv.v, c->fpriv.n, v) ||
        tr_con_in_list(c->lpriv.v, c->lpriv.n, v) ||
        tr_con_in_list(c->red.v, c->red.n, v) ||
        tr_con_in_list(c->task_fp.v, c->task_fp.n, v))
        return 1;
    for (i = 0; i < c->nloops; i++)
        if (c->loops[i].var == v)
            return 1;
    return 0;
}

int tr_con_contains(const tu *t, int outer, int inner)
{
    while (inner >= 0) {
        if (inner == outer)
            return 1;
        inner = t->cons.v[inner].parent;
    }
    return 0;
}

int tr_con_at(const tu *t, int func, unsigned off)
{
    int i, best = -1;
    const fninfo *f;
    if (func < 0)
        return -1;
    f = &t->funcs.v[func];
    for (i = 0; i < f->cons.n; i++) {
        const construct *c = &t->cons.v[f->cons.v[i]];
        if (c->b <= off && off < c->e)
            best = f->cons.v[i]; /* later ones are nested deeper */
    }
    return best;
}

static int has_block(int dir)
{
    switch (dir) {
    case DIR_BARRIER: case DIR_FLUSH: case DIR_THREADPRIVATE: case DIR_TASKWAIT:
    case DIR_TASKYIELD: case DIR_IGNORED:
        return 0;
    default:
        return 1;
    }
}

static int is_stmt_kind(enum CXCursorKind k)
{
    return clang_isStatement(k) || clang_isExpression(k);
}

/* End of the statement n, including the ';' of an expression, return,
 * break, do-while ... statement. */
unsigned tr_analysis_stmt_end(tu *t, int n)
{
    unsigned e = t->nodes.v[n].e, p = e;
    if (t->nodes.v[n].kind == CXCursor_CompoundStmt)
        return e;
    while (p < t->len && isspace((unsigned char)t->text[p]))
        p++;
    if (p < t->len && t->text[p] == ';')
        return p + 1;
    return e;
}

/* The statement that starts first after off inside function f and whose
 * parent contains the pragma at pb; -1 when the block ends first. */
static int stmt_after(tu *t, int f, unsigned pb, unsigned off)
{
    int i, best = -1;
    for (i = t->funcs.v[f].node; i < t->nodes.n; i++) {
        tr_node *n = &t->nodes.v[i];
        if (n->func != f)
            continue;
        if (n->b >= off && (best < 0 || n->b < t->nodes.v[best].b))
            best = i;
    }
    if (best < 0)
        return -1;
    {
        tr_node *n = &t->nodes.v[best];
        tr_node *p = n->parent >= 0 ? &t->nodes.v[n->parent] : NULL;
        if (!p || p->b >= pb || p->e <= off)
            return -1;
    }
    return best;
}

static void resolve_list(tu *t, construct *c, const pname *names, int n,
                         void *vec, const char *what)
{
    VEC(int) *out = vec;
    int i;
    for (i = 0; i < n; i++) {
        int v = tr_analysis_lookup(t, names[i].name, names[i].off, c->func);
        if (v < 0) {
            tr_tu_error(t, names[i].off, "use of undeclared identifier '%s' in "
                        "'%s'", names[i].name, what);
            continue;
        }
        VEC_PUSH(*out, v);
    }
}

/* Identifiers of the expression text[r) that name variables: references
 * evaluated where the construct starts (in its parent's context). */
static void expr_refs(tu *t, construct *c, prange r, int start)
{
    unsigned i = r.b;
    while (i < r.e) {
        char ch = t->text[i];
        if (ch == '"' || ch == '\'') {
            i++;
            while (i < r.e && t->text[i] != ch) {
                if (t->text[i] == '\\')
                    i++;
                i++;
            }
            i++;
        } else if (isalpha((unsigned char)ch) || ch == '_' || (unsigned char)ch >= 0x80) {
            unsigned s = i, p = s;
            char *name;
            int v, member = 0;
            /* bytes >= 0x80: a UTF-8 identifier */
            while (i < r.e && (isalnum((unsigned char)t->text[i]) || t->text[i] == '_' ||
                               (unsigned char)t->text[i] >= 0x80))
                i++;
            while (p > r.b && isspace((unsigned char)t->text[p - 1]))
                p--;
            if (p > r.b && (t->text[p - 1] == '.' ||
                            (p > r.b + 1 && t->text[p - 1] == '>' &&
                             t->text[p - 2] == '-')))
                member = 1;
            if (member)
                continue;
            name = tr_xstrndup(t->text + s, i - s);
            v = tr_analysis_lookup(t, name, s, c->func);
            free(name);
            if (v >= 0) {
                ref rf;
                rf.var = v;
                rf.b = s;
                rf.e = i;
                rf.start = start;
                rf.access = ACC_READ;
                rf.func = c->func;
                rf.node = -1;
                VEC_PUSH(t->refs, rf);
            }
        } else if (isdigit((unsigned char)ch)) {
            while (i < r.e && (isalnum((unsigned char)t->text[i]) || t->text[i] == '.' ||
                               t->text[i] == '_'))
                i++;
        } else {
            i++;
        }
    }
}

/* ------------------------------------------------------------------------
 * canonical loops
 * ------------------------------------------------------------------------ */

static int is_ref_to(tu *t, int n, int v)
{
    n = tr_ast_strip(t, n);
    return n >= 0 && t->nodes.v[n].kind == CXCursor_DeclRefExpr &&
           t->nodes.v[n].var == v && v >= 0;
}

static prange node_range(tu *t, int n)
{
    prange r;
    r.b = t->nodes.v[n].b;
    r.e = t->nodes.v[n].e;
    return r;
}

static int parse_loop(tu *t, int fs, loopinfo *L)
{
    int init, cond, inc, n, v = -1, k;
    CXType ty;
    enum CXTypeKind tk;
    memset(L, 0, sizeof *L);
    L->node = fs;
    if (t->nodes.v[fs].kind != CXCursor_ForStmt) {
        tr_tu_error(t, t->nodes.v[fs].b, "a 'for' loop must follow '#pragma omp "
                    "for'");
        return -1;
    }
    if (tr_ast_nchildren(t, fs) != 4) {
        tr_tu_error(t, t->nodes.v[fs].b, "the loop after '#pragma omp for' needs "
                    "an initialisation, a test and an increment");
        return -1;
    }
    init = tr_ast_child(t, fs, 0);
    cond = tr_ast_strip(t, tr_ast_child(t, fs, 1));
    inc = tr_ast_strip(t, tr_ast_child(t, fs, 2));
    L->body = tr_ast_child(t, fs, 3);
    /* init: v = lb, or T v = lb */
    if (t->nodes.v[init].kind == CXCursor_DeclStmt) {
        int d = t->nodes.v[init].first;
        if (d >= 0 && t->nodes.v[d].next < 0 &&
            t->nodes.v[d].kind == CXCursor_VarDecl && t->vars.v[t->nodes.v[d].var].init >= 0) {
            v = t->nodes.v[d].var;
            L->lb = node_range(t, t->vars.v[v].init);
            L->declared = 1;
        }
    } else {
        n = tr_ast_strip(t, init);
        if (t->nodes.v[n].kind == CXCursor_BinaryOperator &&
            clang_getCursorBinaryOperatorKind(t->nodes.v[n].c) == CXBinaryOperator_Assign) {
            int l = tr_ast_strip(t, tr_ast_child(t, n, 0));
            if (t->nodes.v[l].kind == CXCursor_DeclRefExpr && t->nodes.v[l].var >= 0) {
                v = t->nodes.v[l].var;
                L->lb = node_range(t, tr_ast_child(t, n, 1));
            }
        }
    }
    if (v < 0) {
        tr_tu_error(t, t->nodes.v[init].b, "the loop after '#pragma omp for' must "
                    "start with 'var = lower-bound'");
        return -1;
    }
    L->var = v;
    ty = clang_getCanonicalType(t->vars.v[v].type);
    tk = ty.kind;
    if (tk == CXType_Pointer) {
        L->is_ptr = 1;
    } else if (tk == CXType_Bool || tk == CXType_UChar || tk == CXType_Char_U ||
               tk == CXType_UShort || tk == CXType_UInt || tk == CXType_ULong ||
               tk == CXType_ULongLong || tk == CXType_UInt128) {
        L->is_unsigned = 1;
    } else if (!(tk == CXType_Char_S || tk == CXType_SChar || tk == CXType_Short ||
                 tk == CXType_Int || tk == CXType_Long || tk == CXType_LongLong ||
                 tk == CXType_Int128 || tk == CXType_Enum || tk == CXType_WChar)) {
        tr_tu_error(t, t->nodes.v[init].b, "the variable of a '#pragma omp for' "
                    "loop must have integer or pointer type");
        return -1;
    }
    if (tk == CXType_Enum)
        L->is_unsigned = 0;
    /* test */
    if (t->nodes.v[cond].kind == CXCursor_BinaryOperator) {
        enum CXBinaryOperatorKind op = clang_getCursorBinaryOperatorKind(t->nodes.v[cond].c);
        char cmp = op == CXBinaryOperator_LT ? '<' : op == CXBinaryOperator_LE ? 'l'
                   : op == CXBinaryOperator_GT ? '>' : op == CXBinaryOperator_GE ? 'g' : 0;
        if (cmp && is_ref_to(t, tr_ast_child(t, cond, 0), v)) {
            L->cmp = cmp;
            L->ub = node_range(t, tr_ast_child(t, cond, 1));
        } else if (cmp && is_ref_to(t, tr_ast_child(t, cond, 1), v)) {
            L->cmp = cmp == '<' ? '>' : cmp == '>' ? '<' : cmp == 'l' ? 'g' : 'l';
            L->ub = node_range(t, tr_ast_child(t, cond, 0));
        }
    }
    if (!L->cmp) {
        tr_tu_error(t, t->nodes.v[cond].b, "the test of a '#pragma omp for' loop "
                    "must compare '%s' with <, <=, > or >=", t->vars.v[v].name);
        return -1;
    }
    /* increment */
    k = 0;
    if (t->nodes.v[inc].kind == CXCursor_UnaryOperator &&
        is_ref_to(t, tr_ast_child(t, inc, 0), v)) {
        enum CXUnaryOperatorKind op = clang_getCursorUnaryOperatorKind(t->nodes.v[inc].c);
        if (op == CXUnaryOperator_PostInc || op == CXUnaryOperator_PreInc)
            k = 1;
        else if (op == CXUnaryOperator_PostDec || op == CXUnaryOperator_PreDec)
            k = 1, L->step_neg = 1;
    } else if (t->nodes.v[inc].kind == CXCursor_CompoundAssignOperator &&
               is_ref_to(t, tr_ast_child(t, inc, 0), v)) {
        enum CXBinaryOperatorKind op = clang_getCursorBinaryOperatorKind(t->nodes.v[inc].c);
        if (op == CXBinaryOperator_AddAssign || op == CXBinaryOperator_SubAssign) {
            k = 1;
            L->step = node_range(t, tr_ast_child(t, inc, 1));
            L->step_neg = op == CXBinaryOperator_SubAssign;
        }
    } else if (t->nodes.v[inc].kind == CXCursor_BinaryOperator &&
               clang_getCursorBinaryOperatorKind(t->nodes.v[inc].c) == CXBinaryOperator_Assign &&
               is_ref_to(t, tr_ast_child(t, inc, 0), v)) {
        int r = tr_ast_strip(t, tr_ast_child(t, inc, 1));
        if (t->nodes.v[r].kind == CXCursor_BinaryOperator) {
            enum CXBinaryOperatorKind op = clang_getCursorBinaryOperatorKind(t->nodes.v[r].c);
            if (op == CXBinaryOperator_Add && is_ref_to(t, tr_ast_child(t, r, 0), v))
                k = 1, L->step = node_range(t, tr_ast_child(t, r, 1));
            else if (op == CXBinaryOperator_Add && is_ref_to(t, tr_ast_child(t, r, 1), v))
                k = 1, L->step = node_range(t, tr_ast_child(t, r, 0));
            else if (op == CXBinaryOperator_Sub && is_ref_to(t, tr_ast_child(t, r, 0), v))
                k = 1, L->step = node_range(t, tr_ast_child(t, r, 1)), L->step_neg = 1;
        }
    }
    if (!k) {
        tr_tu_error(t, t->nodes.v[inc].b, "the increment of a '#pragma omp for' "
                    "loop must be %s++, %s--, %s += step, %s -= step or %s = %s "
                    "+/- step", t->vars.v[v].name, t->vars.v[v].name,
                    t->vars.v[v].name, t->vars.v[v].name, t->vars.v[v].name,
                    t->vars.v[v].name);
        return -1;
    }
    return 0;
}

static int setup_loops(tu *t, construct *c)
{
    const omp_clause *col = tr_pragma_find_clause(c->p, CL_COLLAPSE);
    int depth = col ? (int)col->ival : 1, k, fs = c->stmt;
    if (fs < 0) {
        tr_tu_error(t, c->p->begin, "a 'for' loop must follow '#pragma omp %s'",
                    c->p->dir_spelling);
        return -1;
    }
    if (depth > 16)
        depth = 16;
    for (k = 0; k < depth; k++) {
        int body;
        if (parse_loop(t, fs, &c->loops[k]) < 0)
            return -1;
        c->nloops = k + 1;
        if (k + 1 == depth)
            break;
        body = c->loops[k].body;
        if (t->nodes.v[body].kind == CXCursor_CompoundStmt &&
            tr_ast_nchildren(t, body) == 1)
            body = t->nodes.v[body].first;
        if (t->nodes.v[body].kind != CXCursor_ForStmt) {
            tr_tu_error(t, t->nodes.v[body].b, "collapse(%d) needs %d perfectly "
                        "nested loops", depth, depth);
            return -1;
        }
        fs = body;
    }
    return 0;
}

/* ------------------------------------------------------------------------
 * building the construct list
 * ------------------------------------------------------------------------ */

static int new_construct(tu *t, omp_pragma *p, int dir, int func)
{
    construct c;
    memset(&c, 0, sizeof c);
    c.p = p;
    c.dir = dir;
    c.func = func;
    c.parent = -1;
    c.stmt = -1;
    c.b = p->begin;
    c.e = p->end;
    tr_srcmap_presumed(&t->map, p->begin, NULL, &c.line, NULL);
    VEC_PUSH(t->cons, c);
    return t->cons.n - 1;
}

/* Distributes the clauses of a (possibly combined) pragma. */
static void setup_clauses(tu *t, int k, int part)
{
    construct *c = &t->cons.v[k];
    omp_pragma *p = c->p;
    int i, j;
    for (i = 0; i < p->nclauses; i++) {
        const omp_clause *cl = &p->clauses[i];
        int to_par = 1, to_ws = 1;
        if (part) {
            switch (cl->kind) {
            case CL_SCHEDULE: case CL_COLLAPSE: case CL_ORDERED: case CL_LASTPRIVATE:
                to_par = 0;
                break;
            case CL_FIRSTPRIVATE:
                break; /* per variable below */
            default:
                to_ws = 0;
            }
            if ((part == 1 && !to_par) || (part == 2 && !to_ws))
                continue;
        }
        switch (cl->kind) {
        case CL_IF: c->c_if = cl; break;
        case CL_NUM_THREADS: c->c_num_threads = cl; break;
        case CL_SCHEDULE: c->c_schedule = cl; break;
        case CL_FINAL: c->c_final = cl; break;
        case CL_DEFAULT: c->dflt = cl->dflt; break;
        case CL_NOWAIT: c->nowait = 1; break;
        case CL_ORDERED: c->ordered = 1; break;
        case CL_PRIVATE: resolve_list(t, c, cl->vars, cl->nvars, &c->priv, "private"); break;
        case CL_LASTPRIVATE: resolve_list(t, c, cl->vars, cl->nvars, &c->lpriv, "lastprivate"); break;
        case CL_SHARED: resolve_list(t, c, cl->vars, cl->nvars, &c->shared, "shared"); break;
        case CL_COPYIN: resolve_list(t, c, cl->vars, cl->nvars, &c->copyin, "copyin"); break;
        case CL_COPYPRIVATE: resolve_list(t, c, cl->vars, cl->nvars, &c->copyprivate, "copyprivate"); break;
        case CL_REDUCTION: {
            int before = c->red.n;
            resolve_list(t, c, cl->vars, cl->nvars, &c->red, "reduction");
            for (j = before; j < c->red.n; j++)
                VEC_PUSH(c->redop, cl->redop);
            break;
        }
        case CL_FIRSTPRIVATE: {
            /* combined: firstprivate goes to the parallel part unless the
             * variable is also lastprivate (then both to the loop) */
            const omp_clause *lp = tr_pragma_find_clause(p, CL_LASTPRIVATE);
            for (j = 0; j < cl->nvars; j++) {
                int also_lp = 0, m, l;
                if (part && lp)
                    for (l = 0; l < p->nclauses; l++)
                        if (p->clauses[l].kind == CL_LASTPRIVATE)
                            for (m = 0; m < p->clauses[l].nvars; m++)
                                if (!strcmp(p->clauses[l].vars[m].name, cl->vars[j].name))
                                    also_lp = 1;
                if (part == 1 && also_lp)
                    continue;
                if (part == 2 && !also_lp)
                    continue;
                resolve_list(t, c, &cl->vars[j], 1, &c->fpriv, "firstprivate");
            }
            break;
        }
        default:
            break;
        }
    }
    if (part == 2)
        c->nowait = 1;
}

/* The statement of each `section` of a sections construct. */
static void setup_sections(tu *t, int k)
{
    construct *c = &t->cons.v[k];
    int s = c->stmt, ch, i, first = 1;
    if (s < 0 || t->nodes.v[s].kind != CXCursor_CompoundStmt) {
        tr_tu_error(t, c->p->begin, "'#pragma omp %s' must be followed by a "
                    "compound statement", c->p->dir_spelling);
        return;
    }
    for (ch = t->nodes.v[s].first; ch >= 0; ch = t->nodes.v[ch].next, first = 0) {
        int found = 0;
        prange r;
        for (i = 0; i < t->cons.n; i++) {
            construct *sc = &t->cons.v[i];
            if (sc->dir == DIR_SECTION && sc->stmt == ch) {
                found = 1;
                sc->parent = k;
                break;
            }
        }
        if (!found && !first) {
            tr_tu_error(t, t->nodes.v[ch].b, "a statement inside '#pragma omp "
                        "sections' must be preceded by '#pragma omp section'");
            return;
        }
        r.b = t->nodes.v[ch].b;
        r.e = tr_analysis_stmt_end(t, ch);
        VEC_PUSH(c->sections, r);
    }
}

/* Is offset off (a section's pragma) directly in block n, between its
 * statements rather than inside one of them? */
static int between_statements(const tu *t, int n, unsigned off)
{
    int ch;
    for (ch = t->nodes.v[n].first; ch >= 0; ch = t->nodes.v[ch].next)
        if (t->nodes.v[ch].b <= off && off < t->nodes.v[ch].e)
            return 0;
    return 1;
}

static int cmp_cons(const void *a, const void *b)
{
    const int *x = a, *y = b;
    return *x - *y;
}

/* 1. parses every `#pragma omp` line of the user's code into t->pragmas */
static void parse_pragmas(tu *t)
{
    unsigned off = 0;
    while (off < t->len) {
        const char *nl = memchr(t->text + off, '\n', t->len - off);
        unsigned end = nl ? (unsigned)(nl - t->text) : t->len;
        if (tr_pragma_is_omp(t->text + off, end - off) &&
            !tr_srcmap_is_system(&t->map, off)) {
            omp_pragma *p = tr_xcalloc(1, sizeof *p);
            pragma_msg err, warns[8];
            int nw = 0, w;
            unsigned b = off;
            while (t->text[b] == ' ' || t->text[b] == '\t')
                b++;
            if (tr_pragma_parse(t->text, b, end, p, &err, warns, &nw, 8) < 0) {
                tr_tu_error(t, err.off, "%s", err.msg);
                free(p);
            } else {
                p->begin = off;
                VEC_PUSH(t->pragmas, p);
            }
            for (w = 0; w < nw; w++)
                tr_tu_warning(t, warns[w].off, "%s", warns[w].msg);
        }
        off = end + 1;
    }
}

/* 2. one construct per directive (two for a combined one) */
static void make_constructs(tu *t)
{
    int i;
    for (i = 0; i < t->pragmas.n; i++) {
        omp_pragma *p = t->pragmas.v[i];
        int f = tr_ast_func_at(t, p->begin), k;
        if (f < 0) {
            if (p->dir == DIR_THREADPRIVATE || p->dir == DIR_IGNORED) {
                k = new_construct(t, p, p->dir, -1);
                continue;
            }
            tr_tu_error(t, p->dir_off, "'#pragma omp %s' must appear inside a "
                        "function", p->dir_spelling);
            continue;
        }
        if (p->dir == DIR_PARALLEL_FOR || p->dir == DIR_PARALLEL_SECTIONS) {
            k = new_construct(t, p, DIR_PARALLEL, f);
            t->cons.v[k].combined = 1;
            k = new_construct(t, p, p->dir == DIR_PARALLEL_FOR ? DIR_FOR : DIR_SECTIONS, f);
            t->cons.v[k].combined = 2;
        } else {
            k = new_construct(t, p, p->dir, f);
        }
    }
}

/* ... and the block each one governs: in source order; a directive
 * directly followed by another directive governs that one's construct */
static void find_blocks(tu *t)
{
    int i;
    for (i = 0; i < t->cons.n; i++) {
        construct *c = &t->cons.v[i];
        int s, nx;
        if (c->func < 0 || !has_block(c->dir))
            continue;
        if (c->combined == 1) /* shares the block of its work-sharing part */
            continue;
        s = stmt_after(t, c->func, c->p->begin, c->p->end);
        if (s < 0 || !is_stmt_kind(t->nodes.v[s].kind)) {
            tr_tu_error(t, c->p->dir_off, "'#pragma omp %s' must be followed by a "
                        "statement", c->p->dir_spelling);
            c->func = -2;
            continue;
        }
        if (t->nodes.v[s].kind == CXCursor_DeclStmt) {
            tr_tu_error(t, t->nodes.v[s].b, "a declaration cannot follow '#pragma "
                        "omp %s'", c->p->dir_spelling);
            c->func = -2;
            continue;
        }
        c->stmt = s;
        c->sb = t->nodes.v[s].b;
        c->se = tr_analysis_stmt_end(t, s);
        c->e = c->se;
        /* another directive between this one and the statement */
        for (nx = i + 1; nx < t->cons.n; nx++) {
            construct *d = &t->cons.v[nx];
            if (d->p == c->p)
                continue;
            if (d->func == c->func && d->p->begin > c->p->end && d->p->begin < c->sb) {
                if (!has_block(d->dir)) {
                    tr_tu_error(t, d->p->dir_off, "'#pragma omp %s' cannot be the "
                                "block of '#pragma omp %s'", d->p->dir_spelling,
                                c->p->dir_spelling);
                    c->func = -2;
                } else {
                    c->stmt = -1;
                    c->sb = d->p->begin;
                }
            }
            break;
        }
        if (c->combined == 2) { /* the parallel part's block is this one */
            construct *par = &t->cons.v[i - 1];
            par->stmt = -1;
            par->sb = c->b;
            par->se = c->e;
            par->e = c->e;
        }
    }
}

/* 3. nesting, per function, in source order (stable for combined) */
static void nest_constructs(tu *t)
{
    int i, j;
    VEC(int) order = {0};
    for (i = 0; i < t->cons.n; i++)
        if (t->cons.v[i].func >= 0)
            VEC_PUSH(order, i);
    if (order.n > 1) /* a unit without constructs has no vector at all */
        qsort(order.v, (size_t)order.n, sizeof *order.v, cmp_cons);
    for (i = 0; i < order.n; i++) {
        construct *c = &t->cons.v[order.v[i]];
        VEC_PUSH(t->funcs.v[c->func].cons, order.v[i]);
    }
    for (i = 0; i < t->funcs.n; i++) {
        fninfo *f = &t->funcs.v[i];
        int stack[256], sp = 0;
        for (j = 0; j < f->cons.n; j++) {
            int k = f->cons.v[j];
            construct *c = &t->cons.v[k];
            while (sp > 0 && t->cons.v[stack[sp - 1]].e <= c->b)
                sp--;
            c->parent = sp > 0 ? stack[sp - 1] : -1;
            if (sp < 256)
                stack[sp++] = k;
        }
    }
    free(order.v);
}

/* 4. clauses, loops, sections */
static void setup_constructs(tu *t)
{
    int i;
    for (i = 0; i < t->cons.n; i++) {
        construct *c = &t->cons.v[i];
        int start;
        if (c->func < 0) {
            if (c->func == -1 && c->dir == DIR_THREADPRIVATE)
                resolve_list(t, c, c->p->vars, c->p->nvars, &c->priv, "threadprivate");
            continue;
        }
        setup_clauses(t, i, c->combined);
        c = &t->cons.v[i];
        if (c->dir == DIR_FLUSH)
            resolve_list(t, c, c->p->vars, c->p->nvars, &c->flush, "flush");
        if (c->dir == DIR_THREADPRIVATE)
            resolve_list(t, c, c->p->vars, c->p->nvars, &c->priv, "threadprivate");
        if (c->dir == DIR_FOR && setup_loops(t, c) < 0)
            continue;
        if (c->dir == DIR_SECTIONS)
            setup_sections(t, i);
        if (c->dir == DIR_SECTION && (c->parent < 0 ||
                                      t->cons.v[c->parent].dir != DIR_SECTIONS))
            tr_tu_error(t, c->p->dir_off, "'#pragma omp section' outside '#pragma "
                        "omp sections'");
        else if (c->dir == DIR_SECTION && t->cons.v[c->parent].stmt >= 0 &&
                 !between_statements(t, t->cons.v[c->parent].stmt, c->p->begin))
            /* (OpenMP 3.0, 2.5.2: sections are directly nested; the
             * block would be the section before it, with a section
             * inside) */
            tr_tu_error(t, c->p->dir_off, "'#pragma omp section' must be directly "
                        "inside the block of the '#pragma omp %s' of line %d, not "
                        "in a block nested in it", t->cons.v[c->parent].p->dir_spelling,
                        t->cons.v[c->parent].line);
        /* expressions of clauses are evaluated where the construct starts,
         * in its parent's context (for `parallel for`, schedule's chunk is
         * evaluated inside the region) */
        start = c->parent;
        {
            const omp_clause *ex[4];
            int m, a;
            ex[0] = c->c_if;
            ex[1] = c->c_num_threads;
            ex[2] = c->c_schedule;
            ex[3] = c->c_final;
            for (m = 0; m < 4; m++)
                for (a = 0; ex[m] && a < ex[m]->nargs; a++)
                    expr_refs(t, c, ex[m]->args[a], start);
        }
    }
}

int tr_analysis_constructs(tu *t)
{
    parse_pragmas(t);
    make_constructs(t);
    find_blocks(t);
    if (tr_diag_errors)
        return -1;
    nest_constructs(t);
    setup_constructs(t);
    if (tr_diag_errors)
        return -1;
    tr_rules_check(t);
    return tr_diag_errors ? -1 : 0;
}
