/* tests/dsm/need_pkeys.c - runs a write-detection test only where it can
 * run.
 *   need_pkeys CMD ARGS...   runs CMD when the machine has memory
 *                            protection keys (pkey_alloc succeeds), else
 *                            exits 77 (meson: skipped) saying why.
 * Software write detection (OMPDSM_WD=on) guards calls into code the
 * compiler pass did not see with a protection key (x86 PKU, dsm/wd.c);
 * without keys the runtime uses page protection, and a test of write
 * detection itself has nothing to test. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: need_pkeys CMD [ARGS...]\n");
        return 2;
    }
    int k = pkey_alloc(0, 0);
    if (k < 0) {
        printf("SKIP: this machine has no memory protection keys (pkey_alloc: "
               "%s), which software write detection needs (docs/design.md, "
               "\"Software write detection\"); programs here use page "
               "protection\n", strerror(errno));
        return 77;
    }
    pkey_free(k);
    execv(argv[1], argv + 1);
    perror(argv[1]);
    return 2;
}
