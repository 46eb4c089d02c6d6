/* dsm/pagestat.c - per-page fault and diff counters of this node, for the
 * runtime's thrashing report (OMPDSM_STATS; runtime/thrash.c).  Off unless
 * enabled: then one array entry per heap page, touched only for pages that
 * fault, updated under the page's lock by the fault and release paths. */
#include "dsm_int.h"

#include <stdlib.h>
#include <string.h>

struct pstat {
    uint32_t rf, wf, locked, epochs;
    uint32_t lo, hi;
    uint64_t diff_bytes;
    uint64_t last_epoch; /* +1: 0 means never written */
};

static struct pstat *ps;

void dsm_pagestat_enable(void)
{
    if (ps || !dsm_g.npages)
        return;
    /* calloc of a large array maps zero pages: only entries of pages
     * that fault cost memory. */
    ps = calloc(dsm_g.npages, sizeof *ps);
    if (!ps)
        ompdsm_warn("OMPDSM_STATS: no memory for per-page counters; no "
                    "thrashing report");
}

static uint64_t epoch(void)
{
    return comm_coll_seq(0) + comm_coll_seq(1);
}

void dsm_pagestat_fault(uint32_t pg, int write)
{
    if (OMPDSM_LIKELY(!ps) || pg >= dsm_g.npages)
        return;
    struct pstat *p = &ps[pg];
    if (!write) {
        p->rf++;
        return;
    }
    p->wf++;
    if (dsm_lock_depth())
        p->locked++;
    uint64_t e = epoch() + 1;
    if (p->last_epoch != e) {
        p->last_epoch = e;
        p->epochs++;
    }
}

void dsm_pagestat_diff(uint32_t pg, const struct comm_run *runs, size_t n)
{
    if (OMPDSM_LIKELY(!ps) || pg >= dsm_g.npages || !n)
        return;
    struct pstat *p = &ps[pg];
    uint32_t lo = runs[0].off, hi = runs[n - 1].off + runs[n - 1].len;
    for (size_t k = 0; k < n; k++)
        p->diff_bytes += runs[k].len;
    if (p->hi == 0 || lo < p->lo)
        p->lo = lo;
    if (hi > p->hi)
        p->hi = hi;
}

int dsm_pagestat_top(struct dsm_page_stat *out, int max)
{
    if (!ps || max <= 0)
        return 0;
    int n = 0;
    for (uint32_t pg = 0; pg < dsm_g.npages; pg++) {
        const struct pstat *p = &ps[pg];
        uint64_t key = (uint64_t)p->rf + p->wf;
        if (!key && !p->diff_bytes)
            continue;
        /* Insertion into the sorted top list: max is small. */
        int i = n < max ? n++ : max;
        if (i == max) {
            const struct dsm_page_stat *last = &out[max - 1];
            if (key <= (uint64_t)last->read_faults + last->write_faults)
                continue;
            i = max - 1;
        }
        while (i > 0 && (uint64_t)out[i - 1].read_faults +
                                out[i - 1].write_faults < key) {
            out[i] = out[i - 1];
            i--;
        }
        out[i] = (struct dsm_page_stat){
            .addr = (uint64_t)(uintptr_t)page_app(pg),
            .page = pg,
            .read_faults = p->rf,
            .write_faults = p->wf,
            .locked_writes = p->locked,
            .epochs = p->epochs,
            .lo = p->lo,
            .hi = p->hi,
            .diff_bytes = p->diff_bytes,
        };
    }
    return n;
}
