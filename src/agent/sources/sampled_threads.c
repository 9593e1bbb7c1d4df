/*
 * sampled_threads: see sampled_threads.h.
 */
#include "agent/sources/sampled_threads.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/agent.h"
#include "agent/fds.h"
#include "agent/signal/stack_bounds.h"
#include "common/clock.h"
#include "common/mem.h"

#define SCAN_NS 250000000ull  /* rescan the process's threads */
#define RESCAN_NS 30000000ull /* ... at most this often when the runtime reports changes */
#define MAPS_NS 50000000ull   /* re-read stack mappings for new threads at most this often */

void sampled_threads_init(struct sampled_threads *set, struct agent *a, uint32_t max_depth,
                     void (*ready)(void *, struct sthread *),
                     void (*going)(void *, struct sthread *), void *ctx)
{
    memset(set, 0, sizeof *set);
    set->a = a;
    set->self = gettid();
    set->max_depth = max_depth;
    set->ready = ready;
    set->going = going;
    set->ctx = ctx;
}

/* lo/hi: the thread's stack when the runtime told us (else 0): then no
 * snapshot of the mappings is needed for it. */
static struct sthread *add_thread(struct sampled_threads *set, pid_t tid, uintptr_t lo, uintptr_t hi)
{
    uint32_t id = thread_ids_get(&set->a->thread_ids, &set->a->out, tid);
    struct sthread *t = id ? thread_rings_add(tid, id, set->max_depth) : NULL;
    if (!t) {
        recorder_count(&set->a->out, FMT_COUNTER_UNSAMPLED_THREADS, 1);
        return NULL;
    }
    t->next = set->threads;
    set->threads = t;
    /* its stack is in no snapshot yet: the handler may not use older ones
     * for it, and it is ready once a new snapshot is read (make_ready) */
    if (lo && hi > lo) {
        t->stack_lo = lo;
        t->stack_hi = hi;
        t->maps_generation = stack_bounds_generation();
    } else {
        t->maps_generation = stack_bounds_generation() + 1;
        set->maps_stale = 1;
    }
    set->pending = 1;
    return t;
}

static void remove_thread(struct sampled_threads *set, struct sthread *t)
{
    set->going(set->ctx, t);
    thread_ids_ended(&set->a->thread_ids, t->tid);
    thread_rings_retire(t);
}

/* After threads were added: one read of /proc/self/maps for all of their
 * stacks, then they are ready. */
static void make_ready(struct sampled_threads *set, uint64_t now)
{
    if (!set->pending)
        return;
    if (set->maps_stale && stack_bounds_refresh() == 0) {
        set->maps_stale = 0;
        set->maps_ns = now;
    }
    set->pending = 0;
    for (struct sthread *t = set->threads; t; t = t->next) {
        if (!t->ready) {
            t->ready = 1;
            set->ready(set->ctx, t);
        }
    }
}

/* Is tid a thread the runtime destroyed that is still listed?  Marks it
 * seen by scan `gen`. */
static int gone_listed(struct sampled_threads *set, pid_t tid, uint64_t gen)
{
    for (size_t i = 0; i < set->gone_count; i++)
        if (set->gone[i].tid == tid) {
            set->gone[i].seen_gen = gen;
            return 1;
        }
    return 0;
}

static void forget_gone(struct sampled_threads *set, pid_t tid)
{
    for (size_t i = 0; i < set->gone_count; i++)
        if (set->gone[i].tid == tid)
            set->gone[i] = set->gone[--set->gone_count];
}

void sampled_threads_add_managed(struct sampled_threads *set)
{
    long count = thread_registry_snapshot(&set->views, &set->views_cap);
    int added = 0;
    for (long i = 0; i < count; i++) {
        const struct thread_view *v = &set->views[i];
        if (!v->os_tid || v->os_tid == set->self)
            continue;
        struct sthread *t = thread_rings_lookup(v->os_tid);
        if (!t)
            forget_gone(set, v->os_tid); /* a live managed thread: a new one */
        if (!t && (t = add_thread(set, v->os_tid, v->stack_lo, v->stack_hi)) != NULL)
            added = 1;
        /* the walker finds hijacked return addresses in the Thread */
        if (t)
            atomic_store(&t->clr_thread, v->managed);
    }
    if (added)
        make_ready(set, clock_now_ns());
}

/* Brings the set up to date with /proc/self/task. */
static void scan(struct sampled_threads *set, uint64_t now)
{
    set->last_scan_ns = now;
    set->seen_changes = thread_registry_changes();
    DIR *d = opendir("/proc/self/task");
    if (!d)
        return;
    uint64_t gen = ++set->scan_gen;
    pid_t grower = fds_grower(); /* the agent's, short-lived (fds.h) */
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        char *end;
        long tid = strtol(e->d_name, &end, 10);
        if (*end || tid <= 0 || tid == set->self || tid == grower)
            continue;
        struct sthread *t = thread_rings_lookup((pid_t)tid);
        if (!t && gone_listed(set, (pid_t)tid, gen))
            continue; /* ended, not yet exited: not a new thread */
        if (!t)
            t = add_thread(set, (pid_t)tid, 0, 0);
        if (t)
            t->seen_scan = gen;
    }
    closedir(d);
    for (size_t i = 0; i < set->gone_count;) {
        if (set->gone[i].seen_gen == gen)
            i++;
        else
            set->gone[i] = set->gone[--set->gone_count]; /* it has exited */
    }
    for (struct sthread **p = &set->threads; *p;) {
        struct sthread *t = *p;
        if (t->seen_scan == gen) {
            p = &t->next;
            continue;
        }
        *p = t->next;
        remove_thread(set, t);
    }
    make_ready(set, now);
}

/* Managed threads the runtime destroyed: out of the set now, not at the
 * next scan, so that their clocks' file descriptors close at once. */
void sampled_threads_remove_ended(struct sampled_threads *set)
{
    pid_t ended[256];
    size_t n = thread_registry_take_ended(ended, sizeof ended / sizeof ended[0]);
    if (!n)
        return;
    for (struct sthread **p = &set->threads; *p;) {
        struct sthread *t = *p;
        int gone = 0;
        for (size_t i = 0; i < n && !gone; i++)
            gone = ended[i] == t->tid;
        if (!gone) {
            p = &t->next;
            continue;
        }
        *p = t->next;
        if (set->gone_count == sizeof set->gone / sizeof set->gone[0])
            set->gone_count--; /* full (a storm of ends): one is forgotten */
        set->gone[set->gone_count].tid = t->tid;
        set->gone[set->gone_count++].seen_gen = set->scan_gen;
        remove_thread(set, t);
    }
}

void sampled_threads_cycle(struct sampled_threads *set, uint64_t now)
{
    sampled_threads_remove_ended(set);
    /* the runtime's reports (a thread died, was renamed) bring the scan
     * forward, but not to more than one every RESCAN_NS: a burst of new
     * threads is handled by add_managed, not by listing them all again */
    if (!set->scan_gen || now - set->last_scan_ns >= SCAN_NS ||
        (thread_registry_changes() != set->seen_changes && now - set->last_scan_ns >= RESCAN_NS))
        scan(set, now);
    /* new threads have new stacks; reading /proc/self/maps costs in
     * proportion to the threads, so a burst of new threads is read in once
     * every MAPS_NS (a handler that finds no mapping meanwhile records its
     * leaf alone and asks for a refresh) */
    if ((set->maps_stale && now - set->maps_ns >= MAPS_NS) || stack_bounds_wanted()) {
        if (stack_bounds_refresh() == 0) {
            set->maps_stale = 0;
            set->maps_ns = now;
        }
    }
}

void sampled_threads_clear(struct sampled_threads *set)
{
    while (set->threads) {
        struct sthread *t = set->threads;
        set->threads = t->next;
        remove_thread(set, t);
    }
    mem_free(set->views);
    set->views = NULL;
    set->views_cap = 0;
}
