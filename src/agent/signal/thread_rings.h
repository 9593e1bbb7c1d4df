/*
 * thread_rings: the state the signal sampler keeps per OS thread, and the rules
 * that let a signal handler and the collector thread share it without locks.
 *
 * A table indexed by thread id (sized by /proc/sys/kernel/pid_max, mapped
 * lazily so only touched pages cost memory) holds, per tid, a pointer to the
 * thread's `struct sthread` and the epoch of a handler running on it (0 when
 * none).  A thread's sthread holds a ring of 64-bit words: the handler on
 * that thread is its only producer, the collector its only consumer
 * (single-producer single-consumer, head/tail with acquire/release).  A
 * full ring drops the sample and counts the drop.
 *
 * Reclamation, with sequentially consistent atomics:
 *   handler:   slot.epoch = global epoch;  t = slot.thread;  ...use t and any
 *              published table...;  slot.epoch = 0
 *   collector: slot.thread = NULL, or publish a new table and advance the
 *              global epoch;  then free the old object only once every slot
 *              that could hold it shows epoch 0 or an epoch after the change.
 * So nothing a running handler can reach is ever freed under it.
 *
 * Walkers outside a handler (a callback walking its own thread's stack)
 * are counted instead, in two counters by the parity of a walker epoch:
 *   walker:    k = walker_epoch & 1;  walkers[k]++;  ...read tables...;
 *              walkers[k]--
 *   collector: an object retired at walker epoch w is freed once the epoch
 *              has moved past w and walkers[w & 1] is 0; the epoch moves
 *              on only when the other parity is empty, so a counter never
 *              holds walkers of two live epochs.
 *
 * Everything here except thread_rings_handler_* and thread_rings_walker_* is for the
 * collector thread.
 */
#ifndef CORSCOPE_THREAD_RINGS_H
#define CORSCOPE_THREAD_RINGS_H

#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "agent/signal/ring.h"
#include "common/visibility.h"

enum sthread_state { STHREAD_LIVE = 1, STHREAD_DEAD = 2 };

struct sthread {
    /* shared with the handler */
    _Atomic int state;
    _Atomic uint64_t head;       /* words written (producer) */
    _Atomic uint64_t tail;       /* words consumed (consumer) */
    _Atomic uint64_t dropped;    /* samples the handler could not store */
    _Atomic uint64_t wall_weight; /* weight of the pending wall-clock request */
    uint64_t *ring;
    uint64_t ring_mask;          /* ring words - 1 */
    uint32_t max_depth;
    uintptr_t stack_lo, stack_hi; /* the stack mapping, cached by the handler */
    uint64_t maps_generation;    /* the stack mappings snapshot must be this recent */
    _Atomic uintptr_t clr_thread; /* the runtime's Thread* (ThreadID), 0 while unknown: the
                                   * walker finds hijacked return addresses there */
    _Atomic int perf_fd;         /* cpu mode with perf_event: its fd, else -1; it
                                  * changes once when a clock opened low moves high */
    _Atomic int perf_ticking;    /* the handler is between reading perf_fd and its
                                  * last ioctl on it (a low number is closed only
                                  * when it is not) */
    int perf_sig_fd;             /* the fd number its signals carry (si_fd): the one
                                  * it was opened at */
    int perf_left_fd;            /* the number of a perf_event clock it left for a
                                  * POSIX timer, or -1: a signal that clock queued
                                  * before it closed is not a sample */
    _Atomic int posix_ticking;   /* the handler is re-arming the POSIX timer (the
                                  * collector deletes it only when it is not) */
    _Atomic int posix_retired;   /* the collector is taking the POSIX timer away:
                                  * the handler no longer re-arms it */
    _Atomic int posix_trial;     /* its POSIX timer is on trial beside its perf_event
                                  * clock (clock_trial.h): its ticks are not samples,
                                  * only counted with how late each came */
    _Atomic uint64_t trial_ticks;   /* the trial's ticks (the handler's) */
    _Atomic uint64_t trial_late_ns; /* their CPU time past the period each was armed for */

    /* the collector's own */
    pid_t tid;
    uint32_t id;                 /* recording thread id */
    int ready;                   /* its stack is placed: its clock may run */
    timer_t timer;
    int has_timer;
    int perf_low;                /* its clock was opened below the high numbers
                                  * (fds.h): cpu_clock_settle moves it */
    int perf_old_fd;             /* the low number it left, still open while a tick
                                  * may use it, else -1 */
    int clock_failed;            /* no clock could be made for it */
    int switchy;                 /* moved to a POSIX timer for its switches */
    int on_trial;                /* a POSIX timer on trial beside its perf_event clock */
    int stays_perf;              /* its perf_event clock is kept for good */
    uint64_t switch_at_ns;       /* when its schedstat was last read, or 0 */
    uint64_t switch_run_ns;      /* ... its time on a CPU then */
    uint64_t switch_slices;      /* ... and the switches to it */
    uint64_t switch_head;        /* ... and its ring's head */
    _Atomic int clock_first;     /* the first period is a random phase (so a thread
                                  * shorter than an interval is sampled with the
                                  * right probability); the handler sets the
                                  * periods after it */
    uint64_t interval_ns;        /* cpu mode: the sampling interval */
    int random_periods;          /* each period drawn in [interval/2, 3*interval/2) */
    /* the handler's own (cpu mode) */
    uint64_t period_ns;          /* perf: the period armed now */
    uint64_t cpu_mark_ns;        /* POSIX: the thread's CPU time at the last sample */
    uint64_t posix_armed_ns;     /* POSIX: the period its timer was last armed for */
    uint64_t random;             /* the period generator's state */
    uint64_t cpu_seen;           /* wall mode: thread CPU ns at the last sample */
    uint64_t weight_carry_ns;    /* cpu mode: CPU time not yet recorded (under a unit) */
    uint32_t last_stack;         /* wall mode: stack of the last sample */
    int last_stack_whole;        /* ... and it was walked with the stack's bounds known */
    uint64_t seen_scan;          /* /proc scan generation that last saw it */
    uint64_t dropped_reported;
    struct sthread *next;        /* collector's list of live threads */
};

HIDDEN int thread_rings_init(void);
/* The kernel's pid_max (32768 when unreadable or above 2^22): thread ids
 * stay below it.  Sizes the tables indexed by tid (this one, activity's);
 * not for a signal handler. */
HIDDEN size_t thread_rings_pid_max(void);
/* Frees every retired thread and object once no handler can use it (waits
 * briefly, leaks the rest).  The tid table stays mapped for late signals. */
HIDDEN void thread_rings_shutdown(void);

/* A new thread state for tid, registered in the table (or NULL: out of
 * memory, or the rings' budget is used up). */
HIDDEN struct sthread *thread_rings_add(pid_t tid, uint32_t id, uint32_t max_depth);
/* Bytes of rings held now (for all threads together, at most 4 MiB). */
HIDDEN size_t thread_rings_ring_bytes(void);
/* Unregisters the thread; it is freed once no handler can be using it. */
HIDDEN void thread_rings_retire(struct sthread *t);
/* Frees retired threads and objects whose epoch has passed.  Cheap; call
 * every collector cycle. */
HIDDEN void thread_rings_reclaim(void);
/* Hands an object a handler may be reading to the reclaimer: it is freed
 * with free_fn once no handler can still see it.  Call after publishing
 * its replacement. */
HIDDEN void thread_rings_retire_object(void *object, void (*free_fn)(void *));
HIDDEN struct sthread *thread_rings_lookup(pid_t tid);
/* Retired threads and objects not yet freed (a handler may still see them). */
HIDDEN size_t thread_rings_retired_pending(void);

/* The handler's side: enter/leave bracket every use of slot data. */
HIDDEN struct sthread *thread_rings_handler_enter(pid_t tid);
HIDDEN void thread_rings_handler_leave(pid_t tid);

/* Any thread outside a signal handler that reads published tables (a
 * callback walking its own stack): bracket the reads.  Objects retired
 * meanwhile are freed only after leave.  Returns the token for leave. */
HIDDEN uint32_t thread_rings_walker_enter(void);
HIDDEN void thread_rings_walker_leave(uint32_t token);

/* Signals that arrived on threads we do not (or no longer) track. */
HIDDEN uint64_t thread_rings_orphan_signals(void);

#endif
