/*
 * cpu_signal: the signal sampler (the default source of cpu and wall
 * samples).  Each thread is interrupted where it is by a signal, and the
 * handler (signal/handler.c) walks its stack, managed and native frames
 * alike, into the thread's ring.  On the loop thread this source:
 *
 *   - keeps the set of threads (sampled_threads.h) and, in cpu mode, gives each
 *     its CPU clock (cpu_clock.h) as soon as its stack is placed;
 *   - in wall mode sends the signal to every thread each tick (tgkill),
 *     except a thread whose CPU time has not moved since its last sample:
 *     it has not run, so its stack is the one already recorded, which is
 *     reused without waking it;
 *   - drains the rings and records samples through stacks.h, which adds
 *     what the runtime was doing on the thread.
 *
 * Nothing is lost silently: full rings count dropped samples, threads with
 * no clock are counted, walks that ended early end in [unknown].
 */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "agent/agent.h"
#include "agent/async/compose.h"
#include "agent/codemap.h"
#include "agent/log.h"
#include "agent/os_thread.h"
#include "agent/signal/handler.h"
#include "agent/signal/ring.h"
#include "agent/signal/stack_bounds.h"
#include "agent/signal/thread_rings.h"
#include "agent/signal/walk.h"
#include "agent/sources/clock_trial.h"
#include "agent/sources/cpu_clock.h"
#include "agent/sources/sampled_threads.h"
#include "agent/stacks.h"
#include "common/clock.h"
#include "common/mem.h"

/* Wall mode: a thread whose CPU time moved less than this since its last
 * sample (the tail of our own handler, sigreturn, a restarted syscall) has
 * not run: its last stack is reused. */
#define WALL_IDLE_NS 20000ull
/* cpu mode: a sample's weight counts microseconds of CPU time (each period
 * of the clock has its own length) */
#define CPU_UNIT_NS 1000ull

struct sigsampler {
    struct agent *a;
    uint32_t event;    /* FMT_EVENT_CPU or _WALL */
    int cpu;           /* cpu mode: per-thread clocks */
    struct sampled_threads set;
    struct cpu_clock clock;
    uint64_t next_tick; /* wall mode */
    uint64_t others_cpu_at_start; /* cpu mode: the process's CPU but this thread's */
    uint64_t *entry;    /* one ring entry, unwrapped */
    size_t entry_cap;
    struct stackb stack;
};

/* ---- samples --------------------------------------------------------------- */

/* Turns one ring entry into a sample. */
static void record_ring_entry(struct sigsampler *s, struct sthread *t, const uint64_t *e)
{
    struct agent *a = s->a;
    uint32_t depth = (uint32_t)e[RING_DEPTH];
    uint32_t flags = (uint32_t)e[RING_FLAGS];
    uint64_t time = e[RING_TIME];
    const uint64_t *ips = e + RING_HEADER_WORDS;

    struct stackb *b = &s->stack;
    stackb_reset(b);
    for (uint32_t k = 0; k < depth; k++)
        stackb_put(b, resolve_ip(&a->resolver, (uintptr_t)ips[k], k > 0, time));
    if (flags & WALK_GUESSED)
        recorder_count(&a->out, FMT_COUNTER_GUESSED_WALKS, 1);
    if (flags & WALK_HIJACKED)
        recorder_count(&a->out, FMT_COUNTER_HIJACKED_RETURNS, 1);
    struct stack_meta m = {.seen_ns = time,
                           .tid = t->tid,
                           .activity = e[RING_ACTIVITY],
                           .activity_outer = e[RING_ACTIVITY_OUTER],
                           .gc = e[RING_GC],
                           .walk_flags = flags & 0xffff};
    struct async_chain chain = {ips + depth, RING_ASYNC_COUNT(e[RING_ASYNC]),
                                RING_ASYNC_END(e[RING_ASYNC]), RING_ASYNC_RUNNER(e[RING_ASYNC])};
    if (chain.count) {
        m.chain = &chain;
        m.ips = ips;
    }
    struct activity_frame frame = {e[RING_FRAME_KIND], e[RING_FRAME_RET], e[RING_FRAME_METHOD]};
    /* what the agent's callbacks and hooks cost the program, as the
     * samples see it (before its frames at the leaf are trimmed) */
    if (s->cpu && stackb_in_agent(a, b)) {
        recorder_count(&a->out, FMT_COUNTER_AGENT_CODE_SAMPLES, 1);
        recorder_count(&a->out, FMT_COUNTER_AGENT_CODE_NS, e[RING_WEIGHT]);
    }
    uint32_t stack = stacks_finish_sample(a, b, &m, &frame);
    if (!stack)
        return;
    uint64_t weight = e[RING_WEIGHT];
    if (s->cpu) {
        /* nanoseconds in the ring; what is under a unit waits for the next */
        t->weight_carry_ns += weight;
        weight = t->weight_carry_ns / CPU_UNIT_NS;
        t->weight_carry_ns -= weight * CPU_UNIT_NS;
    }
    recorder_sample(&a->out, s->event, t->id, time, stack, weight);
    t->last_stack = stack;
    /* a stack taken before its thread's stack mapping was known is the leaf
     * alone: not one to repeat while the thread waits */
    t->last_stack_whole = !(flags & WALK_NO_STACK);
    if (e[RING_CPU])
        t->cpu_seen = e[RING_CPU];
}

static void drain_thread(struct sigsampler *s, struct sthread *t, uint64_t until)
{
    uint64_t tail = atomic_load_explicit(&t->tail, memory_order_relaxed);
    uint64_t head = atomic_load_explicit(&t->head, memory_order_acquire);
    while (tail < head) {
        uint64_t words = t->ring[(tail + RING_WORDS) & t->ring_mask];
        if (words < RING_HEADER_WORDS || words > head - tail) {
            /* cannot happen with a correct handler; never loop on it */
            recorder_count(&s->a->out, FMT_COUNTER_DROPPED, 1);
            tail = head;
            break;
        }
        if (t->ring[(tail + RING_TIME) & t->ring_mask] >= until)
            break; /* taken after what the code map knows: the next time */
        uint64_t *e = mem_grow(s->entry, &s->entry_cap, words, sizeof *e);
        if (e) {
            s->entry = e;
            for (uint64_t i = 0; i < words; i++)
                e[i] = t->ring[(tail + i) & t->ring_mask];
            if (RING_HEADER_WORDS + e[RING_DEPTH] + RING_ASYNC_COUNT(e[RING_ASYNC]) == words)
                record_ring_entry(s, t, e);
            else
                recorder_count(&s->a->out, FMT_COUNTER_DROPPED, 1);
        } else {
            recorder_count(&s->a->out, FMT_COUNTER_DROPPED, 1);
        }
        tail += words;
    }
    atomic_store_explicit(&t->tail, tail, memory_order_release);
    uint64_t dropped = atomic_load_explicit(&t->dropped, memory_order_relaxed);
    if (dropped > t->dropped_reported) {
        recorder_count(&s->a->out, FMT_COUNTER_DROPPED, dropped - t->dropped_reported);
        t->dropped_reported = dropped;
    }
}

/* Wall mode: one tick for every thread. */
static void wall_tick(struct sigsampler *s, uint64_t now)
{
    pid_t pid = getpid();
    uint64_t signalled = 0;
    recorder_count(&s->a->out, FMT_COUNTER_TICKS, 1);
    for (struct sthread *t = s->set.threads; t; t = t->next) {
        if (!t->ready)
            continue;
        uint64_t cpu = os_thread_cpu_ns(t->tid);
        if (cpu == UINT64_MAX)
            continue; /* exiting; the next scan removes it */
        int pending = atomic_load(&t->wall_weight) != 0;
        if (!pending && t->last_stack && t->last_stack_whole && cpu - t->cpu_seen < WALL_IDLE_NS) {
            recorder_sample(&s->a->out, s->event, t->id, now, t->last_stack, 1);
            continue;
        }
        if (atomic_fetch_add(&t->wall_weight, 1) == 0 &&
            syscall(SYS_tgkill, pid, t->tid, s->a->cfg.signal) == 0)
            signalled++;
    }
    if (signalled)
        recorder_count(&s->a->out, FMT_COUNTER_WALL_SIGNALS, signalled);
}

/* ---- the thread set's calls ------------------------------------------------ */

static void on_ready(void *ctx, struct sthread *t)
{
    struct sigsampler *s = ctx;
    if (s->cpu && !t->has_timer && t->perf_fd < 0 && !t->clock_failed &&
        cpu_clock_start(&s->clock, t) < 0)
        recorder_count(&s->a->out, FMT_COUNTER_UNSAMPLED_THREADS, 1);
}

static void on_going(void *ctx, struct sthread *t)
{
    struct sigsampler *s = ctx;
    cpu_clock_release(&s->clock, t);
    /* everything it recorded before it died: its ring goes with it */
    drain_thread(s, t, UINT64_MAX);
}

/* ---- the source ------------------------------------------------------------ */

static int sig_init(struct agent *a, struct source *src, DWORD *mask, DWORD *high)
{
    (void)high;
    (void)src;
    if (handler_install(a->cfg.signal) < 0) {
        log_error("signal %d (%s) is already in use in this process; choose another with "
                  "--signal", a->cfg.signal, strsignal(a->cfg.signal));
        return -1;
    }
    *mask |= COR_PRF_MONITOR_THREADS;
    return 0;
}

static int sig_start(struct agent *a, struct source *src)
{
    struct sigsampler *s = mem_calloc(1, sizeof *s);
    if (!s)
        return -1;
    src->state = s;
    s->a = a;
    s->cpu = config_sampled(&a->cfg) == CONFIG_EVENT_CPU;
    s->event = s->cpu ? FMT_EVENT_CPU : FMT_EVENT_WALL;
    recorder_sampled_event(&a->out, s->event, s->cpu ? "cpu" : "wall", "ns",
                           s->cpu ? CPU_UNIT_NS : a->cfg.interval_ns);
    cpu_clock_init(&s->clock, &a->cfg, clock_now_ns() ^ ((uint64_t)gettid() << 32));
    /* the program's CPU (the loop thread, never sampled, left out): what the
     * cpu samples stand for between the sampler's start and its stop */
    s->others_cpu_at_start = s->cpu ? os_others_cpu_ns() : 0;
    handler_take_busy_ns(); /* signals of an earlier attach's run are not this one's */
    sampled_threads_init(&s->set, a, a->cfg.max_depth, on_ready, on_going, s);
    uint64_t now = clock_now_ns();
    sampled_threads_cycle(&s->set, now);
    /* the threads found are armed (cpu: their clocks run; wall: ticks
     * start now): how long the program ran unsampled under the agent */
    recorder_count(&a->out, FMT_COUNTER_SAMPLING_START_NS, clock_now_ns() - a->init_began_ns);
    if (s->cpu)
        recorder_info(&a->out, FMT_INFO_CPU_CLOCK, cpu_clock_describe(&s->clock));
    s->next_tick = now;
    return 0;
}

static uint64_t sig_cycle(struct agent *a, struct source *src, uint64_t now)
{
    (void)a;
    struct sigsampler *s = src->state;
    if (!s)
        return 0;
    sampled_threads_cycle(&s->set, now);
    if (s->cpu) {
        cpu_clock_settle(&s->clock, s->set.threads);
        cpu_clock_rescue(&s->clock, s->set.threads, now);
        clock_trial_cycle(&s->clock, s->set.threads, now);
    }
    /* cpu mode: the rings are emptied at the loop's own pace, every 10 to
     * 50 ms while only samples come (agent.c; a ring half full, or a sample
     * into a quiet loop, wakes it: loop_wake.h) */
    uint64_t next = 0;
    if (!s->cpu) {
        if (now >= s->next_tick) {
            wall_tick(s, now);
            s->next_tick += a->cfg.interval_ns;
            if (s->next_tick <= now)
                s->next_tick = now + a->cfg.interval_ns; /* fell behind: do not catch up */
        }
        next = s->next_tick;
    }
    return next;
}

static void sig_poked(struct agent *a, struct source *src)
{
    (void)a;
    struct sigsampler *s = src->state;
    if (s) {
        sampled_threads_remove_ended(&s->set);
        sampled_threads_add_managed(&s->set);
    }
}

static void sig_drain(struct agent *a, struct source *src, uint64_t until)
{
    (void)a;
    struct sigsampler *s = src->state;
    if (!s)
        return;
    for (struct sthread *t = s->set.threads; t; t = t->next)
        drain_thread(s, t, until);
}

static void sig_stop(struct agent *a, struct source *src)
{
    struct sigsampler *s = src->state;
    if (!s)
        return;
    for (struct sthread *t = s->set.threads; t; t = t->next)
        cpu_clock_release(&s->clock, t);
    /* the clocks are stopped: the CPU their samples stand for, for check
     * to set the samples' weight against (a thin profile is never silent) */
    uint64_t now = s->cpu ? os_others_cpu_ns() : 0;
    if (now > s->others_cpu_at_start)
        recorder_count(&a->out, FMT_COUNTER_CPU_WHILE_SAMPLED_NS, now - s->others_cpu_at_start);
    /* what the walks cost the program's threads (check's "profiler" line) */
    recorder_count(&a->out, FMT_COUNTER_HANDLER_NS, handler_take_busy_ns());
}

static void sig_finish(struct agent *a, struct source *src)
{
    struct sigsampler *s = src->state;
    if (!s)
        return;
    sampled_threads_clear(&s->set);
    if (s->cpu) /* which clock the threads really got, now that all were given one */
        recorder_info(&a->out, FMT_INFO_CPU_CLOCK, cpu_clock_describe(&s->clock));
    recorder_count(&a->out, FMT_COUNTER_ORPHAN_SIGNALS, thread_rings_orphan_signals());
    stackb_free(&s->stack);
    mem_free(s->entry);
    mem_free(s);
    src->state = NULL;
}

const struct source_ops source_cpu_signal = {
    .name = "signal sampler",
    .init = sig_init,
    .start = sig_start,
    .cycle = sig_cycle,
    .poked = sig_poked,
    .drain = sig_drain,
    .stop = sig_stop,
    .finish = sig_finish,
};
