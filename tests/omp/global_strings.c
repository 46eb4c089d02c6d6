/* global string data: const char *names[] = {...}, char arrays with string
   initialisers (sized and unsized, 2-D), a pointer to a literal; threads
   read them and write bytes of a global char buffer (neighbouring bytes by
   different threads). */
#include <stdio.h>
#include <string.h>
#include <omp.h>

#define NN 7
static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

const char *names[] = {"alpha", "beta", "gamma", "delta", "epsilon",
                       "zeta", "eta"};
char greeting[] = "hello, cluster";
char fixed[32] = "fixed";
char words[3][8] = {"one", "two", "three"};
static const char *const motto = "share everything";
char outbuf[NN * 8 + 1];

int main(void)
{
    int i, total = 0, etotal = 0, bad = 0;
#pragma omp parallel for reduction(+:total)
    for (i = 0; i < NN; i++)
        total += (int)strlen(names[i]);
    for (i = 0; i < NN; i++)
        etotal += (int)strlen(names[i]);
    CHECK(total == etotal && etotal == 33, "lengths of names[]");

    /* byte-granular writes: thread of iteration i writes 8 bytes */
    memset(outbuf, '.', NN * 8);
    outbuf[NN * 8] = 0;
#pragma omp parallel for schedule(static, 1)
    for (i = 0; i < NN * 8; i++) {
        int w = i / 8, c = i % 8;
        outbuf[i] = c < (int)strlen(names[w]) ? names[w][c] : '_';
    }
#pragma omp parallel reduction(+:bad)
    {
        if (strcmp(greeting, "hello, cluster") != 0 || sizeof greeting != 15 ||
            strcmp(fixed, "fixed") != 0 || fixed[31] != 0 ||
            strcmp(words[2], "three") != 0 || strcmp(motto, "share everything"))
            bad++;
    }
#pragma omp parallel
    {
#pragma omp single
        greeting[0] = 'H';
    }
    CHECK(bad == 0, "initialised strings");
    CHECK(strcmp(outbuf, "alpha___beta____gamma___delta___epsilon_zeta____eta_____") == 0,
          "bytes written by different threads");
    CHECK(greeting[0] == 'H', "write into a global string");
    printf("%s\n%s\n%s %s\n", outbuf, greeting, words[0], motto);
    printf("global_strings: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
