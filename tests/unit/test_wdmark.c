/* tests/unit/test_wdmark.c - OMPDSM_wd_mark_strided (dsm/wd.c), the mark the
 * write-detection pass emits around a loop whose stores write one block a
 * stride: for random blocks (any alignment, widths and strides, starting
 * below the heap, inside it, reaching past its end), the shadow bits and
 * page bytes it sets must be exactly those of a byte-by-byte reference
 * (bit d & 3 of shadow[d >> 2], byte pages[d >> shift], for every heap
 * offset d a block covers), and nothing else. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "runtime/ompdsm_abi.h"

enum { SIZE = 1 << 20, SHIFT = 12, SLACK = 1 << 16 };

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* heap offsets [-SLACK, SIZE + SLACK) are addressable (never written) */
static unsigned char *mem, *ref_shadow, *ref_pages;

static void reference(const unsigned char *p, uint64_t width, uint64_t stride,
                      uint64_t count)
{
    for (uint64_t i = 0; i < count; i++)
        for (uint64_t b = 0; b < width; b++) {
            int64_t d = (p + i * stride + b) - mem;
            if (d < 0 || d >= SIZE)
                continue;
            ref_shadow[d >> 2] |= (unsigned char)(1u << (d & 3));
            ref_pages[d >> SHIFT] = 1;
        }
}

static void check_one(int64_t start, uint64_t width, uint64_t stride, uint64_t count)
{
    memset(OMPDSM_wd_shadow, 0, SIZE / 4);
    memset(OMPDSM_wd_pages, 0, SIZE >> SHIFT);
    memset(ref_shadow, 0, SIZE / 4);
    memset(ref_pages, 0, SIZE >> SHIFT);
    OMPDSM_wd_mark_strided(mem + start, width, stride, count);
    reference(mem + start, width, stride, count);
    if (memcmp(OMPDSM_wd_shadow, ref_shadow, SIZE / 4) ||
        memcmp(OMPDSM_wd_pages, ref_pages, SIZE >> SHIFT)) {
        for (size_t k = 0; k < SIZE / 4; k++)
            if (OMPDSM_wd_shadow[k] != ref_shadow[k]) {
                print_error("start %lld width %llu stride %llu count %llu: "
                            "shadow byte %zu is 0x%x, want 0x%x\n",
                            (long long)start, (unsigned long long)width,
                            (unsigned long long)stride, (unsigned long long)count, k,
                            OMPDSM_wd_shadow[k], ref_shadow[k]);
                break;
            }
        fail_msg("OMPDSM_wd_mark_strided marked other bytes than the blocks'");
    }
}

static void random_blocks(void **state)
{
    (void)state;
    for (int t = 0; t < 3000; t++) {
        uint64_t width = 1 + next() % 70;
        uint64_t stride = width + 1 + next() % 200;
        if (t % 3 == 0) { /* whole words, as most loops */
            width = 4 * (1 + next() % 16);
            stride = width + 4 * (1 + next() % 40);
        }
        if (t % 8 == 7) /* strides of pages */
            stride = width + next() % (5 << SHIFT);
        uint64_t count = next() % 300;
        int64_t start;
        switch (t % 4) {
        case 0: /* below the heap, maybe reaching into it */
            start = -(int64_t)(next() % (SLACK / 2));
            break;
        case 1: /* near the end, maybe past it */
            start = SIZE - (int64_t)(next() % (SLACK / 2));
            break;
        default:
            start = (int64_t)(next() % SIZE);
        }
        if (start + (int64_t)((count ? count - 1 : 0) * stride + width) > SIZE + SLACK)
            count = (uint64_t)(SIZE + SLACK - start - (int64_t)width) / stride;
        check_one(start, width, stride, count);
    }
}

static void edges(void **state)
{
    (void)state;
    check_one(-8, 8, 16, 4);   /* the first block ends where the heap starts */
    check_one(-7, 8, 16, 4);   /* its last byte is the heap's first */
    check_one(-100, 24, 40, 10);
    check_one(-3, 6, 10, 1);
    check_one(0, 24, 40, 0);   /* no block */
    check_one(SIZE - 24, 24, 40, 3); /* only the first block is in */
    check_one(SIZE - 20, 24, 40, 3); /* partly */
    check_one(4, 24, 40, 1000);
    check_one(8, 4096, 8192, 64); /* blocks of whole pages */
    check_one(16, 8, 3 << SHIFT, 20); /* pages between the blocks */
    check_one(4096 - 8, 16, 2 << SHIFT, 30); /* blocks across page ends */
}

int main(void)
{
    mem = malloc(SIZE + 2 * SLACK);
    OMPDSM_wd_shadow = calloc(SIZE / 4, 1);
    OMPDSM_wd_pages = calloc(SIZE >> SHIFT, 1);
    ref_shadow = malloc(SIZE / 4);
    ref_pages = malloc(SIZE >> SHIFT);
    if (!mem || !OMPDSM_wd_shadow || !OMPDSM_wd_pages || !ref_shadow || !ref_pages)
        return 1;
    mem += SLACK;
    OMPDSM_wd_base = (unsigned long)(uintptr_t)mem;
    OMPDSM_wd_size = SIZE;
    OMPDSM_wd_page_shift = SHIFT;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(edges),
        cmocka_unit_test(random_blocks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
