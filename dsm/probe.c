/* dsm/probe.c - what a fault, a protection change and a page copy cost on
 * this machine, measured once at the start of a job of several nodes (well
 * under a millisecond): the price of an mprotect has been seen to vary
 * from 4 to 130 us between machines of one kind, so the statistics report
 * it beside every count, and the length of a subscription to pushed
 * updates (push.c) follows it. */
#include "dsm_int.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>

static char *probe_page;
static struct dsm_costs costs;

int dsm_probe_fault(const void *addr)
{
    if (!probe_page || (const char *)addr < probe_page ||
        (const char *)addr >= probe_page + dsm_g.page_size)
        return 0;
    mprotect(probe_page, dsm_g.page_size, PROT_READ | PROT_WRITE);
    return 1;
}

static uint64_t median(uint64_t *v, int n)
{
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && v[j - 1] > v[j]; j--) {
            uint64_t t = v[j];
            v[j] = v[j - 1];
            v[j - 1] = t;
        }
    return v[n / 2];
}

void dsm_probe(void)
{
    enum { N = 9 };
    size_t ps = dsm_g.page_size;
    char *p = mmap(NULL, 2 * ps, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return; /* (the costs stay unknown: 0) */
    memset(p, 1, 2 * ps);
    uint64_t prot[N], fault[N], copy[N];
    for (int i = 0; i < N; i++) {
        uint64_t t0 = ompdsm_now_ns();
        mprotect(p, ps, PROT_READ);
        uint64_t t1 = ompdsm_now_ns();
        mprotect(p, ps, PROT_READ | PROT_WRITE);
        prot[i] = (ompdsm_now_ns() - t0) / 2;
        (void)t1;
    }
    probe_page = p;
    for (int i = 0; i < N; i++) {
        mprotect(p, ps, PROT_NONE);
        uint64_t t0 = ompdsm_now_ns();
        *(volatile char *)p = 2; /* dsm_probe_fault makes it writable */
        fault[i] = ompdsm_now_ns() - t0;
    }
    probe_page = NULL;
    for (int i = 0; i < N; i++) {
        uint64_t t0 = ompdsm_now_ns();
        memcpy(p + ps, p, ps);
        __asm__ volatile("" ::: "memory");
        copy[i] = ompdsm_now_ns() - t0;
    }
    munmap(p, 2 * ps);
    costs.prot_ns = median(prot, N);
    uint64_t f = median(fault, N);
    costs.fault_ns = f > costs.prot_ns ? f - costs.prot_ns : f;
    costs.copy_ns = median(copy, N);
}

void dsm_machine_costs(struct dsm_costs *out)
{
    *out = costs;
}
