/*
 * sampled_threads: the threads the signal sampler tracks, each with its ring
 * (thread_rings.h): every task of the process, native ones included, as
 * /proc/self/task lists them (rescanned every SCAN_NS and, at most every
 * RESCAN_NS, when the runtime reports a thread change), and the managed
 * threads the runtime reports as they start (cheaper than listing the
 * directory, and soon enough to sample a short-lived thread).
 *
 * A new thread's stack is placed before its clock starts: from the bounds
 * the thread gave the registry (thread_registry.h) or from a fresh read of
 * /proc/self/maps (stack_bounds.h), read once for a burst of new threads.
 * The set calls back when a thread is ready (its clock may start) and when
 * one is about to go (stop its clock, drain its ring).
 */
#ifndef CORSCOPE_SAMPLED_THREADS_H
#define CORSCOPE_SAMPLED_THREADS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "agent/signal/thread_rings.h"
#include "agent/thread_registry.h"
#include "common/visibility.h"

struct agent;

struct sampled_threads {
    struct agent *a;
    pid_t self;               /* the loop thread, never sampled */
    uint32_t max_depth;
    struct sthread *threads;  /* live, ours */
    uint64_t scan_gen;
    uint64_t last_scan_ns;
    uint64_t seen_changes;    /* thread_registry_changes() at the last scan */
    int maps_stale;           /* a thread was added since the last stack_bounds refresh */
    int pending;              /* threads were added that are not yet ready */
    uint64_t maps_ns;         /* when the stack mappings were last read */
    struct thread_view *views;
    size_t views_cap;
    /* threads the runtime destroyed whose OS thread may still be listed in
     * /proc (it reports the end before the thread exits): a scan must not
     * take one for a new thread; dropped once a scan no longer sees it */
    struct { pid_t tid; uint64_t seen_gen; } gone[256];
    size_t gone_count;
    void (*ready)(void *ctx, struct sthread *t);
    void (*going)(void *ctx, struct sthread *t);
    void *ctx;
};

HIDDEN void sampled_threads_init(struct sampled_threads *set, struct agent *a, uint32_t max_depth,
                            void (*ready)(void *, struct sthread *),
                            void (*going)(void *, struct sthread *), void *ctx);
/* Each cycle: rescans when due, reads stack mappings for new threads when
 * due or when a handler missed one. */
/* Loop thread: the threads the runtime reported destroyed leave the set
 * (their clocks' descriptors closed) now, not at the next cycle: under
 * thread churn a cycle's worth of ended threads held as many descriptors. */
HIDDEN void sampled_threads_remove_ended(struct sampled_threads *set);
HIDDEN void sampled_threads_cycle(struct sampled_threads *set, uint64_t now);
/* Adds the managed threads the runtime reported (poked). */
HIDDEN void sampled_threads_add_managed(struct sampled_threads *set);
/* Removes every thread (the end). */
HIDDEN void sampled_threads_clear(struct sampled_threads *set);

#endif
