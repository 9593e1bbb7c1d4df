/*
 * vma_query: see vma_query.h.
 */
#include "agent/signal/vma_query.h"

#include <errno.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "agent/signal/thread_rings.h"
#include "common/mem.h"

#define PROCMAP_VMA_READABLE 0x01u
#define PROCMAP_VMA_WRITABLE 0x02u
#define PROCMAP_VMA_EXECUTABLE 0x04u

static _Atomic int query_fd = -1;
static _Atomic int refused_for_test;

static long ask(int fd, uintptr_t addr, struct procmap_query *q, char *name, size_t name_size)
{
    memset(q, 0, sizeof *q);
    q->size = sizeof *q;
    q->query_addr = addr;
    if (name && name_size) {
        q->vma_name_addr = (uintptr_t)name;
        q->vma_name_size = name_size > UINT32_MAX ? UINT32_MAX : (uint32_t)name_size;
    }
    return syscall(SYS_ioctl, fd, PROCMAP_QUERY, q);
}

int vma_query_start(int fd)
{
    if (fd < 0)
        return 0;
    int here = 0;
    struct procmap_query q;
    if (ask(fd, (uintptr_t)&here, &q, NULL, 0) != 0 || q.vma_start > (uintptr_t)&here ||
        q.vma_end <= (uintptr_t)&here) {
        close(fd);
        return 0;
    }
    int old = atomic_exchange(&query_fd, fd);
    if (old >= 0)
        close(old); /* started twice: no handler ran between (tests) */
    return 1;
}

static void close_boxed(void *box)
{
    close(*(int *)box);
    mem_free(box);
}

void vma_query_stop(void)
{
    int fd = atomic_exchange(&query_fd, -1);
    if (fd < 0)
        return;
    int *box = mem_alloc(sizeof *box);
    if (!box) {
        close(fd); /* the end of the agent: no handler runs any more */
        return;
    }
    *box = fd;
    thread_rings_retire_object(box, close_boxed);
}

void vma_query_stop_unused(void)
{
    int fd = atomic_exchange(&query_fd, -1);
    if (fd >= 0)
        close(fd);
}

int vma_query_available(void)
{
    return atomic_load_explicit(&query_fd, memory_order_relaxed) >= 0 &&
           !atomic_load_explicit(&refused_for_test, memory_order_relaxed);
}

int vma_query_find(uintptr_t addr, struct vma_query_mapping *out, char *name, size_t name_size)
{
    int fd = atomic_load_explicit(&query_fd, memory_order_acquire);
    if (fd < 0 || atomic_load_explicit(&refused_for_test, memory_order_relaxed))
        return -1;
    int saved = errno;
    struct procmap_query q;
    long rc = ask(fd, addr, &q, name, name_size);
    if (rc != 0 && errno == EINTR) /* the kernel's lock wait was interrupted: once more */
        rc = ask(fd, addr, &q, name, name_size);
    int err = errno, cut = 0;
    if (rc != 0 && err == ENAMETOOLONG && name && name_size) {
        cut = 1; /* a path longer than the buffer: asked again without it */
        rc = ask(fd, addr, &q, NULL, 0);
        err = errno;
    }
    errno = saved;
    if (rc != 0)
        return err == ENOENT ? 0 : -1;
    out->start = (uintptr_t)q.vma_start;
    out->end = (uintptr_t)q.vma_end;
    out->perms = ((q.vma_flags & PROCMAP_VMA_READABLE) ? VMA_QUERY_READ : 0) |
                 ((q.vma_flags & PROCMAP_VMA_WRITABLE) ? VMA_QUERY_WRITE : 0) |
                 ((q.vma_flags & PROCMAP_VMA_EXECUTABLE) ? VMA_QUERY_EXEC : 0);
    out->offset = q.vma_offset;
    out->inode = q.inode;
    out->dev = (uint64_t)q.dev_major << 32 | q.dev_minor;
    if (name && name_size) {
        size_t n = q.vma_name_size; /* with its terminating zero; 0: no name */
        if (cut)
            strncpy(name, "/", name_size);
        else if (n == 0)
            name[0] = 0;
        else
            name[n < name_size ? n - 1 : name_size - 1] = 0;
    }
    return out->start <= addr && addr < out->end ? 1 : 0;
}

void vma_query_test_refuse(int refuse)
{
    atomic_store(&refused_for_test, refuse);
}
