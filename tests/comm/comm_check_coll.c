/* tests/comm/comm_check_coll.c - comm_check's groups "barrier" and
 * "coll": barriers that no node passes early, barriers carrying payloads up
 * to the root and a digest down, a sub-team on its own channel, and the
 * collectives (allreduce of integers, doubles and a user operation,
 * allgather, bcast, bcast0) checked against closed forms. */
#include "comm_check.h"

#include <string.h>

/* ---- barriers ---- */

static void test_barrier_early(void)
{
    int rounds = nodes > 4 ? 300 : 1000;
    for (int k = 1; k <= rounds; k++) {
        for (int p = 0; p < nodes; p++) {
            uint64_t old;
            OK(comm_fetch_add(p, USER_REG, W_BAR * 8, 1, &old));
        }
        barrier();
        uint64_t v = wload(W_BAR);
        CHECK(v >= (uint64_t)nodes * k && v <= (uint64_t)nodes * (k + 1),
              "after barrier %d the counter is %" PRIu64 " (expected %" PRIu64
              "..%" PRIu64 "): a node passed early", k, v, (uint64_t)nodes * k,
              (uint64_t)nodes * (k + 1));
    }
}

/* Payload up: a record per node (rank, length, bytes); the combine appends. */
struct rec_hdr {
    int32_t rank;
    uint32_t len;
};
static uint32_t up_len(int r, int k)
{
    struct rng g = rng_for(5, r, k, 0);
    /* Sometimes large: the gathered payload then spills. */
    return (uint32_t)(k % 5 == 0 ? rnd_size(&g, 40000) : rnd_below(&g, 200));
}
static uint32_t down_pad(int k) { return (uint32_t)(k % 7 == 3 ? 70000 + k : k * 13); }

static int combine_append(void *ctx, struct comm_buf *acc, const void *in,
                          size_t inlen)
{
    (void)ctx;
    return comm_buf_append(acc, in, inlen);
}

/* At the root: check the gathered records, then broadcast a digest: per
 * rank its length, then a pad of down_pad(k) pattern bytes. */
static int root_digest(void *ctx, struct comm_buf *acc)
{
    int k = *(int *)ctx;
    uint32_t lens[256] = {0};
    int seen[256] = {0}, idx = 0;
    size_t pos = 0;
    while (pos + sizeof(struct rec_hdr) <= acc->len) {
        struct rec_hdr h;
        memcpy(&h, (char *)acc->data + pos, sizeof h);
        pos += sizeof h;
        if (h.rank < 0 || h.rank >= nodes || pos + h.len > acc->len) {
            FAIL("round %d: malformed gathered payload", k);
            return 0;
        }
        CHECK(idx != 0 || h.rank == 0, "round %d: root's own record is not "
              "first", k);
        CHECK(!seen[h.rank]++, "round %d: node %d's record gathered twice", k,
              h.rank);
        CHECK(h.len == up_len(h.rank, k), "round %d: node %d's record has %u "
              "bytes", k, h.rank, h.len);
        long bad = pat_cmp((char *)acc->data + pos, 500 + (uint64_t)k * 64 + h.rank,
                           0, h.len);
        CHECK(bad < 0, "round %d: node %d's record differs at %ld", k, h.rank, bad);
        lens[h.rank] = h.len;
        pos += h.len;
        idx++;
    }
    CHECK(idx == nodes && pos == acc->len, "round %d: gathered %d records", k, idx);
    acc->len = 0;
    comm_buf_append(acc, lens, sizeof(uint32_t) * (size_t)nodes);
    size_t pad = down_pad(k);
    comm_buf_reserve(acc, acc->len + pad);
    pat_fill((char *)acc->data + acc->len, 600 + (uint64_t)k, 0, pad);
    acc->len += pad;
    return 0;
}

static void test_barrier_payload(void)
{
    struct comm_buf up = {0}, down = {0};
    int rounds = nodes > 4 ? 40 : 80;
    for (int k = 0; k < rounds; k++) {
        struct rec_hdr h = {rank, up_len(rank, k)};
        up.len = 0;
        comm_buf_append(&up, &h, sizeof h);
        comm_buf_reserve(&up, up.len + h.len);
        pat_fill((char *)up.data + up.len, 500 + (uint64_t)k * 64 + rank, 0, h.len);
        up.len += h.len;
        OK(comm_barrier_x(COMM_WORLD, up.data, up.len, combine_append,
                          root_digest, &k, &down));
        size_t want = sizeof(uint32_t) * (size_t)nodes + down_pad(k);
        CHECK(down.len == want, "round %d: %zu bytes came down, expected %zu",
              k, down.len, want);
        if (down.len != want)
            continue;
        for (int r = 0; r < nodes; r++) {
            uint32_t l;
            memcpy(&l, (char *)down.data + 4 * r, 4);
            CHECK(l == up_len(r, k), "round %d: digest says node %d sent %u", k,
                  r, l);
        }
        long bad = pat_cmp((char *)down.data + 4 * nodes, 600 + (uint64_t)k, 0,
                           down_pad(k));
        CHECK(bad < 0, "round %d: down payload differs at %ld", k, bad);
    }
    comm_buf_free(&up);
    comm_buf_free(&down);
}

/* A sub-team on channel 1 (ranks 0..n/2-1) while channel 0 stays intact. */
static void test_subgroup(void)
{
    struct comm_group g = {1, nodes / 2 > 0 ? nodes / 2 : 1};
    if (rank < g.nodes) {
        for (int k = 1; k <= 100; k++) {
            int64_t v = rank + k;
            OK(comm_allreduce(g, &v, 1, COMM_INT64, COMM_SUM));
            int64_t want = (int64_t)g.nodes * (g.nodes - 1) / 2 + (int64_t)g.nodes * k;
            CHECK(v == want, "sub-team allreduce %d: %" PRId64 " != %" PRId64,
                  k, v, want);
        }
    }
    barrier();
}

void group_barrier(void)
{
    test_barrier_early();
    test_barrier_payload();
    test_subgroup();
    barrier();
}

/* ---- collectives ---- */

static void test_allreduce_int(size_t count)
{
    int64_t *v = malloc(count * 8);
    static const enum comm_op ops[] = {COMM_SUM, COMM_MIN, COMM_MAX,
                                       COMM_AND, COMM_OR, COMM_XOR};
    int64_t n = nodes;
    for (size_t o = 0; o < OMPDSM_ARRAY_LEN(ops); o++) {
        int bitwise = ops[o] >= COMM_AND;
        for (size_t i = 0; i < count; i++) {
            int64_t s = (i % 2) ? -1 : 1;
            v[i] = bitwise ? (int64_t)((1ull << rank) | ((uint64_t)i << 32))
                           : s * (int64_t)((rank + i / 2) % nodes + 1) * (int64_t)(i + 1);
        }
        OK(comm_allreduce(COMM_WORLD, v, count, COMM_INT64, ops[o]));
        for (size_t i = 0; i < count; i++) {
            int64_t s = (i % 2) ? -1 : 1, x = (int64_t)i + 1, want = 0;
            uint64_t low = (1ull << nodes) - 1, hi = (uint64_t)i << 32;
            switch (ops[o]) {
            case COMM_SUM: want = s * x * n * (n + 1) / 2; break;
            case COMM_MIN: want = s > 0 ? x : -x * n; break;
            case COMM_MAX: want = s > 0 ? x * n : -x; break;
            case COMM_AND: want = (int64_t)(hi | (nodes == 1 ? 1 : 0)); break;
            case COMM_OR: want = (int64_t)(hi | low); break;
            case COMM_XOR: want = (int64_t)(low | (nodes % 2 ? hi : 0)); break;
            }
            if (v[i] != want) {
                FAIL("allreduce int64 op %d count %zu: [%zu] = %" PRId64
                     ", expected %" PRId64, (int)ops[o], count, i, v[i], want);
                break;
            }
        }
    }
    free(v);
}

static void test_allreduce_double(size_t count)
{
    double *v = malloc(count * 8);
    static const enum comm_op ops[] = {COMM_SUM, COMM_MIN, COMM_MAX};
    double n = nodes;
    for (size_t o = 0; o < 3; o++) {
        for (size_t i = 0; i < count; i++)
            v[i] = ((rank + i / 2) % nodes + 0.5) * (double)(i + 1);
        OK(comm_allreduce(COMM_WORLD, v, count, COMM_DOUBLE, ops[o]));
        for (size_t i = 0; i < count; i++) {
            double x = (double)(i + 1);
            double want = ops[o] == COMM_SUM ? x * n * n / 2
                        : ops[o] == COMM_MIN ? 0.5 * x : (n - 0.5) * x;
            if (v[i] != want) {
                FAIL("allreduce double op %d count %zu: [%zu] = %g, expected %g",
                     (int)ops[o], count, i, v[i], want);
                break;
            }
        }
    }
    free(v);
}

struct maxloc {
    double val;
    int64_t rank;
};
static double maxloc_val(int r, size_t i) { return (double)((r * 5 + (int)i) % (nodes + 3)); }
static void maxloc_fn(void *inout, const void *in, size_t len, void *arg)
{
    (void)arg;
    struct maxloc *a = inout;
    const struct maxloc *b = in;
    for (size_t i = 0; i < len / sizeof *a; i++)
        if (b[i].val > a[i].val || (b[i].val == a[i].val && b[i].rank < a[i].rank))
            a[i] = b[i];
}

static void test_allreduce_user(void)
{
    enum { M = 500 };
    struct maxloc *v = malloc(M * sizeof *v);
    for (size_t i = 0; i < M; i++)
        v[i] = (struct maxloc){maxloc_val(rank, i), rank};
    OK(comm_allreduce_user(COMM_WORLD, v, M * sizeof *v, maxloc_fn, NULL));
    for (size_t i = 0; i < M; i++) {
        struct maxloc want = {-1, -1};
        for (int r = 0; r < nodes; r++)
            if (maxloc_val(r, i) > want.val)
                want = (struct maxloc){maxloc_val(r, i), r};
        if (v[i].val != want.val || v[i].rank != want.rank) {
            FAIL("allreduce_user maxloc [%zu]: (%g, %" PRId64 "), expected "
                 "(%g, %" PRId64 ")", i, v[i].val, v[i].rank, want.val, want.rank);
            break;
        }
    }
    free(v);
}

static void test_allgather(size_t len)
{
    char *mine = malloc(len ? len : 1), *all = malloc(len * nodes + 1);
    pat_fill(mine, 700 + rank, len, len);
    memset(all, 0, len * nodes);
    OK(comm_allgather(COMM_WORLD, mine, len, all));
    for (int r = 0; r < nodes; r++) {
        long bad = pat_cmp(all + (size_t)r * len, 700 + r, len, len);
        CHECK(bad < 0, "allgather of %zu bytes: node %d's part differs at %ld",
              len, r, bad);
    }
    free(mine);
    free(all);
}

static void test_bcast(size_t len, int iter)
{
    char *buf = malloc(len);
    for (int root = 0; root < nodes; root++) {
        uint64_t seed = 800 + (uint64_t)iter * 64 + root;
        if (rank == root)
            pat_fill(buf, seed, 0, len);
        else
            memset(buf, 0x33, len);
        OK(comm_bcast(COMM_WORLD, root, buf, len));
        long bad = pat_cmp(buf, seed, 0, len);
        CHECK(bad < 0, "bcast of %zu bytes from node %d differs at %ld", len,
              root, bad);
    }
    free(buf);
}

static void test_bcast0(size_t len, int iter)
{
    struct comm_buf b = {0};
    uint64_t seed = 900 + (uint64_t)iter;
    if (rank == 0) {
        comm_buf_reserve(&b, len);
        pat_fill(b.data, seed, 0, len);
        b.len = len;
    }
    OK(comm_bcast0(COMM_WORLD, &b));
    CHECK(b.len == len, "bcast0: %zu bytes, expected %zu", b.len, len);
    if (b.len == len) {
        long bad = pat_cmp(b.data, seed, 0, len);
        CHECK(bad < 0, "bcast0 of %zu bytes differs at %ld", len, bad);
    }
    comm_buf_free(&b);
    barrier(); /* required between two broadcasts on a channel */
}

void group_coll(void)
{
    static const size_t counts[] = {1, 3, 1000, 3000};
    for (size_t i = 0; i < OMPDSM_ARRAY_LEN(counts); i++) {
        test_allreduce_int(counts[i]);
        test_allreduce_double(counts[i]);
    }
    test_allreduce_int(WIN / 8); /* 1 MiB: the spill path */
    test_allreduce_user();
    static const size_t glens[] = {0, 1, 8, 100, 20000, 256 * 1024};
    for (size_t i = 0; i < OMPDSM_ARRAY_LEN(glens); i++)
        test_allgather(glens[i]);
    static const size_t blens[] = {1, 8, 5000, 70000, WIN};
    for (size_t i = 0; i < OMPDSM_ARRAY_LEN(blens); i++)
        test_bcast(blens[i], (int)i);
    for (size_t i = 0; i < OMPDSM_ARRAY_LEN(blens); i++)
        test_bcast0(blens[i], (int)i);
    barrier();
}
