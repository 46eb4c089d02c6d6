/* ordered: text produced in ordered regions (formatted into a shared
   buffer) comes out in iteration order and is printed after the region,
   so the output is identical for any team size. */
#include <stdio.h>
#include <string.h>
#include <omp.h>

#define N 24
static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

int main(void)
{
    static char buf[4096], expect[4096];
    int len = 0, i;
#pragma omp parallel for ordered schedule(dynamic, 2)
    for (i = 0; i < N; i++) {
        int v = i * 3 + 1;
#pragma omp ordered
        len += sprintf(buf + len, "%d%s", v, i + 1 < N ? "," : "");
    }
    int elen = 0;
    for (i = 0; i < N; i++)
        elen += sprintf(expect + elen, "%d%s", i * 3 + 1, i + 1 < N ? "," : "");
    CHECK(len == elen && strcmp(buf, expect) == 0, "ordered text");
    printf("%s\n", buf);
    printf("ordered_buffer: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
