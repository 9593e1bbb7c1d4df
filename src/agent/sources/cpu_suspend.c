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
 *      and write the samples (recorder.c).
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
#include "agent/log.h"
#include "agent/osthread.h"
#include "agent/threads.h"
#include "common/mem.h"

/* Most frame ids the arena may hold in one tick (8 MiB). */
#define ARENA_MAX (1u << 20)

/* Per-thread accounting the sampler keeps between ticks. */
struct tracked {
    uint32_t id;           /* recording id */
    uint32_t name_version; /* last written THRD record, +1 (0 = none yet) */
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
    struct thread_view *views;
    size_t views_cap;
    struct tracked *tracks;
    size_t track_count, track_cap;
    struct map64 track_of; /* recording id -> index into tracks */
    struct pick *picks;
    size_t picks_cap;
    FunctionID *arena;
    size_t arena_cap;
    uint32_t *frames; /* one stack being assembled, leaf first */
    size_t frames_cap;
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

/* Writes THRD records for new and renamed threads.  A thread without a
 * managed name is named after its OS name when it is first recorded. */
static void record_thread(struct sampler *s, struct thread_view *v, struct tracked *t)
{
    if (t->name_version == v->name_version + 1 || !v->os_tid)
        return;
    char name[96];
    snprintf(name, sizeof name, "%s", v->name);
    if (!name[0])
        osthread_name(v->os_tid, name, sizeof name);
    recorder_thread(&s->a->rec, v->id, (uint64_t)v->os_tid, name[0] ? name : NULL);
    t->name_version = v->name_version + 1;
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
                threads_set_os_tid(v, v->os_tid);
            }
        }
        /* a thread the runtime has not yet given an OS thread has not
         * started: nothing to walk, and no THRD record yet to refer to */
        if (!v->os_tid)
            continue;
        record_thread(s, v, t);
        uint64_t weight = 1;
        if (a->cfg.event == CONFIG_EVENT_CPU) {
            uint64_t now = osthread_cpu_ns(v->os_tid);
            if (now == UINT64_MAX)
                continue;
            if (t->cpu_last != UINT64_MAX && now > t->cpu_last)
                t->credit += now - t->cpu_last;
            t->cpu_last = now;
            /* a thread that used CPU but is blocked now would be caught in
             * its wait (Thread.Sleep, a lock), not where the CPU went: its
             * credit waits for a tick that finds it running */
            if (t->credit < interval || !osthread_running(v->os_tid))
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
        if (!threads_begin_walk(p->view))
            continue; /* died since the snapshot */
        w.depth = 0;
        w.truncated = 0;
        p->start = (uint32_t)w.used;
        p->hr = info->lpVtbl->DoStackSnapshot(info, p->view->managed, on_frame,
                                              COR_PRF_SNAPSHOT_DEFAULT, &w, NULL, 0);
        threads_end_walk();
        p->depth = w.depth;
        p->truncated = w.truncated;
        p->walked = 1;
    }
}

/* Turns one walked thread into a sample. */
static void record_pick(struct sampler *s, struct pick *p, uint64_t now)
{
    struct recorder *rec = &s->a->rec;
    size_t need = (size_t)p->depth + 2;
    uint32_t *frames = mem_grow(s->frames, &s->frames_cap, need, sizeof *frames);
    if (!frames) {
        recorder_count(rec, RECORDER_DROPPED, 1);
        return;
    }
    s->frames = frames;
    uint32_t n = 0;
    uint32_t depth = p->depth;
    /* every thread starts in native code (the host calling Main, the
     * runtime's thread start): the run of unmanaged frames at the root
     * says nothing and is left out */
    if (depth > 1 && s->arena[p->start + depth - 1] == 0 && !p->truncated)
        depth--;
    for (uint32_t k = 0; k < depth; k++) {
        FunctionID f = s->arena[p->start + k];
        frames[n++] = f ? names_function(&s->a->names, f) : recorder_synthetic(rec, "[native]");
    }
    /* E_FAIL with nothing walked is how DoStackSnapshot answers for a thread
     * with no managed frames at all (the finalizer waiting, the tiered
     * compiler compiling): native code, not a failure */
    int walk_ok = p->hr >= 0 || (p->hr == CORPROF_E_STACKSNAPSHOT_ABORTED && p->truncated) ||
                  (p->hr == E_FAIL && p->depth == 0);
    if (p->truncated) {
        frames[n++] = recorder_synthetic(rec, "[truncated]");
        recorder_count(rec, RECORDER_TRUNCATED, 1);
    } else if (!walk_ok) {
        frames[n++] = recorder_synthetic(rec, "[unknown]");
        recorder_count(rec, RECORDER_FAILED_WALKS, 1);
        log_debug("DoStackSnapshot of thread %d failed: 0x%08x", (int)p->view->os_tid,
                  (unsigned)p->hr);
    } else if (n == 0) {
        /* the thread is running, but not in managed code */
        frames[n++] = recorder_synthetic(rec, "[native]");
    }
    for (uint32_t k = 0; k < n; k++) {
        if (!frames[k]) {
            recorder_count(rec, RECORDER_DROPPED, 1);
            return;
        }
    }
    uint32_t stack = recorder_stack(rec, frames, n);
    if (!stack) {
        recorder_count(rec, RECORDER_DROPPED, 1);
        return;
    }
    recorder_sample(rec, s->event, p->view->id, now, stack, p->weight);
}

static void sample_once(struct sampler *s)
{
    struct agent *a = s->a;
    long count = threads_snapshot(&s->views, &s->views_cap);
    if (count < 0) {
        recorder_count(&a->rec, RECORDER_SKIPPED_TICKS, 1);
        return;
    }
    size_t picked = choose(s, count);
    if (picked == 0)
        return;
    size_arena(s, picked);
    recorder_count(&a->rec, RECORDER_TICKS, 1);

    /* ids_lock is let go while the world is stopped: an unload callback
     * (DynamicMethodUnloaded runs in cooperative mode) waiting for it
     * would hold up the suspension */
    uint64_t unloads = atomic_load(&a->unloads);
    agent_ids_unlock(a);
    uint64_t t0 = recorder_now_ns(), held = 0;
    HRESULT hr = a->info->lpVtbl->SuspendRuntime(a->info);
    if (hr >= 0) {
        walk_all(s, picked);
        a->info->lpVtbl->ResumeRuntime(a->info);
        held = recorder_now_ns() - t0;
    }
    agent_ids_lock(a);
    if (hr == CORPROF_E_RUNTIME_UNINITIALIZED) {
        /* the runtime is still starting: its CPU cannot be attributed, and
         * must not be credited to whatever stack comes first */
        for (size_t i = 0; i < picked; i++)
            s->tracks[s->picks[i].track].credit = 0;
        recorder_count(&a->rec, RECORDER_STARTUP_TICKS, 1);
        return;
    }
    if (hr < 0) {
        /* e.g. CORPROF_E_SUSPENSION_IN_PROGRESS during a GC: try next tick,
         * the CPU credit is kept */
        recorder_count(&a->rec, RECORDER_SKIPPED_TICKS, 1);
        log_debug("SuspendRuntime failed: 0x%08x", (unsigned)hr);
        return;
    }
    /* the FunctionIDs just copied were on live stacks; code unloaded since
     * the suspension may be among them (the method returned, was collected
     * and freed before this thread got the lock back): such a tick is not
     * named but counted as dropped */
    int stale = atomic_load(&a->unloads) != unloads;
    recorder_count(&a->rec, RECORDER_SUSPEND_NS, held);
    recorder_max(&a->rec, RECORDER_MAX_SUSPEND_NS, held);

    for (size_t i = 0; i < picked; i++) {
        struct pick *p = &s->picks[i];
        if (!p->walked)
            continue;
        if (a->cfg.event == CONFIG_EVENT_CPU)
            s->tracks[p->track].credit -= p->weight * a->cfg.interval_ns;
        if (stale)
            recorder_count(&a->rec, RECORDER_DROPPED, 1);
        else
            record_pick(s, p, t0);
    }
}

/* An unload callback's thread, under ids_lock: between ticks this sampler
 * holds no id, only the names' caches do. */
static void on_unload(struct agent *a, ModuleID module, FunctionID function)
{
    names_forget(&a->names, module, function);
}

static void tick(struct sampler *s)
{
    s->tick++;
    sample_once(s);
    prune_tracks(s);
}

void *suspend_sampler_main(void *arg)
{
    struct sampler s;
    memset(&s, 0, sizeof s);
    s.a = arg;
    s.event = s.a->cfg.event == CONFIG_EVENT_WALL ? FMT_EVENT_WALL : FMT_EVENT_CPU;
    map64_init(&s.track_of);
    prctl(PR_SET_NAME, "corscope-sample");
    HRESULT hr = s.a->info->lpVtbl->InitializeCurrentThread(s.a->info);
    if (hr < 0)
        log_warn("InitializeCurrentThread failed: 0x%08x", (unsigned)hr);

    uint64_t interval = s.a->cfg.interval_ns;
    uint64_t next = recorder_now_ns() + interval;
    /* ids_lock is held but in the sleep and the stopped world (agent.h) */
    agent_ids_lock(s.a);
    s.a->on_unload = on_unload;
    while (!atomic_load(&s.a->stopping)) {
        agent_ids_unlock(s.a);
        agent_sleep_until(s.a, next);
        agent_ids_lock(s.a);
        if (atomic_load(&s.a->stopping))
            break;
        uint64_t now = recorder_now_ns();
        next += interval;
        if (next < now)
            next = now + interval; /* fell behind: do not try to catch up */
        tick(&s);
        recorder_maybe_flush(&s.a->rec, recorder_now_ns());
    }
    recorder_count(&s.a->rec, RECORDER_SAMPLER_CPU_NS,
                   osthread_cpu_ns((pid_t)syscall(SYS_gettid)));
    s.a->on_unload = NULL;
    agent_ids_unlock(s.a);
    mem_free(s.views);
    mem_free(s.tracks);
    mem_free(s.picks);
    mem_free(s.arena);
    mem_free(s.frames);
    map64_free(&s.track_of);
    return NULL;
}
