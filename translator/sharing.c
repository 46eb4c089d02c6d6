/* sharing.c - data-sharing attributes: which variables each parallel
 * region uses and how (by value, through the shared heap, as a global),
 * which locals must live in the shared heap, and the text that names a
 * variable at a given place of the translated program.
 *
 * A reference is resolved by walking outwards through the constructs that
 * contain it: the first construct that privatises the variable makes the
 * reference a plain private name; the first parallel region that does not
 * privatise it decides by its sharing mode; if neither comes before the
 * variable's own declaration, the declaration decides. */
#include "tu.h"

#include <stdlib.h>
#include <string.h>

usage *tr_sharing_use(construct *c, int v)
{
    int i;
    for (i = 0; i < c->uses.n; i++)
        if (c->uses.v[i].var == v)
            return &c->uses.v[i];
    return NULL;
}

static int declared_inside(tu *t, int v, int k)
{
    var *vv = &t->vars.v[v];
    if (vv->kind != VK_LOCAL)
        return 0;
    return vv->decl_con >= 0 && tr_con_contains(t, k, vv->decl_con);
}

static int is_globalish(const var *v)
{
    return v->kind == VK_GLOBAL || v->kind == VK_STATIC || v->kind == VK_SYSTEM;
}

static void push_ref(tu *t, int v, unsigned off, int start, int access, int func)
{
    ref r;
    r.var = v;
    r.b = r.e = off;
    r.start = start;
    r.access = access;
    r.func = func;
    r.node = -1;
    VEC_PUSH(t->refs, r);
}

static int walk(tu *t, int v, int start, int *stop, unsigned report_off);

/* Is v shared in the context that encloses construct `start`?  Used for
 * the implicit firstprivate rule of tasks. */
static int shared_outside(tu *t, int v, int start)
{
    int stop;
    var *vv = &t->vars.v[v];
    walk(t, v, start, &stop, 0);
    if (stop == STOP_PRIV)
        return 0;
    if (stop == STOP_REGION)
        return 1;
    return is_globalish(vv) || vv->threadprivate;
}

/* Is v named in a data-sharing clause of the directive (of either part
 * of a combined one)? */
static int listed(tu *t, const construct *c, int v)
{
    int i, j;
    for (i = 0; i < c->p->nclauses; i++) {
        const omp_clause *cl = &c->p->clauses[i];
        if (cl->kind == CL_COPYIN || cl->kind == CL_COPYPRIVATE)
            continue;
        for (j = 0; j < cl->nvars; j++)
            if (tr_analysis_lookup(t, cl->vars[j].name, cl->vars[j].off, c->func) == v)
                return 1;
    }
    return 0;
}

static void report_none(tu *t, construct *c, int v, unsigned off)
{
    var *vv = &t->vars.v[v];
    if (c->dflt != DEFAULT_NONE || vv->threadprivate || vv->tls || vv->is_const ||
        tr_con_in_list(c->reported.v, c->reported.n, v) || listed(t, c, v))
        return;
    VEC_PUSH(c->reported, v);
    tr_tu_error(t, off, "variable '%s' must have its data sharing specified "
                "explicitly: '#pragma omp %s' at line %d has default(none)",
                vv->name, c->p->dir_spelling, c->line);
}

static int walk(tu *t, int v, int start, int *stop, unsigned report_off)
{
    int k = start;
    while (k >= 0) {
        construct *c = &t->cons.v[k];
        if (declared_inside(t, v, k))
            break;
        if (tr_con_privatizes(c, v)) {
            *stop = STOP_PRIV;
            return k;
        }
        if (tr_con_is_region(c)) {
            if (report_off)
                report_none(t, c, v, report_off);
            *stop = STOP_REGION;
            return k;
        }
        if (c->dir == DIR_TASK && !tr_con_in_list(c->shared.v, c->shared.n, v)) {
            if (report_off)
                report_none(t, c, v, report_off);
            if (c->dflt != DEFAULT_SHARED && !shared_outside(t, v, c->parent)) {
                c = &t->cons.v[k];
                VEC_PUSH(c->task_fp, v);
                push_ref(t, v, c->b, c->parent, ACC_READ, c->func);
                *stop = STOP_PRIV;
                return k;
            }
        }
        k = t->cons.v[k].parent;
    }
    *stop = STOP_DECL;
    return k;
}

int tr_sharing_walk(tu *t, int v, int start, int *stop)
{
    return walk(t, v, start, stop, 0);
}

/* ------------------------------------------------------------------------
 * collecting references
 * ------------------------------------------------------------------------ */

static int access_of(tu *t, int n)
{
    int child = n, p = t->nodes.v[n].parent;
    while (p >= 0 && t->nodes.v[p].kind == CXCursor_ParenExpr) {
        child = p;
        p = t->nodes.v[p].parent;
    }
    if (p < 0)
        return ACC_READ;
    switch (t->nodes.v[p].kind) {
    case CXCursor_BinaryOperator:
        if (clang_getCursorBinaryOperatorKind(t->nodes.v[p].c) == CXBinaryOperator_Assign &&
            t->nodes.v[p].first == child)
            return ACC_WRITE;
        return ACC_READ;
    case CXCursor_CompoundAssignOperator:
        return t->nodes.v[p].first == child ? ACC_READ | ACC_WRITE : ACC_READ;
    case CXCursor_UnaryOperator:
        switch (clang_getCursorUnaryOperatorKind(t->nodes.v[p].c)) {
        case CXUnaryOperator_PostInc: case CXUnaryOperator_PostDec:
        case CXUnaryOperator_PreInc: case CXUnaryOperator_PreDec:
            return ACC_READ | ACC_WRITE;
        case CXUnaryOperator_AddrOf:
            return ACC_ADDR;
        default:
            return ACC_READ;
        }
    default:
        return ACC_READ;
    }
}

/* Is node n (an address) passed directly to a C library function?  Those
 * run on the calling thread and keep no pointer for a parallel region;
 * and system calls could not write into the shared heap anyway. */
static int to_library(tu *t, int n)
{
    int p = t->nodes.v[n].parent;
    CXCursor callee;
    while (p >= 0 && (t->nodes.v[p].kind == CXCursor_UnexposedExpr ||
                      t->nodes.v[p].kind == CXCursor_ParenExpr))
        p = t->nodes.v[p].parent;
    if (p < 0 || t->nodes.v[p].kind != CXCursor_CallExpr)
        return 0;
    callee = clang_getCursorReferenced(t->nodes.v[p].c);
    return !clang_Cursor_isNull(callee) &&
           clang_getCursorKind(callee) == CXCursor_FunctionDecl &&
           clang_Location_isInSystemHeader(clang_getCursorLocation(callee));
}

/* Does the reference at node n let the variable's address escape: &v,
 * &v.m, &v[i], or an array decaying to a pointer other than for
 * subscripting (not counting arguments of C library functions)? */
static int escapes(tu *t, int n)
{
    int cur = n;
    for (;;) {
        int p = t->nodes.v[cur].parent;
        enum CXCursorKind k;
        if (p < 0)
            return 0;
        k = t->nodes.v[p].kind;
        if (k == CXCursor_ParenExpr) {
            cur = p;
        } else if (k == CXCursor_MemberRefExpr && t->nodes.v[p].first == cur &&
                   clang_getCanonicalType(clang_getCursorType(t->nodes.v[cur].c)).kind !=
                       CXType_Pointer) {
            cur = p; /* s.m: still (part of) the variable */
        } else if (k == CXCursor_UnaryOperator) {
            return clang_getCursorUnaryOperatorKind(t->nodes.v[p].c) ==
                       CXUnaryOperator_AddrOf && !to_library(t, p);
        } else if (k == CXCursor_UnexposedExpr) {
            enum CXTypeKind from = clang_getCanonicalType(
                clang_getCursorType(t->nodes.v[cur].c)).kind;
            enum CXTypeKind to = clang_getCanonicalType(
                clang_getCursorType(t->nodes.v[p].c)).kind;
            int pp;
            if (!(from == CXType_ConstantArray || from == CXType_IncompleteArray ||
                  from == CXType_VariableArray) || to != CXType_Pointer)
                return 0; /* a value is read */
            pp = t->nodes.v[p].parent;
            if (pp >= 0 && t->nodes.v[pp].kind == CXCursor_ArraySubscriptExpr &&
                t->nodes.v[pp].first == p)
                cur = pp; /* a[i]: an element of the variable */
            else
                return !to_library(t, p);
        } else {
            return 0;
        }
    }
}

/* Functions that start a parallel region or a task (which another node
 * may run), directly or through the functions they call (calls of functions not defined here, other than
 * the C library's, count as such).  tasks_only: functions that create a
 * task, directly or through functions defined here. */
static void reaching_regions(tu *t, char *reach, int tasks_only)
{
    int i, changed;
    for (i = 0; i < t->cons.n; i++)
        if (t->cons.v[i].func >= 0 && ((!tasks_only && tr_con_is_region(&t->cons.v[i])) ||
                                       t->cons.v[i].dir == DIR_TASK))
            reach[t->cons.v[i].func] = 1;
    do {
        changed = 0;
        for (i = 0; i < t->nodes.n; i++) {
            tr_node *n = &t->nodes.v[i];
            CXCursor r;
            int g;
            if (n->kind != CXCursor_DeclRefExpr || n->var >= 0 || n->func < 0 ||
                reach[n->func])
                continue;
            r = clang_getCursorReferenced(n->c);
            if (clang_getCursorKind(r) != CXCursor_FunctionDecl)
                continue;
            r = clang_getCanonicalCursor(r);
            for (g = 0; g < t->funcs.n; g++)
                if (clang_equalCursors(clang_getCanonicalCursor(t->nodes.v[t->funcs.v[g].node].c), r))
                    break;
            if (g < t->funcs.n ? reach[g]
                               : !tasks_only &&
                                 !clang_Location_isInSystemHeader(clang_getCursorLocation(r))) {
                reach[n->func] = 1;
                changed = 1;
            }
        }
    } while (changed);
}

/* A local of a function that (possibly) starts a parallel region, whose
 * address escapes in the serial part, may be reached by other nodes
 * through that pointer: it lives in the shared heap.  So does a local
 * declared inside a region (private to the thread) whose address escapes
 * in a function that creates tasks: OpenMP lets a task reach it through
 * a pointer (a firstprivate one, say) until a taskwait, and the task may
 * run on another node. */
static void promote_escaping(tu *t)
{
    char *reach = tr_xcalloc((size_t)t->funcs.n + 1, 1);
    char *tasks = tr_xcalloc((size_t)t->funcs.n + 1, 1);
    int i;
    reaching_regions(t, reach, 0);
    reaching_regions(t, tasks, 1);
    for (i = 0; i < t->vars.n; i++) {
        var *v = &t->vars.v[i];
        int k;
        if (!v->escapes || v->promoted || v->func < 0 || !reach[v->func])
            continue;
        if (v->kind == VK_LOCAL) {
            if (v->declstmt < 0 || t->nodes.v[t->nodes.v[v->declstmt].parent].kind !=
                                       CXCursor_CompoundStmt)
                continue;
            for (k = v->decl_con; k >= 0; k = t->cons.v[k].parent)
                if (tr_con_is_region(&t->cons.v[k]))
                    break;
            if (k >= 0 && !tasks[v->func])
                continue; /* private to a region's thread, no task sees it */
            if (clang_Cursor_getStorageClass(t->nodes.v[v->decls.v[0]].c) == CX_SC_Register)
                continue;
        } else if (v->kind != VK_PARAM) {
            continue;
        }
        v->promoted = 1;
    }
    free(reach);
    free(tasks);
}

/* A local that a task shares lives in the shared heap, so that the task
 * can run on another node (tr_outline_task captures its address). */
static void promote_task_shared(tu *t)
{
    for (int i = 0; i < t->refs.n; i++) {
        ref r = t->refs.v[i];
        var *v = &t->vars.v[r.var];
        int k, found = 0, stop;
        if (r.start < 0 || v->promoted || (v->kind != VK_LOCAL && v->kind != VK_PARAM) ||
            v->threadprivate || v->tls || tr_ast_var_vm(t, r.var) != VM_NONE)
            continue;
        for (k = r.start; k >= 0; k = t->cons.v[k].parent) {
            construct *c = &t->cons.v[k];
            if (declared_inside(t, r.var, k) || tr_con_privatizes(c, r.var) || tr_con_is_region(c))
                break;
            if (c->dir == DIR_TASK)
                found = 1;
        }
        if (!found)
            continue;
        walk(t, r.var, r.start, &stop, 0);
        if (stop != STOP_DECL)
            continue;
        v = &t->vars.v[r.var];
        if (v->kind == VK_LOCAL &&
            (v->declstmt < 0 ||
             t->nodes.v[t->nodes.v[v->declstmt].parent].kind != CXCursor_CompoundStmt ||
             clang_Cursor_getStorageClass(t->nodes.v[v->decls.v[0]].c) == CX_SC_Register))
            continue;
        v->promoted = 1;
    }
}

static void clause_needs(tu *t, int k)
{
    construct *c = &t->cons.v[k];
    int i;
#define NEEDS(list, acc)                                                    \
    for (i = 0; i < c->list.n; i++)                                         \
        push_ref(t, c->list.v[i], c->p->dir_off, c->parent, acc, c->func),   \
            c = &t->cons.v[k];
    NEEDS(fpriv, ACC_READ)
    NEEDS(lpriv, ACC_ADDR)
    NEEDS(red, ACC_ADDR)
    NEEDS(copyprivate, ACC_ADDR)
    NEEDS(flush, ACC_ADDR)
    NEEDS(copyin, ACC_READ)
#undef NEEDS
    /* a region's reduction stores into the original: it must be shared;
     * so must the original of a firstprivate array of variable size, which
     * the frame cannot carry by value */
    if (tr_con_is_region(c)) {
        for (i = 0; i < c->fpriv.n; i++) {
            int stop, v = c->fpriv.v[i];
            if (tr_ast_var_vm(t, v) != VM_ARRAY && tr_ast_var_vm(t, v) != VM_OTHER)
                continue;
            walk(t, v, c->parent, &stop, 0);
            if (stop == STOP_DECL && t->vars.v[v].kind == VK_LOCAL)
                t->vars.v[v].promoted = 1;
            c = &t->cons.v[k];
        }
        for (i = 0; i < c->red.n; i++) {
            int stop, v = c->red.v[i];
            walk(t, v, c->parent, &stop, 0);
            if (stop == STOP_DECL && (t->vars.v[v].kind == VK_LOCAL ||
                                      t->vars.v[v].kind == VK_PARAM))
                t->vars.v[v].promoted = 1;
            c = &t->cons.v[k];
        }
    }
}

static void add_use(construct *c, int v, int access)
{
    usage *u = tr_sharing_use(c, v);
    if (u) {
        u->access |= access;
        return;
    }
    {
        usage nu;
        nu.var = v;
        nu.access = access;
        nu.mode = MODE_GLOBAL;
        VEC_PUSH(c->uses, nu);
    }
}

/* Is construct k inside a parallel region of its function? */
static int inside_region(tu *t, int k)
{
    for (; k >= 0; k = t->cons.v[k].parent)
        if (tr_con_is_region(&t->cons.v[k]))
            return 1;
    return 0;
}

static int decide_mode(tu *t, const usage *u)
{
    var *v = &t->vars.v[u->var];
    if (v->rewritten)
        return MODE_GLOBAL;
    if (is_globalish(v) || v->threadprivate || v->tls)
        return MODE_PLAIN;
    if (v->scalar && !(u->access & (ACC_WRITE | ACC_ADDR)) && !v->addr_taken)
        return MODE_VALUE;
    return MODE_POINTER;
}

int tr_sharing_analyse(tu *t)
{
    int i, k;
    /* where locals are declared */
    for (i = 0; i < t->vars.n; i++) {
        var *v = &t->vars.v[i];
        if (v->kind == VK_LOCAL && v->decls.n)
            v->decl_con = tr_con_at(t, v->func, t->nodes.v[v->decls.v[0]].loc);
    }
    /* references in the code */
    for (i = 0; i < t->nodes.n; i++) {
        tr_node *n = &t->nodes.v[i];
        ref r;
        if (n->kind != CXCursor_DeclRefExpr || n->var < 0)
            continue;
        r.var = n->var;
        r.b = n->b;
        r.e = n->e;
        r.func = n->func;
        r.start = tr_con_at(t, n->func, n->b);
        r.access = access_of(t, i);
        r.node = i;
        if ((r.access & ACC_ADDR) && (t->vars.v[r.var].kind == VK_LOCAL ||
                                      t->vars.v[r.var].kind == VK_PARAM))
            t->vars.v[r.var].addr_taken = 1;
        VEC_PUSH(t->refs, r);
    }
    for (k = 0; k < t->cons.n; k++)
        if (t->cons.v[k].func >= 0)
            clause_needs(t, k);
    /* uses of each region (the list grows while tasks add needs) */
    for (i = 0; i < t->refs.n; i++) {
        ref r = t->refs.v[i];
        int stop, at;
        if (r.e > r.b)
            t->vars.v[r.var].nrefs++;
        at = walk(t, r.var, r.start, &stop, r.b);
        if (stop == STOP_REGION) {
            add_use(&t->cons.v[at], r.var, r.access);
        } else if (stop == STOP_DECL) {
            t->vars.v[r.var].used_base = 1;
            if (r.node >= 0 && escapes(t, r.node))
                t->vars.v[r.var].escapes = 1;
        }
    }
    promote_escaping(t);
    promote_task_shared(t);
    /* modes, innermost regions first; a region's needs become uses of the
     * enclosing region or promote the variable where it is declared */
    for (k = t->cons.n - 1; k >= 0; k--) {
        construct *c = &t->cons.v[k];
        int j;
        if (c->func < 0 || !tr_con_is_region(c))
            continue;
        for (j = 0; j < c->uses.n; j++) {
            usage *u = &t->cons.v[k].uses.v[j];
            int stop, at, acc, v = u->var;
            u->mode = decide_mode(t, u);
            if (u->mode == MODE_GLOBAL || u->mode == MODE_PLAIN)
                continue;
            acc = u->mode == MODE_VALUE ? ACC_READ : ACC_ADDR;
            at = walk(t, v, t->cons.v[k].parent, &stop, t->cons.v[k].p->dir_off);
            if (stop == STOP_REGION) {
                add_use(&t->cons.v[at], v, acc);
            } else if (stop == STOP_DECL) {
                t->vars.v[v].used_base = 1;
                if (acc == ACC_ADDR)
                    t->vars.v[v].promoted = 1;
            } else if (acc == ACC_ADDR && !inside_region(t, at)) {
                tr_tu_error(t, t->cons.v[k].p->dir_off, "variable '%s' is private "
                            "to the enclosing '#pragma omp %s' (line %d) but shared "
                            "by this parallel region: not supported",
                            t->vars.v[v].name, t->cons.v[at].p->dir_spelling,
                            t->cons.v[at].line);
            }
        }
    }
    /* promoted locals need a declaration we can rewrite */
    for (i = 0; i < t->vars.n; i++) {
        var *v = &t->vars.v[i];
        if (!v->promoted)
            continue;
        if (v->kind == VK_LOCAL && (v->declstmt < 0 ||
                                    t->nodes.v[t->nodes.v[v->declstmt].parent].kind !=
                                        CXCursor_CompoundStmt)) {
            tr_tu_error(t, t->nodes.v[v->decls.v[0]].loc, "variable '%s' is "
                        "declared in a 'for' statement but a parallel region needs "
                        "it in shared memory: declare it before the loop", v->name);
            v->promoted = 0;
        } else if (tr_ast_var_vm(t, i) == VM_ARRAY && v->init >= 0) {
            tr_tu_error(t, t->nodes.v[v->decls.v[0]].loc, "variable '%s' is a "
                        "variable-length array with an initializer and a parallel "
                        "region needs it in shared memory: not supported", v->name);
            v->promoted = 0;
        }
    }
    return tr_diag_errors ? -1 : 0;
}

/* ------------------------------------------------------------------------
 * naming
 * ------------------------------------------------------------------------ */

static char *base_name(tu *t, int v, unsigned off)
{
    var *vv = &t->vars.v[v];
    if (vv->rewritten)
        return tr_xasprintf("(*%s)", vv->ptr);
    if (vv->promoted) {
        /* (an array of variable size is allocated in its declarator) */
        if (vv->kind == VK_LOCAL && vv->declstmt >= 0 && tr_ast_var_vm(t, v) != VM_ARRAY &&
            off >= t->nodes.v[vv->declstmt].b && off < t->nodes.v[vv->declstmt].e &&
            (!vv->split_e || off < vv->split_e))
            return tr_xasprintf("__ompdsm_i_%s", vv->name);
        return tr_xasprintf("(*__ompdsm_l_%s)", vv->name);
    }
    return tr_xstrdup(vv->name);
}

char *tr_sharing_name(tu *t, int v, int start, unsigned off)
{
    int stop, at = walk(t, v, start, &stop, 0);
    var *vv = &t->vars.v[v];
    usage *u;
    if (stop == STOP_PRIV)
        return tr_xstrdup(vv->name);
    if (stop == STOP_DECL)
        return base_name(t, v, off);
    u = tr_sharing_use(&t->cons.v[at], v);
    if (!u)
        return NULL;
    switch (u->mode) {
    case MODE_GLOBAL:
        return tr_xasprintf("(*%s)", vv->ptr);
    case MODE_POINTER:
        return tr_xasprintf("(*__ompdsm_sh_%s)", vv->name);
    default:
        return tr_xstrdup(vv->name);
    }
}

char *tr_sharing_type(tu *t, int v, int start, unsigned off)
{
    var *vv = &t->vars.v[v];
    char *name, *r, *sp;
    const char *why;
    if (vv->rewritten)
        return tr_xasprintf("__typeof__(*%s)", vv->ptr);
    if (vv->kind == VK_GLOBAL || vv->kind == VK_SYSTEM)
        return tr_xasprintf("__typeof__(%s)", vv->name);
    name = tr_sharing_name(t, v, start, off);
    if (name) {
        r = tr_xasprintf("__typeof__(%s)", name);
        free(name);
        return r;
    }
    if (tr_ast_var_type_is_local(t, v, &why)) {
        tr_tu_error(t, off, "variable '%s' has %s, which a parallel region cannot "
                    "name: not supported", vv->name, why);
        return tr_xstrdup("int");
    }
    sp = tr_ast_var_type_name(t, v, 0);
    r = tr_xasprintf("__typeof__(%s)", sp);
    free(sp);
    return r;
}
