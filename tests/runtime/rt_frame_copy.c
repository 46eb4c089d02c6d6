/* rt_frame_copy.c - documents a runtime bug: OMPDSM_parallel promises
 * (ompdsm_abi.h) that the frame "is copied to every thread", but node 0's
 * thread 0 (team.c, OMPDSM_parallel -> run_member, and run_alone for a
 * team of one) runs the region on the caller's frame object itself, so a
 * region that changes its frame (a firstprivate kept in the frame) changes
 * the encountering function's frame too.  Worker nodes do get a copy. */
#include "rt_test.h"

struct frame {
    int x; /* firstprivate(x), kept in the frame */
};
static void region(void *fp)
{
    struct frame *f = fp;
    CHECK(f->x == 7, "frame value on entry: %d, expected 7", f->x);
    f->x = 100 + omp_get_thread_num(); /* the thread's private x changes */
}
static OMPDSM_region rd = {region, "rt_frame_copy.c:16 (main)", 0};
static OMPDSM_region *regions[] = {&rd};
static OMPDSM_unit unit = {OMPDSM_ABI_VERSION, "rt_frame_copy.c", 0, 0, 0,
                           regions, 1, 0, 0, 0};
__attribute__((constructor)) static void reg(void) { OMPDSM_register_unit(&unit); }

static int user_main(int argc, char **argv, char **envp)
{
    (void)argc; (void)argv; (void)envp;
    rtt_begin("rt_frame_copy", 20);
    struct frame fr = {7};
    OMPDSM_parallel(&rd, &fr, sizeof fr, 0, 1);
    CHECK(fr.x == 7, "parallel: the encountering thread's frame changed to "
          "%d (the ABI says the frame is copied to every thread)", fr.x);
    fr.x = 7;
    OMPDSM_parallel(&rd, &fr, sizeof fr, 0, 0); /* if(0): team of one */
    CHECK(fr.x == 7, "if(0): the encountering thread's frame changed to %d",
          fr.x);
    return rtt_end("frame copied");
}

int main(int argc, char **argv, char **envp)
{
    return OMPDSM_main(argc, argv, envp, user_main);
}
