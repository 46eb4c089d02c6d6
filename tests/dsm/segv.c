/* tests/dsm/segv.c - a real segfault in user code outside the shared heap
 * still kills the program with SIGSEGV (the DSM's handler passes it on),
 * after the heap has been used.  Expected to die; the meson test checks for
 * the signal (ompdsmrun exit status 139). */
#include "dsmtest.h"

#include <signal.h>

int main(void)
{
    int *g;
    t_start(4096, (void **)&g);
    g[T_rank] = 1;
    t_barrier();
    if (g[0] != 1)
        T_FAIL("heap broken before the crash");
    if (T_rank == T_size - 1) {
        volatile uintptr_t addr = 16;
        *(volatile int *)addr = 42; /* SIGSEGV */
        printf("FAIL: still alive after writing to address 16\n");
        return 1;
    }
    /* The others wait; the launcher must end them when the last node dies. */
    t_barrier();
    printf("FAIL: the barrier completed without the crashed node\n");
    return 1;
}
