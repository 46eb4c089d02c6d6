/* tests/debug/gdb_nodes.c - debugged on 2 nodes by gdb_nodes_test.py:
 * a shared global array, a struct and a pointer into the shared heap,
 * read by every node in a parallel region and printed by the program
 * itself, so that gdb's values on each node can be checked against the
 * node's own reads. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

struct pt {
    int x;
    double y;
};

int a[64];
struct pt p;
double *h;
int b[1 << 18]; /* b[1 << 14] and b[1 << 17]: pages apart from a, p and h
                   * (pages up to 64 KiB) that node 0 alone writes */

int main(int argc, char **argv)
{
    int i;
    h = malloc(16 * sizeof *h);
    for (i = 0; i < 64; i++)
        a[i] = i * i + 7;
    p.x = 42;
    p.y = 2.5;
    for (i = 0; i < 16; i++)
        h[i] = i * 1.5 + 0.25;
    b[1 << 14] = 98;
    b[1 << 17] = 99;
#pragma omp parallel
    {
        int a5 = a[5], px = p.x;
        double py = p.y, h3 = h[3], h0 = *h;
        printf("node %d read %d %d %g %g %g\n", omp_get_thread_num(), a5, px, py, h3,
               h0); /* BREAK_NODES */
    }
    printf("a[63] %d\n", a[63]); /* BREAK_SERIAL */
    return argc > 1 ? atoi(argv[1]) : 0;
}
