/*
 * vma_query: one mapping of this process, asked of the kernel by address.
 *
 * Reading /proc/self/maps whole costs a .NET process 300 to 450 us of CPU
 * on this project's test machine (about 230 mappings formatted as text, a
 * few microseconds each), and the agent needed it about six times a run:
 * the stacks of new threads, the main thread's own stack (twice, through
 * pthread_getattr_np), the runtime's stubs.  Linux 6.11 answers the same
 * question for one address through the PROCMAP_QUERY ioctl on an open
 * /proc/self/maps, in under a microsecond, with no text; one system call,
 * no lock and no allocation, so the signal handler may ask it too.
 *
 * The descriptor is opened once at the agent's start and probed; where the
 * kernel does not know the ioctl (older kernels; qemu-user, which serves
 * its own /proc/self/maps), vma_query_find says so and its callers read
 * the text as before (stack_bounds.h, stubcode.h).
 */
#ifndef CORSCOPE_VMA_QUERY_H
#define CORSCOPE_VMA_QUERY_H

#include <stddef.h>
#include <stdint.h>

#include "common/visibility.h"

/* The kernel's struct procmap_query and its ioctl (include/uapi/linux/fs.h,
 * Linux 6.11): spelled out here, as the build machine's headers may be
 * older than the kernel the agent runs on (bench/maps_cost.c asks another
 * process's file with them too). */
struct procmap_query {
    uint64_t size;
    uint64_t query_flags;
    uint64_t query_addr;
    uint64_t vma_start;
    uint64_t vma_end;
    uint64_t vma_flags;
    uint64_t vma_page_size;
    uint64_t vma_offset;
    uint64_t inode;
    uint32_t dev_major;
    uint32_t dev_minor;
    uint32_t vma_name_size;
    uint32_t build_id_size;
    uint64_t vma_name_addr;
    uint64_t build_id_addr;
};
_Static_assert(sizeof(struct procmap_query) == 104, "the kernel's layout");
#define PROCMAP_QUERY 0xC0686611ul /* _IOWR(0x66, 17, struct procmap_query) */

#define VMA_QUERY_READ 0x1u
#define VMA_QUERY_WRITE 0x2u
#define VMA_QUERY_EXEC 0x4u

struct vma_query_mapping {
    uintptr_t start, end;
    unsigned perms;  /* VMA_QUERY_* */
    uint64_t offset; /* in its file, where start is */
    uint64_t inode;  /* of its file; 0: no file (anonymous memory) */
    uint64_t dev;    /* of its file: major << 32 | minor */
};

/* Start (any thread, before the first sample): takes fd, an open
 * /proc/self/maps (close-on-exec; the caller may have moved it high), and
 * keeps it if the kernel answers a query on it; else closes it.  Returns 1
 * when queries are answered, 0 when not. */
HIDDEN int vma_query_start(int fd);
/* End: no query is answered after it; the descriptor is closed once no
 * signal handler can be using it (thread_rings_retire_object). */
HIDDEN void vma_query_stop(void);
/* End before any signal handler could have asked (an Initialize that
 * declines): the descriptor is closed at once. */
HIDDEN void vma_query_stop_unused(void);
HIDDEN int vma_query_available(void);

/* Async-signal-safe (errno is kept): the mapping that holds addr.
 * Returns 1 (*out filled; name, if not NULL, gets its path or "[stack]",
 * "[anon:...]", "" for none; a path longer than name_size is given as
 * "/", a file), 0 when no mapping holds
 * addr, -1 when the kernel cannot be asked (then read the text). */
HIDDEN int vma_query_find(uintptr_t addr, struct vma_query_mapping *out, char *name,
                          size_t name_size);

/* For tests: as if the kernel did not know the ioctl (1), or as it is (0). */
HIDDEN void vma_query_test_refuse(int refuse);

#endif
