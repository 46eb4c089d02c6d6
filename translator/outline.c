/* outline.c - a parallel region becomes a static function placed before
 * the enclosing function, a frame struct carrying what it needs from the
 * encountering thread (types declared in the function and variably
 * modified types included), a region descriptor, and a call site
 * OMPDSM_parallel(&desc, &frame, sizeof frame, num_threads, if).  The
 * helpers that name a variable's type, outer name and frame member at
 * file scope serve outline_task.c's tasks too. */
#include "tu.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* A type expression valid at file scope, before the enclosing function;
 * unqual: without top-level qualifiers (frame members that are assigned). */
char *tr_outline_file_type_q(tu *t, int v, unsigned off, int unqual)
{
    var *vv = &t->vars.v[v];
    const char *why;
    char *sp, *r;
    if (vv->rewritten)
        return tr_xasprintf("__typeof__(*%s)", vv->ptr);
    if ((vv->kind == VK_GLOBAL || vv->kind == VK_SYSTEM) && vv->decls.n &&
        t->nodes.v[vv->decls.v[0]].func < 0)
        return tr_xasprintf("__typeof__(%s)", vv->name);
    if (vv->kind == VK_SYSTEM)
        return tr_xasprintf("__typeof__(%s)", vv->name);
    if (tr_ast_var_type_is_local(t, v, &why)) {
        tr_tu_error(t, off, "variable '%s' has %s: a parallel region cannot use it "
                    "(declare the type at file scope)", vv->name, why);
        return tr_xstrdup("int");
    }
    sp = tr_ast_var_type_name(t, v, unqual);
    r = tr_xasprintf("__typeof__(%s)", sp);
    free(sp);
    return r;
}

char *tr_outline_file_type(tu *t, int v, unsigned off)
{
    return tr_outline_file_type_q(t, v, off, 0);
}

static int name_taken(tu *t, const char *name)
{
    int i;
    for (i = 0; i < t->regions.n; i++)
        if (!strcmp(t->regions.v[i], name))
            return 1;
    return 0;
}

char *tr_outline_member(tr_members *m, const char *name)
{
    char *r = tr_xstrdup(name);
    int i, n = 2, clash;
    do {
        clash = 0;
        for (i = 0; i < m->names.n; i++)
            if (!strcmp(m->names.v[i], r))
                clash = 1;
        if (clash) {
            free(r);
            r = tr_xasprintf("%s_%d", name, n++);
        }
    } while (clash);
    VEC_PUSH(m->names, r);
    return r;
}

char *tr_outline_outer(tu *t, int k, int v)
{
    construct *c = &t->cons.v[k];
    char *n = tr_sharing_name(t, v, c->parent, c->b);
    if (!n) {
        tr_tu_error(t, c->p->dir_off, "internal error: '%s' is not available "
                    "where the region starts", t->vars.v[v].name);
        n = tr_xstrdup(t->vars.v[v].name);
    }
    return n;
}

/* Block-scope declarations of functions and extern variables of the
 * enclosing function, which the outlined function must see too. */
void tr_outline_replicate_decls(tu *t, int k, tr_sbuf *o)
{
    construct *c = &t->cons.v[k];
    int i;
    for (i = t->funcs.v[c->func].node; i < t->nodes.n; i++) {
        tr_node *n = &t->nodes.v[i];
        int ch, ok = 1;
        if (n->b >= c->b)
            break;
        if (n->func != c->func || n->kind != CXCursor_DeclStmt)
            continue;
        for (ch = n->first; ch >= 0; ch = t->nodes.v[ch].next) {
            tr_node *d = &t->nodes.v[ch];
            const char *why;
            /* (a declaration naming types of the function cannot move) */
            if (d->kind == CXCursor_FunctionDecl &&
                !tr_ast_type_is_local(clang_getCursorType(d->c), &why))
                continue;
            if (d->kind == CXCursor_VarDecl && d->var >= 0 &&
                t->vars.v[d->var].kind == VK_GLOBAL)
                continue;
            ok = 0;
        }
        if (ok && n->first >= 0) {
            char *txt = tr_render_str(t, n->b, n->e);
            tr_srcmap_sync(&t->map, n->b, o);
            tr_sb_puts(o, txt);
            tr_sb_putc(o, '\n');
            free(txt);
        }
    }
}

/* ------------------------------------------------------------------------
 * types declared inside the enclosing function
 *
 * The frame is declared at file scope, where such types do not exist: a
 * variable of a local type travels as bytes (by value) or as void * (in
 * shared storage), and the outlined function re-declares the function's
 * local types before its prologue, naming unnamed ones with a typedef.
 * The re-declared types have the same layout as the originals.
 * ------------------------------------------------------------------------ */

typedef struct ltypes {
    int needed;           /* some variable of the region has a local type */
    tr_sbuf text;            /* the re-declarations */
    VEC(unsigned) anon_at;   /* offsets of unnamed struct/union/enum decls */
    VEC(char *) anon_name;   /* their typedef names */
} ltypes;

static int local_type(tu *t, int v)
{
    const char *why;
    return tr_ast_var_type_is_local(t, v, &why) && strcmp(why, "a variable-length array");
}

/* Is node n inside the block (compound statement) that contains off? */
static int in_scope(tu *t, int n, unsigned off)
{
    int p = t->nodes.v[n].parent;
    while (p >= 0 && t->nodes.v[p].kind != CXCursor_CompoundStmt)
        p = t->nodes.v[p].parent;
    return p >= 0 && t->nodes.v[p].b <= off && off < t->nodes.v[p].e;
}

static int is_type_decl(enum CXCursorKind k)
{
    return k == CXCursor_StructDecl || k == CXCursor_UnionDecl ||
           k == CXCursor_EnumDecl || k == CXCursor_TypedefDecl;
}

static int vm_typedef(tu *t, int n)
{
    return t->nodes.v[n].kind == CXCursor_TypedefDecl &&
           tr_ast_type_is_vm(clang_getTypedefDeclUnderlyingType(t->nodes.v[n].c));
}

static void replicate_types(tu *t, int k, ltypes *L)
{
    construct *c = &t->cons.v[k];
    int i, nanon = 0;
    for (i = t->funcs.v[c->func].node; i < t->nodes.n; i++) {
        tr_node *n = &t->nodes.v[i];
        int ch, only_types = 1;
        if (n->b >= c->b)
            break;
        if (n->func != c->func || n->kind != CXCursor_DeclStmt || !in_scope(t, i, c->b))
            continue;
        for (ch = n->first; ch >= 0; ch = t->nodes.v[ch].next)
            if (!is_type_decl(t->nodes.v[ch].kind) || vm_typedef(t, ch))
                only_types = 0; /* (a VLA typedef's bounds are not here) */
        if (n->first < 0)
            continue;
        if (only_types) {
            char *txt = tr_render_str(t, n->b, n->e);
            tr_srcmap_sync(&t->map, n->b, &L->text);
            tr_sb_puts(&L->text, txt);
            tr_sb_putc(&L->text, '\n');
            free(txt);
            continue;
        }
        for (ch = n->first; ch >= 0; ch = t->nodes.v[ch].next) {
            tr_node *d = &t->nodes.v[ch];
            char *txt;
            if (!is_type_decl(d->kind) || d->kind == CXCursor_TypedefDecl ||
                !clang_isCursorDefinition(d->c))
                continue;
            txt = tr_render_str(t, d->b, d->e);
            tr_srcmap_sync(&t->map, d->b, &L->text);
            if (clang_Cursor_isAnonymous(d->c)) {
                char *name = tr_xasprintf("__ompdsm_T%d", ++nanon);
                tr_sb_printf(&L->text, "typedef %s %s;\n", txt, name);
                VEC_PUSH(L->anon_at, d->b);
                VEC_PUSH(L->anon_name, name);
            } else {
                tr_sb_printf(&L->text, "%s;\n", txt);
            }
            free(txt);
        }
    }
}

/* A type name for ty inside the outlined function. */
static char *lt_name(tu *t, ltypes *L, CXType ty)
{
    char *in, *r;
    const char *cq = clang_isConstQualifiedType(ty) ? "const " : "";
    switch (ty.kind) {
    case CXType_Elaborated:
    case CXType_Record:
    case CXType_Enum: {
        CXType named = ty.kind == CXType_Elaborated ? clang_Type_getNamedType(ty) : ty;
        CXCursor d = clang_getTypeDeclaration(named);
        int i;
        if (named.kind == CXType_Typedef)
            return tr_ast_type_spelling(ty);
        if (!clang_Cursor_isNull(d) && clang_Cursor_isAnonymous(d)) {
            unsigned off;
            clang_getSpellingLocation(clang_getRangeStart(clang_getCursorExtent(d)),
                                      NULL, NULL, NULL, &off);
            for (i = 0; i < L->anon_at.n; i++)
                if (L->anon_at.v[i] == off)
                    return tr_xasprintf("%s%s", cq, L->anon_name.v[i]);
        }
        return tr_ast_type_spelling(ty);
    }
    case CXType_Pointer:
        in = lt_name(t, L, clang_getPointeeType(ty));
        r = tr_xasprintf("__typeof__(%s) *%s", in, *cq ? " const" : "");
        free(in);
        return r;
    case CXType_ConstantArray:
        in = lt_name(t, L, clang_getArrayElementType(ty));
        r = tr_xasprintf("__typeof__(%s)[%lld]", in, clang_getArraySize(ty));
        free(in);
        return r;
    case CXType_IncompleteArray:
        in = lt_name(t, L, clang_getArrayElementType(ty));
        r = tr_xasprintf("__typeof__(%s)[]", in);
        free(in);
        return r;
    default:
        return tr_ast_type_spelling(ty);
    }
}

/* The variable's type inside the outlined function. */
static char *in_type(tu *t, ltypes *L, int v)
{
    var *vv = &t->vars.v[v];
    char *n, *r;
    if (vv->decay == 1) {
        CXType ty = clang_getCanonicalType(vv->type);
        n = lt_name(t, L, clang_getArrayElementType(ty));
        r = tr_xasprintf("__typeof__(__typeof__(%s) *)", n);
    } else {
        n = lt_name(t, L, vv->type);
        r = tr_xasprintf("__typeof__(%s)", n);
    }
    free(n);
    return r;
}

/* a frame member holding the bytes of a variable of a local type */
static char *bytes_member(tu *t, int v, const char *m)
{
    var *vv = &t->vars.v[v];
    long long size = vv->decay ? (long long)sizeof(void *) : clang_Type_getSizeOf(vv->type);
    long long al = vv->decay ? (long long)sizeof(void *) : clang_Type_getAlignOf(vv->type);
    return tr_xasprintf("unsigned char %s[%lld] __attribute__((aligned(%lld)))",
                        m, size > 0 ? size : 1, al > 0 ? al : 1);
}

/* ------------------------------------------------------------------------
 * variably modified types
 *
 * The type of a variable-length array, or of a pointer to one, has bounds
 * that were evaluated when its declaration ran.  The encountering thread
 * computes each variable bound from the variable itself (sizeof of the
 * array over sizeof of its element) into an `unsigned long` member of the
 * frame; the outlined function declares the variable with the same type
 * whose variable bounds are those members:
 *
 *     double (*v)[n2][n1]   ->   __typeof__(double) (*v)[__ompdsm_f->v_b0][__ompdsm_f->v_b1]
 * ------------------------------------------------------------------------ */

/* sizeof(e), without doubling e's own parentheses */
static int wrapped(const char *e)
{
    int depth = 0;
    const char *p;
    if (e[0] != '(')
        return 0;
    for (p = e; *p; p++) {
        depth += *p == '(' ? 1 : *p == ')' ? -1 : 0;
        if (!depth && p[1])
            return 0;
    }
    return 1;
}

static char *cat_free(char *a, char *b)
{
    char *r = tr_xasprintf("%s%s", a, b);
    free(a);
    free(b);
    return r;
}

/* The declaration (without ';') of `name` with the type of v as the region
 * sees it (an array parameter is a pointer), its variable bounds frame
 * members (listed in mem, computed in fill from `o`, the variable's name
 * where the region starts).  NULL after an error. */
static char *vm_decl(tu *t, int k, int v, const char *name, const char *o,
                     tr_members *mn, tr_sbuf *mem, tr_sbuf *fill)
{
    var *vv = &t->vars.v[v];
    unsigned off = t->cons.v[k].p->dir_off;
    CXType ty = tr_ast_type_desugar(vv->type);
    char *decl = tr_xstrdup(name), *sp, *r;
    char *e = strspn(o, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") ==
                      strlen(o) || wrapped(o) ? tr_xstrdup(o) : tr_xasprintf("(%s)", o);
    int nb = 0, cconst = 0, cvol = 0;
    const char *why;
    if (vv->decay == 1 && (ty.kind == CXType_ConstantArray || ty.kind == CXType_IncompleteArray ||
                           ty.kind == CXType_VariableArray)) {
        /* T a[][n] (or a[m][n]) is T (*a)[n] */
        ty = clang_getArrayElementType(ty);
        decl = cat_free(tr_xstrdup("*"), decl);
        e = cat_free(tr_xstrdup("(*"), cat_free(e, tr_xstrdup(")")));
    }
    for (;;) {
        CXType asis = ty; /* (the sugar may hold the qualifiers) */
        int qc = clang_isConstQualifiedType(ty), qv = clang_isVolatileQualifiedType(ty);
        int qr = clang_isRestrictQualifiedType(ty);
        ty = tr_ast_type_desugar(ty);
        qc |= clang_isConstQualifiedType(ty);
        qv |= clang_isVolatileQualifiedType(ty);
        qr |= clang_isRestrictQualifiedType(ty);
        if (!tr_ast_type_is_vm(ty)) {
            ty = asis;
            if (qc)
                cconst = 0; /* already in the spelling */
            if (qv)
                cvol = 0;
            break;
        }
        if (ty.kind == CXType_Pointer) {
            decl = cat_free(tr_xasprintf("*%s%s%s", qc ? "const " : "", qv ? "volatile " : "",
                                         qr ? "restrict " : ""), decl);
            e = cat_free(tr_xstrdup("(*"), cat_free(e, tr_xstrdup(")")));
            ty = clang_getPointeeType(ty);
            continue;
        }
        if (ty.kind == CXType_ConstantArray || ty.kind == CXType_IncompleteArray ||
            ty.kind == CXType_VariableArray) {
            /* (libclang puts the qualifiers of the elements on the array) */
            cconst |= qc;
            cvol |= qv;
            if (decl[0] == '*')
                decl = cat_free(tr_xstrdup("("), cat_free(decl, tr_xstrdup(")")));
            if (ty.kind == CXType_ConstantArray) {
                decl = cat_free(decl, tr_xasprintf("[%lld]", clang_getArraySize(ty)));
            } else if (ty.kind == CXType_IncompleteArray) {
                decl = cat_free(decl, tr_xstrdup("[]"));
            } else {
                char *bn = tr_xasprintf("%s_b%d", vv->name, nb++);
                char *m = tr_outline_member(mn, bn);
                tr_sb_printf(mem, "    unsigned long %s; /* a bound of %s */\n", m, vv->name);
                tr_sb_printf(fill, "  __ompdsm_fr.%s = sizeof%s%s%s / sizeof(%s[0]);\n", m,
                             wrapped(e) ? "" : "(", e, wrapped(e) ? "" : ")", e);
                decl = cat_free(decl, tr_xasprintf("[__ompdsm_f->%s]", m));
                free(bn);
            }
            e = cat_free(e, tr_xstrdup("[0]"));
            ty = clang_getArrayElementType(ty);
            continue;
        }
        if (ty.kind == CXType_Typedef) {
            /* a typedef of the function: its type as written */
            cconst |= qc;
            cvol |= qv;
            ty = clang_getTypedefDeclUnderlyingType(clang_getTypeDeclaration(ty));
            continue;
        }
        tr_tu_error(t, off, "variable '%s' has a variably modified type that a "
                    "parallel region cannot use", vv->name);
        free(decl);
        free(e);
        return NULL;
    }
    free(e);
    if (tr_ast_type_is_local(ty, &why)) {
        tr_tu_error(t, off, "variable '%s' is a variable-length array of %s: a "
                    "parallel region cannot use it (declare the type at file scope)",
                    vv->name, why);
        free(decl);
        return NULL;
    }
    sp = tr_ast_type_spelling(ty);
    r = tr_xasprintf("%s%s__typeof__(%s) %s", cconst ? "const " : "", cvol ? "volatile " : "",
                     sp, decl);
    free(sp);
    free(decl);
    return r;
}

/* What outlining one region builds up before it writes anything out. */
typedef struct region_gen {
    char *fname;  /* the outlined function, __ompdsm_region_<func>_<line>[_n] */
    char *frame;  /* its frame struct's tag */
    tr_members mn;   /* frame member names */
    ltypes L;     /* local types the region re-declares */
    tr_sbuf mem;     /* frame struct members */
    tr_sbuf fill;    /* call site: statements filling the frame */
    tr_sbuf pro;     /* function prologue: private copies, pointers to shared */
    tr_sbuf cin_pro; /* prologue's copyin statements (after every declaration) */
    tr_sbuf epi;     /* reduction items for OMPDSM_reduce */
    int nred;
} region_gen;

/* A region function name no other region of the unit has. */
static void region_names(tu *t, int k, region_gen *g)
{
    construct *c = &t->cons.v[k];
    fninfo *f = &t->funcs.v[c->func];
    char *base = tr_xasprintf("__ompdsm_region_%s_%d", f->name, c->line);
    int n = 2;
    g->fname = tr_xstrdup(base);
    while (name_taken(t, g->fname)) {
        free(g->fname);
        g->fname = tr_xasprintf("%s_%d", base, n++);
    }
    free(base);
    VEC_PUSH(t->regions, g->fname);
    t->cons.v[k].fname = g->fname;
    g->frame = tr_xasprintf("__ompdsm_frame_%s", g->fname + strlen("__ompdsm_region_"));
}

/* typedefs of variable-length array types cannot be re-declared (their
 * bounds were evaluated in the enclosing function) */
static void check_vla_typedefs(tu *t, int k)
{
    construct *c = &t->cons.v[k];
    for (int i = 0; i < t->vm_typerefs.n; i++) {
        unsigned off = t->vm_typerefs.v[i];
        if (off >= c->sb && off < c->se) {
            int len = 0;
            while (off + len < t->len && (isalnum((unsigned char)t->text[off + len]) ||
                                          t->text[off + len] == '_'))
                len++;
            tr_tu_error(t, off, "type '%.*s' is a variable-length array type declared "
                        "by a typedef in the function: a parallel region cannot name it "
                        "(write the array type in full)", len, t->text + off);
        }
    }
}

/* types declared in the function that the region needs */
static void local_types(tu *t, int k, ltypes *L)
{
    construct *c = &t->cons.v[k];
    int i;
    for (i = 0; i < c->uses.n && !L->needed; i++)
        L->needed = (c->uses.v[i].mode == MODE_VALUE || c->uses.v[i].mode == MODE_POINTER) &&
                    local_type(t, c->uses.v[i].var);
    for (i = 0; i < c->priv.n && !L->needed; i++)
        L->needed = local_type(t, c->priv.v[i]);
    for (i = 0; i < c->fpriv.n && !L->needed; i++)
        L->needed = local_type(t, c->fpriv.v[i]);
    for (i = 0; i < c->red.n && !L->needed; i++)
        L->needed = local_type(t, c->red.v[i]);
    for (i = 0; i < c->copyin.n && !L->needed; i++)
        L->needed = local_type(t, c->copyin.v[i]);
    if (L->needed)
        replicate_types(t, k, L);
}

/* shared variables: by value when only read, else a pointer */
static void frame_shared(tu *t, int k, region_gen *g)
{
    for (int i = 0; i < t->cons.v[k].uses.n; i++) {
        usage u = t->cons.v[k].uses.v[i];
        const char *vn = t->vars.v[u.var].name;
        char *ty, *m, *o;
        if (u.mode == MODE_GLOBAL || u.mode == MODE_PLAIN)
            continue;
        m = tr_outline_member(&g->mn, vn);
        o = tr_outline_outer(t, k, u.var);
        if (tr_ast_var_vm(t, u.var) != VM_NONE) {
            char *sh = u.mode == MODE_VALUE ? tr_xstrdup(vn) : tr_xasprintf("*__ompdsm_sh_%s", vn);
            char *d;
            tr_sb_printf(&g->mem, "    void *%s; /* %s */\n", m,
                         u.mode == MODE_VALUE ? "shared, read-only: by value" : "shared");
            tr_sb_printf(&g->fill, "  __ompdsm_fr.%s = (void *)%s(%s);\n", m,
                         u.mode == MODE_VALUE ? "" : "&", o);
            d = vm_decl(t, k, u.var, sh, o, &g->mn, &g->mem, &g->fill);
            if (d)
                tr_sb_printf(&g->pro, "  %s = __ompdsm_f->%s;\n", d, m);
            free(d);
            free(sh);
            free(o);
            continue;
        }
        if (local_type(t, u.var)) {
            ty = in_type(t, &g->L, u.var);
            if (u.mode == MODE_VALUE) {
                char *b = bytes_member(t, u.var, m);
                tr_sb_printf(&g->mem, "    %s; /* shared, read-only: by value */\n", b);
                tr_sb_printf(&g->fill, "  __builtin_memcpy(__ompdsm_fr.%s, &(%s), sizeof __ompdsm_fr.%s);\n",
                             m, o, m);
                tr_sb_printf(&g->pro,
                             "  %s %s; __builtin_memcpy(&%s, __ompdsm_f->%s, sizeof %s);\n",
                             ty, vn, vn, m, vn);
                free(b);
            } else {
                tr_sb_printf(&g->mem, "    void *%s; /* shared */\n", m);
                tr_sb_printf(&g->fill, "  __ompdsm_fr.%s = &(%s);\n", m, o);
                tr_sb_printf(&g->pro, "  %s *__ompdsm_sh_%s = __ompdsm_f->%s;\n", ty, vn, m);
            }
            free(ty);
            free(o);
            continue;
        }
        ty = tr_outline_file_type_q(t, u.var, t->cons.v[k].p->dir_off, u.mode == MODE_VALUE);
        if (u.mode == MODE_VALUE) {
            tr_sb_printf(&g->mem, "    %s %s; /* shared, read-only: by value */\n", ty, m);
            tr_sb_printf(&g->fill, "  __ompdsm_fr.%s = %s;\n", m, o);
            tr_sb_printf(&g->pro, "  __typeof__(__ompdsm_f->%s) %s = __ompdsm_f->%s;\n", m, vn, m);
        } else {
            tr_sb_printf(&g->mem, "    %s *%s; /* shared */\n", ty, m);
            tr_sb_printf(&g->fill, "  __ompdsm_fr.%s = &(%s);\n", m, o);
            tr_sb_printf(&g->pro, "  __typeof__(__ompdsm_f->%s) __ompdsm_sh_%s = __ompdsm_f->%s;\n",
                         m, vn, m);
        }
        free(ty);
        free(o);
    }
}

/* private: declared in the prologue, nothing in the frame */
static void frame_private(tu *t, int k, region_gen *g)
{
    for (int i = 0; i < t->cons.v[k].priv.n; i++) {
        int v = t->cons.v[k].priv.v[i];
        char *ty;
        if (tr_ast_var_vm(t, v) != VM_NONE) {
            char *o = tr_outline_outer(t, k, v);
            char *d = vm_decl(t, k, v, t->vars.v[v].name, o, &g->mn, &g->mem, &g->fill);
            if (d)
                tr_sb_printf(&g->pro, "  %s; /* private */\n", d);
            free(d);
            free(o);
            continue;
        }
        ty = local_type(t, v) ? in_type(t, &g->L, v)
                              : tr_outline_file_type(t, v, t->cons.v[k].p->dir_off);
        tr_sb_printf(&g->pro, "  %s %s; /* private */\n", ty, t->vars.v[v].name);
        free(ty);
    }
}

/* firstprivate and copyin: values through the frame */
static void frame_firstprivate(tu *t, int k, region_gen *g)
{
    for (int i = 0; i < t->cons.v[k].fpriv.n + t->cons.v[k].copyin.n; i++) {
        int cin = i >= t->cons.v[k].fpriv.n;
        int v = cin ? t->cons.v[k].copyin.v[i - t->cons.v[k].fpriv.n]
                    : t->cons.v[k].fpriv.v[i];
        const char *vn = t->vars.v[v].name;
        char *m = tr_outline_member(&g->mn, vn), *o = tr_outline_outer(t, k, v), *ty;
        int vm = tr_ast_var_vm(t, v);
        if (vm != VM_NONE && !cin) {
            /* a pointer by value; an array from its original, which lives
             * in the shared heap (its size is not the frame's) */
            char *d;
            tr_sb_printf(&g->mem, "    void *%s; /* firstprivate%s */\n", m,
                         vm == VM_POINTER ? "" : ": the original");
            tr_sb_printf(&g->fill, "  __ompdsm_fr.%s = (void *)%s(%s);\n", m,
                         vm == VM_POINTER ? "" : "&", o);
            d = vm_decl(t, k, v, vn, o, &g->mn, &g->mem, &g->fill);
            if (d && vm == VM_POINTER)
                tr_sb_printf(&g->pro, "  %s = __ompdsm_f->%s;\n", d, m);
            else if (d)
                tr_sb_printf(&g->pro, "  %s; __builtin_memcpy(&%s, __ompdsm_f->%s, sizeof %s);\n",
                             d, vn, m, vn);
            free(d);
            free(o);
            continue;
        }
        if (local_type(t, v)) {
            char *b = bytes_member(t, v, m);
            ty = in_type(t, &g->L, v);
            tr_sb_printf(&g->mem, "    %s; /* %s */\n", b, cin ? "copyin" : "firstprivate");
            if (cin)
                tr_sb_printf(&g->cin_pro, "  __builtin_memcpy(&%s, __ompdsm_f->%s, sizeof __ompdsm_f->%s);\n",
                             vn, m, m);
            else
                tr_sb_printf(&g->pro,
                             "  %s %s; __builtin_memcpy(&%s, __ompdsm_f->%s, sizeof %s);\n",
                             ty, vn, vn, m, vn);
            free(b);
        } else {
            ty = tr_outline_file_type_q(t, v, t->cons.v[k].p->dir_off, 1);
            tr_sb_printf(&g->mem, "    %s %s; /* %s */\n", ty, m, cin ? "copyin" : "firstprivate");
            if (cin)
                tr_sb_printf(&g->cin_pro, "  __builtin_memcpy(&%s, &__ompdsm_f->%s, sizeof __ompdsm_f->%s);\n",
                             vn, m, m);
            else
                tr_sb_printf(&g->pro, "  __typeof__(__ompdsm_f->%s) %s; __builtin_memcpy(&%s, "
                             "&__ompdsm_f->%s, sizeof %s);\n", m, vn, vn, m, vn);
        }
        tr_sb_printf(&g->fill,
                     "  __builtin_memcpy(&__ompdsm_fr.%s, &(%s), sizeof __ompdsm_fr.%s);\n",
                     m, o, m);
        free(ty);
        free(o);
    }
}

/* reduction: the frame points to the original */
static void frame_reduction(tu *t, int k, region_gen *g)
{
    for (int i = 0; i < t->cons.v[k].red.n; i++) {
        int v = t->cons.v[k].red.v[i], op = t->cons.v[k].redop.v[i];
        const char *vn = t->vars.v[v].name;
        const char *code = tr_lower_type_code(t, t->vars.v[v].type, op,
                                              t->cons.v[k].p->dir_off,
                                              "reduction variable", vn);
        char *m = tr_outline_member(&g->mn, vn), *o = tr_outline_outer(t, k, v), *ty;
        if (local_type(t, v)) {
            ty = in_type(t, &g->L, v);
            tr_sb_printf(&g->mem, "    void *%s; /* reduction(%s) */\n", m,
                         tr_pragma_redop_name(op));
            tr_sb_printf(&g->pro, "  %s %s; OMPDSM_reduce_init(&%s, %s, %s);\n", ty, vn, vn,
                         code, tr_lower_redop_abi(op));
        } else {
            ty = tr_outline_file_type(t, v, t->cons.v[k].p->dir_off);
            tr_sb_printf(&g->mem, "    %s *%s; /* reduction(%s) */\n", ty, m,
                         tr_pragma_redop_name(op));
            tr_sb_printf(&g->pro, "  __typeof__(*__ompdsm_f->%s) %s; OMPDSM_reduce_init(&%s, %s, %s);\n",
                         m, vn, vn, code, tr_lower_redop_abi(op));
        }
        tr_sb_printf(&g->fill, "  __ompdsm_fr.%s = &(%s);\n", m, o);
        tr_sb_printf(&g->epi, "%s{__ompdsm_f->%s, &%s, %s, %s}", g->nred ? ", " : "", m, vn,
                     code, tr_lower_redop_abi(op));
        g->nred++;
        free(ty);
        free(o);
    }
}

/* the frame struct, the prototype and the descriptor, before the
 * enclosing function */
static void emit_descriptor(tu *t, int k, region_gen *g)
{
    construct *c = &t->cons.v[k];
    fninfo *f = &t->funcs.v[c->func];
    const char *file, *p;
    tr_sbuf site;
    tr_sb_init(&site);
    if (!g->mem.n)
        tr_sb_puts(&g->mem, "    char __ompdsm_unused;\n");
    tr_srcmap_presumed(&t->map, c->p->begin, &file, NULL, NULL);
    for (p = file; *p; p++) {
        if (*p == '"' || *p == '\\')
            tr_sb_putc(&site, '\\');
        tr_sb_putc(&site, *p);
    }
    tr_sb_printf(&f->pre_decls, "struct %s {\n%s};\nstatic void %s(void *);\n"
                 "static OMPDSM_region %s_desc = {%s, \"%s:%d (%s)\", 0};\n",
                 g->frame, g->mem.s, g->fname, g->fname, g->fname, site.s, c->line,
                 f->name);
    tr_sb_free(&site);
}

/* the outlined function, before the enclosing function */
static void emit_function(tu *t, int k, region_gen *g)
{
    construct *c;
    char *body;
    tr_sbuf fn;
    tr_sb_init(&fn);
    tr_srcmap_sync(&t->map, t->cons.v[k].p->begin, &fn);
    tr_sb_printf(&fn, "static void %s(void *__ompdsm_fp)\n{\n"
                   "  struct %s *__ompdsm_f = (struct %s *)__ompdsm_fp;\n",
                 g->fname, g->frame, g->frame);
    tr_outline_replicate_decls(t, k, &fn);
    if (g->L.text.n) {
        tr_sb_puts(&fn, g->L.text.s);
        tr_srcmap_sync(&t->map, t->cons.v[k].p->begin, &fn);
    }
    tr_sb_puts(&fn, g->pro.s ? g->pro.s : "");
    tr_sb_puts(&fn, g->cin_pro.s ? g->cin_pro.s : ""); /* copyin: statements last */
    tr_sb_puts(&fn, "  (void)__ompdsm_f;\n");
    for (int i = 0; i < t->cons.n; i++)
        if (t->cons.v[i].dir == DIR_TASK) {
            /* (its threads may create tasks, here or in functions of the
             * unit it calls) */
            tr_sb_puts(&fn, "  OMPDSM_task_region();\n");
            break;
        }
    c = &t->cons.v[k];
    body = tr_render_str(t, c->sb, c->se);
    tr_srcmap_sync(&t->map, c->sb, &fn);
    tr_sb_puts(&fn, body);
    free(body);
    if (g->nred)
        tr_sb_printf(&fn, "\n  { OMPDSM_red __ompdsm_r[] = {%s}; OMPDSM_reduce(__ompdsm_r, %d); }",
                     g->epi.s, g->nred);
    tr_sb_puts(&fn, "\n}\n");
    c = &t->cons.v[k];
    tr_sb_puts(&t->funcs.v[c->func].pre, fn.s);
    tr_sb_free(&fn);
}

/* the call site: fill the frame, call OMPDSM_parallel */
static void emit_call(tu *t, int k, region_gen *g)
{
    construct *c = &t->cons.v[k];
    char *nt = c->c_num_threads ? tr_render_str(t, c->c_num_threads->args[0].b,
                                                c->c_num_threads->args[0].e)
                                : NULL;
    char *ifx = c->c_if ? tr_render_str(t, c->c_if->args[0].b, c->c_if->args[0].e) : NULL;
    char *ntx = nt ? tr_xasprintf("(int)(%s)", nt) : tr_xstrdup("0");
    char *ifs = ifx ? tr_xasprintf("(%s) ? 1 : 0", ifx) : tr_xstrdup("1");
    tr_sbuf o;
    tr_sb_init(&o);
    tr_lower_comment(t, k, &o);
    tr_sb_printf(&o, "\n{\n  struct %s __ompdsm_fr;\n%s"
                  "  OMPDSM_parallel(&%s_desc, &__ompdsm_fr, sizeof __ompdsm_fr, %s, %s);\n}",
                 g->frame, g->fill.s ? g->fill.s : "", g->fname, ntx, ifs);
    c = &t->cons.v[k];
    tr_edit_add(t, c->b, c->e, tr_sb_take(&o), tr_con_depth(t, k));
    free(ntx);
    free(ifs);
    free(nt);
    free(ifx);
}

static void region_gen_free(region_gen *g)
{
    int i;
    free(g->frame);
    for (i = 0; i < g->mn.names.n; i++)
        free(g->mn.names.v[i]);
    free(g->mn.names.v);
    tr_sb_free(&g->mem);
    tr_sb_free(&g->fill);
    tr_sb_free(&g->pro);
    tr_sb_free(&g->cin_pro);
    tr_sb_free(&g->epi);
    tr_sb_free(&g->L.text);
    for (i = 0; i < g->L.anon_name.n; i++)
        free(g->L.anon_name.v[i]);
    free(g->L.anon_name.v);
    free(g->L.anon_at.v);
}

void tr_outline_region(tu *t, int k)
{
    region_gen g;
    memset(&g, 0, sizeof g);
    tr_sb_init(&g.mem);
    tr_sb_init(&g.fill);
    tr_sb_init(&g.pro);
    tr_sb_init(&g.cin_pro);
    tr_sb_init(&g.epi);
    region_names(t, k, &g);
    check_vla_typedefs(t, k);
    local_types(t, k, &g.L);
    frame_shared(t, k, &g);
    frame_private(t, k, &g);
    frame_firstprivate(t, k, &g);
    frame_reduction(t, k, &g);
    emit_descriptor(t, k, &g);
    emit_function(t, k, &g);
    emit_call(t, k, &g);
    region_gen_free(&g);
}
