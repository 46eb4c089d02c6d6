/* comm/util/futex.h - the futex system call, for the layers that sleep on
 * a 32-bit word: comm's doorbells and shm mailboxes (shared between
 * processes: FUTEX_WAIT/FUTEX_WAKE), and the runtime's and the DSM's
 * words private to a node (the _PRIVATE operations).  glibc has no
 * wrapper; the caller picks the operation and re-checks its word after
 * every return (a wake-up may be spurious, and a timeout is no error). */
#ifndef OMPDSM_COMM_UTIL_FUTEX_H
#define OMPDSM_COMM_UTIL_FUTEX_H

#include <linux/futex.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static inline long ompdsm_futex(volatile uint32_t *w, int op, uint32_t val,
                                const struct timespec *ts)
{
    return syscall(SYS_futex, w, op, val, ts, NULL, 0);
}

#endif
