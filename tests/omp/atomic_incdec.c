/* atomic x++, x--, ++x, --x on int, long, unsigned, float and double. */
#include <stdio.h>
#include <omp.h>

#define N 300
static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

int main(void)
{
    int i_post = 0, i_pre = 0, i_pdec = 0, i_mdec = 0;
    long l_post = 0, l_pre = 0, l_pdec = 0, l_mdec = 0;
    unsigned u_post = 0, u_pre = 0, u_pdec = 0, u_mdec = 0;
    float f_post = 0, f_pre = 0, f_pdec = 0, f_mdec = 0;
    double d_post = 0, d_pre = 0, d_pdec = 0, d_mdec = 0;
    int i;
#pragma omp parallel for schedule(static, 4)
    for (i = 0; i < N; i++) {
#pragma omp atomic
        i_post++;
#pragma omp atomic
        ++i_pre;
#pragma omp atomic
        i_pdec--;
#pragma omp atomic
        --i_mdec;
#pragma omp atomic
        l_post++;
#pragma omp atomic
        ++l_pre;
#pragma omp atomic
        l_pdec--;
#pragma omp atomic
        --l_mdec;
#pragma omp atomic
        u_post++;
#pragma omp atomic
        ++u_pre;
#pragma omp atomic
        u_pdec--;
#pragma omp atomic
        --u_mdec;
#pragma omp atomic
        f_post++;
#pragma omp atomic
        ++f_pre;
#pragma omp atomic
        f_pdec--;
#pragma omp atomic
        --f_mdec;
#pragma omp atomic
        d_post++;
#pragma omp atomic
        ++d_pre;
#pragma omp atomic
        d_pdec--;
#pragma omp atomic
        --d_mdec;
    }
    CHECK(i_post == N && i_pre == N && i_pdec == -N && i_mdec == -N, "int");
    CHECK(l_post == N && l_pre == N && l_pdec == -N && l_mdec == -N, "long");
    CHECK(u_post == N && u_pre == N && u_pdec == 0u - N && u_mdec == 0u - N,
          "unsigned");
    CHECK(f_post == N && f_pre == N && f_pdec == -N && f_mdec == -N, "float");
    CHECK(d_post == N && d_pre == N && d_pdec == -N && d_mdec == -N, "double");
    printf("int %d %d %d %d\n", i_post, i_pre, i_pdec, i_mdec);
    printf("long %ld %ld %ld %ld\n", l_post, l_pre, l_pdec, l_mdec);
    printf("unsigned %u %u %u %u\n", u_post, u_pre, u_pdec, u_mdec);
    printf("float %.1f %.1f %.1f %.1f\n", f_post, f_pre, f_pdec, f_mdec);
    printf("double %.1f %.1f %.1f %.1f\n", d_post, d_pre, d_pdec, d_mdec);
    printf("atomic_incdec: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
