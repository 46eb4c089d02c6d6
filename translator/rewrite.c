/* rewrite.c - the edit list over the preprocessed buffer.
 *
 * Edits replace ranges [b, e) (b == e inserts).  They are either disjoint
 * or nested: a construct's replacement covers the edits inside it, whose
 * rendered text it embeds (tr_render() of its block).  Rendering a range
 * applies the outermost edits that lie inside it.  Edits that add or remove
 * line breaks are followed by a #line marker, so that the code after them
 * keeps the user's line numbers. */
#include "tu.h"

#include <stdlib.h>
#include <string.h>

void tr_edit_add(tu *t, unsigned b, unsigned e, char *text, int prio)
{
    edit ed;
    ed.b = b;
    ed.e = e;
    ed.text = text;
    ed.prio = prio;
    ed.seq = t->edits.n;
    VEC_PUSH(t->edits, ed);
    t->edits_sorted = 0;
}

/* begin ascending; insertions before replacements at the same place; the
 * longer (outer) replacement first; then by priority and order */
static int cmp_edit(const void *pa, const void *pb)
{
    const edit *a = pa, *b = pb;
    int ia = a->b == a->e, ib = b->b == b->e;
    if (a->b != b->b)
        return a->b < b->b ? -1 : 1;
    if (ia != ib)
        return ia ? -1 : 1;
    if (a->e != b->e)
        return a->e > b->e ? -1 : 1;
    if (a->prio != b->prio)
        return a->prio < b->prio ? -1 : 1;
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static int first_at(tu *t, unsigned b)
{
    int lo = 0, hi = t->edits.n;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (t->edits.v[mid].b < b)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static void put_user(tu *t, unsigned b, unsigned e, tr_sbuf *out)
{
    if (b == e)
        return;
    if (t->mark_user)
        tr_sb_putc(out, TU_USER_BEGIN);
    tr_sb_putn(out, t->text + b, e - b);
    if (t->mark_user)
        tr_sb_putc(out, TU_USER_END);
}

void tr_render(tu *t, unsigned b, unsigned e, tr_sbuf *out)
{
    unsigned pos = b;
    int i;
    if (!t->edits_sorted) {
        if (t->edits.n > 1) /* no edits: no vector, and qsort(NULL) is UB */
            qsort(t->edits.v, (size_t)t->edits.n, sizeof *t->edits.v,
                  cmp_edit);
        t->edits_sorted = 1;
    }
    for (i = first_at(t, b); i < t->edits.n && t->edits.v[i].b <= e; i++) {
        edit *ed = &t->edits.v[i];
        int lines;
        if (ed->e > e || ed->b < pos)
            continue;
        put_user(t, pos, ed->b, out);
        tr_sb_puts(out, ed->text);
        lines = strchr(ed->text, '\n') != NULL ||
                memchr(t->text + ed->b, '\n', ed->e - ed->b) != NULL;
        pos = ed->e;
        if (lines)
            tr_srcmap_sync(&t->map, pos, out);
    }
    put_user(t, pos, e, out);
}

char *tr_render_str(tu *t, unsigned b, unsigned e)
{
    tr_sbuf s;
    tr_sb_init(&s);
    tr_render(t, b, e, &s);
    return tr_sb_take(&s);
}

/* ---- volatile objects ----
 * OpenMP 3.0: a read of a volatile object behaves as if a flush of that
 * object came right before it, a write as if one came right after it.
 * On a DSM a plain read of a shared volatile would keep reading this
 * node's copy (a spin loop on a flag another node writes would never
 * end), and a plain write would reach the home only at the next release.
 * So a read refetches the object from its home first, and a write is
 * written through to the home at once; the runtime does nothing for
 * objects outside the shared heap.  Volatile arrays and members of
 * volatile structures are not handled: only variables of volatile
 * scalar or structure type. */

static int is_volatile_var(tu *t, int v)
{
    CXType ty = clang_getCanonicalType(t->vars.v[v].type);
    return clang_isVolatileQualifiedType(ty) && ty.kind != CXType_ConstantArray &&
           ty.kind != CXType_IncompleteArray && ty.kind != CXType_VariableArray;
}

/* Is p, the assignment or increment that writes through reference r, the
 * statement of an atomic construct?  OMPDSM_atomic takes the object's
 * address and updates it at its home, which is what a refetch before and
 * a write-through after would do; and the atomic's lowering embeds the
 * operand's text where a wrapped one would not parse. */
static int atomic_target(tu *t, const ref *r, int p)
{
    const construct *c;
    if (r->start < 0)
        return 0;
    c = &t->cons.v[r->start];
    return c->dir == DIR_ATOMIC && c->stmt >= 0 && tr_ast_strip(t, c->stmt) == p;
}

char *tr_rewrite_volatile(tu *t, const ref *r, char *name)
{
    int p;
    if (r->node < 0 || r->var < 0 || !is_volatile_var(t, r->var) ||
        (r->access & ACC_ADDR))
        return name;
    if (r->access & ACC_WRITE) {
        p = t->nodes.v[r->node].parent;
        while (p >= 0 && t->nodes.v[p].kind == CXCursor_ParenExpr)
            p = t->nodes.v[p].parent;
        if (p >= 0 && atomic_target(t, r, p))
            return name;
        if (p >= 0) {
            tr_edit_add(t, t->nodes.v[p].b, t->nodes.v[p].b,
                        tr_xasprintf("({ __typeof__(%s) __ompdsm_vv = (", name), 20);
            tr_edit_add(t, t->nodes.v[p].e, t->nodes.v[p].e,
                        tr_xasprintf("); OMPDSM_volatile_write(&%s, sizeof(%s)); "
                                     "__ompdsm_vv; })", name, name), 20);
        }
    }
    if (!(r->access & ACC_READ))
        return name;
    {
        char *w = tr_xasprintf("(*(__typeof__(%s) *)OMPDSM_volatile_read(&%s, "
                               "sizeof(%s)))", name, name, name);
        free(name);
        return w;
    }
}
