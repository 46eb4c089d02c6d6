/* lower.c - work-sharing and synchronisation constructs lowered in place:
 * for, sections, single, master, critical, barrier, flush, ordered,
 * atomic, task, taskwait (parallel regions are outline.c's). */
#include "tu.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

static const char *const sched_abi[] = {
    "OMPDSM_SCHED_DEFAULT", "OMPDSM_SCHED_STATIC", "OMPDSM_SCHED_DYNAMIC",
    "OMPDSM_SCHED_GUIDED", "OMPDSM_SCHED_RUNTIME", "OMPDSM_SCHED_AUTO",
    "OMPDSM_SCHED_PROFILED"};

static const char *const op_abi[] = {
    "OMPDSM_OP_ADD", "OMPDSM_OP_SUB", "OMPDSM_OP_MUL", "OMPDSM_OP_AND",
    "OMPDSM_OP_OR", "OMPDSM_OP_XOR", "OMPDSM_OP_LAND", "OMPDSM_OP_LOR",
    "OMPDSM_OP_MAX", "OMPDSM_OP_MIN"};

int tr_con_depth(const tu *t, int k)
{
    int d = 0;
    for (k = t->cons.v[k].parent; k >= 0; k = t->cons.v[k].parent)
        d++;
    return d;
}

/* Indents the replacement like the code it replaces (the pragma line is
 * at column 1 after clang -E), so that -Wmisleading-indentation stays
 * quiet. */
static void indent(tu *t, int k, tr_sbuf *o)
{
    construct *c = &t->cons.v[k];
    unsigned p = c->se > c->sb ? c->sb : c->p->end + 1;
    int col;
    if (c->se <= c->sb) {
        while (p < t->len && (t->text[p] == ' ' || t->text[p] == '\t'))
            p++;
    }
    tr_srcmap_presumed(&t->map, p, NULL, NULL, &col);
    while (--col > 0)
        tr_sb_putc(o, ' ');
}

/* "/\* omp for schedule(static) *\/" */
void tr_lower_comment(tu *t, int k, tr_sbuf *o)
{
    construct *c = &t->cons.v[k];
    tr_sbuf s;
    indent(t, k, o);
    tr_sb_init(&s);
    tr_pragma_format(c->p, t->text, &s);
    if (c->combined == 1)
        tr_sb_printf(o, "/* omp %s: parallel part */", s.s);
    else if (c->combined == 2)
        tr_sb_printf(o, "/* omp %s: %s part */", s.s, tr_pragma_dir_name(c->dir));
    else
        tr_sb_printf(o, "/* omp %s */", s.s);
    tr_sb_free(&s);
    if (c->dir == DIR_FOR || c->dir == DIR_SECTIONS || c->dir == DIR_SINGLE ||
        c->dir == DIR_TASK)
        tr_sb_putc(o, '\n');
}

/* The name of v just outside construct k; an internal error if none. */
static char *outer_name(tu *t, int k, int v)
{
    char *n = tr_sharing_name(t, v, t->cons.v[k].parent, t->cons.v[k].b);
    if (!n) {
        tr_tu_error(t, t->cons.v[k].p->dir_off, "internal error: '%s' is not "
                    "available here", t->vars.v[v].name);
        n = tr_xstrdup(t->vars.v[v].name);
    }
    return n;
}

const char *tr_lower_redop_abi(int op)
{
    return op_abi[op];
}

/* OMPDSM_TY_* of a reduction or atomic operand; reports unsuitable ones */
const char *tr_lower_type_code(tu *t, CXType ty, int op, unsigned off,
                               const char *what, const char *name)
{
    const char *code = tr_ast_type_code(ty);
    CXType c = clang_getCanonicalType(ty);
    int fl = c.kind == CXType_Float || c.kind == CXType_Double ||
             c.kind == CXType_LongDouble;
    if (!code) {
        tr_tu_error(t, off, "%s '%s' must have an arithmetic type", what, name);
        return "0";
    }
    if (fl && (op == RED_AND || op == RED_OR || op == RED_XOR)) {
        tr_tu_error(t, off, "%s '%s' has a floating type: operator '%s' is not "
                    "allowed", what, name, tr_pragma_redop_name(op));
        return "0";
    }
    return code;
}

static void push_unique(int *list, int *n, int v)
{
    int i;
    for (i = 0; i < *n; i++)
        if (list[i] == v)
            return;
    list[(*n)++] = v;
}

/* Opens the blocks of a privatising construct: one with pointers to the
 * originals (firstprivate, lastprivate, reduction, task copies) when there
 * are such, then one with the private copies.  Returns how many blocks
 * privates_close() must close. */
static int privates_open(tu *t, int k, tr_sbuf *o)
{
    construct *c = &t->cons.v[k];
    int *cap = tr_xmalloc((size_t)(c->fpriv.n + c->lpriv.n + c->red.n +
                                   c->task_fp.n + 1) * sizeof *cap);
    int ncap = 0, i;
    for (i = 0; i < c->fpriv.n; i++) push_unique(cap, &ncap, c->fpriv.v[i]);
    for (i = 0; i < c->lpriv.n; i++) push_unique(cap, &ncap, c->lpriv.v[i]);
    for (i = 0; i < c->red.n; i++) push_unique(cap, &ncap, c->red.v[i]);
    for (i = 0; i < c->task_fp.n; i++) push_unique(cap, &ncap, c->task_fp.v[i]);
    if (ncap)
        tr_sb_puts(o, "{\n");
    for (i = 0; i < ncap; i++) {
        int v = cap[i];
        char *n = outer_name(t, k, v);
        tr_sb_printf(o, "  __typeof__(%s) *__ompdsm_o_%s = &(%s);\n", n,
                     t->vars.v[v].name, n);
        free(n);
    }
    free(cap);
    tr_sb_puts(o, ncap ? "  {\n" : "{\n");
    c = &t->cons.v[k];
    for (i = 0; i < c->nloops; i++) {
        int v = c->loops[i].var;
        char *ty;
        if (c->loops[i].declared) { /* not visible outside the loop */
            char *sp = tr_ast_var_type_name(t, v, 0);
            ty = tr_xasprintf("__typeof__(%s)", sp);
            free(sp);
        } else {
            ty = tr_sharing_type(t, v, c->parent, c->b);
        }
        c = &t->cons.v[k];
        tr_sb_printf(o, "    %s %s;\n", ty, t->vars.v[v].name);
        free(ty);
    }
#define PRIV_DECL(list, skip_loopvar)                                          \
    for (i = 0; i < c->list.n; i++) {                                          \
        int v = c->list.v[i], l, dup = 0;                                      \
        char *ty;                                                              \
        for (l = 0; l < c->nloops; l++)                                        \
            dup |= c->loops[l].var == v;                                       \
        if (dup && (skip_loopvar))                                             \
            continue;                                                          \
        ty = tr_sharing_type(t, v, c->parent, c->b);                              \
        c = &t->cons.v[k];                                                     \
        tr_sb_printf(o, "    %s %s;\n", ty, t->vars.v[v].name);                  \
        free(ty);                                                              \
    }
    PRIV_DECL(priv, 1)
    PRIV_DECL(lpriv, 1)
    for (i = 0; i < c->fpriv.n; i++) {
        int v = c->fpriv.v[i];
        const char *n = t->vars.v[v].name;
        if (tr_con_in_list(c->lpriv.v, c->lpriv.n, v))
            tr_sb_printf(o, "    __builtin_memcpy(&%s, __ompdsm_o_%s, sizeof %s);\n",
                         n, n, n);
        else
            tr_sb_printf(o, "    __typeof__(*__ompdsm_o_%s) %s; __builtin_memcpy(&%s, "
                         "__ompdsm_o_%s, sizeof %s);\n", n, n, n, n, n);
    }
    for (i = 0; i < c->task_fp.n; i++) {
        const char *n = t->vars.v[c->task_fp.v[i]].name;
        tr_sb_printf(o, "    __typeof__(*__ompdsm_o_%s) %s; __builtin_memcpy(&%s, "
                     "__ompdsm_o_%s, sizeof %s);\n", n, n, n, n, n);
    }
    for (i = 0; i < c->red.n; i++) {
        int v = c->red.v[i];
        const char *n = t->vars.v[v].name;
        const char *ty = tr_lower_type_code(t, t->vars.v[v].type, c->redop.v[i],
                                            c->p->dir_off, "reduction variable", n);
        c = &t->cons.v[k];
        tr_sb_printf(o, "    __typeof__(*__ompdsm_o_%s) %s; OMPDSM_reduce_init(&%s, "
                     "%s, %s);\n", n, n, n, ty, op_abi[c->redop.v[i]]);
    }
#undef PRIV_DECL
    return ncap ? 2 : 1;
}

static void privates_close(tr_sbuf *o, int nblocks)
{
    tr_sb_puts(o, nblocks == 2 ? "  }\n}" : "}");
}

static void reductions(tu *t, int k, tr_sbuf *o)
{
    construct *c = &t->cons.v[k];
    int i;
    if (!c->red.n)
        return;
    tr_sb_puts(o, "    { OMPDSM_red __ompdsm_r[] = {");
    for (i = 0; i < c->red.n; i++) {
        int v = c->red.v[i];
        const char *n = t->vars.v[v].name;
        const char *code = tr_ast_type_code(t->vars.v[v].type);
        tr_sb_printf(o, "%s{__ompdsm_o_%s, &%s, %s, %s}", i ? ", " : "", n, n,
                     code ? code : "0", op_abi[c->redop.v[i]]);
    }
    tr_sb_printf(o, "}; OMPDSM_reduce(__ompdsm_r, %d); }\n", c->red.n);
}

static char *expr_text(tu *t, prange r)
{
    return tr_render_str(t, r.b, r.e);
}

static char *new_site(tu *t, int k)
{
    construct *c = &t->cons.v[k];
    fninfo *f = &t->funcs.v[c->func];
    const char *file;
    char *name;
    tr_srcmap_presumed(&t->map, c->p->begin, &file, NULL, NULL);
    {
        char *base = tr_xasprintf("__ompdsm_site_%s_%d", f->name, c->line);
        int i, n = 2, clash;
        name = tr_xstrdup(base);
        do { /* unique, for several loops on one line */
            clash = 0;
            for (i = 0; i < t->sites.n; i++)
                if (!strcmp(t->sites.v[i], name))
                    clash = 1;
            if (clash) {
                free(name);
                name = tr_xasprintf("%s_%d", base, n++);
            }
        } while (clash);
        free(base);
        VEC_PUSH(t->sites, tr_xstrdup(name));
    }
    tr_sb_printf(&f->pre_decls, "static OMPDSM_loop_site %s = {\"", name);
    for (; *file; file++) {
        if (*file == '"' || *file == '\\')
            tr_sb_putc(&f->pre_decls, '\\');
        tr_sb_putc(&f->pre_decls, *file);
    }
    tr_sb_printf(&f->pre_decls, "\", %d, \"%s\", 0};\n", c->line, f->name);
    return name;
}

/* ------------------------------------------------------------------------
 * for
 * ------------------------------------------------------------------------ */

static void lower_for(tu *t, int k, tr_sbuf *o)
{
    construct *c = &t->cons.v[k];
    char *site = new_site(t, k);
    int l, i, nl, nb;
    const omp_clause *sc;
    c = &t->cons.v[k];
    nl = c->nloops;
    nb = privates_open(t, k, o);
    c = &t->cons.v[k];
    tr_sb_puts(o, "    OMPDSM_loop __ompdsm_L;\n"
               "    unsigned long long __ompdsm_lo, __ompdsm_hi, __ompdsm_k;\n");
    for (l = 0; l < nl; l++) {
        loopinfo *L = &c->loops[l];
        const char *vn = t->vars.v[L->var].name;
        char *lb = expr_text(t, L->lb), *ub = expr_text(t, L->ub);
        c = &t->cons.v[k];
        L = &c->loops[l];
        tr_sb_printf(o, "    __typeof__(%s) __ompdsm_lb%d = (%s), __ompdsm_ub%d = (%s);\n",
                     vn, l, lb, l, ub);
        if (L->step.e > L->step.b) {
            char *st = expr_text(t, L->step);
            c = &t->cons.v[k];
            L = &c->loops[l];
            tr_sb_printf(o, "    long long __ompdsm_st%d = %s(long long)(%s);\n", l,
                         L->step_neg ? "-" : "", st);
            free(st);
        } else {
            tr_sb_printf(o, "    long long __ompdsm_st%d = %s;\n", l,
                         L->step_neg ? "-1" : "1");
        }
        if (L->is_ptr)
            tr_sb_printf(o, "    unsigned long long __ompdsm_n%d = OMPDSM_trip_count_s(0, "
                         "(long long)(__ompdsm_ub%d - __ompdsm_lb%d), __ompdsm_st%d, '%c');\n",
                         l, l, l, l, L->cmp);
        else if (L->is_unsigned)
            tr_sb_printf(o, "    unsigned long long __ompdsm_n%d = OMPDSM_trip_count_u("
                         "(unsigned long long)__ompdsm_lb%d, (unsigned long long)"
                         "__ompdsm_ub%d, __ompdsm_st%d, '%c');\n", l, l, l, l, L->cmp);
        else
            tr_sb_printf(o, "    unsigned long long __ompdsm_n%d = OMPDSM_trip_count_s("
                         "(long long)__ompdsm_lb%d, (long long)__ompdsm_ub%d, "
                         "__ompdsm_st%d, '%c');\n", l, l, l, l, L->cmp);
        free(lb);
        free(ub);
    }
    tr_sb_puts(o, "    OMPDSM_loop_init(&__ompdsm_L, &");
    tr_sb_puts(o, site);
    tr_sb_puts(o, ", ");
    for (l = 0; l < nl; l++)
        tr_sb_printf(o, "%s__ompdsm_n%d", l ? " * " : "", l);
    sc = c->c_schedule;
    tr_sb_printf(o, ",\n        %s", sched_abi[sc ? sc->sched : 0]);
    for (i = 0; i < 3; i++) {
        if (sc && i < sc->nargs) {
            char *a = expr_text(t, sc->args[i]);
            tr_sb_printf(o, ", (long long)(%s)", a);
            free(a);
        } else {
            tr_sb_puts(o, ", 0");
        }
    }
    c = &t->cons.v[k];
    tr_sb_printf(o, ", %s);\n",
                 c->ordered ? (c->lpriv.n ? "OMPDSM_LOOP_ORDERED | OMPDSM_LOOP_MONOTONIC"
                                       : "OMPDSM_LOOP_ORDERED")
                         : (c->lpriv.n ? "OMPDSM_LOOP_MONOTONIC" : "0"));
    /* One loop, not ordered: the variable is an induction variable of its
     * own type, set at each chunk's start and stepped in that type, as in
     * the source.  Set from k at every iteration, (int)(lb + k * st)
     * truncates a 64-bit value, whose wrapping gcc cannot rule out: it
     * vectorized none of such loops (NPB UA's adds1m1: a[i] = c1 * a[i] +
     * b[i] scalar, against gcc -fopenmp's vector loop).  The step's last
     * value is the one the source loop's own test reads. */
    int stepped = nl == 1 && !c->ordered;
    if (stepped) {
        const char *vn = t->vars.v[c->loops[0].var].name;
        tr_sb_puts(o, "    while (OMPDSM_loop_next(&__ompdsm_L, &__ompdsm_lo, &__ompdsm_hi)) {\n");
        if (c->loops[0].is_ptr)
            tr_sb_printf(o, "      %s = __ompdsm_lb0 + (long long)__ompdsm_lo * __ompdsm_st0;\n"
                         "      for (__ompdsm_k = __ompdsm_lo; __ompdsm_k < __ompdsm_hi;"
                         " __ompdsm_k++, %s += __ompdsm_st0) {\n", vn, vn);
        else
            tr_sb_printf(o, "      %s = (__typeof__(%s))((unsigned long long)__ompdsm_lb0"
                         " + __ompdsm_lo * (unsigned long long)__ompdsm_st0);\n"
                         "      for (__ompdsm_k = __ompdsm_lo; __ompdsm_k < __ompdsm_hi;"
                         " __ompdsm_k++, %s += (__typeof__(%s))__ompdsm_st0) {\n",
                         vn, vn, vn, vn);
    } else {
        tr_sb_puts(o, "    while (OMPDSM_loop_next(&__ompdsm_L, &__ompdsm_lo, &__ompdsm_hi))\n"
                   "      for (__ompdsm_k = __ompdsm_lo; __ompdsm_k < __ompdsm_hi; __ompdsm_k++) {\n");
    }
    if (c->ordered)
        tr_sb_puts(o, "        OMPDSM_loop_iter(&__ompdsm_L, __ompdsm_k);\n");
    for (l = 0; l < nl && !stepped; l++) {
        loopinfo *L = &c->loops[l];
        const char *vn = t->vars.v[L->var].name;
        tr_sbuf idx;
        int m;
        tr_sb_init(&idx);
        /* k = ((k0 * n1) + k1) * n2 + k2 ... */
        tr_sb_puts(&idx, "(__ompdsm_k");
        for (m = l + 1; m < nl; m++)
            tr_sb_printf(&idx, " / __ompdsm_n%d", m);
        tr_sb_puts(&idx, ")");
        if (l > 0)
            tr_sb_printf(&idx, " %% __ompdsm_n%d", l);
        if (L->is_ptr)
            tr_sb_printf(o, "        %s = __ompdsm_lb%d + (long long)(%s) * __ompdsm_st%d;\n",
                         vn, l, idx.s, l);
        else
            tr_sb_printf(o, "        %s = (__typeof__(%s))((unsigned long long)__ompdsm_lb%d"
                         " + %s * (unsigned long long)__ompdsm_st%d);\n", vn, vn, l, idx.s, l);
        tr_sb_free(&idx);
    }
    {
        int body = c->loops[nl - 1].body;
        unsigned bb = t->nodes.v[body].b, be = tr_analysis_stmt_end(t, body);
        char *txt;
        tr_srcmap_sync(&t->map, bb, o);
        txt = tr_render_str(t, bb, be);
        tr_sb_puts(o, txt);
        free(txt);
        tr_sb_puts(o, stepped ? "\n      }\n    }\n" : "\n      }\n");
    }
    c = &t->cons.v[k];
    if (c->lpriv.n) {
        tr_sb_puts(o, "    if (OMPDSM_loop_last(&__ompdsm_L)) {\n");
        for (i = 0; i < c->lpriv.n; i++) {
            int v = c->lpriv.v[i];
            const char *n = t->vars.v[v].name;
            int isloop = -1;
            for (l = 0; l < nl; l++)
                if (c->loops[l].var == v)
                    isloop = l;
            if (isloop < 0)
                tr_sb_printf(o, "      __builtin_memcpy(__ompdsm_o_%s, &%s, sizeof %s);\n",
                             n, n, n);
            else if (c->loops[isloop].is_ptr)
                tr_sb_printf(o, "      *__ompdsm_o_%s = __ompdsm_lb%d + (long long)"
                             "__ompdsm_n%d * __ompdsm_st%d;\n", n, isloop, isloop, isloop);
            else
                tr_sb_printf(o, "      *__ompdsm_o_%s = (__typeof__(%s))((unsigned long "
                             "long)__ompdsm_lb%d + __ompdsm_n%d * (unsigned long long)"
                             "__ompdsm_st%d);\n", n, n, isloop, isloop, isloop);
        }
        tr_sb_puts(o, "    }\n");
    }
    reductions(t, k, o);
    c = &t->cons.v[k];
    /* 2: the loop of a combined parallel for, whose barrier is the
     * region's join (a profiled loop's times ride on a barrier of their
     * own: OMPDSM_loop_end in runtime/ompdsm_abi.h) */
    tr_sb_printf(o, "    OMPDSM_loop_end(&__ompdsm_L, %d);\n",
                 c->combined == 2 ? 2 : c->nowait);
    privates_close(o, nb);
    free(site);
}

/* ------------------------------------------------------------------------
 * sections, single
 * ------------------------------------------------------------------------ */

static void lower_sections(tu *t, int k, tr_sbuf *o)
{
    construct *c;
    char *site = new_site(t, k);
    int i, nb;
    nb = privates_open(t, k, o);
    c = &t->cons.v[k];
    tr_sb_printf(o, "    OMPDSM_loop __ompdsm_L;\n"
                 "    unsigned long long __ompdsm_lo, __ompdsm_hi, __ompdsm_k;\n"
                 "    OMPDSM_sections_init(&__ompdsm_L, &%s, %d);\n"
                 "    while (OMPDSM_loop_next(&__ompdsm_L, &__ompdsm_lo, &__ompdsm_hi))\n"
                 "      for (__ompdsm_k = __ompdsm_lo; __ompdsm_k < __ompdsm_hi; __ompdsm_k++)\n"
                 "        switch (__ompdsm_k) {\n", site, c->sections.n);
    for (i = 0; i < c->sections.n; i++) {
        prange r = t->cons.v[k].sections.v[i];
        char *txt;
        tr_sb_printf(o, "        case %d: {", i);
        tr_srcmap_sync(&t->map, r.b, o);
        txt = tr_render_str(t, r.b, r.e);
        tr_sb_puts(o, txt);
        free(txt);
        tr_sb_puts(o, "\n        } break;\n");
    }
    tr_sb_puts(o, "        }\n");
    c = &t->cons.v[k];
    if (c->lpriv.n) {
        tr_sb_puts(o, "    if (OMPDSM_loop_last(&__ompdsm_L)) {\n");
        for (i = 0; i < c->lpriv.n; i++) {
            const char *n = t->vars.v[c->lpriv.v[i]].name;
            tr_sb_printf(o, "      __builtin_memcpy(__ompdsm_o_%s, &%s, sizeof %s);\n", n, n, n);
        }
        tr_sb_puts(o, "    }\n");
    }
    reductions(t, k, o);
    c = &t->cons.v[k];
    tr_sb_printf(o, "    OMPDSM_loop_end(&__ompdsm_L, %d);\n", c->nowait);
    privates_close(o, nb);
    free(site);
}

static void body_text(tu *t, int k, tr_sbuf *o)
{
    construct *c = &t->cons.v[k];
    unsigned b = c->sb, e = c->se;
    char *txt;
    tr_srcmap_sync(&t->map, b, o);
    txt = tr_render_str(t, b, e);
    tr_sb_puts(o, txt);
    free(txt);
    tr_sb_putc(o, '\n');
}

static void lower_single(tu *t, int k, tr_sbuf *o)
{
    construct *c = &t->cons.v[k];
    int i, nb, ncp = c->copyprivate.n;
    /* private copies belong to the thread that executes the block */
    tr_sb_puts(o, "{\n  int __ompdsm_ex = OMPDSM_single_start();\n  if (__ompdsm_ex) ");
    nb = privates_open(t, k, o);
    body_text(t, k, o);
    privates_close(o, nb);
    tr_sb_putc(o, '\n');
    c = &t->cons.v[k];
    if (!ncp) {
        tr_sb_printf(o, "  OMPDSM_single_end(%d);\n}", c->nowait);
        return;
    }
    tr_sb_puts(o, "  {\n    struct {");
    for (i = 0; i < ncp; i++) {
        int v = c->copyprivate.v[i];
        char *n = outer_name(t, k, v);
        c = &t->cons.v[k];
        tr_sb_printf(o, " __typeof__(%s) %s;", n, t->vars.v[v].name);
        free(n);
    }
    tr_sb_puts(o, " } __ompdsm_cp;\n    if (__ompdsm_ex) {\n");
    for (i = 0; i < ncp; i++) {
        int v = c->copyprivate.v[i];
        char *n = outer_name(t, k, v);
        c = &t->cons.v[k];
        tr_sb_printf(o, "      __builtin_memcpy(&__ompdsm_cp.%s, &(%s), sizeof __ompdsm_cp.%s);\n",
                     t->vars.v[v].name, n, t->vars.v[v].name);
        free(n);
    }
    tr_sb_puts(o, "    }\n    OMPDSM_single_copyprivate(__ompdsm_ex, &__ompdsm_cp, "
               "sizeof __ompdsm_cp);\n    if (!__ompdsm_ex) {\n");
    for (i = 0; i < ncp; i++) {
        int v = c->copyprivate.v[i];
        char *n = outer_name(t, k, v);
        c = &t->cons.v[k];
        tr_sb_printf(o, "      __builtin_memcpy(&(%s), &__ompdsm_cp.%s, sizeof __ompdsm_cp.%s);\n",
                     n, t->vars.v[v].name, t->vars.v[v].name);
        free(n);
    }
    tr_sb_puts(o, "    }\n  }\n}");
}

/* ------------------------------------------------------------------------
 * atomic
 * ------------------------------------------------------------------------ */

static void squeeze(const char *s, size_t n, tr_sbuf *out)
{
    size_t i;
    for (i = 0; i < n; i++)
        if (!isspace((unsigned char)s[i]) && s[i] != '(' && s[i] != ')')
            tr_sb_putc(out, s[i]);
}

static int same_text(tu *t, int a, int b)
{
    tr_sbuf x, y;
    int r;
    tr_sb_init(&x);
    tr_sb_init(&y);
    squeeze(t->text + t->nodes.v[a].b, t->nodes.v[a].e - t->nodes.v[a].b, &x);
    squeeze(t->text + t->nodes.v[b].b, t->nodes.v[b].e - t->nodes.v[b].b, &y);
    r = x.n == y.n && x.n && !memcmp(x.s, y.s, x.n);
    tr_sb_free(&x);
    tr_sb_free(&y);
    return r;
}

static int binop_code(enum CXBinaryOperatorKind op)
{
    switch (op) {
    case CXBinaryOperator_Add: case CXBinaryOperator_AddAssign: return 0;
    case CXBinaryOperator_Sub: case CXBinaryOperator_SubAssign: return 1;
    case CXBinaryOperator_Mul: case CXBinaryOperator_MulAssign: return 2;
    case CXBinaryOperator_Div: case CXBinaryOperator_DivAssign: return 3;
    case CXBinaryOperator_And: case CXBinaryOperator_AndAssign: return 4;
    case CXBinaryOperator_Or: case CXBinaryOperator_OrAssign: return 5;
    case CXBinaryOperator_Xor: case CXBinaryOperator_XorAssign: return 6;
    case CXBinaryOperator_Shl: case CXBinaryOperator_ShlAssign: return 7;
    case CXBinaryOperator_Shr: case CXBinaryOperator_ShrAssign: return 8;
    default: return -1;
    }
}

static const char *const atomic_ops[] = {
    "OMPDSM_OP_ADD", "OMPDSM_OP_SUB", "OMPDSM_OP_MUL", "OMPDSM_OP_DIV",
    "OMPDSM_OP_AND", "OMPDSM_OP_OR", "OMPDSM_OP_XOR", "OMPDSM_OP_SHL",
    "OMPDSM_OP_SHR"};

static void lower_atomic(tu *t, int k, tr_sbuf *o)
{
    construct *c = &t->cons.v[k];
    int s = tr_ast_strip(t, c->stmt), x = -1, ex = -1, op = -1, rev = 0, vol;
    enum CXCursorKind kind = s >= 0 ? t->nodes.v[s].kind : CXCursor_InvalidCode;
    char *xt, *et, *vt;
    const char *ty;
    CXType xty;
    if (kind == CXCursor_CompoundAssignOperator) {
        x = tr_ast_child(t, s, 0);
        ex = tr_ast_child(t, s, 1);
        op = binop_code(clang_getCursorBinaryOperatorKind(t->nodes.v[s].c));
    } else if (kind == CXCursor_UnaryOperator) {
        enum CXUnaryOperatorKind u = clang_getCursorUnaryOperatorKind(t->nodes.v[s].c);
        x = tr_ast_child(t, s, 0);
        if (u == CXUnaryOperator_PostInc || u == CXUnaryOperator_PreInc)
            op = 0;
        else if (u == CXUnaryOperator_PostDec || u == CXUnaryOperator_PreDec)
            op = 1;
    } else if (kind == CXCursor_BinaryOperator &&
               clang_getCursorBinaryOperatorKind(t->nodes.v[s].c) == CXBinaryOperator_Assign) {
        int r = tr_ast_strip(t, tr_ast_child(t, s, 1));
        x = tr_ast_child(t, s, 0);
        if (r >= 0 && t->nodes.v[r].kind == CXCursor_BinaryOperator) {
            int a = tr_ast_strip(t, tr_ast_child(t, r, 0));
            int b = tr_ast_strip(t, tr_ast_child(t, r, 1));
            op = binop_code(clang_getCursorBinaryOperatorKind(t->nodes.v[r].c));
            if (op >= 0 && same_text(t, a, x))
                ex = tr_ast_child(t, r, 1);
            else if (op >= 0 && same_text(t, b, x))
                ex = tr_ast_child(t, r, 0), rev = 1;
            else
                op = -1;
        }
    }
    if (op < 0 || x < 0) {
        tr_tu_error(t, c->sb, "'#pragma omp atomic' needs a statement of the form "
                    "x op= expr, x++, ++x, x--, --x, x = x op expr or x = expr op x");
        return;
    }
    xty = clang_getCursorType(t->nodes.v[x].c);
    ty = tr_lower_type_code(t, xty, -1, t->nodes.v[x].b, "the atomic operand", "x");
    xt = tr_render_str(t, t->nodes.v[x].b, t->nodes.v[x].e);
    et = ex >= 0 ? tr_render_str(t, t->nodes.v[ex].b, t->nodes.v[ex].e) : tr_xstrdup("1");
    /* a volatile x: the operand's copy needs no qualifier (the comma
     * drops it), and the runtime takes a plain pointer */
    vol = clang_isVolatileQualifiedType(xty);
    vt = tr_xasprintf(vol ? "((void)0, %s)" : "%s", xt);
    tr_srcmap_sync(&t->map, c->sb, o);
    tr_sb_printf(o, "{ __typeof__(%s) __ompdsm_v = (__typeof__(%s))(%s); "
                 "OMPDSM_atomic(%s&(%s), %s, %s, &__ompdsm_v, %d); }",
                 vt, vt, et, vol ? "(void *)" : "", xt, ty, atomic_ops[op], rev);
    free(vt);
    free(xt);
    free(et);
}

/* ------------------------------------------------------------------------
 * dispatch
 * ------------------------------------------------------------------------ */

static void add_critical(tu *t, const char *name)
{
    int i;
    for (i = 0; i < t->criticals.n; i++)
        if (!strcmp(t->criticals.v[i], name))
            return;
    VEC_PUSH(t->criticals, tr_xstrdup(name));
}

/* A spin loop on a flushed flag, as NPB LU's pipeline writes it:
 *     while (flag[i-1] == 0) { #pragma omp flush(flag) }
 *     ... read what the other thread wrote before setting the flag ...
 * OpenMP asks for a flush between seeing the flag and reading that data;
 * shared-memory hardware lets programs omit it, a DSM does not (the node
 * that is home of the flag's page sees the flag the moment it lands, before
 * it acquired the data).  So every while, do or (non-work-sharing) for loop
 * whose body holds a flush gets one full flush after it.  An extra flush
 * never changes the meaning of a program. */
static void flush_after_spin_loop(tu *t, int k)
{
    const construct *c = &t->cons.v[k];
    int best = -1, n, i;
    for (n = 0; n < t->nodes.n; n++) {
        const tr_node *x = &t->nodes.v[n];
        if (x->func != c->func || !(x->b < c->b && c->e <= x->e))
            continue;
        if (x->kind != CXCursor_WhileStmt && x->kind != CXCursor_DoStmt &&
            x->kind != CXCursor_ForStmt)
            continue;
        if (best < 0 || x->b > t->nodes.v[best].b)
            best = n;
    }
    if (best < 0)
        return;
    for (i = 0; i < t->spin_loops.n; i++)
        if (t->spin_loops.v[i] == best)
            return;
    /* The loop of a work-sharing construct is replaced by the construct: a
     * flush directly in its body needs nothing here. */
    for (i = 0; i < t->cons.n; i++) {
        int j;
        for (j = 0; j < t->cons.v[i].nloops; j++)
            if (t->cons.v[i].loops[j].node == best)
                return;
    }
    VEC_PUSH(t->spin_loops, best);
    const tr_node *x = &t->nodes.v[best];
    unsigned end = x->e;
    if (x->kind == CXCursor_DoStmt) {
        /* A do statement's extent stops before its semicolon. */
        while (end < t->len && t->text[end] != ';')
            end++;
        if (end < t->len)
            end++;
    }
    tr_edit_add(t, x->b, x->b, tr_xstrdup("{ "), 0);
    tr_edit_add(t, end, end, tr_xstrdup(" OMPDSM_flush(); }"), 0);
}

void tr_lower_construct(tu *t, int k)
{
    construct *c = &t->cons.v[k];
    tr_sbuf o;
    int i;
    tr_sb_init(&o);
    if (c->dir == DIR_SECTION)
        return; /* part of its sections construct */
    if (c->func < 0) { /* file scope: threadprivate, declare simd */
        tr_edit_add(t, c->b, c->e, tr_xstrdup(""), 0);
        return;
    }
    if (c->dir == DIR_TASK && tr_outline_task(t, k) == 0) {
        tr_sb_free(&o);
        return;
    }
    if (c->dir != DIR_THREADPRIVATE && c->dir != DIR_IGNORED &&
        c->dir != DIR_TASKYIELD)
        tr_lower_comment(t, k, &o);
    switch (c->dir) {
    case DIR_FOR:
        lower_for(t, k, &o);
        break;
    case DIR_SECTIONS:
        lower_sections(t, k, &o);
        break;
    case DIR_SINGLE:
        lower_single(t, k, &o);
        break;
    case DIR_MASTER:
        tr_sb_puts(&o, "\nif (OMPDSM_master()) {");
        body_text(t, k, &o);
        tr_sb_puts(&o, "}");
        break;
    case DIR_CRITICAL: {
        const char *n = c->p->critical_name;
        char *arg = n ? tr_xasprintf("\"%s\"", n) : tr_xstrdup("0");
        if (n)
            add_critical(t, n);
        tr_sb_printf(&o, "\n{ OMPDSM_critical_start(%s);", arg);
        body_text(t, k, &o);
        tr_sb_printf(&o, "OMPDSM_critical_end(%s); }", arg);
        free(arg);
        break;
    }
    case DIR_ORDERED:
        tr_sb_puts(&o, "\n{ OMPDSM_ordered_start();");
        body_text(t, k, &o);
        tr_sb_puts(&o, "OMPDSM_ordered_end(); }");
        break;
    case DIR_BARRIER:
        tr_sb_puts(&o, " OMPDSM_barrier();");
        break;
    case DIR_TASKWAIT:
        tr_sb_puts(&o, " OMPDSM_taskwait();");
        break;
    case DIR_FLUSH:
        flush_after_spin_loop(t, k);
        c = &t->cons.v[k];
        if (!c->flush.n)
            tr_sb_puts(&o, " OMPDSM_flush();");
        for (i = 0; i < c->flush.n; i++) {
            char *n = outer_name(t, k, c->flush.v[i]);
            c = &t->cons.v[k];
            /* (an array parameter is a pointer: sizeof of its type, which
             * draws no -Wsizeof-array-argument) */
            if (t->vars.v[c->flush.v[i]].decay)
                tr_sb_printf(&o, " OMPDSM_flush_range(&(%s), sizeof(__typeof__(%s)));", n, n);
            else
                tr_sb_printf(&o, " OMPDSM_flush_range(&(%s), sizeof(%s));", n, n);
            free(n);
        }
        break;
    case DIR_ATOMIC:
        lower_atomic(t, k, &o);
        break;
    case DIR_TASK: {
        /* (the clauses' expressions are evaluated, as they would be) */
        const omp_clause *ex[2] = {c->c_if, c->c_final};
        for (i = 0; i < 2; i++)
            if (ex[i]) {
                char *e = tr_render_str(t, ex[i]->args[0].b, ex[i]->args[0].e);
                tr_sb_printf(&o, " (void)(%s); /* this task runs in place */\n", e);
                free(e);
            }
        i = privates_open(t, k, &o);
        body_text(t, k, &o);
        privates_close(&o, i);
        break;
    }
    case DIR_TASKGROUP:
        tr_sb_puts(&o, "\n{");
        body_text(t, k, &o);
        tr_sb_puts(&o, "}");
        break;
    case DIR_THREADPRIVATE:
    case DIR_IGNORED:
    case DIR_TASKYIELD:
        break;
    default:
        tr_internal_error("tr_lower_construct: directive %d", c->dir);
    }
    c = &t->cons.v[k];
    tr_edit_add(t, c->b, c->e, tr_sb_take(&o), tr_con_depth(t, k));
}
