/* rewrite.c - the edit list over the preprocessed buffer.
 *
 * Edits replace ranges [b, e) (b == e inserts).  They are either disjoint
 * or nested: a construct's replacement covers the edits inside it, whose
 * rendered text it embeds (render() of its block).  Rendering a range
 * applies the outermost edits that lie inside it.  Edits that add or remove
 * line breaks are followed by a #line marker, so that the code after them
 * keeps the user's line numbers. */
#include "tu.h"

#include <stdlib.h>
#include <string.h>

void edit_add(tu *t, unsigned b, unsigned e, char *text, int prio)
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

void render(tu *t, unsigned b, unsigned e, sbuf *out)
{
    unsigned pos = b;
    int i;
    if (!t->edits_sorted) {
        qsort(t->edits.v, (size_t)t->edits.n, sizeof *t->edits.v, cmp_edit);
        t->edits_sorted = 1;
    }
    for (i = first_at(t, b); i < t->edits.n && t->edits.v[i].b <= e; i++) {
        edit *ed = &t->edits.v[i];
        int lines;
        if (ed->e > e || ed->b < pos)
            continue;
        sb_putn(out, t->text + pos, ed->b - pos);
        sb_puts(out, ed->text);
        lines = strchr(ed->text, '\n') != NULL ||
                memchr(t->text + ed->b, '\n', ed->e - ed->b) != NULL;
        pos = ed->e;
        if (lines)
            srcmap_sync(&t->map, pos, out);
    }
    sb_putn(out, t->text + pos, e - pos);
}

char *render_str(tu *t, unsigned b, unsigned e)
{
    sbuf s;
    sb_init(&s);
    render(t, b, e, &s);
    return sb_take(&s);
}
