/*
 * agent: the loop, and the life of the sources around it (see agent.h).
 */
#include "agent/agent.h"

#include <errno.h>
#include <stdio.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

#include "agent/agent_thread.h"
#include "agent/attach.h"
#include "agent/clrdesc.h"
#include "agent/codemap.h"
#include "agent/companion.h"
#include "agent/control_client.h"
#include "agent/evq.h"
#include "agent/fds.h"
#include "agent/lifecycle.h"
#include "agent/log.h"
#include "agent/mcjit.h"
#include "agent/mdplace.h"
#include "agent/os_thread.h"
#include "agent/rendezvous.h"
#include "agent/signal/activity.h"
#include "agent/signal/fatal_signal.h"
#include "agent/signal/hijack.h"
#include "agent/signal/loop_wake.h"
#include "agent/signal/nativeunwind.h"
#include "agent/signal/thread_rings.h"
#include "agent/stacks.h"
#include "agent/thread_registry.h"
#include "agent/unhandled.h"
#include "agent/unhandled_probe.h"
#include "agent/unwindgaps.h"
#include "common/clock.h"
#include "common/mem.h"
#include "common/procmaps.h"

/* How long the loop sleeps while events or code arrive: callbacks' queues
 * are drained, and compiled code published to the signal handler's walks,
 * at least this often then. */
#define CYCLE_NS 10000000ull
/* While only samples arrive: the threads' rings hold many (a thread's 64
 * KiB, some hundred samples), so they are drained every 16 sampling
 * intervals, 10 to 50 ms; a sample that leaves its ring half full, an
 * event, compiled code, or a walk that lacked unwind rows wakes the loop
 * sooner (loop_wake.h).  A wake-up and its cycle cost the agent's thread
 * 40 to 60 us here: at 10 ms, a CPU-bound program's agent took 6.2 ms of
 * CPU a second, now 2.1 ms (BUSY=1 bench/idle.sh, docs/performance.md). */
#define SAMPLES_CYCLE_MAX_NS 50000000ull
#define SAMPLES_CYCLE_INTERVALS 16
/* Cycles that record nothing (an idle service) double the sleep up to
 * this, which the next sample, event or compiled method cuts short
 * (loop_wake.h): an idle process's agent wakes 10 times a second, not
 * 100 (43 us a wake-up here: docs/performance.md). */
#define QUIET_MAX_NS 100000000ull
/* Thread names are looked at when the runtime reports a change, and at
 * least this often (native threads named late). */
#define NAMES_NS 250000000ull
/* How long Shutdown waits for the loop: a last drain and write take
 * milliseconds; past this it is stuck ... */
#define STOP_DEADLINE_NS 10000000000ull
/* ... and a write that has not returned for this long is a disk that does
 * not take data (a stalled network file system, a pipe nobody reads): the
 * program's exit does not wait for it. */
#define STALLED_WRITE_NS 100000000ull
/* How often Shutdown looks at a write in progress while it waits. */
#define JOIN_SLICE_NS 10000000ull
/* After the recording failed, the loop only looks for Shutdown. */
#define HALTED_CYCLE_NS 1000000000ull

/* ---- the sources ------------------------------------------------------------ */

static int add_source(struct agent *a, const struct source_ops *ops)
{
    if (a->source_count >= AGENT_MAX_SOURCES)
        return -1;
    struct source *s = &a->sources[a->source_count];
    memset(s, 0, sizeof *s);
    s->ops = ops;
    s->agent = a;
    s->index = a->source_count;
    if (ops->init && ops->init(a, s, &a->mask, &a->high_mask) < 0)
        return -1;
    a->source_count++;
    return 0;
}

int agent_init_sources(struct agent *a)
{
    /* first: its last records (the threads still running) come before the
     * samplers let go of their threads */
    if (add_source(a, &source_thread_events) < 0)
        return -1;
    if (config_sampled(&a->cfg) &&
        add_source(a, a->cfg.sampler == CONFIG_SAMPLER_SIGNAL ? &source_cpu_signal
                                                               : &source_cpu_suspend) < 0)
        return -1;
    if ((a->cfg.events & CONFIG_EVENT_EXCEPTIONS) && add_source(a, &source_exceptions) < 0)
        return -1;
    if ((a->cfg.events & CONFIG_EVENT_LOCK) && add_source(a, &source_lock) < 0)
        return -1;
    if ((a->cfg.events & CONFIG_EVENT_JIT) && add_source(a, &source_jit) < 0)
        return -1;
    if ((a->cfg.events & (CONFIG_EVENT_ALLOC | CONFIG_EVENT_LIVE)) && add_source(a, &source_alloc) < 0)
        return -1;
    if ((a->cfg.events & CONFIG_EVENT_GC) && add_source(a, &source_gc) < 0)
        return -1;
    if (a->cfg.async == CONFIG_ASYNC_ON && add_source(a, &source_async) < 0)
        return -1;
    if (a->cfg.async == CONFIG_ASYNC_SNAPSHOTS && add_source(a, &source_async_snapshots) < 0)
        return -1;
    if (a->cfg.trace == CONFIG_TRACE_FLAT && add_source(a, &source_trace_flat) < 0)
        return -1;
    if (a->cfg.trace && a->cfg.trace != CONFIG_TRACE_FLAT && add_source(a, &source_trace) < 0)
        return -1;
    if (a->cfg.cover[0] && add_source(a, &source_cover) < 0)
        return -1;
    if (a->cfg.watch[0] && add_source(a, &source_watch) < 0)
        return -1;
    return 0;
}

#define EACH_SOURCE(a, s) \
    for (struct source *s = (a)->sources; s < (a)->sources + (a)->source_count; s++)

static void on_entry(void *ctx, const struct evq_entry *e)
{
    struct agent *a = ctx;
    if (e->source < a->source_count && a->sources[e->source].ops->entry)
        a->sources[e->source].ops->entry(a, &a->sources[e->source], e);
}

uint64_t agent_drain(struct agent *a, uint64_t until)
{
    EACH_SOURCE(a, s)
        if (s->ops->drain)
            s->ops->drain(a, s, until);
    return evq_drain(on_entry, a, until);
}

/* Code is about to be forgotten: what was taken before must be recorded
 * while its names can still be found. */
static void before_forget(void *ctx, uint64_t until)
{
    struct agent *a = ctx;
    agent_drain(a, until);
    resolve_forget(&a->resolver);
    stacks_forget();
}

uint64_t agent_update_code(struct agent *a)
{
    return codemap_update(&a->names, before_forget, a);
}

/* ---- the loop --------------------------------------------------------------- */

/* An exception no managed code catches: the process is about to abort
 * (unhandled.h).  Everything taken so far goes to the file now, with what
 * ended the program, while its thread waits. */
static void record_unhandled(struct agent *a)
{
    ClassID klass = 0;
    int by_probe = 0;
    if (!unhandled_pending(&klass, &by_probe))
        return;
    log_debug("an unhandled exception, told by %s",
              by_probe ? "the runtime's rewritten last call" : "the exception callbacks");
    agent_drain(a, agent_update_code(a));
    char name[512], what[600];
    if (klass && names_describe_class(a->info, klass, name, sizeof name) == 0)
        snprintf(what, sizeof what, "an unhandled %s", name);
    else
        snprintf(what, sizeof what, "an unhandled exception");
    recorder_info(&a->out, FMT_INFO_ENDED_BY, what);
    recorder_flush(&a->out);
    unhandled_recorded();
}

/* The runtime's last call for an unhandled exception rewritten to tell
 * us (unhandled_probe.h) once CoreLib is there; where it cannot be, the
 * exception callbacks are turned on instead (unhandled.h's rule). */
static void probe_or_callbacks(struct agent *a)
{
    if (unhandled_probe_update(a->info, a->mask, a->runtime_major) != UNHANDLED_PROBE_OFF ||
        (a->mask & COR_PRF_MONITOR_EXCEPTIONS))
        return;
    a->mask |= COR_PRF_MONITOR_EXCEPTIONS;
    HRESULT hr = a->info->lpVtbl->SetEventMask2(a->info, a->mask, a->high_mask);
    if (hr < 0)
        log_warn("the runtime's exception callbacks could not be turned on (0x%08x): an "
                 "unhandled exception ends the recording without saying so", (unsigned)hr);
}

struct loop_state {
    uint64_t names_ns;
    uint64_t seen_changes;
    struct loop_pace pace; /* the next sleep (loop_wake_pace) */
    int work;          /* the last cycle took events or code (not only samples) */
};

/* How long the loop sleeps while only samples arrive. */
static uint64_t samples_cycle_ns(const struct agent *a)
{
    uint64_t ns = a->cfg.interval_ns * SAMPLES_CYCLE_INTERVALS;
    return ns < CYCLE_NS ? CYCLE_NS : ns > SAMPLES_CYCLE_MAX_NS ? SAMPLES_CYCLE_MAX_NS : ns;
}

static uint64_t cycle(struct agent *a, struct loop_state *ls, uint64_t now)
{
    /* unwind tables first: a thread's first samples should already find them */
    nativeunwind_refresh();
    if (a->attached)
        hijack_refresh(); /* launched: at the first suspension (hijack.h) */
    if (atomic_exchange(&a->catch_up, 0))
        attach_catch_up(a);
    uint64_t applied = codemap_applied();
    uint64_t complete = agent_update_code(a);
    uint64_t changes = thread_registry_changes();
    if (changes != ls->seen_changes || now - ls->names_ns >= NAMES_NS) {
        ls->seen_changes = changes;
        ls->names_ns = now;
        thread_ids_update_names(&a->thread_ids, &a->out);
    }
    /* what the threads recorded since the last cycle, before the sources
     * decide: wall mode's tick reuses a stack only for a thread that has not
     * run since its last sample, which it knows from that sample (drained
     * after the tick, a thread woken by the last tick's signal looked as if
     * it had run, and was woken again at every tick) */
    uint64_t events = agent_drain(a, complete);
    uint64_t next = now + ls->pace.sleep_ns;
    EACH_SOURCE(a, s) {
        if (!s->ops->cycle)
            continue;
        uint64_t want = s->ops->cycle(a, s, now);
        if (want && want < next)
            next = want;
    }
    events += agent_drain(a, complete); /* what the sources' cycles took */
    ls->work = events || codemap_applied() != applied;
    resolve_bound(&a->resolver);
    thread_rings_reclaim();
    probe_or_callbacks(a);
    record_unhandled(a);
    return next;
}

/* Until the deadline or a wake-up (loop_wake.h: a poke, a stop, a sync,
 * or the next producer of what `quiet` names); may return early. */
static void sleep_until(struct agent *a, uint64_t deadline_ns, int quiet)
{
    uint32_t seen = loop_wake_seen();
    pthread_mutex_lock(&a->wake_lock);
    int asked = a->sync_asked != a->sync_done;
    pthread_mutex_unlock(&a->wake_lock);
    if (asked || atomic_load(&a->stopping) || atomic_load(&a->poked) || atomic_load(&a->hurried))
        return;
    loop_wake_wait(seen, deadline_ns, quiet);
}

/* The recording failed (a write error: the disk is full, a file size
 * limit): what was written stays readable, and from now on nothing is
 * collected, so the program does not pay for samples that cannot be kept:
 * the clocks stop, the callbacks queue nothing, the loop only waits for
 * Shutdown.  The recorder said why, once. */
static void halt(struct agent *a)
{
    EACH_SOURCE(a, s)
        if (s->ops->stop)
            s->ops->stop(a, s);
    codemap_stop();
    evq_pause();
    unhandled_disarm();
    fatal_signal_disarm();
    a->halted = 1;
    log_info("sampling stopped: the recording cannot be written");
}

int agent_labels(const struct agent *a)
{
    return a->cfg.sampler == CONFIG_SAMPLER_SIGNAL && config_sampled(&a->cfg);
}

static void *loop_main(void *arg)
{
    struct agent *a = arg;
    atomic_store(&a->loop_tid, (pid_t)gettid()); /* before any runtime call */
    uint32_t wakes_before = loop_wake_seen(); /* this recording's, for loop_wakeups */
    prctl(PR_SET_NAME, "corscope");
    HRESULT hr = a->info->lpVtbl->InitializeCurrentThread(a->info);
    if (hr < 0)
        log_warn("InitializeCurrentThread failed: 0x%08x", (unsigned)hr);
    if (agent_labels(a)) {
        /* before the sampler starts: its handler reads the Frame chain
         * with this layout (activity.h) */
        struct clrdesc_frames layout;
        if (clrdesc_read_frames(&layout) == 0)
            activity_set_frame_layout(&layout);
        else
            log_debug("the runtime describes no frame layout: labels come from callbacks alone");
    }
    EACH_SOURCE(a, s)
        if (s->ops->start && s->ops->start(a, s) < 0)
            log_warn("the %s source could not start; its events are missing", s->ops->name);
    /* the functions the first walks asked for (agent_start listed the
     * libraries), decoded now */
    nativeunwind_refresh();
    fds_grow_join(); /* the table holds the high numbers now */
    recorder_move_high(&a->out);
    companion_start(); /* here, not in Initialize: the program never waits for it */
    fatal_signal_arm((pid_t)gettid());
    unhandled_arm();
    struct loop_state ls = {0, 0, {CYCLE_NS, 0}, 1};
    while (!atomic_load(&a->stopping) && !fatal_signal_signal()) {
        pthread_mutex_lock(&a->wake_lock);
        uint64_t sync = a->sync_asked;
        pthread_mutex_unlock(&a->wake_lock);
        atomic_store(&a->hurried, 0);
        /* after a write error (halt) nothing is collected: the loop only
         * answers syncs and waits for Shutdown */
        uint64_t next = clock_now_ns() + HALTED_CYCLE_NS;
        int quiet = 0; /* what may end the sleep early (loop_wake.h) */
        if (!a->halted) {
            uint64_t made = recorder_records(&a->out);
            next = cycle(a, &ls, clock_now_ns());
            /* (measured around the cycle alone: a flush's counters are
             * records too, and no sign of the program's activity) */
            int recorded = recorder_records(&a->out) != made;
            loop_wake_pace(&ls.pace, ls.work, recorded, CYCLE_NS, samples_cycle_ns(a), QUIET_MAX_NS);
            quiet = ls.pace.quiet;
            if (recorded || ls.work) { /* from this sleep on */
                uint64_t soon = clock_now_ns() + ls.pace.sleep_ns;
                next = next < soon ? next : soon;
            }
        }
        if (sync != a->sync_done) {
            /* everything queued before the ask was drained by that cycle */
            recorder_flush(&a->out);
            pthread_mutex_lock(&a->wake_lock);
            a->sync_done = sync;
            pthread_cond_broadcast(&a->synced);
            pthread_mutex_unlock(&a->wake_lock);
            continue;
        }
        if (!a->halted) {
            uint64_t flushed = a->out.last_flush_ns;
            recorder_maybe_flush(&a->out, clock_now_ns());
            if (a->out.last_flush_ns != flushed)
                attach_send_status(a);
            if (recorder_failed(&a->out))
                halt(a);
        }
        companion_reap();
        if (control_client_stop_wanted()) {
            atomic_store(&a->detaching, 1);
            break;
        }
        for (;;) {
            uint64_t now = clock_now_ns();
            if (next <= now)
                break;
            sleep_until(a, next, next - now > CYCLE_NS ? quiet : 0);
            if (atomic_load(&a->stopping) || atomic_load(&a->hurried) ||
                !atomic_exchange(&a->poked, 0))
                break;
            pthread_mutex_lock(&a->wake_lock);
            int asked = a->sync_asked != a->sync_done;
            pthread_mutex_unlock(&a->wake_lock);
            if (asked)
                break;
            /* the runtime reported new threads: look now, not at the next
             * cycle, so that even a short-lived thread is sampled */
            EACH_SOURCE(a, s)
                if (s->ops->poked && !a->halted)
                    s->ops->poked(a, s);
        }
    }
    if (!a->halted) {
        EACH_SOURCE(a, s)
            if (s->ops->stop)
                s->ops->stop(a, s);
        agent_drain(a, agent_update_code(a));
    }
    EACH_SOURCE(a, s)
        if (s->ops->finish)
            s->ops->finish(a, s);
    /* a thread without its per-thread block (out of memory) lost the
     * events it would have followed */
    recorder_count(&a->out, FMT_COUNTER_DROPPED_EVENTS, evq_dropped() + agent_thread_missing());
    if (codemap_refused())
        log_warn("%llu compiled methods were not queued (the agent's thread was held up, "
                 "by its disk most likely); their samples may be unnamed",
                 (unsigned long long)codemap_refused());
    recorder_count(&a->out, FMT_COUNTER_SAMPLER_CPU_NS, os_thread_cpu_ns((pid_t)gettid()));
    recorder_count(&a->out, FMT_COUNTER_LOOP_WAKEUPS, (uint32_t)(loop_wake_seen() - wakes_before));
    /* counted only where the callbacks came all along */
    if (a->thrown_counted)
        recorder_count(&a->out, FMT_COUNTER_EXCEPTIONS_THROWN,
                       unhandled_thrown() - a->thrown_before);
    else
        recorder_uncounted(&a->out, FMT_COUNTER_EXCEPTIONS_THROWN);
    /* the program's: this loop thread's own left out (a session's loop is
     * a thread of its own) */
    uint64_t switches = os_process_switches() - a->switches_before, own = os_own_switches();
    recorder_count(&a->out, FMT_COUNTER_CONTEXT_SWITCHES, switches > own ? switches - own : 0);
    recorder_count(&a->out, FMT_COUNTER_UNWIND_PARSE_NS, nativeunwind_parse_ns());
    recorder_count(&a->out, FMT_COUNTER_METADATA_OPENS, mdplace_runtime_opens());
    recorder_count(&a->out, FMT_COUNTER_MAPS_READS, procmaps_reads());
    recorder_count(&a->out, FMT_COUNTER_END_AGENT_HEAP, mem_live_bytes());
    if (!a->halted)
        unwindgaps_record(&a->out);
    int ended_by = fatal_signal_signal();
    /* the runtime is still up unless a signal is ending the process */
    if (!ended_by && !a->attached && !a->halted)
        recorder_count(&a->out, FMT_COUNTER_MULTICORE_JIT_OFF, (uint64_t)mcjit_asked(a->info));
    if (!ended_by && unhandled_seen())
        recorder_info(&a->out, FMT_INFO_ENDED_BY, ""); /* the program went on after all */
    recorder_flush(&a->out);
    if (ended_by) {
        /* a signal is ending the process and Shutdown will not come: the
         * recording is closed here, whole, saying why it ended */
        recorder_info(&a->out, FMT_INFO_ENDED_BY, fatal_signal_describe(ended_by));
        recorder_close(&a->out);
        fatal_signal_done();
    }
    fatal_signal_disarm();
    unhandled_disarm();
    stacks_shutdown();
    if (atomic_load(&a->detaching)) {
        unhandled_probe_revert(a->info);
        attach_detach(a);
    }
    /* attached, and the runtime would not let us go: the next watch
     * comes to us (rendezvous.h) */
    if (a->dormant && a->attached)
        rendezvous_listen(a, lifecycle_resume);
    return NULL;
}

/* nativeunwind's waker: a callback waits for functions its walk lacked. */
static void hurry(void *a)
{
    agent_hurry(a);
}

int agent_start(struct agent *a)
{
    if (!a->wake_made) {
        /* once: a callback may still lock them after a session ended */
        pthread_mutex_init(&a->wake_lock, NULL);
        pthread_condattr_t attr;
        pthread_condattr_init(&attr);
        pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
        pthread_cond_init(&a->synced, &attr);
        pthread_condattr_destroy(&attr);
        a->wake_made = 1;
    }
    thread_ids_init(&a->thread_ids);
    resolve_init(&a->resolver, a->info, &a->names, &a->out);
    /* The libraries loaded by now (the host, the runtime, the C and C++
     * libraries) are on every thread's walks: the main thread's root runs
     * through the host's, every managed thread's through the runtime's
     * helpers, some frameless.  They are listed here, cheaply: from the
     * first walk, their functions' rows are read in place (they are never
     * unloaded), so no walk steps a frameless helper by frame pointers,
     * skipping its caller (the method that allocated).  Nothing is parsed
     * ahead: a walk decodes the functions it passes through, the agent's
     * thread keeps them.  The few libraries without a search table in
     * their .eh_frame_hdr are wanted whole at once. */
    nativeunwind_list();
    nativeunwind_want_all();
    nativeunwind_set_waker(hurry, a);

    fds_grow_start(); /* before the loop's first clock needs it */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = pthread_create(&a->loop, NULL, loop_main, a);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        fds_grow_join();
        log_error("cannot start the agent's thread: %s", strerror(rc));
        return -1;
    }
    a->loop_started = 1;
    return 0;
}

void agent_poke(struct agent *a)
{
    if (!a->loop_started || atomic_exchange(&a->poked, 1))
        return; /* not running, or already poked */
    loop_wake();
}

void agent_hurry(struct agent *a)
{
    if (!a->loop_started || atomic_exchange(&a->hurried, 1))
        return; /* not running, or already hurried */
    loop_wake();
}

int agent_sync(struct agent *a, uint64_t timeout_ns)
{
    if (!a->loop_started)
        return -1;
    uint64_t deadline = clock_now_ns() + timeout_ns;
    struct timespec ts = {(time_t)(deadline / 1000000000ull), (long)(deadline % 1000000000ull)};
    int rc = -1;
    pthread_mutex_lock(&a->wake_lock);
    uint64_t ticket = ++a->sync_asked;
    loop_wake();
    while (!atomic_load(&a->stopping)) {
        if (a->sync_done >= ticket) {
            rc = 0;
            break;
        }
        int e = pthread_cond_timedwait(&a->synced, &a->wake_lock, &ts);
        if (e == ETIMEDOUT)
            break;
    }
    pthread_mutex_unlock(&a->wake_lock);
    return rc;
}

int agent_stop(struct agent *a)
{
    if (!a->loop_started)
        return 0;
    /* the walks from now on are not recorded: what they asked for is not
     * decoded (the program's exit does not wait for it) */
    nativeunwind_abandon();
    pthread_mutex_lock(&a->wake_lock);
    atomic_store(&a->stopping, 1);
    pthread_cond_broadcast(&a->synced);
    pthread_mutex_unlock(&a->wake_lock);
    loop_wake();

    uint64_t start = clock_now_ns();
    for (;;) {
        /* returns the moment the loop ends (the program's exit waits for
         * nothing more), else every JOIN_SLICE_NS to look at the write */
        uint64_t until = clock_now_ns() + JOIN_SLICE_NS;
        struct timespec ts = {(time_t)(until / 1000000000ull), (long)(until % 1000000000ull)};
        if (pthread_clockjoin_np(a->loop, NULL, CLOCK_MONOTONIC, &ts) == 0)
            break;
        uint64_t now = clock_now_ns();
        uint64_t since = atomic_load(&a->out.write_since_ns);
        if (since && now > since && now - since >= STALLED_WRITE_NS) {
            log_error("the recording's file has not taken data for %llu ms; it is left "
                      "unfinished so that the program can exit",
                      (unsigned long long)((now - since) / 1000000));
            return -1;
        }
        if (now - start >= STOP_DEADLINE_NS) {
            log_error("the agent's thread did not stop within %llu s; the recording is left "
                      "unfinished", STOP_DEADLINE_NS / 1000000000ull);
            return -1;
        }
    }
    a->loop_started = 0;
    resolve_free(&a->resolver);
    thread_ids_free(&a->thread_ids);
    return 0;
}
