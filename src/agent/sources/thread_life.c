/*
 * thread_life: the life of every thread (always on: it costs a queue entry
 * per thread start, rename and end).  Recorded as `thread` events, one per
 * moment, with the thread's CPU time so far (the kernel's per-thread clock):
 *
 *   start     ThreadAssignedToOSThread, on the new thread itself;
 *   name      ThreadNameChanged, on the thread that sets it (the name of a
 *             Thread is often set before it starts: recorded at its start);
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
#include "agent/osthread.h"
#include "common/map.h"

enum { KIND_START = 1, KIND_NAME = 2, KIND_END = 3 };
enum { WHAT_START = 1, WHAT_NAME = 2, WHAT_END = 3, WHAT_RUNNING = 4 };

#define NAME_WORDS 12 /* 95 bytes, as the registry keeps */

static struct source *self;

struct life {
    uint32_t event;
    struct map64 tid_of;  /* ThreadID -> OS tid, once started */
    struct map64 name_of; /* ThreadID -> name string id, named before it started */
    struct map64 ended;   /* OS tids whose end was recorded */
};

static struct life state;

/* ---- the callbacks --------------------------------------------------------------- */

static uint64_t own_cpu_ns(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
        return 0;
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void thread_os_assigned(struct source *s, ThreadID thread, pid_t tid)
{
    (void)s;
    if (tid != (pid_t)gettid())
        return; /* only on the thread itself, as it starts */
    uint64_t w[2] = {thread, own_cpu_ns()};
    evq_push(self->index, KIND_START, w, 2, 0);
}

static void thread_destroyed(struct source *s, ThreadID thread)
{
    ThreadID current = 0;
    if (s->agent->info->lpVtbl->GetCurrentThreadID(s->agent->info, &current) < 0 ||
        current != thread)
        return; /* not on the dying thread: its CPU time is not ours to read */
    uint64_t w[2] = {thread, own_cpu_ns()};
    evq_push(self->index, KIND_END, w, 2, 0);
}

static void thread_renamed(struct source *s, ThreadID thread, const char *name)
{
    (void)s;
    uint64_t w[1 + NAME_WORDS] = {thread};
    size_t n = strnlen(name, NAME_WORDS * 8 - 1);
    memcpy(w + 1, name, n);
    ((char *)(w + 1))[n] = '\0';
    evq_push(self->index, KIND_NAME, w, 1 + (uint32_t)(n + 8) / 8, 0);
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
    map64_init(&state.tid_of);
    map64_init(&state.name_of);
    map64_init(&state.ended);
    struct writer_event_def d = {0, "thread", 1, {"cpu"}, {"ns"}, 2, {"what", "name"},
                                 {FMT_FIELD_UINT, FMT_FIELD_STRING}};
    state.event = recorder_define(&a->out, &d);
    return state.event ? 0 : -1;
}

static void record_moment(struct agent *a, pid_t tid, uint64_t time, uint64_t what, uint64_t cpu,
                  uint32_t name)
{
    uint32_t thread = tids_get_at(&a->tids, &a->out, tid, time);
    if (what == WHAT_NAME && name < a->out.strings.count)
        /* the recording's name of the thread too, even if it is gone by
         * the time the loop looks at names */
        recorder_thread(&a->out, thread, (uint64_t)tid, a->out.strings.strs[name]);
    uint64_t fields[2] = {what, name};
    recorder_record(&a->out, state.event, thread, time, 0, &cpu, 1, fields, 2);
}

static void entry(struct agent *a, struct source *s, const struct evq_entry *e)
{
    (void)s;
    if (e->words < 1)
        return;
    ThreadID thread = (ThreadID)e->payload[0];
    uint32_t at;
    switch (e->kind) {
    case KIND_START:
        if (e->words < 2)
            return;
        map64_put(&state.tid_of, thread, (uint32_t)e->tid);
        map64_remove(&state.ended, (uint64_t)e->tid);
        record_moment(a, e->tid, e->time, WHAT_START, e->payload[1], 0);
        if (map64_get(&state.name_of, thread, &at)) {
            record_moment(a, e->tid, e->time, WHAT_NAME, e->payload[1], at);
            map64_remove(&state.name_of, thread);
        }
        break;
    case KIND_NAME: {
        const char *name = (const char *)(e->payload + 1);
        uint32_t sid = recorder_string(&a->out, name, strnlen(name, (e->words - 1) * 8));
        if (map64_get(&state.tid_of, thread, &at))
            record_moment(a, (pid_t)at, e->time, WHAT_NAME, 0, sid);
        else
            map64_put(&state.name_of, thread, sid); /* recorded when it starts */
        break;
    }
    case KIND_END:
        if (e->words < 2)
            return;
        record_moment(a, e->tid, e->time, WHAT_END, e->payload[1], 0);
        map64_put(&state.ended, (uint64_t)e->tid, 1);
        map64_remove(&state.tid_of, thread);
        map64_remove(&state.name_of, thread);
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
    uint64_t now = agent_now_ns();
    struct dirent *d;
    uint32_t unused;
    while (dir && (d = readdir(dir)) != NULL) {
        char *end;
        long tid = strtol(d->d_name, &end, 10);
        if (*end || tid <= 0 || (pid_t)tid == me || map64_get(&state.ended, (uint64_t)tid, &unused))
            continue;
        uint64_t cpu = osthread_cpu_ns((pid_t)tid);
        if (cpu == UINT64_MAX)
            continue; /* ended meanwhile */
        record_moment(a, (pid_t)tid, now, WHAT_RUNNING, cpu, 0);
    }
    if (dir)
        closedir(dir);
    map64_free(&state.tid_of);
    map64_free(&state.name_of);
    map64_free(&state.ended);
    memset(&state, 0, sizeof state);
}

static const struct source_hooks hooks = {
    .thread_os_assigned = thread_os_assigned,
    .thread_destroyed = thread_destroyed,
    .thread_renamed = thread_renamed,
};

const struct source_ops source_threads = {
    .name = "threads",
    .init = init,
    .start = start,
    .entry = entry,
    .finish = finish,
    .hooks = &hooks,
};
