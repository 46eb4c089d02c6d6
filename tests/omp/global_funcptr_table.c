/* a global table of function pointers and a table of {name, function}
   structs, initialised statically, called from all threads; a global
   function pointer reassigned in a single construct. */
#include <stdio.h>
#include <string.h>
#include <omp.h>

#define N 120
static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

static int add(int a, int b) { return a + b; }
static int sub(int a, int b) { return a - b; }
static int mul(int a, int b) { return a * b; }
static int max2(int a, int b) { return a > b ? a : b; }

int (*ops[4])(int, int) = {add, sub, mul, max2};
struct named_op { const char *name; int (*fn)(int, int); };
const struct named_op named[] = {
    {"add", add}, {"sub", sub}, {"mul", mul}, {"max", max2}, {0, 0}
};
int (*current)(int, int) = add;

static int find(const char *name)
{
    int k;
    for (k = 0; named[k].name; k++)
        if (strcmp(named[k].name, name) == 0)
            return k;
    return -1;
}

int main(void)
{
    long r[N], er[N];
    int i, bad = 0;
    long tot = 0, etot = 0;
#pragma omp parallel for
    for (i = 0; i < N; i++)
        r[i] = ops[i % 4](i, 7);
#pragma omp parallel for reduction(+:tot)
    for (i = 0; i < N; i++) {
        const char *nm = named[(i * 3) % 4].name;
        tot += named[find(nm)].fn(i, 2);
    }
    for (i = 0; i < N; i++) {
        int a = i, b = 7;
        switch (i % 4) {
        case 0: er[i] = a + b; break;
        case 1: er[i] = a - b; break;
        case 2: er[i] = a * b; break;
        default: er[i] = a > b ? a : b; break;
        }
        bad += r[i] != er[i];
        switch ((i * 3) % 4) {
        case 0: etot += i + 2; break;
        case 1: etot += i - 2; break;
        case 2: etot += i * 2; break;
        default: etot += i > 2 ? i : 2; break;
        }
    }
    int viamul = 0;
#pragma omp parallel reduction(+:bad)
    {
#pragma omp single
        current = mul;
        if (current(6, 7) != 42)
            bad++;
#pragma omp master
        viamul = current(3, 3);
    }
    CHECK(bad == 0, "calls through the table");
    CHECK(tot == etot, "calls through the named table");
    CHECK(viamul == 9, "reassigned function pointer");
    printf("tot %ld r[%d] %ld viamul %d\n", tot, N - 1, r[N - 1], viamul);
    printf("global_funcptr_table: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
