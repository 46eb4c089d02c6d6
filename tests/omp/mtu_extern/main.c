/* mtu_extern: extern globals (scalar, array, struct, string table, pointer
   to a global of another unit, a 1.6 MB initialised table) defined in
   globals.c, used by orphaned constructs in work.c and by main.c; file
   statics with the same name in two units stay distinct. */
#include <stdio.h>
#include <string.h>
#include <omp.h>
#include "shared.h"

static int nfail;
#define CHECK(c, what) do { if (!(c)) { if (nfail++ < 20) \
    printf("FAIL: %s (line %d)\n", (what), __LINE__); } } while (0)

static int hidden = 222;

int main(void)
{
    int chars = 0, team = 0, bad = 0;
    double s = -1;
#pragma omp parallel reduction(+:bad)
    {
        double mine;
#pragma omp master
        team = omp_get_num_threads();
        fill_data();
        mine = sum_data();
        if (mine != 0.5 * NDATA * (NDATA - 1) / 2)
            bad++;
#pragma omp master
        s = mine;
        count_labels(&chars);
#pragma omp atomic
        *counter_ptr += 1;
        if (hidden != 222 || hidden_in_globals() != 111 ||
            big_table[2] != 3 || big_table[199999] != 0)
            bad++;
    }
    CHECK(bad == 0, "values seen by all threads");
    CHECK(s == 0.5 * NDATA * (NDATA - 1) / 2, "sum over extern array");
    int echars = 0, k;
    for (k = 0; k < nlabels; k++)
        echars += (int)strlen(labels[k]);
    CHECK(chars == echars && echars == 18, "label lengths");
    CHECK(counter == 5 + team, "counter through pointer");
    printf("sum %.1f chars %d counter %d conf %s\n", s, chars, counter,
           conf.name);
    printf("mtu_extern: %s\n", nfail ? "FAILED" : "ok");
    return nfail ? 1 : 0;
}
