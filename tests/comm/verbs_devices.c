/* tests/comm/verbs_devices.c - runs a device test only where RDMA exists.
 *   verbs_devices CMD ARGS...   runs CMD when ibv_get_device_list finds a
 *                               device, else exits 77 (meson: skipped)
 *                               saying why;
 *   verbs_devices --count       prints how many devices there are. */
#include <infiniband/verbs.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    int n = 0;
    struct ibv_device **list = ibv_get_device_list(&n);
    if (list)
        ibv_free_device_list(list);
    if (argc == 2 && !strcmp(argv[1], "--count")) {
        printf("%d\n", n);
        return 0;
    }
    if (argc < 2) {
        fprintf(stderr, "usage: verbs_devices --count | CMD [ARGS...]\n");
        return 2;
    }
    if (n == 0) {
        printf("SKIP: no RDMA device (ibv_get_device_list found none); "
               "docs/rdma.md shows how to run this over Soft-RoCE or "
               "InfiniBand\n");
        return 77;
    }
    execv(argv[1], argv + 1);
    perror(argv[1]);
    return 2;
}
