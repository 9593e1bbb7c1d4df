/*
 * thread_registry: the registry of the program's managed threads, fed by the
 * runtime's thread callbacks and read by the sampler.
 *
 * Each managed thread (ThreadID) gets a slot holding its OS thread id, its
 * latest name and a recording id that is never reused.  Slots live in pages
 * that are never freed or moved, so the sampler can keep pointers to them
 * across a tick without holding the lock.
 *
 * Walking a thread's stack while it is being destroyed would read freed
 * memory (Broman's rule 2: ThreadDestroyed waits for a walk in progress).
 * The protocol, with sequentially consistent atomics:
 *   sampler:    walking = slot;  if slot is still LIVE with the snapshot's
 *               generation, walk it;  walking = NULL
 *   destroyer:  slot.state = DEAD;  wait while walking == slot;  then free
 *               the slot (generation + 1)
 * Either the sampler sees DEAD and skips, or the destroyer sees the walk
 * and waits for it.  The lock is only ever held for a few instructions and
 * never across a call into the runtime (rule 3).
 */
#ifndef CORSCOPE_THREAD_REGISTRY_H
#define CORSCOPE_THREAD_REGISTRY_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/visibility.h"

enum thread_state { THREAD_FREE = 0, THREAD_LIVE = 1, THREAD_DEAD = 2 };

struct thread_slot {
    _Atomic int state;
    _Atomic uint32_t generation;
    uintptr_t managed;      /* ThreadID; written under the lock */
    _Atomic pid_t os_tid;   /* 0 until known */
    uint32_t id;            /* recording id, unique for the whole run */
    uint32_t name_version;  /* bumped on every rename (under the lock) */
    char name[96];
    uintptr_t stack_lo, stack_hi; /* the thread's stack, when it told us (under the lock) */
    uint32_t next_free;
};

/* What the sampler copies out of a slot for one tick. */
struct thread_view {
    struct thread_slot *slot;
    uint32_t generation;
    uintptr_t managed;
    pid_t os_tid;
    uint32_t id;
    uint32_t name_version;
    char name[96];
    uintptr_t stack_lo, stack_hi; /* 0 when not known */
};

HIDDEN int thread_registry_init(void);
HIDDEN void thread_registry_shutdown(void);

/* Callbacks (any thread).  Each returns quickly; destroyed() may wait for
 * a stack walk of that thread to finish. */
HIDDEN void thread_registry_created(uintptr_t managed);
HIDDEN void thread_registry_assigned_os_thread(uintptr_t managed, pid_t os_tid);
/* Called on the thread itself (ThreadAssignedToOSThread runs there): its
 * stack's bounds, exact, from pthread_getattr_np. */
HIDDEN void thread_registry_set_stack(uintptr_t managed, uintptr_t lo, uintptr_t hi);
HIDDEN void thread_registry_renamed(uintptr_t managed, const char *utf8_name);
HIDDEN void thread_registry_destroyed(uintptr_t managed);

/* Catch-up after an attach (no ThreadCreated came for threads that were
 * already there): between begin and end, thread_registry_adopt registers a thread
 * the runtime listed (EnumThreads, GetThreadInfo), unless its
 * ThreadDestroyed came meanwhile: the runtime takes a dying thread off its
 * list before it reports it, and reports it after the callbacks are on, so
 * an id listed and then reported dead is never registered.  Returns 1 when
 * registered (or known already), 0 when it died. */
HIDDEN void thread_registry_adopt_begin(void);
HIDDEN int thread_registry_adopt(uintptr_t managed, pid_t os_tid);
HIDDEN void thread_registry_adopt_end(void);
/* Any thread: the OS tid (0 before it started) and the name (may be "")
 * of a managed thread the registry knows.  Returns 0, or -1 when unknown. */
HIDDEN int thread_registry_lookup(uintptr_t managed, pid_t *os_tid, char *name, size_t size);

/* Copies the live threads into *out (grown as needed; caller frees with
 * mem_free).  Returns the count, or -1 when out of memory. */
HIDDEN long thread_registry_snapshot(struct thread_view **out, size_t *cap);

/* Rule 2, the sampler's half: returns 1 when the thread may be walked now
 * (and marks the walk), 0 when it died since the snapshot. */
HIDDEN int thread_registry_begin_walk(const struct thread_view *v);
HIDDEN void thread_registry_end_walk(void);

/* Sets the OS tid learned another way (GetThreadInfo). */
HIDDEN void thread_registry_set_os_tid(const struct thread_view *v, pid_t os_tid);

/* A counter that moves whenever a thread gets an OS tid, a name, or dies:
 * the signal sampler rescans its threads when it changed. */
HIDDEN uint64_t thread_registry_changes(void);
/* The OS thread ids of managed threads destroyed since the last call (up
 * to max; more are left to the sampler's scan of /proc): their clocks can
 * be stopped and their file descriptors closed right away. */
HIDDEN size_t thread_registry_take_ended(pid_t *out, size_t max);

/* Test hook: number of ThreadDestroyed calls that had to wait for a walk. */
HIDDEN uint64_t thread_registry_destroy_waits(void);

#endif
