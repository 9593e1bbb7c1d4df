/*
 * sampler_suspend: the stop-the-world sampler (--sampler suspend).
 *
 * On Linux a cross-thread DoStackSnapshot works only while the profiler
 * itself has suspended the runtime, so every tick this dedicated native
 * thread (it never runs managed code, so the runtime never tries to suspend
 * it: Broman's rule 1) does:
 *
 *   1. snapshot the thread registry (a lock held for a copy, nothing more);
 *   2. cpu mode: read each thread's CPU clock and give it credit for the CPU
 *      it used since the last tick; only threads owed at least one interval
 *      and running at the moment are sampled, with a weight of the whole
 *      intervals owed, so idle threads cost nothing, a tick where nobody ran
 *      suspends nothing, and a thread that ran and then blocked is not
 *      blamed on its wait (its credit goes to the next tick it runs in);
 *      wall mode: every thread, weight 1;
 *   3. SuspendRuntime; DoStackSnapshot of each chosen thread, copying raw
 *      FunctionIDs into a preallocated arena (no allocation, no lock, no
 *      other runtime call while the world is stopped); ResumeRuntime;
 *   4. then, with the program running again, name the functions (names.c)
 *      and write the samples (recorder.c); a tick that overlapped an unload
 *      of code is dropped (its FunctionIDs may have been freed and reused),
 *      counted as stale.
 *
 * Threads stop only at GC-safe points, so this sampler carries safepoint
 * bias and its pause grows with the number of threads; the counters
 * suspended_ns / max_suspended_ns in the recording say how long the program
 * was held.  A failed walk is recorded as [unknown] and counted; a stack
 * deeper than max_depth ends in [truncated], counted too.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "agent/agent.h"
#include "agent/codemap.h"
#include "agent/log.h"
#include "agent/os_thread.h"
#include "agent/signal/walk.h"
#include "agent/stacks.h"
#include "agent/thread_registry.h"
#include "common/clock.h"
#include "common/mem.h"

/* Most frame ids the arena may hold in one tick (8 MiB). */
#define ARENA_MAX (1u << 20)

/* Per-thread accounting the sampler keeps between ticks. */
struct tracked {
    uint32_t id;           /* the registry's id of the thread (its slot) */
    uint64_t cpu_last;     /* ns of thread CPU at the last look */
    uint64_t credit;       /* ns of CPU not yet turned into samples */
    uint32_t seen_tick;
};

/* One thread chosen for this tick. */
struct pick {
    struct thread_view *view;
    size_t track; /* index into sampler.tracks (stable until prune_tracks) */
    uint64_t weight;
    uint32_t start, depth; /* frames in the arena */
    HRESULT hr;
    int walked, truncated;
};

struct sampler {
    struct agent *a;
    uint32_t event;
    uint64_t next_tick;
    struct stackb stack;
    struct thread_view *views;
    size_t views_cap;
    struct tracked *tracks;
    size_t track_count, track_cap;
    struct map64 track_of; /* recording id -> index into tracks */
    struct pick *picks;
    size_t picks_cap;
    FunctionID *arena;
    size_t arena_cap;
    uint32_t tick;
};

/* Arena cursor handed to DoStackSnapshot's callback. */
struct walk {
    FunctionID *arena;
    size_t used, cap;
    uint32_t depth, max_depth;
    int truncated;
};

static HRESULT STDMETHODCALLTYPE on_frame(FunctionID function, UINT_PTR ip,
                                           COR_PRF_FRAME_INFO frame, ULONG32 context_size,
                                           BYTE context[], void *client)
{
    (void)ip;
    (void)frame;
    (void)context_size;
    (void)context;
    struct walk *w = client;
    if (w->depth >= w->max_depth || w->used >= w->cap) {
        w->truncated = 1;
        return S_FALSE; /* stop the walk */
    }
    w->arena[w->used++] = function;
    w->depth++;
    return S_OK;
}

/* Index of the thread's accounting, created on first sight; SIZE_MAX when
 * out of memory. */
static size_t track(struct sampler *s, const struct thread_view *v)
{
    uint32_t at;
    if (map64_get(&s->track_of, v->id, &at))
        return at;
    struct tracked *grown = mem_grow(s->tracks, &s->track_cap, s->track_count + 1, sizeof *grown);
    if (!grown)
        return SIZE_MAX;
    s->tracks = grown;
    if (map64_put(&s->track_of, v->id, (uint32_t)s->track_count) < 0)
        return SIZE_MAX;
    struct tracked *t = &s->tracks[s->track_count];
    memset(t, 0, sizeof *t);
    t->id = v->id;
    t->cpu_last = UINT64_MAX; /* first look: start counting from now */
    return s->track_count++;
}

/* Forgets threads that were not in this tick's snapshot (they died). */
static void prune_tracks(struct sampler *s)
{
    size_t kept = 0;
    map64_clear(&s->track_of);
    for (size_t i = 0; i < s->track_count; i++) {
        if (s->tracks[i].seen_tick != s->tick)
            continue;
        s->tracks[kept] = s->tracks[i];
        map64_put(&s->track_of, s->tracks[kept].id, (uint32_t)kept);
        kept++;
    }
    s->track_count = kept;
}

/* Chooses the threads to walk this tick and their weights. */
static size_t choose(struct sampler *s, long count)
{
    struct agent *a = s->a;
    uint64_t interval = a->cfg.interval_ns;
    size_t picked = 0;
    for (long i = 0; i < count; i++) {
        struct thread_view *v = &s->views[i];
        size_t ti = track(s, v);
        if (ti == SIZE_MAX)
            continue;
        struct tracked *t = &s->tracks[ti];
        t->seen_tick = s->tick;
        if (!v->os_tid) {
            DWORD os = 0;
            if (a->info->lpVtbl->GetThreadInfo(a->info, v->managed, &os) >= 0 && os) {
                v->os_tid = (pid_t)os;
                thread_registry_set_os_tid(v, v->os_tid);
            }
        }
        /* a thread the runtime has not yet given an OS thread has not
         * started: nothing to walk, and no THRD record yet to refer to */
        if (!v->os_tid)
            continue;
        uint64_t weight = 1;
        if (config_sampled(&a->cfg) == CONFIG_EVENT_CPU) {
            uint64_t now = os_thread_cpu_ns(v->os_tid);
            if (now == UINT64_MAX)
                continue;
            if (t->cpu_last != UINT64_MAX && now > t->cpu_last)
                t->credit += now - t->cpu_last;
            t->cpu_last = now;
            /* a thread that used CPU but is blocked now would be caught in
             * its wait (Thread.Sleep, a lock), not where the CPU went: its
             * credit waits for a tick that finds it running */
            if (t->credit < interval || !os_thread_running(v->os_tid))
                continue;
            weight = t->credit / interval;
            /* the credit is spent when the sample is taken (see tick) */
        }
        struct pick *p = mem_grow(s->picks, &s->picks_cap, picked + 1, sizeof *s->picks);
        if (!p)
            break;
        s->picks = p;
        memset(&s->picks[picked], 0, sizeof s->picks[picked]);
        s->picks[picked].view = v;
        s->picks[picked].track = ti;
        s->picks[picked].weight = weight;
        picked++;
    }
    return picked;
}

/* Makes room for this tick's frames before the world stops. */
static void size_arena(struct sampler *s, size_t picked)
{
    size_t want = picked * (size_t)s->a->cfg.max_depth;
    if (want > ARENA_MAX)
        want = ARENA_MAX;
    if (want <= s->arena_cap)
        return;
    FunctionID *grown = mem_realloc(s->arena, want * sizeof *grown);
    if (grown) {
        s->arena = grown;
        s->arena_cap = want;
    }
}

static void walk_all(struct sampler *s, size_t picked)
{
    ICorProfilerInfo15 *info = s->a->info;
    struct walk w = {s->arena, 0, s->arena_cap, 0, s->a->cfg.max_depth, 0};
    for (size_t i = 0; i < picked; i++) {
        struct pick *p = &s->picks[i];
        if (!thread_registry_begin_walk(p->view))
            continue; /* died since the snapshot */
        w.depth = 0;
        w.truncated = 0;
        p->start = (uint32_t)w.used;
        p->hr = info->lpVtbl->DoStackSnapshot(info, p->view->managed, on_frame,
                                              COR_PRF_SNAPSHOT_DEFAULT, &w, NULL, 0);
        thread_registry_end_walk();
        p->depth = w.depth;
        p->truncated = w.truncated;
        p->walked = 1;
    }
}

/* Turns one walked thread into a sample. */
static void record_pick(struct sampler *s, struct pick *p, uint64_t now)
{
    struct agent *a = s->a;
    struct recorder *out = &a->out;
    struct stackb *b = &s->stack;
    stackb_reset(b);
    uint32_t depth = p->depth;
    /* every thread starts in native code (the host calling Main, the
     * runtime's thread start): the run of unmanaged frames at the root
     * says nothing and is left out */
    if (depth > 1 && s->arena[p->start + depth - 1] == 0 && !p->truncated)
        depth--;
    for (uint32_t k = 0; k < depth; k++) {
        FunctionID f = s->arena[p->start + k];
        stackb_put(b, f ? resolve_function(&a->resolver, f, now)
                        : recorder_synthetic(out, "[native]"));
    }
    /* E_FAIL with nothing walked is how DoStackSnapshot answers for a thread
     * with no managed frames at all (the finalizer waiting, the tiered
     * compiler compiling): native code, not a failure */
    int walk_ok = p->hr >= 0 || (p->hr == CORPROF_E_STACKSNAPSHOT_ABORTED && p->truncated) ||
                  (p->hr == E_FAIL && p->depth == 0);
    uint32_t flags = 0;
    if (p->truncated) {
        flags |= WALK_TRUNCATED;
    } else if (!walk_ok) {
        flags |= WALK_STOP_RULE;
        log_debug("DoStackSnapshot of thread %d failed: 0x%08x", (int)p->view->os_tid,
                  (unsigned)p->hr);
    } else if (b->n == 0) {
        /* the thread is running, but not in managed code */
        stackb_put(b, recorder_synthetic(out, "[native]"));
    }
    struct stack_meta m = {now, p->view->os_tid, 0, 0, 0, flags, 0, 0, NULL, NULL};
    uint32_t stack = stacks_finish(a, b, &m);
    if (!stack)
        return;
    uint32_t thread = thread_ids_get(&a->thread_ids, out, p->view->os_tid);
    if (thread)
        recorder_sample(out, s->event, thread, now, stack, p->weight);
}

static void sample_once(struct sampler *s)
{
    struct agent *a = s->a;
    long count = thread_registry_snapshot(&s->views, &s->views_cap);
    if (count < 0) {
        recorder_count(&a->out, FMT_COUNTER_SKIPPED_TICKS, 1);
        return;
    }
    size_t picked = choose(s, count);
    if (picked == 0)
        return;
    size_arena(s, picked);
    recorder_count(&a->out, FMT_COUNTER_TICKS, 1);

    uint64_t t0 = clock_now_ns(), held = 0;
    HRESULT hr = a->info->lpVtbl->SuspendRuntime(a->info);
    if (hr >= 0) {
        walk_all(s, picked);
        a->info->lpVtbl->ResumeRuntime(a->info);
        held = clock_now_ns() - t0;
    }
    if (hr == CORPROF_E_RUNTIME_UNINITIALIZED) {
        /* the runtime is still starting: its CPU cannot be attributed, and
         * must not be credited to whatever stack comes first */
        for (size_t i = 0; i < picked; i++)
            s->tracks[s->picks[i].track].credit = 0;
        recorder_count(&a->out, FMT_COUNTER_STARTUP_TICKS, 1);
        return;
    }
    if (hr < 0) {
        /* e.g. CORPROF_E_SUSPENSION_IN_PROGRESS during a GC: try next tick,
         * the CPU credit is kept */
        recorder_count(&a->out, FMT_COUNTER_SKIPPED_TICKS, 1);
        log_debug("SuspendRuntime failed: 0x%08x", (unsigned)hr);
        return;
    }
    /* the FunctionIDs just copied were on live stacks; code unloaded since
     * the suspension may be among them (the method returned, was collected
     * and freed): such a tick is not named but counted.  What the callbacks
     * reported before is applied first: an id freed by an earlier unload
     * and given to a method compiled since is known by its new name. */
    agent_update_code(a);
    int stale = codemap_unloaded_since(t0);
    recorder_count(&a->out, FMT_COUNTER_SUSPEND_NS, held);
    recorder_max(&a->out, FMT_COUNTER_MAX_SUSPEND_NS, held);

    for (size_t i = 0; i < picked; i++) {
        struct pick *p = &s->picks[i];
        if (!p->walked)
            continue;
        if (config_sampled(&a->cfg) == CONFIG_EVENT_CPU)
            s->tracks[p->track].credit -= p->weight * a->cfg.interval_ns;
        if (stale || codemap_unloaded_since(t0))
            recorder_count(&a->out, FMT_COUNTER_STALE_TICKS, 1);
        else
            record_pick(s, p, t0);
    }
}

static void tick(struct sampler *s)
{
    s->tick++;
    sample_once(s);
    prune_tracks(s);
}

static int suspend_init(struct agent *a, struct source *src, DWORD *mask, DWORD *high)
{
    (void)a;
    (void)src;
    (void)high;
    *mask |= COR_PRF_MONITOR_THREADS | COR_PRF_ENABLE_STACK_SNAPSHOT;
    return 0;
}

static int suspend_start(struct agent *a, struct source *src)
{
    struct sampler *s = mem_calloc(1, sizeof *s);
    if (!s)
        return -1;
    src->state = s;
    s->a = a;
    s->event = config_sampled(&a->cfg) == CONFIG_EVENT_WALL ? FMT_EVENT_WALL : FMT_EVENT_CPU;
    recorder_sampled_event(&a->out, s->event, s->event == FMT_EVENT_CPU ? "cpu" : "wall", "ns",
                           a->cfg.interval_ns);
    map64_init(&s->track_of);
    s->next_tick = clock_now_ns() + a->cfg.interval_ns;
    return 0;
}

static uint64_t suspend_cycle(struct agent *a, struct source *src, uint64_t now)
{
    struct sampler *s = src->state;
    if (!s)
        return 0;
    if (now >= s->next_tick) {
        tick(s);
        s->next_tick += a->cfg.interval_ns;
        now = clock_now_ns();
        if (s->next_tick <= now)
            s->next_tick = now + a->cfg.interval_ns; /* fell behind: do not catch up */
    }
    return s->next_tick;
}

static void suspend_finish(struct agent *a, struct source *src)
{
    (void)a;
    struct sampler *s = src->state;
    if (!s)
        return;
    mem_free(s->views);
    mem_free(s->tracks);
    mem_free(s->picks);
    mem_free(s->arena);
    stackb_free(&s->stack);
    map64_free(&s->track_of);
    mem_free(s);
    src->state = NULL;
}

const struct source_ops source_cpu_suspend = {
    .name = "stop-the-world sampler",
    .init = suspend_init,
    .start = suspend_start,
    .cycle = suspend_cycle,
    .finish = suspend_finish,
};
