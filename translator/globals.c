/* globals.c - file-scope and function-static variables in the shared heap
 * (Omni's scheme for SCASH), threadprivate, the renamed main, malloc & co.
 * and system calls routed to the runtime, and references to variables. */
#include "tu.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------
 * classification
 * ------------------------------------------------------------------------ */

static int is_descendant(const tu *t, int n, int anc)
{
    for (; n >= 0; n = t->nodes.v[n].parent)
        if (n == anc)
            return 1;
    return 0;
}

/* In the operand of sizeof/_Alignof (below node `top`)? */
static int unevaluated(const tu *t, int n, int top)
{
    for (; n >= 0 && n != top; n = t->nodes.v[n].parent)
        if (t->nodes.v[n].kind == CXCursor_UnaryExpr)
            return 1;
    return 0;
}

/* Does the initializer of v refer to a rewritten variable (outside sizeof)? */
static int init_refers_rewritten(const tu *t, int init)
{
    int i;
    for (i = init; i < t->nodes.n && is_descendant(t, i, init); i++) {
        const tr_node *n = &t->nodes.v[i];
        if (n->kind == CXCursor_DeclRefExpr && n->var >= 0 &&
            t->vars.v[n->var].rewritten && !unevaluated(t, i, init))
            return 1;
    }
    return 0;
}

static int name_used_before(const tu *t, const char *ptr, int before)
{
    int i;
    for (i = 0; i < before; i++)
        if (t->vars.v[i].ptr && !strcmp(t->vars.v[i].ptr, ptr))
            return 1;
    return 0;
}

void tr_globals_classify(tu *t)
{
    int i, changed;
    /* threadprivate directives */
    for (i = 0; i < t->cons.n; i++) {
        construct *c = &t->cons.v[i];
        int j;
        if (c->dir != DIR_THREADPRIVATE)
            continue;
        for (j = 0; j < c->priv.n; j++) {
            var *v = &t->vars.v[c->priv.v[j]];
            if (v->kind != VK_GLOBAL && v->kind != VK_STATIC)
                tr_tu_error(t, c->p->vars[j].off, "'%s' in threadprivate must be a "
                            "file-scope or static variable", v->name);
            else
                v->threadprivate = 1;
        }
    }
    for (i = 0; i < t->vars.n; i++) {
        var *v = &t->vars.v[i];
        v->rewritten = (v->kind == VK_GLOBAL || v->kind == VK_STATIC) &&
                       !v->threadprivate && !v->tls && !v->is_const;
    }
    /* const objects whose initializer takes the address of a shared
     * variable cannot be initialised statically any more */
    do {
        changed = 0;
        for (i = 0; i < t->vars.n; i++) {
            var *v = &t->vars.v[i];
            if ((v->kind == VK_GLOBAL || v->kind == VK_STATIC) && !v->rewritten &&
                v->is_const && !v->threadprivate && !v->tls && v->init >= 0 &&
                init_refers_rewritten(t, v->init)) {
                v->rewritten = 1;
                changed = 1;
            }
        }
    } while (changed);
    for (i = 0; i < t->vars.n; i++) {
        var *v = &t->vars.v[i];
        char *base;
        int n = 2;
        if (!v->rewritten)
            continue;
        if (v->kind == VK_GLOBAL) {
            v->ptr = tr_xasprintf("__ompdsm_g_%s", v->name);
            continue;
        }
        /* function statics: unique per function and name */
        base = tr_xasprintf("__ompdsm_s_%s_%s", t->funcs.v[v->func].name, v->name);
        v->ptr = tr_xstrdup(base);
        while (name_used_before(t, v->ptr, i)) {
            free(v->ptr);
            v->ptr = tr_xasprintf("%s_%d", base, n++);
        }
        free(base);
    }
}

/* ------------------------------------------------------------------------
 * declarations
 * ------------------------------------------------------------------------ */

/* Where ch is, going back from `from` over white space and line markers
 * (not below limit), or -1.  gcc -E, ompcc's preprocessor with the gcc
 * backend, writes a line marker (`# 183 "is.c" 3 4`) before and after the
 * expansion of a system header's macro: `p = NULL;` has one between its
 * '=' and `((void *)0)` (NPB IS's key_buff1_aptr). */
static unsigned find_back(tu *t, unsigned from, char ch, unsigned limit)
{
    unsigned p = from;
    for (;;) {
        while (p > limit && isspace((unsigned char)t->text[p - 1]))
            p--;
        unsigned ls = p; /* the start of the line p - 1 is on */
        while (ls > limit && t->text[ls - 1] != '\n')
            ls--;
        unsigned q = ls;
        while (q < p && (t->text[q] == ' ' || t->text[q] == '\t'))
            q++;
        if (ls == limit || ls == p || q == p || t->text[q] != '#')
            break;
        p = ls; /* a line marker: the line before it */
    }
    if (p > limit && t->text[p - 1] == ch)
        return p - 1;
    return (unsigned)-1;
}

/* The pointer of each rewritten variable (and of each shared local) is
 * restrict-qualified: every access to the variable goes through it (the references become (*ptr)),
 * and each variable is a heap allocation of its own, so two of them never
 * overlap.  gcc, the backend of OMPDSM_CC=gcc, then knows that a store to
 * one global changes no other (a store to `d` no longer reloads `tx1`,
 * and a loop reading `b` and writing `a` vectorizes without a run-time
 * overlap check), as native code knows of two objects; gcc disambiguates
 * two restrict-qualified globals only from each other and from locals:
 * pointers from parameters and memory, and opaque calls, still may change
 * them.  clang ignores the qualifier on globals (ompcc's LLVM plugin gives
 * the same facts as alias scopes: wdpass/globalias.cpp).  __restrict, not
 * restrict: C89 and gnu89 have no keyword. */
#define TR_RESTRICT "__restrict "

/* Edits of one declaration of a rewritten variable: the name becomes
 * (*__restrict ptr), an initializer is removed (the initialiser function stores it),
 * an omitted array size is filled in. */
static void rewrite_declarator(tu *t, int v, int d)
{
    var *vv = &t->vars.v[v];
    tr_node *n = &t->nodes.v[d];
    size_t len = strlen(vv->name);
    tr_edit_add(t, n->loc, n->loc + (unsigned)len,
                tr_xasprintf("(*" TR_RESTRICT "%s)", vv->ptr), 10);
    if (d == vv->def && vv->init >= 0) {
        unsigned ib = t->nodes.v[vv->init].b, eq = find_back(t, ib, '=', n->loc);
        if (eq == (unsigned)-1)
            tr_tu_error(t, ib, "internal error: cannot find '=' of the "
                        "initializer of '%s'", vv->name);
        else
            tr_edit_add(t, eq, t->nodes.v[vv->init].e, tr_xstrdup(""), 10);
    }
    if (clang_getCanonicalType(vv->type).kind == CXType_ConstantArray) {
        /* `int t[] = {...}`: the pointer needs the size */
        unsigned p = n->loc + (unsigned)len;
        while (p < n->e && isspace((unsigned char)t->text[p]))
            p++;
        if (p < n->e && t->text[p] == ')') /* int (t)[] */
            p++;
        while (p < n->e && isspace((unsigned char)t->text[p]))
            p++;
        if (p < n->e && t->text[p] == '[') {
            unsigned q = p + 1;
            while (q < n->e && isspace((unsigned char)t->text[q]))
                q++;
            if (t->text[q] == ']')
                tr_edit_add(t, p + 1, p + 1,
                            tr_xasprintf("%lld", clang_getArraySize(
                                                     clang_getCanonicalType(vv->type))),
                            10);
        }
    }
}

/* The table entry and the initial value of a variable this TU defines. */
static void table_and_init(tu *t, int v, const char *label)
{
    var *vv = &t->vars.v[v];
    const char *file;
    int line;
    tr_sb_printf(&t->globals_tab,
                 "    {(void **)&%s, sizeof(*%s), __alignof__(*%s), \"%s\", %u},\n",
                 vv->ptr, vv->ptr, vv->ptr, label, tr_ast_type_granule(vv->type));
    tr_srcmap_presumed(&t->map, t->nodes.v[vv->def].loc, &file, &line, NULL);
    tr_sb_puts(&t->global_decls, "    {");
    tr_sb_cstring(&t->global_decls, file);
    tr_sb_printf(&t->global_decls, ", %d},\n", line);
    t->nglobals++;
    if (vv->init >= 0) {
        char *init = tr_render_str(t, t->nodes.v[vv->init].b, t->nodes.v[vv->init].e);
        int is_const = !init_refers_rewritten(t, vv->init);
        tr_srcmap_sync(&t->map, t->nodes.v[vv->init].b, &t->init_fn);
        tr_sb_printf(&t->init_fn, "{ %s__typeof__(*%s) __ompdsm_v = %s; "
                     "__builtin_memcpy((void *)%s, %s&__ompdsm_v, sizeof __ompdsm_v); }\n",
                     is_const ? "static " : "", vv->ptr, init, vv->ptr,
                     tr_ast_type_is_volatile_object(vv->type) ? "(const void *)" : "");
        free(init);
    }
}

/* ------------------------------------------------------------------------
 * declarations of several variables
 *
 * `__thread` applies to a whole declaration, so a file-scope declaration
 * that declares threadprivate variables together with others is split:
 * its first declarator stays, and each of the others becomes a declaration
 * of its own, `static __thread __typeof__(T) x = init;`, after it.
 * ------------------------------------------------------------------------ */

/* The first declarator of the file-scope declaration of node d: the
 * VarDecls of one declaration begin at the same offset (the nodes in
 * between are the earlier declarators' initializers, which begin later). */
static int group_first(const tu *t, int d)
{
    int i, f = d;
    for (i = d - 1; i >= 0 && t->nodes.v[i].b >= t->nodes.v[d].b; i--)
        if (t->nodes.v[i].kind == CXCursor_VarDecl && t->nodes.v[i].parent < 0 &&
            t->nodes.v[i].b == t->nodes.v[d].b)
            f = i;
    return f;
}

/* The next declarator of the declaration of node d, or -1. */
static int group_next(const tu *t, int d)
{
    int n = t->nodes.v[d].next;
    return n >= 0 && t->nodes.v[n].kind == CXCursor_VarDecl &&
           t->nodes.v[n].b == t->nodes.v[d].b ? n : -1;
}

static int tp_of(const tu *t, int d)
{
    int v = t->nodes.v[d].var;
    return v >= 0 && t->vars.v[v].threadprivate;
}

/* Is node d a declarator that moves to a declaration of its own? */
static int moved_decl(const tu *t, int d)
{
    int f, i, tp = 0, other = 0;
    if (t->nodes.v[d].kind != CXCursor_VarDecl || t->nodes.v[d].parent >= 0)
        return 0;
    f = group_first(t, d);
    if (f == d)
        return 0;
    for (i = f; i >= 0; i = group_next(t, i)) {
        if (tp_of(t, i))
            tp = 1;
        else
            other = 1;
    }
    return tp && other;
}

/* Inserts `__thread` into a declaration of a threadprivate variable (once
 * per declaration). */
static void add_thread(tu *t, int d)
{
    tr_node *n = &t->nodes.v[d];
    unsigned p = n->b;
    int i;
    if (n->parent >= 0) { /* a function-static: declared in a DeclStmt */
        for (i = 0; i < t->nodes.n; i++) { /* other declarators of the group */
            tr_node *o = &t->nodes.v[i];
            if (i != d && o->kind == CXCursor_VarDecl && o->b == n->b && o->var >= 0 &&
                !t->vars.v[o->var].threadprivate) {
                tr_tu_error(t, o->loc, "'%s' is declared together with threadprivate "
                            "'%s': declare it separately", t->vars.v[o->var].name,
                            t->vars.v[n->var].name);
                return;
            }
        }
        for (i = n->parent >= 0 ? t->nodes.v[n->parent].first : -1; i >= 0 && i != d;
             i = t->nodes.v[i].next)
            if (t->nodes.v[i].kind == CXCursor_VarDecl)
                return; /* the group's first declarator has it */
    } else if (group_first(t, d) != d) {
        return; /* moved, or the group's first declarator has it */
    }
    while (p < n->loc) { /* after `static` or `extern` when present */
        if (isalpha((unsigned char)t->text[p]) || t->text[p] == '_') {
            unsigned s = p;
            while (p < n->loc && (isalnum((unsigned char)t->text[p]) || t->text[p] == '_'))
                p++;
            if ((p - s == 6 && !strncmp(t->text + s, "static", 6)) ||
                (p - s == 6 && !strncmp(t->text + s, "extern", 6))) {
                tr_edit_add(t, p, p, tr_xstrdup(" __thread"), 10);
                return;
            }
        } else {
            p++;
        }
    }
    tr_edit_add(t, n->b, n->b, tr_xstrdup("__thread "), 10);
}

/* After the references are rewritten: each file-scope declaration that
 * mixes threadprivate variables with others keeps its first declarator;
 * the others become declarations of their own. */
static void split_groups(tu *t)
{
    int f;
    for (f = 0; f < t->nodes.n; f++) {
        int i, last = f, tp = 0, other = 0, bad = 0;
        unsigned semi;
        tr_sbuf o;
        if (t->nodes.v[f].kind != CXCursor_VarDecl || t->nodes.v[f].parent >= 0 ||
            group_first(t, f) != f)
            continue;
        for (i = f; i >= 0; i = group_next(t, i)) {
            last = i;
            if (tp_of(t, i))
                tp = 1;
            else
                other = 1;
        }
        if (!tp || !other)
            continue;
        semi = t->nodes.v[last].e;
        while (semi < t->len && t->text[semi] != ';')
            semi++;
        if (semi >= t->len) {
            tr_tu_error(t, t->nodes.v[f].loc, "internal error: cannot find the end "
                        "of the declaration");
            continue;
        }
        tr_sb_init(&o);
        tr_sb_puts(&o, ";");
        for (i = group_next(t, f); i >= 0; i = group_next(t, i)) {
            tr_node *n = &t->nodes.v[i];
            var *v = n->var >= 0 ? &t->vars.v[n->var] : NULL;
            enum CX_StorageClass sc = clang_Cursor_getStorageClass(n->c);
            char *sp = tr_ast_type_spelling(clang_getCursorType(n->c));
            if (!v || strstr(sp, "(unnamed") || strstr(sp, "(anonymous")) {
                tr_tu_error(t, n->loc, "'%s' is declared together with threadprivate "
                            "and other variables, with a type that has no name: "
                            "declare it separately", v ? v->name : "?");
                bad = 1;
                free(sp);
                break;
            }
            tr_sb_printf(&o, " %s%s__typeof__(%s) ",
                         sc == CX_SC_Static ? "static " : sc == CX_SC_Extern ? "extern " : "",
                         v->threadprivate || v->tls ? "__thread " : "", sp);
            if (v->rewritten)
                tr_sb_printf(&o, "(*" TR_RESTRICT "%s)", v->ptr);
            else
                tr_sb_puts(&o, v->name);
            if (i == v->def && v->init >= 0 && !v->rewritten && !v->dyn_init) {
                char *init = tr_render_str(t, t->nodes.v[v->init].b, t->nodes.v[v->init].e);
                tr_sb_printf(&o, " = %s", init);
                free(init);
            }
            tr_sb_puts(&o, ";");
            free(sp);
        }
        if (bad) {
            tr_sb_free(&o);
            continue;
        }
        tr_edit_add(t, t->nodes.v[f].e, semi + 1, tr_sb_take(&o), 10);
    }
}

static void rewrite_static(tu *t, int v)
{
    var *vv = &t->vars.v[v];
    fninfo *f = &t->funcs.v[vv->func];
    int ds = vv->declstmt, ch, all = 1;
    const char *why;
    char *sp;
    if (tr_ast_type_is_local(vv->type, &why)) {
        tr_tu_error(t, t->nodes.v[vv->decls.v[0]].loc, "static variable '%s' has "
                    "%s: it cannot be moved to the shared heap (declare the type "
                    "at file scope)", vv->name, why);
        return;
    }
    if (ds < 0) {
        tr_tu_error(t, t->nodes.v[vv->decls.v[0]].loc, "cannot move static "
                    "variable '%s' to the shared heap", vv->name);
        return;
    }
    for (ch = t->nodes.v[ds].first; ch >= 0; ch = t->nodes.v[ch].next)
        if (t->nodes.v[ch].kind == CXCursor_VarDecl &&
            (t->nodes.v[ch].var < 0 || !t->vars.v[t->nodes.v[ch].var].rewritten))
            all = 0;
    if (!all) {
        tr_tu_error(t, t->nodes.v[vv->decls.v[0]].loc, "static variable '%s' is "
                    "declared together with variables that stay private: declare "
                    "it separately", vv->name);
        return;
    }
    if (t->nodes.v[ds].first == vv->decls.v[0]) /* the group once */
        tr_edit_add(t, t->nodes.v[ds].b, t->nodes.v[ds].e, tr_xstrdup(""), 10);
    sp = tr_ast_type_spelling(vv->type);
    tr_sb_printf(&f->pre_decls, "static __typeof__(%s) *" TR_RESTRICT "%s;\n",
                 sp, vv->ptr);
    free(sp);
}

/* ------------------------------------------------------------------------
 * main, library calls
 * ------------------------------------------------------------------------ */

static const char *const routed[] = {
    "malloc", "calloc", "realloc", "free", "posix_memalign", "aligned_alloc",
    "memalign", "valloc", "strdup", "strndup", "read", "write", "pread",
    "pwrite", "fread", "fwrite", NULL};

static int user_defines(tu *t, const char *name)
{
    int i;
    for (i = 0; i < t->defined_funcs.n; i++) {
        CXString s = clang_getCursorSpelling(t->nodes.v[t->defined_funcs.v[i]].c);
        int eq = !strcmp(clang_getCString(s), name);
        clang_disposeString(s);
        if (eq)
            return 1;
    }
    return 0;
}

/* A direct call omp_set_lock(E) or omp_set_nest_lock(E) at node n (the
 * callee's name) becomes OMPDSM_set_lock_at(E, "file", line, "E"), so that
 * a deadlock report names the lock as the user wrote it.  Returns 1 when
 * rewritten. */
static int rewrite_lock_call(tu *t, int n, const char *name)
{
    int p = t->nodes.v[n].parent;
    unsigned a, z;
    const char *file;
    int line;
    tr_sbuf text, ins;
    while (p >= 0 && (t->nodes.v[p].kind == CXCursor_UnexposedExpr ||
                      t->nodes.v[p].kind == CXCursor_ParenExpr) &&
           t->nodes.v[p].b == t->nodes.v[n].b)
        p = t->nodes.v[p].parent;
    if (p < 0 || t->nodes.v[p].kind != CXCursor_CallExpr ||
        clang_Cursor_getNumArguments(t->nodes.v[p].c) != 1 ||
        t->nodes.v[p].b != t->nodes.v[n].b)
        return 0;
    a = t->nodes.v[n].e;
    z = t->nodes.v[p].e;
    while (a < z && isspace((unsigned char)t->text[a]))
        a++;
    if (a >= z || t->text[a] != '(' || t->text[z - 1] != ')')
        return 0;
    a++;
    z--;
    /* the argument's text on one line, blanks folded */
    tr_sb_init(&text);
    for (; a < z; a++) {
        unsigned char c = (unsigned char)t->text[a];
        if (isspace(c)) {
            if (text.n && text.s[text.n - 1] != ' ')
                tr_sb_putc(&text, ' ');
        } else {
            tr_sb_putc(&text, (char)c);
        }
    }
    while (text.n && text.s[text.n - 1] == ' ')
        text.s[--text.n] = 0;
    tr_srcmap_presumed(&t->map, t->nodes.v[p].b, &file, &line, NULL);
    tr_sb_init(&ins);
    tr_sb_puts(&ins, ", ");
    tr_sb_cstring(&ins, file);
    tr_sb_printf(&ins, ", %d, ", line);
    tr_sb_cstring(&ins, text.s ? text.s : "");
    tr_sb_free(&text);
    tr_edit_add(t, t->nodes.v[n].b, t->nodes.v[n].e,
                tr_xasprintf("OMPDSM_%s_at", name + 4), 10);
    tr_edit_add(t, z, z, tr_sb_take(&ins), 10);
    return 1;
}

static void rewrite_functions(tu *t)
{
    int i, k;
    for (i = 0; i < t->nodes.n; i++) {
        tr_node *n = &t->nodes.v[i];
        CXCursor r;
        CXString s;
        const char *name;
        if (n->kind == CXCursor_FunctionDecl) {
            s = clang_getCursorSpelling(n->c);
            if (!strcmp(clang_getCString(s), "main") && n->parent < 0)
                tr_edit_add(t, n->loc, n->loc + 4, tr_xstrdup("__ompdsm_user_main"), 10);
            clang_disposeString(s);
            continue;
        }
        if (n->kind != CXCursor_DeclRefExpr || n->var >= 0)
            continue;
        r = clang_getCursorReferenced(n->c);
        if (clang_getCursorKind(r) != CXCursor_FunctionDecl)
            continue;
        s = clang_getCursorSpelling(r);
        name = clang_getCString(s);
        if (!strcmp(name, "main") && n->e - n->b == 4) {
            tr_edit_add(t, n->b, n->e, tr_xstrdup("__ompdsm_user_main"), 10);
        } else if ((!strcmp(name, "omp_set_lock") ||
                    !strcmp(name, "omp_set_nest_lock")) &&
                   n->e - n->b == strlen(name) && !user_defines(t, name)) {
            rewrite_lock_call(t, i, name);
        } else {
            for (k = 0; routed[k]; k++)
                if (!strcmp(name, routed[k]) && n->e - n->b == strlen(name))
                    break;
            if (routed[k] && !user_defines(t, name) &&
                clang_Cursor_getStorageClass(r) != CX_SC_Static)
                tr_edit_add(t, n->b, n->e, tr_xasprintf("OMPDSM_%s", name), 10);
        }
        clang_disposeString(s);
    }
    if (t->main_func >= 0) {
        fninfo *f = &t->funcs.v[t->main_func];
        CXType rt = clang_getResultType(clang_getCursorType(t->nodes.v[f->node].c));
        if (f->body >= 0 && rt.kind != CXType_Void)
            tr_edit_add(t, t->nodes.v[f->body].e - 1, t->nodes.v[f->body].e - 1,
                        tr_xstrdup(" return 0; "), 20);
    }
}

/* ------------------------------------------------------------------------
 * shared locals and references
 * ------------------------------------------------------------------------ */

/* The cleanup that frees a promoted local: a variable of its own holding
 * the pointer, declared right after it (locals are freed in reverse order
 * of allocation).  The pointer itself keeps its address untaken, or gcc
 * would not treat it as restrict-qualified. */
static const char *local_free_decl(const char *name)
{
    static char *buf; /* (valid until the next call) */
    free(buf);
    buf = tr_xasprintf(" void *__ompdsm_f_%s __attribute__((cleanup(OMPDSM_local_free)))"
                       " = (void *)__ompdsm_l_%s;", name, name);
    return buf;
}

static char *local_alloc_stmt(const var *v)
{
    const char *n = v->name;
    char *init = v->init < 0 ? NULL
                 : tr_xasprintf("%s&__ompdsm_i_%s",
                                tr_ast_type_is_volatile_object(v->type) ? "(const void *)"
                                                                        : "", n);
    char *r = tr_xasprintf(" __typeof__(__ompdsm_i_%s) *" TR_RESTRICT "__ompdsm_l_%s = "
                           "OMPDSM_local_%s(sizeof(__ompdsm_i_%s), __alignof__(__ompdsm_i_%s)"
                           "%s%s);%s",
                           n, n, init ? "alloc" : "new", n, n, init ? ", " : "",
                           init ? init : "", local_free_decl(n));
    free(init);
    return r;
}

/* Ends a declaration of the split statement: `;`, and a promoted local's
 * heap copy. */
static void end_local_decl(tr_sbuf *o, const var *v)
{
    char *a = v->promoted ? local_alloc_stmt(v) : NULL;
    tr_sb_printf(o, ";%s", a ? a : "");
    free(a);
}

/* A declaration statement in which a promoted local comes before other
 * declarators (`int x = 1, *p = &x, y = x;`): those must see the heap
 * copy, which exists only once x's declaration is complete.  So the
 * statement is split after x's declarator: each later declarator becomes a
 * declaration of its own, `__typeof__(TYPE) NAME = INIT;`, and each
 * promoted local's heap copy is made right after its own declaration
 * (base_name names the heap copy in the later initializers). */
/* Marks the promoted locals of statements to split (split_e), before any
 * reference is renamed; split_local_decls splits them afterwards. */
static void mark_split_locals(tu *t)
{
    int ds, r;
    for (ds = 0; ds < t->nodes.n; ds++) {
        int d, last = -1, split = 0, bad = 0;
        tr_node *s = &t->nodes.v[ds];
        if (s->kind != CXCursor_DeclStmt)
            continue;
        for (d = s->first; d >= 0; d = t->nodes.v[d].next) {
            int vi = t->nodes.v[d].var;
            if (t->nodes.v[d].kind != CXCursor_VarDecl)
                continue;
            if (vi < 0 || t->vars.v[vi].kind != VK_LOCAL)
                bad = 1;
            last = d;
        }
        /* Needed only where a later declarator refers to a promoted one. */
        for (r = 0; last >= 0 && r < t->refs.n && !split; r++) {
            ref *rf = &t->refs.v[r];
            var *v;
            if (rf->var < 0 || rf->b < s->b || rf->b >= s->e)
                continue;
            v = &t->vars.v[rf->var];
            if (v->promoted && v->kind == VK_LOCAL && v->declstmt == ds &&
                rf->b >= t->nodes.v[v->decls.v[0]].e)
                split = 1;
        }
        if (!split)
            continue;
        for (d = s->first; d >= 0; d = t->nodes.v[d].next)
            if (t->nodes.v[d].kind == CXCursor_VarDecl && t->nodes.v[d].var >= 0 &&
                t->vars.v[t->nodes.v[d].var].promoted &&
                tr_ast_var_vm(t, t->nodes.v[d].var) == VM_ARRAY)
                bad = 1;
        if (bad) {
            tr_tu_error(t, t->nodes.v[s->first].loc, "a parallel region needs a "
                        "variable of this declaration in shared memory, and later "
                        "declarators of the declaration use it, in a form ompcc "
                        "cannot split: declare the shared one separately");
            continue;
        }
        for (d = s->first; d >= 0; d = t->nodes.v[d].next) {
            tr_node *n = &t->nodes.v[d];
            if (n->kind == CXCursor_VarDecl && t->vars.v[n->var].promoted)
                t->vars.v[n->var].split_e = n->e;
        }
    }
}

static void split_local_decls(tu *t)
{
    int ds;
    for (ds = 0; ds < t->nodes.n; ds++) {
        int d, k, last = -1, split = 0, bad = 0;
        if (t->nodes.v[ds].kind != CXCursor_DeclStmt)
            continue;
        for (d = t->nodes.v[ds].first; d >= 0; d = t->nodes.v[d].next)
            if (t->nodes.v[d].kind == CXCursor_VarDecl) {
                last = d;
                if (t->vars.v[t->nodes.v[d].var].split_e)
                    split = 1;
            }
        if (!split)
            continue;
        int first = -1;
        tr_sbuf o;
        tr_sb_init(&o);
        for (d = t->nodes.v[ds].first, k = 0; d >= 0; d = t->nodes.v[d].next) {
            tr_node *n = &t->nodes.v[d];
            var *v;
            if (n->kind != CXCursor_VarDecl)
                continue;
            v = &t->vars.v[n->var];
            if (k++ == 0) {
                first = d;
                end_local_decl(&o, v); /* (promote_locals renames it) */
                continue;
            }
            char *sp = tr_ast_type_spelling(clang_getCursorType(n->c));
            if (strstr(sp, "(unnamed") || strstr(sp, "(anonymous")) {
                tr_tu_error(t, n->loc, "'%s' is declared together with a variable "
                            "that a parallel region needs in shared memory, with a "
                            "type that has no name: declare it separately", v->name);
                free(sp);
                bad = 1;
                break;
            }
            tr_sb_printf(&o, " __typeof__(%s) %s%s%s", sp, v->promoted ? "__ompdsm_i_" : "",
                         v->name, v->nrefs && !v->used_base && !v->promoted
                                   ? " __attribute__((unused))" : "");
            free(sp);
            if (v->init >= 0) {
                char *init = tr_render_str(t, t->nodes.v[v->init].b, t->nodes.v[v->init].e);
                tr_sb_printf(&o, " = %s", init);
                free(init);
            }
            end_local_decl(&o, v);
        }
        unsigned semi = t->nodes.v[last].e;
        while (semi < t->len && t->text[semi] != ';')
            semi++;
        if (bad || semi >= t->len) {
            tr_sb_free(&o);
            continue;
        }
        /* (the text ends with its last declaration's ';': the statement's
         * own ';' goes) */
        tr_edit_add(t, t->nodes.v[first].e, semi + 1, tr_sb_take(&o), 10);
    }
}

static void promote_locals(tu *t)
{
    int i;
    for (i = 0; i < t->vars.n; i++) {
        var *v = &t->vars.v[i];
        if (!v->promoted)
            continue;
        if (v->kind == VK_LOCAL && tr_ast_var_vm(t, i) == VM_ARRAY) {
            /* the size is known when the declaration runs: the declarator
             * becomes the pointer, allocated right after the declaration */
            tr_node *d = &t->nodes.v[v->decls.v[0]];
            tr_node *ds = &t->nodes.v[v->declstmt];
            tr_edit_add(t, d->loc, d->loc + (unsigned)strlen(v->name),
                        tr_xasprintf("(*" TR_RESTRICT "__ompdsm_l_%s)", v->name), 10);
            tr_edit_add(t, d->e, d->e, tr_xstrdup(" = 0"), 10);
            tr_edit_add(t, ds->e, ds->e,
                        tr_xasprintf(" __ompdsm_l_%s = OMPDSM_local_new(sizeof(*__ompdsm_l_%s), "
                                     "__alignof__(*__ompdsm_l_%s));%s",
                                     v->name, v->name, v->name, local_free_decl(v->name)),
                        10);
        } else if (v->kind == VK_LOCAL) {
            tr_node *d = &t->nodes.v[v->decls.v[0]];
            tr_node *ds = &t->nodes.v[v->declstmt];
            tr_edit_add(t, d->loc, d->loc + (unsigned)strlen(v->name),
                        tr_xasprintf("__ompdsm_i_%s", v->name), 10);
            if (!v->split_e) /* (split_local_decls made its copy) */
                tr_edit_add(t, ds->e, ds->e, local_alloc_stmt(v), 10);
        } else if (v->kind == VK_PARAM) {
            fninfo *f = &t->funcs.v[v->func];
            unsigned at = t->nodes.v[f->body].b + 1;
            /* (a parameter of variably modified type: its own, adjusted,
             * type, whose bounds are the ones the function received) */
            char *ty = tr_ast_var_vm(t, i) != VM_NONE ? tr_xasprintf("__typeof__(%s)", v->name)
                                                    : tr_ast_var_type_name(t, i, 0);
            tr_edit_add(t, at, at,
                        tr_xasprintf(" __typeof__(%s) *" TR_RESTRICT "__ompdsm_l_%s = "
                                     "OMPDSM_local_alloc(sizeof(%s), __alignof__(%s), "
                                     "%s&%s);%s",
                                     ty, v->name, ty, ty,
                                     tr_ast_type_is_volatile_object(v->type)
                                         ? "(const void *)" : "",
                                     v->name, local_free_decl(v->name)),
                        5);
            free(ty);
        }
    }
}

static void rewrite_refs(tu *t)
{
    int i;
    for (i = 0; i < t->refs.n; i++) {
        ref *r = &t->refs.v[i];
        char *name;
        if (r->b == r->e)
            continue;
        name = tr_sharing_name(t, r->var, r->start, r->b);
        if (!name) {
            tr_tu_error(t, r->b, "internal error: no name for '%s' here",
                        t->vars.v[r->var].name);
            continue;
        }
        name = tr_rewrite_volatile(t, r, name);
        if (strlen(name) != r->e - r->b || strncmp(name, t->text + r->b, r->e - r->b))
            tr_edit_add(t, r->b, r->e, name, 10);
        else
            free(name);
    }
}

/* A local whose every use moved into private copies would draw an
 * "unused variable" warning the original program did not have. */
static void mark_unused(tu *t, int v)
{
    var *vv = &t->vars.v[v];
    tr_node *d = &t->nodes.v[vv->decls.v[0]];
    unsigned at = d->e;
    if (vv->init >= 0) {
        at = find_back(t, t->nodes.v[vv->init].b, '=', d->loc);
        if (at == (unsigned)-1)
            return;
    }
    tr_edit_add(t, at, at, tr_xstrdup(" __attribute__((unused))"), 10);
}

void tr_globals_rewrite(tu *t)
{
    int i, k;
    for (i = 0; i < t->vars.n; i++) {
        var *v = &t->vars.v[i];
        if (v->kind == VK_LOCAL && v->nrefs && !v->used_base && !v->promoted &&
            v->decls.n && v->declstmt >= 0)
            mark_unused(t, i);
        if (v->threadprivate && !v->tls)
            for (k = 0; k < v->decls.n; k++)
                add_thread(t, v->decls.v[k]);
        if (v->threadprivate && v->def >= 0 && v->init >= 0 &&
            init_refers_rewritten(t, v->init)) {
            /* the address of a shared variable is known at run time only */
            unsigned ib = t->nodes.v[v->init].b;
            unsigned eq = find_back(t, ib, '=', t->nodes.v[v->def].loc);
            if (v->kind != VK_GLOBAL || eq == (unsigned)-1)
                tr_tu_error(t, ib, "threadprivate variable '%s' needs the address "
                            "of a shared variable: only file-scope variables can "
                            "be initialised this way", v->name);
            else
                tr_edit_add(t, eq, t->nodes.v[v->init].e, tr_xstrdup(""), 10);
            v->dyn_init = 1;
        }
        if (!v->rewritten)
            continue;
        if (v->kind == VK_GLOBAL) {
            for (k = 0; k < v->decls.n; k++)
                if (!moved_decl(t, v->decls.v[k]))
                    rewrite_declarator(t, i, v->decls.v[k]);
        } else if (v->kind == VK_STATIC) {
            rewrite_static(t, i);
        }
    }
    rewrite_functions(t);
    mark_split_locals(t);
    promote_locals(t);
    rewrite_refs(t);
    split_local_decls(t);
    split_groups(t);
}

/* After every reference is rewritten: the table of shared globals and the
 * initial values. */
void tr_globals_tables(tu *t)
{
    int i;
    for (i = 0; i < t->vars.n; i++) {
        var *v = &t->vars.v[i];
        if (v->dyn_init) { /* on each node's initial thread */
            char *init = tr_render_str(t, t->nodes.v[v->init].b, t->nodes.v[v->init].e);
            tr_srcmap_sync(&t->map, t->nodes.v[v->init].b, &t->init_fn);
            tr_sb_printf(&t->init_fn, "{ __typeof__(%s) __ompdsm_v = %s; "
                         "__builtin_memcpy(&%s, &__ompdsm_v, sizeof __ompdsm_v); }\n",
                         v->name, init, v->name);
            /* and on every other thread of the node (hybrid nodes) */
            tr_srcmap_sync(&t->map, t->nodes.v[v->init].b, &t->tp_init_fn);
            tr_sb_printf(&t->tp_init_fn, "{ __typeof__(%s) __ompdsm_v = %s; "
                         "__builtin_memcpy(&%s, &__ompdsm_v, sizeof __ompdsm_v); }\n",
                         v->name, init, v->name);
            free(init);
        }
        if (!v->rewritten || v->def < 0)
            continue;
        if (v->kind == VK_GLOBAL) {
            table_and_init(t, i, v->name);
        } else if (v->kind == VK_STATIC) {
            char *label = tr_xasprintf("%s.%s", t->funcs.v[v->func].name, v->name);
            table_and_init(t, i, label);
            free(label);
        }
    }
}
