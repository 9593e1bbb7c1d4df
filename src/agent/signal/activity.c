/*
 * activity: see activity.h.
 */
#include "agent/signal/activity.h"

#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "agent/signal/thread_rings.h"
#include "common/visibility.h"

struct pair {
    _Atomic uint64_t inner, outer;
    _Atomic uintptr_t thread; /* the runtime's Thread object */
};

static struct pair *table;
static size_t table_size;
static _Atomic uint64_t gc_word;
static struct clrdesc_frames layout; /* written once by the agent's thread, before its sampler starts */
static _Atomic int layout_ready;      /* layout written and usable (release/acquire) */

int activity_init(void)
{
    if (table) {
        /* an earlier attach's (the library stays loaded after a detach):
         * what threads were doing then is not what they do now */
        madvise(table, table_size * sizeof *table, MADV_DONTNEED);
        atomic_store(&gc_word, 0);
        return 0;
    }
    size_t n = thread_rings_pid_max() + 1;
    void *p = mmap(NULL, n * sizeof *table, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED)
        return -1;
    table = p;
    table_size = n;
    return 0;
}

void activity_set(pid_t tid, uint64_t inner, uint64_t outer)
{
    if (!table || tid <= 0 || (size_t)tid >= table_size)
        return;
    /* outer first: a handler between the two stores sees an inner word
     * that is at worst the previous one, never an outer without its inner */
    atomic_store_explicit(&table[tid].outer, outer, memory_order_relaxed);
    atomic_store_explicit(&table[tid].inner, inner, memory_order_relaxed);
}

void activity_clear_named(pid_t tid, uint64_t word)
{
    if (!table || tid <= 0 || (size_t)tid >= table_size || !word)
        return;
    if (atomic_load(&table[tid].inner) == word || atomic_load(&table[tid].outer) == word) {
        atomic_store(&table[tid].outer, 0);
        atomic_store(&table[tid].inner, 0);
    }
}

void activity_gc_set(uint64_t word)
{
    atomic_store_explicit(&gc_word, word, memory_order_relaxed);
}

void activity_get(pid_t tid, uint64_t *inner, uint64_t *outer)
{
    if (!table || tid <= 0 || (size_t)tid >= table_size) {
        *inner = *outer = 0;
        return;
    }
    *inner = atomic_load_explicit(&table[tid].inner, memory_order_relaxed);
    *outer = atomic_load_explicit(&table[tid].outer, memory_order_relaxed);
}

uint64_t activity_gc_get(void)
{
    return atomic_load_explicit(&gc_word, memory_order_relaxed);
}

void activity_set_frame_layout(const struct clrdesc_frames *l)
{
    if (atomic_load_explicit(&layout_ready, memory_order_acquire))
        return; /* the runtime's layout does not change: read once */
    layout = *l;
    atomic_store_explicit(&layout_ready, l->usable, memory_order_release);
}

void activity_set_thread(pid_t tid, uintptr_t thread)
{
    if (!table || tid <= 0 || (size_t)tid >= table_size)
        return;
    atomic_store_explicit(&table[tid].thread, thread, memory_order_relaxed);
}

void activity_forget_thread(pid_t tid, uintptr_t thread)
{
    if (!table || !thread)
        return;
    /* the slot of the thread that called, and of the thread the Thread
     * says it runs on (it is destroyed from another thread when its OS
     * thread died unnoticed; the tid may then be given to a new thread) */
    pid_t tids[2] = {tid, atomic_load_explicit(&layout_ready, memory_order_acquire)
                              ? (pid_t)*(const uint32_t *)(thread + layout.thread_os_id)
                              : 0};
    for (int i = 0; i < 2; i++) {
        if (tids[i] <= 0 || (size_t)tids[i] >= table_size)
            continue;
        uintptr_t expected = thread;
        atomic_compare_exchange_strong(&table[tids[i]].thread, &expected, 0);
    }
}

/* Reads the Thread object's OS thread id and its current Frame through the
 * kernel, in one system call rather than one each (a call is 20 us and
 * more while the collector faults pages in: perf over 20 runs of Memory
 * gcwork, most of it the kernel finding and pinning the page), which
 * answers EFAULT instead of faulting: a Thread object can be freed by
 * another thread between the moment its pointer was read and the read of
 * its fields (a thread destroyed after its tid was reused).  A system call
 * is async-signal-safe.  Returns 0 when both were read whole. */
static int read_thread_fields(uintptr_t thread, uint32_t *os_id, uintptr_t *frame)
{
    struct iovec local[2] = {{os_id, sizeof *os_id}, {frame, sizeof *frame}};
    struct iovec remote[2] = {{(void *)(thread + layout.thread_os_id), sizeof *os_id},
                              {(void *)(thread + layout.thread_frame), sizeof *frame}};
    long self = syscall(SYS_getpid); /* not cached: a forked child is another process */
    return syscall(SYS_process_vm_readv, self, local, 2UL, remote, 2UL, 0UL) ==
                   (long)(sizeof *os_id + sizeof *frame)
               ? 0
               : -1;
}

/* A word of the interrupted stack, or 0 outside it. */
NO_ASAN static uint64_t stack_word(uintptr_t at, uintptr_t sp, uintptr_t hi)
{
    if (at < sp || at > hi - 8 || (at & 7))
        return 0;
    return *(const uint64_t *)at;
}

NO_ASAN void activity_frame_get(pid_t tid, uintptr_t sp, uintptr_t hi, struct activity_frame *out)
{
    out->kind = CLR_FRAME_NONE;
    out->ret = out->method = 0;
    if (!atomic_load_explicit(&layout_ready, memory_order_acquire) || !table || tid <= 0 ||
        (size_t)tid >= table_size || hi <= sp)
        return;
    uintptr_t thread = atomic_load_explicit(&table[tid].thread, memory_order_relaxed);
    if (!thread)
        return;
    /* the Thread object lives as long as its thread, which is running us;
     * one the runtime let go of without telling this thread (a tid reused
     * after its thread died) is not this thread's */
    uint32_t os_id = 0;
    uintptr_t frame = 0;
    if (read_thread_fields(thread, &os_id, &frame) < 0 || os_id != (uint32_t)tid)
        return;
    uint64_t id = stack_word(frame, sp, hi);
    if (!id)
        return;
    for (uint32_t i = 0; i < layout.id_count; i++) {
        const struct clrdesc_frame_id *f = &layout.ids[i];
        if (f->id != id)
            continue;
        if (f->transition) {
            uintptr_t tb = stack_word(frame + layout.fmf_transition, sp, hi);
            out->ret = tb ? stack_word(tb + layout.tb_return, sp, hi) : 0;
            out->method = stack_word(frame + layout.fmf_method, sp, hi);
        } else if (f->ret) {
            out->ret = stack_word(frame + f->ret, sp, hi);
        }
        /* an InlinedCallFrame without a return address is not in a call */
        if (f->kind != CLR_FRAME_PINVOKE || out->ret)
            out->kind = f->kind;
        return;
    }
}
