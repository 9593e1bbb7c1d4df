/*
 * thread_events: the life of every thread (always on: it costs a queue entry
 * per thread start, rename and end).  Recorded as `thread` events, one per
 * moment, with the thread's CPU time so far (the kernel's per-thread clock):
 *
 *   start     ThreadAssignedToOSThread, on the new thread itself;
 *   name      ThreadNameChanged, on the thread that sets it; a name given
 *             before the thread started (new Thread { Name = ... }) is
 *             recorded at its start, from the thread registry (thread_registry.h);
 *   end       ThreadDestroyed, on the dying thread, with its CPU time;
 *   running   when the recording ends, every thread of the process still
 *             alive (managed or not, from /proc/self/task), with its CPU
 *             time and name.
 *
 * The runtime reports managed threads only; native threads (the GC's, the
 * host's) appear as running at the end, and in the samples taken on them.
 */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agent/agent.h"
#include "agent/evq.h"
#include "agent/os_thread.h"
#include "agent/thread_registry.h"
#include "common/clock.h"
#include "common/map.h"

enum { KIND_START = 1, KIND_NAME = 2, KIND_END = 3 };

#define NAME_WORDS 12 /* 95 bytes, as the registry keeps */

static struct source *self;

struct life {
    uint32_t event;
    struct map64 ended; /* OS tids whose end was recorded */
};

static struct life state;

/* ---- the callbacks --------------------------------------------------------------- */

/* Payload: [0] the OS tid, [1] CPU ns, [2...] a name (NUL-terminated). */
static void queue(uint32_t kind, pid_t tid, uint64_t cpu, const char *name)
{
    uint64_t w[2 + NAME_WORDS] = {(uint64_t)tid, cpu};
    size_t n = name ? strnlen(name, NAME_WORDS * 8 - 1) : 0;
    memcpy(w + 2, name ? name : "", n);
    ((char *)(w + 2))[n] = '\0';
    evq_push(self->index, kind, w, 2 + (uint32_t)(n + 8) / 8, 0);
}

static void thread_os_assigned(struct source *s, ThreadID thread, pid_t tid)
{
    (void)s;
    if (tid != (pid_t)gettid())
        return; /* only on the thread itself, as it starts */
    /* the name it was given before it started (the registry has it) */
    char name[NAME_WORDS * 8];
    pid_t known = 0;
    if (thread_registry_lookup(thread, &known, name, sizeof name) < 0)
        name[0] = '\0';
    queue(KIND_START, tid, clock_ns(CLOCK_THREAD_CPUTIME_ID), name);
}

static void thread_destroyed(struct source *s, ThreadID thread)
{
    ThreadID current = 0;
    if (s->agent->info->lpVtbl->GetCurrentThreadID(s->agent->info, &current) < 0 ||
        current != thread)
        return; /* not on the dying thread: its CPU time is not ours to read */
    queue(KIND_END, (pid_t)gettid(), clock_ns(CLOCK_THREAD_CPUTIME_ID), NULL);
}

static void thread_renamed(struct source *s, ThreadID thread, const char *name)
{
    (void)s;
    pid_t tid = 0;
    char known[NAME_WORDS * 8];
    /* not started yet: its start will say it */
    if (thread_registry_lookup(thread, &tid, known, sizeof known) < 0 || !tid)
        return;
    queue(KIND_NAME, tid, 0, name);
}

/* ---- the loop ------------------------------------------------------------------- */

static int init(struct agent *a, struct source *s, DWORD *mask, DWORD *high)
{
    (void)a;
    (void)high;
    self = s;
    s->state = &state;
    *mask |= COR_PRF_MONITOR_THREADS;
    return 0;
}

static int start(struct agent *a, struct source *s)
{
    (void)s;
    map64_init(&state.ended);
    state.event = recorder_define_event(&a->out, FMT_EV_THREAD);
    return state.event ? 0 : -1;
}

static void record_moment(struct agent *a, pid_t tid, uint64_t time, uint64_t what, uint64_t cpu,
                          uint32_t name)
{
    /* a new name is the recording's name of the thread too, even if it
     * is gone by the time the loop looks at names */
    uint32_t thread = what == FMT_WHAT_NAME && name < a->out.strings.count
                          ? thread_ids_named(&a->thread_ids, &a->out, tid, time, a->out.strings.strs[name])
                          : thread_ids_get_at(&a->thread_ids, &a->out, tid, time);
    uint64_t values[FMT_THREAD_VALUE_COUNT] = {[FMT_THREAD_CPU] = cpu};
    uint64_t fields[FMT_THREAD_FIELD_COUNT] = {[FMT_THREAD_WHAT] = what, [FMT_THREAD_NAME] = name};
    recorder_record(&a->out, state.event, thread, time, 0, values, FMT_THREAD_VALUE_COUNT, fields,
                    FMT_THREAD_FIELD_COUNT);
}

static void entry(struct agent *a, struct source *s, const struct evq_entry *e)
{
    (void)s;
    if (e->words < 3)
        return;
    pid_t tid = (pid_t)e->payload[0];
    uint64_t cpu = e->payload[1];
    const char *name = (const char *)(e->payload + 2);
    size_t len = strnlen(name, (e->words - 2) * 8);
    uint32_t sid = len ? recorder_string(&a->out, name, len) : 0;
    switch (e->kind) {
    case KIND_START:
        map64_remove(&state.ended, (uint64_t)tid);
        record_moment(a, tid, e->time, FMT_WHAT_START, cpu, 0);
        if (sid)
            record_moment(a, tid, e->time, FMT_WHAT_NAME, cpu, sid);
        break;
    case KIND_NAME:
        record_moment(a, tid, e->time, FMT_WHAT_NAME, cpu, sid);
        break;
    case KIND_END:
        record_moment(a, tid, e->time, FMT_WHAT_END, cpu, 0);
        map64_put(&state.ended, (uint64_t)tid, 1);
        break;
    }
}

/* Last (after the last drain): every thread still alive, with its CPU
 * time so far. */
static void finish(struct agent *a, struct source *s)
{
    (void)s;
    DIR *dir = opendir("/proc/self/task");
    pid_t me = (pid_t)gettid();
    uint64_t now = clock_now_ns();
    struct dirent *d;
    uint32_t unused;
    while (dir && (d = readdir(dir)) != NULL) {
        char *end;
        long tid = strtol(d->d_name, &end, 10);
        if (*end || tid <= 0 || (pid_t)tid == me || map64_get(&state.ended, (uint64_t)tid, &unused))
            continue;
        uint64_t cpu = os_thread_cpu_ns((pid_t)tid);
        if (cpu == UINT64_MAX)
            continue; /* ended meanwhile */
        record_moment(a, (pid_t)tid, now, FMT_WHAT_RUNNING, cpu, 0);
    }
    if (dir)
        closedir(dir);
    map64_free(&state.ended);
    memset(&state, 0, sizeof state);
}

static const struct source_hooks hooks = {
    .thread_os_assigned = thread_os_assigned,
    .thread_destroyed = thread_destroyed,
    .thread_renamed = thread_renamed,
};

const struct source_ops source_thread_events = {
    .name = "threads",
    .init = init,
    .start = start,
    .entry = entry,
    .finish = finish,
    .hooks = &hooks,
};
