/* runtime/alloc.c - the translated program's malloc & co. (shared heap),
 * shared storage for locals a region shares, and the system-call wrappers
 * that make shared buffers accessible before the kernel touches them. */
#include "rt.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Each entry point records the program's call (the return address) so
 * that a misused block, or one the thrashing report names, can be named by
 * where it was allocated; the value is the expression's. */
#define CALLER() (dsm_alloc_caller = RT_CALLER)

RT_API void *OMPDSM_malloc(unsigned long size)
{
    const void *pc = CALLER();
    void *p = dsm_malloc(size);
    rt_thrash_alloc(p, size, pc);
    return p;
}
RT_API void *OMPDSM_calloc(unsigned long n, unsigned long size)
{
    const void *pc = CALLER();
    void *p = dsm_calloc(n, size);
    rt_thrash_alloc(p, n * size, pc);
    return p;
}
RT_API void *OMPDSM_realloc(void *p, unsigned long size)
{
    if (p && !dsm_in_heap(p))
        return realloc(p, size); /* from the C library (strdup in libc, ...) */
    const void *pc = CALLER();
    void *q = dsm_realloc(p, size);
    rt_thrash_alloc(q, size, pc);
    return q;
}
RT_API void OMPDSM_free(void *p)
{
    if (p && !dsm_in_heap(p))
        free(p);
    else
        dsm_free(p);
}
RT_API int OMPDSM_posix_memalign(void **out, unsigned long align,
                                 unsigned long size)
{
    if (!align || (align & (align - 1)) || align % sizeof(void *))
        return EINVAL;
    const void *pc = CALLER();
    void *p = dsm_memalign(align, size);
    if (!p)
        return ENOMEM;
    rt_thrash_alloc(p, size, pc);
    *out = p;
    return 0;
}
RT_API void *OMPDSM_aligned_alloc(unsigned long align, unsigned long size)
{
    const void *pc = CALLER();
    void *p = dsm_memalign(align, size);
    rt_thrash_alloc(p, size, pc);
    return p;
}
RT_API void *OMPDSM_memalign(unsigned long align, unsigned long size)
{
    const void *pc = CALLER();
    void *p = dsm_memalign(align, size);
    rt_thrash_alloc(p, size, pc);
    return p;
}
RT_API void *OMPDSM_valloc(unsigned long size)
{
    const void *pc = CALLER();
    void *p = dsm_memalign((size_t)sysconf(_SC_PAGESIZE), size);
    rt_thrash_alloc(p, size, pc);
    return p;
}
RT_API char *OMPDSM_strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    CALLER();
    char *p = dsm_malloc(n);
    if (p) {
        memcpy(p, s, n);
        dsm_wd_wrote(p, n);
    }
    return p;
}
RT_API char *OMPDSM_strndup(const char *s, unsigned long n)
{
    size_t l = strnlen(s, n);
    CALLER();
    char *p = dsm_malloc(l + 1);
    if (p) {
        memcpy(p, s, l);
        p[l] = 0;
        dsm_wd_wrote(p, l + 1);
    }
    return p;
}

static void *local_get(unsigned long size, unsigned long align)
{
    void *p = dsm_stack_alloc(size ? size : 1, align);
    if (!p)
        ompdsm_fatal("out of shared memory for a %lu-byte local variable", size);
    return p;
}

RT_API void *OMPDSM_local_alloc(unsigned long size, unsigned long align,
                                const void *init)
{
    CALLER();
    void *p = local_get(size, align);
    if (init) {
        memcpy(p, init, size);
        dsm_wd_wrote(p, size);
    }
    return p;
}

RT_API void *OMPDSM_local_new(unsigned long size, unsigned long align)
{
    CALLER();
    return local_get(size, align);
}

RT_API void OMPDSM_local_free(void *pointer_variable_address)
{
    void *p = *(void **)pointer_variable_address;
    if (p)
        dsm_stack_free(p);
}

RT_API long OMPDSM_read(int fd, void *buf, unsigned long n)
{
    dsm_touch(buf, n, 1);
    long r = read(fd, buf, n);
    if (r > 0)
        dsm_wd_wrote(buf, (size_t)r);
    return r;
}
RT_API long OMPDSM_write(int fd, const void *buf, unsigned long n)
{
    dsm_touch(buf, n, 0);
    return write(fd, buf, n);
}
RT_API long OMPDSM_pread(int fd, void *buf, unsigned long n, long off)
{
    dsm_touch(buf, n, 1);
    long r = pread(fd, buf, n, off);
    if (r > 0)
        dsm_wd_wrote(buf, (size_t)r);
    return r;
}
RT_API long OMPDSM_pwrite(int fd, const void *buf, unsigned long n, long off)
{
    dsm_touch(buf, n, 0);
    return pwrite(fd, buf, n, off);
}
RT_API unsigned long OMPDSM_fread(void *buf, unsigned long size,
                                  unsigned long n, void *stream)
{
    dsm_touch(buf, size * n, 1);
    unsigned long r = fread(buf, size, n, stream);
    if (r)
        dsm_wd_wrote(buf, size * r);
    return r;
}
RT_API unsigned long OMPDSM_fwrite(const void *buf, unsigned long size,
                                   unsigned long n, void *stream)
{
    dsm_touch(buf, size * n, 0);
    return fwrite(buf, size, n, stream);
}
