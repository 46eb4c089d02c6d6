/* for with char, signed char, unsigned char and short loop variables. */
#include <stdio.h>
#include <omp.h>

#define R 3000
static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

static int expv[R], got[R];

static void compare(const char *what)
{
    int k, n = 0, bad = 0;
    for (k = 0; k < R; k++) {
        if (expv[k] != got[k])
            bad++;
        n += got[k];
        expv[k] = got[k] = 0;
    }
    CHECK(bad == 0, what);
    printf("%s: %d iterations\n", what, n);
}

int main(void)
{
    char c;
    signed char sc;
    unsigned char uc;
    short s;

    for (c = 'a'; c <= 'z'; c++) expv[(int)c]++;
#pragma omp parallel for
    for (c = 'a'; c <= 'z'; c++) got[(int)c]++;
    compare("char a..z");

    /* range + step is kept representable in signed char: gcc 12 computes
       the trip count in the type of the loop variable */
    for (sc = 60; sc > -62; sc -= 5) expv[sc + 128]++;
#pragma omp parallel for schedule(static, 2)
    for (sc = 60; sc > -62; sc -= 5) got[sc + 128]++;
    compare("signed char -= 5");

    for (uc = 0; uc < 250; uc += 3) expv[uc]++;
#pragma omp parallel for schedule(dynamic, 4)
    for (uc = 0; uc < 250; uc += 3) got[uc]++;
    compare("unsigned char += 3");

    for (s = -1000; s <= 1000; s += 10) expv[s + 1000]++;
#pragma omp parallel for schedule(guided)
    for (s = -1000; s <= 1000; s += 10) got[s + 1000]++;
    compare("short += 10");

    int letters = 0;
    char word[27];
#pragma omp parallel for reduction(+:letters)
    for (c = 'A'; c <= 'Z'; c++) {
        word[c - 'A'] = c;
        letters++;
    }
    word[26] = '\0';
    CHECK(letters == 26, "letter count");
    printf("word %s\n", word);
    printf("for_char: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
