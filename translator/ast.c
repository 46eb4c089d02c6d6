/* ast.c - mirrors libclang's cursor tree of the user's code (not system
 * headers) into tu->nodes, and collects variables and functions. */
#include "tu.h"

#include <stdlib.h>
#include <string.h>

static unsigned off_of(CXSourceLocation l)
{
    unsigned off;
    clang_getSpellingLocation(l, NULL, NULL, NULL, &off);
    return off;
}

/* ------------------------------------------------------------------------
 * canonical cursor -> variable index (open addressing)
 * ------------------------------------------------------------------------ */

static void vhash_grow(tu *t);
static int ast_type_is_scalar(CXType ty);
static int ast_type_is_const_object(CXType ty);

static int vhash_find(tu *t, CXCursor canon, int insert_as)
{
    unsigned h, i;
    if (!t->vhash_cap || (insert_as >= 0 && 2 * t->vars.n >= t->vhash_cap))
        vhash_grow(t);
    h = clang_hashCursor(canon);
    for (i = h & (unsigned)(t->vhash_cap - 1);; i = (i + 1) & (unsigned)(t->vhash_cap - 1)) {
        int v = t->vhash[i];
        if (v < 0) {
            if (insert_as >= 0)
                t->vhash[i] = insert_as;
            return insert_as;
        }
        if (clang_equalCursors(t->vars.v[v].canon, canon))
            return v;
    }
}

static void vhash_grow(tu *t)
{
    int cap = t->vhash_cap ? 2 * t->vhash_cap : 1024, i;
    int *old = t->vhash, oldcap = t->vhash_cap;
    t->vhash = tr_xmalloc((size_t)cap * sizeof *t->vhash);
    for (i = 0; i < cap; i++)
        t->vhash[i] = -1;
    t->vhash_cap = cap;
    for (i = 0; i < oldcap; i++) {
        int v = old[i];
        if (v >= 0) {
            unsigned h = clang_hashCursor(t->vars.v[v].canon), j;
            for (j = h & (unsigned)(cap - 1); t->vhash[j] >= 0; j = (j + 1) & (unsigned)(cap - 1))
                ;
            t->vhash[j] = v;
        }
    }
    free(old);
}

/* -1 when unknown */
static int ast_var_of_cursor(tu *t, CXCursor c)
{
    return vhash_find(t, clang_getCanonicalCursor(c), -1);
}

/* Libc globals a program may declare itself without a system header. */
static const char *const libc_vars[] = {
    "environ", "__environ", "optarg", "optind", "opterr", "optopt", "stdin",
    "stdout", "stderr", "timezone", "daylight", "tzname", "signgam",
    "program_invocation_name", "program_invocation_short_name",
    "sys_errlist", "sys_nerr", "h_errno", "__progname", NULL};

static int new_var(tu *t, CXCursor decl, int kind)
{
    var v;
    CXString s = clang_getCursorSpelling(decl);
    memset(&v, 0, sizeof v);
    v.canon = clang_getCanonicalCursor(decl);
    v.name = tr_xstrdup(clang_getCString(s));
    clang_disposeString(s);
    v.kind = kind;
    v.func = -1;
    v.type = clang_getCursorType(decl);
    v.def = v.init = -1;
    v.decl_con = -1;
    v.declstmt = -1;
    v.scope_b = 0;
    v.scope_e = t->len;
    VEC_PUSH(t->vars, v);
    vhash_find(t, t->vars.v[t->vars.n - 1].canon, t->vars.n - 1);
    return t->vars.n - 1;
}

/* The variable a VarDecl/ParmDecl/DeclRefExpr target denotes, created on
 * first sight.  Declarations only in system headers are VK_SYSTEM. */
static int var_for_decl(tu *t, CXCursor decl, int func)
{
    int v = ast_var_of_cursor(t, decl);
    CXCursor canon;
    int kind;
    enum CX_StorageClass sc;
    if (v >= 0)
        return v;
    canon = clang_getCanonicalCursor(decl);
    sc = clang_Cursor_getStorageClass(decl);
    if (clang_getCursorKind(decl) == CXCursor_ParmDecl)
        kind = VK_PARAM;
    else if (clang_Location_isInSystemHeader(clang_getCursorLocation(canon)))
        kind = VK_SYSTEM;
    else if (func < 0 || sc == CX_SC_Extern)
        kind = VK_GLOBAL;
    else if (sc == CX_SC_Static)
        kind = VK_STATIC;
    else
        kind = VK_LOCAL;
    v = new_var(t, decl, kind);
    if (kind == VK_STATIC || kind == VK_LOCAL || kind == VK_PARAM)
        t->vars.v[v].func = func;
    if (clang_getCursorTLSKind(decl) != CXTLS_None)
        t->vars.v[v].tls = 1;
    return v;
}

/* ------------------------------------------------------------------------
 * the visit
 * ------------------------------------------------------------------------ */

typedef struct vctx {
    tu *t;
    int parent;
    int func;
    int last;
} vctx;

static enum CXChildVisitResult visit(CXCursor c, CXCursor parent,
                                     CXClientData data);
static int decl_is_local(CXCursor d);

static int add_node(tu *t, CXCursor c, int parent, int func)
{
    tr_node n;
    CXSourceRange r = clang_getCursorExtent(c);
    memset(&n, 0, sizeof n);
    n.c = c;
    n.kind = clang_getCursorKind(c);
    n.b = off_of(clang_getRangeStart(r));
    n.e = off_of(clang_getRangeEnd(r));
    n.loc = off_of(clang_getCursorLocation(c));
    n.parent = parent;
    n.first = n.next = -1;
    n.func = func;
    n.var = -1;
    VEC_PUSH(t->nodes, n);
    return t->nodes.n - 1;
}

static enum CXChildVisitResult visit(CXCursor c, CXCursor parent,
                                     CXClientData data)
{
    vctx *x = data, sub;
    tu *t = x->t;
    enum CXCursorKind k = clang_getCursorKind(c);
    int n, func = x->func;
    (void)parent;
    if (x->parent < 0) {
        CXSourceLocation l = clang_getCursorLocation(c);
        CXFile f;
        clang_getSpellingLocation(l, &f, NULL, NULL, NULL);
        if (!f || clang_Location_isInSystemHeader(l))
            return CXChildVisit_Continue;
        if (tr_srcmap_is_system(&t->map, off_of(l)))
            return CXChildVisit_Continue;
    }
    if (k == CXCursor_TypeRef) {
        CXCursor r = clang_getCursorReferenced(c);
        if (clang_getCursorKind(r) == CXCursor_TypedefDecl && decl_is_local(r) &&
            tr_ast_type_is_vm(clang_getTypedefDeclUnderlyingType(r)))
            VEC_PUSH(t->vm_typerefs, off_of(clang_getCursorLocation(c)));
        return CXChildVisit_Continue;
    }
    if (k == CXCursor_UnexposedAttr || clang_isAttribute(k))
        return CXChildVisit_Continue;
    n = add_node(t, c, x->parent, func);
    if (x->last >= 0)
        t->nodes.v[x->last].next = n;
    else if (x->parent >= 0)
        t->nodes.v[x->parent].first = n;
    x->last = n;

    if (k == CXCursor_FunctionDecl && x->parent < 0 &&
        clang_isCursorDefinition(c)) {
        fninfo f;
        CXString s = clang_getCursorSpelling(c);
        memset(&f, 0, sizeof f);
        f.name = tr_xstrdup(clang_getCString(s));
        clang_disposeString(s);
        f.node = n;
        f.body = -1;
        f.b = t->nodes.v[n].b;
        f.e = t->nodes.v[n].e;
        f.is_main = !strcmp(f.name, "main");
        tr_sb_init(&f.pre);
        tr_sb_init(&f.pre_decls);
        VEC_PUSH(t->funcs, f);
        func = t->funcs.n - 1;
        t->nodes.v[n].func = func;
        if (f.is_main)
            t->main_func = func;
    }
    sub.t = t;
    sub.parent = n;
    sub.func = func;
    sub.last = -1;
    clang_visitChildren(c, visit, &sub);

    if (k == CXCursor_CompoundStmt && t->nodes.v[n].parent >= 0 &&
        t->nodes.v[t->nodes.v[n].parent].kind == CXCursor_FunctionDecl &&
        func >= 0 && t->funcs.v[func].body < 0)
        t->funcs.v[func].body = n;
    return CXChildVisit_Continue;
}

/* After the visit: variables of declarations and references. */
static void collect_vars(tu *t)
{
    int i;
    for (i = 0; i < t->nodes.n; i++) {
        tr_node *n = &t->nodes.v[i];
        if (n->kind == CXCursor_VarDecl ||
            (n->kind == CXCursor_ParmDecl && n->func >= 0 &&
             t->nodes.v[n->parent].kind == CXCursor_FunctionDecl &&
             t->nodes.v[n->parent].parent < 0)) {
            int v = var_for_decl(t, n->c, n->func);
            var *vv = &t->vars.v[v];
            n = &t->nodes.v[i];
            n->var = v;
            VEC_PUSH(vv->decls, i);
            if (n->kind == CXCursor_VarDecl &&
                clang_Cursor_getStorageClass(n->c) != CX_SC_Extern &&
                (vv->def < 0 || clang_isCursorDefinition(n->c))) {
                CXCursor init = clang_Cursor_getVarDeclInitializer(n->c);
                if (vv->def < 0 || !clang_Cursor_isNull(init))
                    vv->def = i;
                if (!clang_Cursor_isNull(init)) {
                    unsigned ib = off_of(clang_getRangeStart(clang_getCursorExtent(init)));
                    int k;
                    for (k = n->first; k >= 0; k = t->nodes.v[k].next)
                        if (t->nodes.v[k].b == ib &&
                            t->nodes.v[k].kind != CXCursor_TypeRef)
                            vv->init = k;
                    if (vv->init < 0) /* the last child is the initializer */
                        for (k = n->first; k >= 0; k = t->nodes.v[k].next)
                            vv->init = k;
                }
                vv->type = clang_getCursorType(n->c);
            }
            if (vv->kind == VK_LOCAL || vv->kind == VK_PARAM) {
                int p = n->parent;
                vv->scope_b = n->loc;
                if (vv->kind == VK_PARAM) {
                    vv->scope_e = t->nodes.v[p].e;
                } else if (p >= 0 && t->nodes.v[p].kind == CXCursor_DeclStmt) {
                    vv->declstmt = p;
                    vv->scope_e = t->nodes.v[t->nodes.v[p].parent].e;
                }
            } else if (vv->kind == VK_STATIC) {
                int p = n->parent;
                vv->scope_b = n->loc;
                if (p >= 0 && t->nodes.v[p].kind == CXCursor_DeclStmt) {
                    vv->declstmt = p;
                    vv->scope_e = t->nodes.v[t->nodes.v[p].parent].e;
                }
            }
        } else if (n->kind == CXCursor_DeclRefExpr) {
            CXCursor r = clang_getCursorReferenced(n->c);
            enum CXCursorKind rk = clang_getCursorKind(r);
            if (rk == CXCursor_VarDecl || rk == CXCursor_ParmDecl) {
                int v = ast_var_of_cursor(t, r);
                if (v < 0)
                    v = var_for_decl(t, r, -1);
                t->nodes.v[i].var = v;
            }
        } else if (n->kind == CXCursor_FunctionDecl && n->parent < 0 &&
                   clang_isCursorDefinition(n->c)) {
            VEC_PUSH(t->defined_funcs, i);
        }
    }
    for (i = 0; i < t->vars.n; i++) {
        var *v = &t->vars.v[i];
        int k;
        if (v->kind == VK_GLOBAL && v->def < 0)
            for (k = 0; libc_vars[k]; k++)
                if (!strcmp(v->name, libc_vars[k]))
                    v->kind = VK_SYSTEM;
        v->scalar = ast_type_is_scalar(v->type);
        v->is_const = ast_type_is_const_object(v->type);
        if (v->kind == VK_PARAM) {
            enum CXTypeKind k = clang_getCanonicalType(v->type).kind;
            if (k == CXType_ConstantArray || k == CXType_IncompleteArray ||
                k == CXType_VariableArray || k == CXType_DependentSizedArray)
                v->decay = 1;
            else if (k == CXType_FunctionProto || k == CXType_FunctionNoProto)
                v->decay = 2;
            if (v->decay)
                v->scalar = 1, v->is_const = 0;
        }
    }
}

char *tr_ast_var_type_name(tu *t, int v, int unqual)
{
    var *vv = &t->vars.v[v];
    CXType ty = vv->type;
    char *sp, *r;
    if (vv->decay == 1) { /* T a[] as a parameter is T *a */
        while (ty.kind == CXType_Elaborated || ty.kind == CXType_Typedef ||
               ty.kind == CXType_Attributed)
            ty = ty.kind == CXType_Typedef ? clang_getCanonicalType(ty)
                 : ty.kind == CXType_Elaborated ? clang_Type_getNamedType(ty)
                                                : clang_Type_getModifiedType(ty);
        sp = tr_ast_type_spelling(clang_getArrayElementType(ty));
        r = tr_xasprintf("__typeof__(%s) *", sp);
        free(sp);
        return r;
    }
    if (vv->decay == 2) {
        sp = tr_ast_type_spelling(ty);
        r = tr_xasprintf("__typeof__(%s) *", sp);
        free(sp);
        return r;
    }
    return tr_ast_type_spelling(unqual ? clang_getUnqualifiedType(ty) : ty);
}

int tr_ast_var_type_is_local(tu *t, int v, const char **why)
{
    var *vv = &t->vars.v[v];
    CXType ty = vv->type;
    if (vv->decay == 1) {
        ty = clang_getCanonicalType(ty);
        if (ty.kind == CXType_VariableArray) /* the outer bound decays away */
            ty = clang_getArrayElementType(ty);
    }
    return tr_ast_type_is_local(ty, why);
}

int tr_ast_build(tu *t)
{
    vctx x;
    t->main_func = -1;
    x.t = t;
    x.parent = -1;
    x.func = -1;
    x.last = -1;
    clang_visitChildren(clang_getTranslationUnitCursor(t->ctu), visit, &x);
    collect_vars(t);
    return 0;
}

/* ------------------------------------------------------------------------
 * tree helpers
 * ------------------------------------------------------------------------ */

int tr_ast_child(const tu *t, int n, int k)
{
    int c;
    for (c = t->nodes.v[n].first; c >= 0 && k > 0; c = t->nodes.v[c].next)
        k--;
    return c;
}

int tr_ast_nchildren(const tu *t, int n)
{
    int c, k = 0;
    for (c = t->nodes.v[n].first; c >= 0; c = t->nodes.v[c].next)
        k++;
    return k;
}

int tr_ast_strip(const tu *t, int n)
{
    while (n >= 0 && (t->nodes.v[n].kind == CXCursor_UnexposedExpr ||
                      t->nodes.v[n].kind == CXCursor_ParenExpr) &&
           tr_ast_nchildren(t, n) == 1)
        n = t->nodes.v[n].first;
    return n;
}

int tr_ast_func_at(const tu *t, unsigned off)
{
    int i;
    for (i = 0; i < t->funcs.n; i++)
        if (t->funcs.v[i].b <= off && off < t->funcs.v[i].e)
            return i;
    return -1;
}

/* ------------------------------------------------------------------------
 * types
 * ------------------------------------------------------------------------ */

char *tr_ast_type_spelling(CXType ty)
{
    CXString s = clang_getTypeSpelling(ty);
    char *r = tr_xstrdup(clang_getCString(s));
    clang_disposeString(s);
    return r;
}

static int ast_type_is_scalar(CXType ty)
{
    CXType c = clang_getCanonicalType(ty);
    switch (c.kind) {
    case CXType_Bool: case CXType_Char_U: case CXType_UChar: case CXType_Char16:
    case CXType_Char32: case CXType_UShort: case CXType_UInt: case CXType_ULong:
    case CXType_ULongLong: case CXType_UInt128: case CXType_Char_S:
    case CXType_SChar: case CXType_WChar: case CXType_Short: case CXType_Int:
    case CXType_Long: case CXType_LongLong: case CXType_Int128: case CXType_Float:
    case CXType_Double: case CXType_LongDouble: case CXType_Pointer:
    case CXType_Enum: case CXType_Float128: case CXType_Half: case CXType_Float16:
    case CXType_Complex: case CXType_BFloat16:
        return 1;
    default:
        return 0;
    }
}

/* The largest power of two up to 8 that divides x (1 for 0 or less). */
static unsigned low_pow2(long long x)
{
    if (x <= 0)
        return 1;
    unsigned g = 1;
    while (g < 8 && !(x & (long long)(2 * g - 1)))
        g *= 2;
    return g;
}

static unsigned type_granule(CXType ty, int depth);

struct granule_walk {
    unsigned g;
};

static enum CXVisitorResult granule_field(CXCursor c, CXClientData d)
{
    struct granule_walk *w = d;
    if (clang_Cursor_isBitField(c)) {
        w->g = 1;
        return CXVisit_Break;
    }
    long long bits = clang_Cursor_getOffsetOfField(c);
    unsigned g = bits < 0 || bits % 8 ? 1 : (bits ? low_pow2(bits / 8) : 8);
    unsigned f = type_granule(clang_getCursorType(c), 1);
    if (f < g)
        g = f;
    if (g < w->g)
        w->g = g;
    return w->g > 1 ? CXVisit_Continue : CXVisit_Break;
}

static unsigned type_granule(CXType ty, int depth)
{
    CXType c = clang_getCanonicalType(ty);
    if (depth > 64)
        return 1;
    switch (c.kind) {
    case CXType_ConstantArray:
    case CXType_IncompleteArray:
    case CXType_VariableArray:
    case CXType_DependentSizedArray: {
        CXType e = clang_getArrayElementType(c);
        unsigned g = type_granule(e, depth + 1), s = low_pow2(clang_Type_getSizeOf(e));
        return g < s ? g : s;
    }
    case CXType_Record: {
        struct granule_walk w = {8};
        if (clang_Type_getSizeOf(c) <= 0)
            return 1;
        clang_Type_visitFields(c, granule_field, &w);
        unsigned s = low_pow2(clang_Type_getSizeOf(c));
        return w.g < s ? w.g : s;
    }
    case CXType_Complex:
        return type_granule(clang_getElementType(c), depth + 1);
    default:
        if (!ast_type_is_scalar(c))
            return 1;
        return low_pow2(clang_Type_getSizeOf(c));
    }
}

unsigned tr_ast_type_granule(CXType ty)
{
    return type_granule(ty, 0);
}

/* libclang reports an array of const (volatile) elements as a const
 * (volatile) array type, and the element type unqualified */
static int qualified_object(CXType ty, unsigned (*qualified)(CXType))
{
    CXType c = clang_getCanonicalType(ty);
    for (;;) {
        if (qualified(c))
            return 1;
        if (c.kind != CXType_ConstantArray && c.kind != CXType_IncompleteArray &&
            c.kind != CXType_VariableArray)
            return 0;
        c = clang_getCanonicalType(clang_getArrayElementType(c));
    }
}

static int ast_type_is_const_object(CXType ty)
{
    return qualified_object(ty, clang_isConstQualifiedType);
}

int tr_ast_type_is_volatile_object(CXType ty)
{
    return qualified_object(ty, clang_isVolatileQualifiedType);
}

static int decl_is_local(CXCursor d)
{
    CXCursor p = clang_getCursorSemanticParent(d);
    while (!clang_Cursor_isNull(p) && p.kind != CXCursor_TranslationUnit &&
           !clang_isInvalid(p.kind)) {
        if (p.kind == CXCursor_FunctionDecl)
            return 1;
        p = clang_getCursorSemanticParent(p);
    }
    return 0;
}

static int type_is_local(CXType ty, const char **why, int depth)
{
    CXCursor d;
    int i, n;
    if (depth > 32)
        return 0;
    switch (ty.kind) {
    case CXType_Elaborated:
        return type_is_local(clang_Type_getNamedType(ty), why, depth + 1);
    case CXType_Attributed:
        return type_is_local(clang_Type_getModifiedType(ty), why, depth + 1);
    case CXType_Typedef:
    case CXType_Record:
    case CXType_Enum:
        d = clang_getTypeDeclaration(ty);
        if (!clang_Cursor_isNull(d) && decl_is_local(d)) {
            *why = "a type declared inside a function";
            return 1;
        }
        return 0;
    case CXType_Pointer:
        return type_is_local(clang_getPointeeType(ty), why, depth + 1);
    case CXType_ConstantArray:
    case CXType_IncompleteArray:
        return type_is_local(clang_getArrayElementType(ty), why, depth + 1);
    case CXType_VariableArray:
    case CXType_DependentSizedArray:
        *why = "a variable-length array";
        return 1;
    case CXType_FunctionProto:
    case CXType_FunctionNoProto:
        if (type_is_local(clang_getResultType(ty), why, depth + 1))
            return 1;
        n = clang_getNumArgTypes(ty);
        for (i = 0; i < n; i++)
            if (type_is_local(clang_getArgType(ty, (unsigned)i), why, depth + 1))
                return 1;
        return 0;
    default:
        return 0;
    }
}

int tr_ast_type_is_local(CXType ty, const char **why)
{
    *why = "";
    return type_is_local(ty, why, 0);
}

CXType tr_ast_type_desugar(CXType ty)
{
    for (;;) {
        if (ty.kind == CXType_Elaborated)
            ty = clang_Type_getNamedType(ty);
        else if (ty.kind == CXType_Attributed)
            ty = clang_Type_getModifiedType(ty);
        else
            return ty;
    }
}

int tr_ast_type_is_vm(CXType ty)
{
    int depth;
    for (depth = 0; depth < 64; depth++) {
        ty = tr_ast_type_desugar(ty);
        switch (ty.kind) {
        case CXType_Typedef:
            ty = clang_getCanonicalType(ty);
            break;
        case CXType_Pointer:
            ty = clang_getPointeeType(ty);
            break;
        case CXType_ConstantArray:
        case CXType_IncompleteArray:
            ty = clang_getArrayElementType(ty);
            break;
        case CXType_VariableArray:
        case CXType_DependentSizedArray:
            return 1;
        default:
            return 0;
        }
    }
    return 0;
}

int tr_ast_var_vm(tu *t, int v)
{
    var *vv = &t->vars.v[v];
    CXType ty = clang_getCanonicalType(vv->type);
    if (!tr_ast_type_is_vm(ty))
        return VM_NONE;
    if (vv->decay == 1) /* T a[][n]: a pointer to the VLA elements */
        return tr_ast_type_is_vm(clang_getArrayElementType(ty)) ? VM_POINTER : VM_NONE;
    if (ty.kind == CXType_Pointer)
        return VM_POINTER;
    /* an array: is one of its own bounds variable (not one behind a
     * pointer in its elements)? */
    while (ty.kind == CXType_ConstantArray || ty.kind == CXType_IncompleteArray)
        ty = clang_getCanonicalType(clang_getArrayElementType(ty));
    if (ty.kind == CXType_VariableArray || ty.kind == CXType_DependentSizedArray)
        return VM_ARRAY;
    return VM_OTHER;
}

const char *tr_ast_type_code(CXType ty)
{
    CXType c = clang_getCanonicalType(ty);
    long long size = clang_Type_getSizeOf(c);
    switch (c.kind) {
    case CXType_Bool: return "OMPDSM_TY_BOOL";
    case CXType_Char_S: case CXType_SChar: return "OMPDSM_TY_I8";
    case CXType_Char_U: case CXType_UChar: return "OMPDSM_TY_U8";
    case CXType_Short: return "OMPDSM_TY_I16";
    case CXType_UShort: return "OMPDSM_TY_U16";
    case CXType_Int: case CXType_Long: case CXType_LongLong:
    case CXType_WChar:
        return size == 8 ? "OMPDSM_TY_I64" : size == 4 ? "OMPDSM_TY_I32"
               : size == 2 ? "OMPDSM_TY_I16" : NULL;
    case CXType_UInt: case CXType_ULong: case CXType_ULongLong:
    case CXType_Char16: case CXType_Char32:
        return size == 8 ? "OMPDSM_TY_U64" : size == 4 ? "OMPDSM_TY_U32"
               : size == 2 ? "OMPDSM_TY_U16" : NULL;
    case CXType_Float: return "OMPDSM_TY_F32";
    case CXType_Double: return "OMPDSM_TY_F64";
    case CXType_LongDouble: return "OMPDSM_TY_F80";
    case CXType_Enum: {
        CXCursor d = clang_getTypeDeclaration(c);
        return tr_ast_type_code(clang_getEnumDeclIntegerType(d));
    }
    default:
        return NULL;
    }
}
