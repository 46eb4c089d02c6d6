/* runtime/thrash.c - the thrashing report by variable (OMPDSM_STATS;
 * docs/diagnostics.md): the pages with the most faults over all nodes,
 * named by the shared global (ompcc's table of each unit's globals: name,
 * extent, scalar size) or malloc'd block (the allocating call's place) they
 * hold, each node's share, and a verdict: false sharing (several nodes
 * write the page outside locks), migratory (several nodes write it in turn
 * under locks), read-mostly, or one writer. */
#include "rt.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { THRASH_PER_NODE = 32, THRASH_TOP = 10 };

struct thrash_wire {
    struct dsm_page_stat s;
    uint64_t pc;        /* malloc'd block: the allocating call, else 0 */
    char var[88];       /* "slots[0..1023]", "block of 4096 bytes" */
    char decl[72];      /* a global: where it is declared, "foo.c:12" */
};

static int enabled;
static pthread_mutex_t blocks_lock = PTHREAD_MUTEX_INITIALIZER;
static struct block {
    uint64_t addr, size, pc;
} *blocks;
static size_t nblocks, capblocks;

/* Each unit's declaration places of its globals (OMPDSM_global_decls),
 * registered by constructors before main. */
static struct unit_decls {
    const OMPDSM_unit *unit;
    const OMPDSM_srcpos *decls;
} *udecls;
static size_t nudecls;

RT_API void OMPDSM_global_decls(const OMPDSM_unit *unit,
                                const OMPDSM_srcpos *decls)
{
    struct unit_decls *u = realloc(udecls, (nudecls + 1) * sizeof *u);
    if (!u)
        return; /* the report then only lacks the places */
    udecls = u;
    udecls[nudecls++] = (struct unit_decls){unit, decls};
}

static const OMPDSM_srcpos *decl_of(const OMPDSM_unit *unit, unsigned i)
{
    for (size_t k = 0; k < nudecls; k++)
        if (udecls[k].unit == unit)
            return udecls[k].decls[i].file ? &udecls[k].decls[i] : NULL;
    return NULL;
}

/* The global at addr as "name + offset (declared at file:line)", or the
 * shared block holding it (known while OMPDSM_STATS tracks blocks). */
static void name_addr(const void *p, char *buf, size_t len)
{
    uint64_t addr = (uint64_t)(uintptr_t)p;
    buf[0] = 0;
    for (const OMPDSM_unit *u = rt_units(); u; u = u->next)
        for (unsigned i = 0; i < u->nglobals; i++) {
            const OMPDSM_global *g = &u->globals[i];
            uint64_t base = (uint64_t)(uintptr_t)*g->slot;
            if (addr < base || addr >= base + g->size)
                continue;
            const OMPDSM_srcpos *d = decl_of(u, i);
            snprintf(buf, len, "%s + %llu bytes (declared at %s:%d)", g->name,
                     (unsigned long long)(addr - base), d ? d->file : "?",
                     d ? d->line : 0);
            return;
        }
    snprintf(buf, len, "not in a global: a malloc'd block or a shared local");
}

void rt_thrash_start(void)
{
    dsm_set_namer(name_addr);
    const char *v = getenv("OMPDSM_STATS");
    if (!v || !*v || !strcmp(v, "0"))
        return;
    enabled = 1;
    dsm_pagestat_enable();
}

void rt_thrash_alloc(const void *p, size_t size, const void *pc)
{
    if (OMPDSM_LIKELY(!enabled) || !p)
        return;
    pthread_mutex_lock(&blocks_lock);
    if (nblocks == capblocks) {
        size_t cap = capblocks ? 2 * capblocks : 256;
        struct block *b = realloc(blocks, cap * sizeof *b);
        if (!b) {
            pthread_mutex_unlock(&blocks_lock);
            return;
        }
        blocks = b;
        capblocks = cap;
    }
    blocks[nblocks++] = (struct block){(uint64_t)(uintptr_t)p, size,
                                       rt_program_pc(pc)};
    pthread_mutex_unlock(&blocks_lock);
}

/* What the page at addr holds, as "name[first..last]" in elements of the
 * variable's scalar size. */
static void name_page(uint64_t addr, uint64_t psz, struct thrash_wire *w)
{
    int found = 0, more = 0;
    w->var[0] = 0;
    for (const OMPDSM_unit *u = rt_units(); u; u = u->next)
        for (unsigned i = 0; i < u->nglobals; i++) {
            const OMPDSM_global *g = &u->globals[i];
            uint64_t base = (uint64_t)(uintptr_t)*g->slot;
            if (!g->size || base + g->size <= addr || base >= addr + psz)
                continue;
            if (found++) {
                more++;
                continue;
            }
            const OMPDSM_srcpos *d = decl_of(u, i);
            if (d)
                snprintf(w->decl, sizeof w->decl, "%s:%d",
                         strrchr(d->file, '/') ? strrchr(d->file, '/') + 1
                                               : d->file, d->line);
            uint64_t lo = (addr > base ? addr : base) - base;
            uint64_t hi = (addr + psz < base + g->size ? addr + psz
                                                       : base + g->size) - base;
            uint64_t e = g->granule > 1 ? g->granule : 1;
            if (g->size <= e)
                snprintf(w->var, sizeof w->var, "%s", g->name);
            else if (e > 1)
                snprintf(w->var, sizeof w->var, "%s[%llu..%llu]", g->name,
                         (unsigned long long)(lo / e),
                         (unsigned long long)((hi - 1) / e));
            else
                snprintf(w->var, sizeof w->var, "%s (bytes %llu..%llu)",
                         g->name, (unsigned long long)lo,
                         (unsigned long long)(hi - 1));
        }
    if (found) {
        if (more) {
            size_t l = strlen(w->var);
            snprintf(w->var + l, sizeof w->var - l, " and %d more", more);
        }
        return;
    }
    pthread_mutex_lock(&blocks_lock);
    for (size_t i = 0; i < nblocks; i++) {
        const struct block *b = &blocks[i];
        if (b->addr + b->size <= addr || b->addr >= addr + psz)
            continue;
        snprintf(w->var, sizeof w->var, "block of %llu bytes",
                 (unsigned long long)b->size);
        w->pc = b->pc;
        break;
    }
    pthread_mutex_unlock(&blocks_lock);
    if (!w->var[0])
        snprintf(w->var, sizeof w->var, "heap");
}

struct page {
    uint64_t addr;
    uint64_t faults;
    const struct thrash_wire *named; /* an entry that names it */
};

static int by_faults(const void *a, const void *b)
{
    const struct page *x = a, *y = b;
    if (x->faults != y->faults)
        return x->faults < y->faults ? 1 : -1;
    return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static const struct dsm_page_stat *entry(const struct thrash_wire *all,
                                         int node, uint64_t addr)
{
    const struct thrash_wire *w = all + (size_t)node * THRASH_PER_NODE;
    for (int i = 0; i < THRASH_PER_NODE; i++)
        if (w[i].s.addr == addr &&
            (w[i].s.read_faults || w[i].s.write_faults || w[i].s.diff_bytes))
            return &w[i].s;
    return NULL;
}

/* file:line of a program address on this node (node 0 reports). */
static void where_of(uint64_t pc, char *out, size_t len)
{
    out[0] = 0;
    if (!pc)
        return;
    char cmd[512];
    snprintf(cmd, sizeof cmd, "addr2line -s -e /proc/%d/exe 0x%llx 2>/dev/null",
             (int)getpid(), (unsigned long long)pc);
    FILE *p = popen(cmd, "r");
    if (!p)
        return;
    if (fgets(out, (int)len, p)) {
        out[strcspn(out, "\n")] = 0;
        char *d = strstr(out, " (discriminator");
        if (d)
            *d = 0;
        if (out[0] == '?')
            out[0] = 0;
    }
    pclose(p);
}

struct verdict {
    const char *kind;  /* "false sharing", "migratory", ... */
    char writers[128], readers[128];
    uint64_t rf, wf, locked, diff;
};

static void judge(const struct thrash_wire *all, int n, uint64_t addr,
                  struct verdict *v)
{
    memset(v, 0, sizeof *v);
    int nw = 0, nr = 0;
    size_t lw = 0, lr = 0;
    for (int k = 0; k < n; k++) {
        const struct dsm_page_stat *s = entry(all, k, addr);
        if (!s)
            continue;
        v->rf += s->read_faults;
        v->wf += s->write_faults;
        v->locked += s->locked_writes;
        v->diff += s->diff_bytes;
        if (s->write_faults && lw < sizeof v->writers)
            lw += (size_t)snprintf(v->writers + lw, sizeof v->writers - lw,
                                   "%s%d", nw++ ? "," : "", k);
        if (s->read_faults && lr < sizeof v->readers)
            lr += (size_t)snprintf(v->readers + lr, sizeof v->readers - lr,
                                   "%s%d", nr++ ? "," : "", k);
    }
    if (nw >= 2)
        v->kind = 2 * v->locked > v->wf ? "migratory" : "false sharing";
    else if (v->rf >= 4 * (v->wf ? v->wf : 1) || (!nw && v->rf))
        v->kind = "read-mostly";
    else
        v->kind = "one writer";
}

static void verdict_text(const struct verdict *v, const char *var, char *out,
                         size_t len)
{
    if (!strcmp(v->kind, "false sharing"))
        snprintf(out, len, "false sharing: %s (one page) written by nodes %s "
                 "between the same barriers: %llu faults", var, v->writers,
                 (unsigned long long)(v->rf + v->wf));
    else if (!strcmp(v->kind, "migratory"))
        snprintf(out, len, "migratory: %s written by nodes %s in turn, under "
                 "locks: %llu faults", var, v->writers,
                 (unsigned long long)(v->rf + v->wf));
    else if (!strcmp(v->kind, "read-mostly"))
        snprintf(out, len, "read-mostly: %s read by nodes %s: %llu read "
                 "faults, %llu write faults", var, v->readers,
                 (unsigned long long)v->rf, (unsigned long long)v->wf);
    else
        snprintf(out, len, "one writer: %s written by node %s, read by nodes "
                 "%s: %llu faults", var, v->writers[0] ? v->writers : "-",
                 v->readers[0] ? v->readers : "-",
                 (unsigned long long)(v->rf + v->wf));
}

int rt_thrash_gather(struct rt_thrash *t)
{
    memset(t, 0, sizeof *t);
    if (!enabled)
        return 0;
    struct thrash_wire mine[THRASH_PER_NODE];
    struct dsm_page_stat top[THRASH_PER_NODE];
    memset(mine, 0, sizeof mine);
    int got = dsm_pagestat_top(top, THRASH_PER_NODE);
    uint64_t psz = dsm_page_size();
    for (int i = 0; i < got; i++) {
        mine[i].s = top[i];
        name_page(top[i].addr, psz, &mine[i]);
    }
    int n = comm_size();
    struct thrash_wire *all = calloc((size_t)n * THRASH_PER_NODE, sizeof *all);
    if (!all)
        return -1;
    if (n > 1) {
        if (comm_allgather(COMM_WORLD, mine, sizeof mine, all) < 0) {
            free(all);
            return -1;
        }
    } else {
        memcpy(all, mine, sizeof mine);
    }
    t->all = all;
    t->nodes = n;
    return 0;
}

/* The top pages over all nodes, most faults first; *np of them. */
static struct page *rank_pages(const struct rt_thrash *t, int *np)
{
    size_t cap = (size_t)t->nodes * THRASH_PER_NODE;
    struct page *p = calloc(cap + 1, sizeof *p);
    int n = 0;
    if (!p)
        return NULL;
    const struct thrash_wire *all = t->all;
    for (size_t i = 0; i < cap; i++) {
        const struct thrash_wire *w = &all[i];
        if (!w->s.read_faults && !w->s.write_faults && !w->s.diff_bytes)
            continue;
        int j;
        for (j = 0; j < n && p[j].addr != w->s.addr; j++)
            ;
        if (j == n) {
            p[n].addr = w->s.addr;
            p[n].named = w;
            n++;
        }
        p[j].faults += (uint64_t)w->s.read_faults + w->s.write_faults;
    }
    qsort(p, (size_t)n, sizeof *p, by_faults);
    *np = n < THRASH_TOP ? n : THRASH_TOP;
    return p;
}

void rt_thrash_print(FILE *f, const struct rt_thrash *t)
{
    int np = 0;
    struct page *p = t->all ? rank_pages(t, &np) : NULL;
    if (!p || !np) {
        free(p);
        return;
    }
    fprintf(f, "ompdsm: pages with the most faults (all nodes), by variable:\n");
    for (int i = 0; i < np; i++) {
        struct verdict v;
        judge(t->all, t->nodes, p[i].addr, &v);
        char where[160] = "", text[512];
        where_of(p[i].named->pc, where, sizeof where);
        char var[sizeof p[i].named->var + sizeof p[i].named->decl + 200];
        snprintf(var, sizeof var, "%s%s%s%s%s%s", p[i].named->var,
                 where[0] ? " allocated at " : "", where,
                 p[i].named->decl[0] ? " (declared at " : "",
                 p[i].named->decl, p[i].named->decl[0] ? ")" : "");
        verdict_text(&v, var, text, sizeof text);
        fprintf(f, "  page 0x%llx: %s\n", (unsigned long long)p[i].addr, text);
        for (int k = 0; k < t->nodes; k++) {
            const struct dsm_page_stat *s = entry(t->all, k, p[i].addr);
            if (!s)
                continue;
            fprintf(f, "    node %d: %u read faults, %u write faults (%u "
                    "under locks, in %u barrier intervals), %llu diff bytes",
                    k, s->read_faults, s->write_faults, s->locked_writes,
                    s->epochs, (unsigned long long)s->diff_bytes);
            if (s->hi)
                fprintf(f, " in page bytes %u..%u", s->lo, s->hi - 1);
            fprintf(f, "\n");
        }
    }
    free(p);
}

static void json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

void rt_thrash_json(FILE *f, const struct rt_thrash *t)
{
    int np = 0;
    struct page *p = t->all ? rank_pages(t, &np) : NULL;
    fprintf(f, ",\n  \"thrashing\": [");
    for (int i = 0; i < np; i++) {
        struct verdict v;
        judge(t->all, t->nodes, p[i].addr, &v);
        char where[160] = "", text[512];
        where_of(p[i].named->pc, where, sizeof where);
        verdict_text(&v, p[i].named->var, text, sizeof text);
        fprintf(f, "%s\n    {\"page\": %llu, \"variable\": ", i ? "," : "",
                (unsigned long long)p[i].addr);
        json_str(f, p[i].named->var);
        fprintf(f, ", \"allocated_at\": ");
        json_str(f, where);
        fprintf(f, ", \"declared_at\": ");
        json_str(f, p[i].named->decl);
        fprintf(f, ", \"verdict\": ");
        json_str(f, v.kind);
        fprintf(f, ", \"text\": ");
        json_str(f, text);
        fprintf(f, ", \"faults\": %llu, \"per_node\": [",
                (unsigned long long)(v.rf + v.wf));
        int first = 1;
        for (int k = 0; k < t->nodes; k++) {
            const struct dsm_page_stat *s = entry(t->all, k, p[i].addr);
            if (!s)
                continue;
            fprintf(f, "%s{\"node\": %d, \"read_faults\": %u, "
                    "\"write_faults\": %u, \"locked_writes\": %u, "
                    "\"barrier_intervals\": %u, \"diff_bytes\": %llu, "
                    "\"diff_lo\": %u, \"diff_hi\": %u}", first ? "" : ", ", k,
                    s->read_faults, s->write_faults, s->locked_writes,
                    s->epochs, (unsigned long long)s->diff_bytes, s->lo,
                    s->hi);
            first = 0;
        }
        fprintf(f, "]}");
    }
    fprintf(f, "%s]", np ? "\n  " : "");
    free(p);
}

void rt_thrash_free(struct rt_thrash *t)
{
    free(t->all);
    t->all = NULL;
}
