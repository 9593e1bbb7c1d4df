/*
 * async_snapshots: the async operations a process has pending, every
 * SNAPSHOT_NS (`record --async=snapshots`, what `corscope async -p PID`
 * attaches with; docs/async.md).  No samples: each snapshot suspends the
 * runtime, walks the heap (async/heap.h), and records one "async" record
 * per operation: its method, the await it is stopped at, which operation
 * awaits it, and since when it has been at that await as far as the
 * snapshots saw.
 *
 * An operation is followed from snapshot to snapshot by a weak handle
 * (ICorProfilerInfo13), which the collector updates when it moves the
 * object; one no snapshot finds any more has finished, and its handle is
 * given back.  So "pending since" is a lower bound: the first snapshot that
 * saw it at that await (the operations pending at the first are older
 * than it says, and the report says so).
 *
 * The first snapshot walks the heap twice: the first walk meets every type
 * for the first time (types are classified outside the suspension), the
 * second reads.  Each snapshot's pause is recorded ("async-snapshot").
 * The source needs ICorProfilerInfo15 (.NET 9 and later: snap_init
 * checks info_version, and nothing else runs without it); before that the
 * recording says why it has none.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "agent/agent.h"
#include "agent/async/heap.h"
#include "agent/async/types.h"
#include "agent/log.h"
#include "common/clock.h"
#include "common/map.h"
#include "common/mem.h"

#define SNAPSHOT_NS 500000000ull
#define CLASSIFY_MAX 50000 /* types classified after one walk, at most */
#define SUSPEND_TRIES 50

struct tracked {
    ObjectHandleID handle;
    uint64_t id;
    uint64_t mt;
    int32_t state;
    uint64_t since_ns;   /* first snapshot that saw it at this state */
    uint64_t seen;       /* the last snapshot that found it */
    ObjectID object;     /* where it is in the snapshot being taken */
};

struct snapshots {
    int usable;
    uint32_t ev_op, ev_snapshot;
    uint64_t next_ns, number, next_id, first_ns;
    struct tracked *tracked;
    size_t count, cap;
    struct heap_snapshot heap;
};

static struct snapshots the;

static int snap_init(struct agent *a, struct source *s, DWORD *mask, DWORD *high)
{
    (void)s;
    (void)mask;
    (void)high;
    heap_snapshot_free(&the.heap);
    mem_free(the.tracked);
    memset(&the, 0, sizeof the);
    heap_snapshot_init(&the.heap);
    the.usable = a->info_version >= 15;
    return 0;
}

static int snap_start(struct agent *a, struct source *s)
{
    (void)s;
    if (!the.usable) {
        recorder_info(&a->out, FMT_INFO_ASYNC,
                      "off (snapshots of pending operations need ICorProfilerInfo15: .NET 9 or "
                      "later)");
        log_warn("this runtime cannot enumerate its heap (ICorProfilerInfo15, .NET 9 and "
                 "later): no snapshots of pending async operations");
        return 0;
    }
    the.ev_op = recorder_define_event(&a->out, FMT_EV_ASYNC);
    the.ev_snapshot = recorder_define_event(&a->out, FMT_EV_ASYNC_SNAPSHOT);
    char text[96];
    snprintf(text, sizeof text, "snapshots of pending operations every %llu ms",
             (unsigned long long)(SNAPSHOT_NS / 1000000));
    recorder_info(&a->out, FMT_INFO_ASYNC, text);
    return 0;
}

static uint64_t zigzag(int64_t v)
{
    return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

/* Suspends the runtime (retrying while a collection holds it). */
static HRESULT suspend(struct agent *a)
{
    HRESULT hr = E_FAIL;
    for (int i = 0; i < SUSPEND_TRIES; i++) {
        hr = a->info->lpVtbl->SuspendRuntime(a->info);
        if (hr != CORPROF_E_SUSPENSION_IN_PROGRESS)
            break;
        struct timespec pause = {0, 2000000};
        nanosleep(&pause, NULL);
    }
    return hr;
}

static uint64_t no_snapshot(HRESULT hr)
{
    log_debug("async: SuspendRuntime failed (0x%08x): no snapshot", (unsigned)hr);
    return 0;
}

/* One walk, the runtime suspended; the tracked operations' handles
 * resolved (tracked[i].object) and new ones given handles.  Returns the
 * suspension's length, 0 when it could not be taken.  Nothing is written
 * while the runtime is suspended (a log line to a pipe that only a managed
 * thread of this process drains would never end: docs/reliability.md). */
static uint64_t walk(struct agent *a, int follow)
{
    uint64_t t0 = clock_now_ns();
    HRESULT hr = suspend(a);
    if (hr < 0)
        return no_snapshot(hr);
    struct map64 by_object;
    map64_init(&by_object);
    if (follow) {
        for (size_t i = 0; i < the.count; i++) {
            ObjectID o = 0;
            if (a->info->lpVtbl->GetObjectIDFromHandle(a->info, the.tracked[i].handle, &o) < 0)
                o = 0;
            the.tracked[i].object = o;
            if (o)
                map64_put(&by_object, o, (uint32_t)i);
        }
    }
    hr = heap_walk(a->info, &the.heap);
    for (size_t k = 0; follow && hr >= 0 && k < the.heap.count; k++) {
        const struct heap_op *op = &the.heap.ops[k];
        uint32_t at;
        if (map64_get(&by_object, op->object, &at)) {
            the.tracked[at].seen = the.number;
            continue;
        }
        ObjectHandleID h = NULL;
        if (a->info->lpVtbl->CreateHandle(a->info, op->object, COR_PRF_HANDLE_TYPE_WEAK, &h) < 0 ||
            !h)
            continue;
        struct tracked *grown = mem_grow(the.tracked, &the.cap, the.count + 1, sizeof *grown);
        if (!grown) {
            a->info->lpVtbl->DestroyHandle(a->info, h);
            continue;
        }
        the.tracked = grown;
        the.tracked[the.count++] = (struct tracked){h, ++the.next_id, op->mt, op->state, 0,
                                                    the.number, op->object};
        map64_put(&by_object, op->object, (uint32_t)(the.count - 1));
    }
    a->info->lpVtbl->ResumeRuntime(a->info);
    uint64_t pause = clock_now_ns() - t0;
    if (hr < 0)
        log_debug("async: EnumerateGCHeapObjects failed (0x%08x)", (unsigned)hr);
    map64_free(&by_object);
    /* the types met for the first time, classified now the runtime runs */
    size_t classified = 0;
    for (size_t i = 0; i < the.heap.unknown.cap && classified < CLASSIFY_MAX; i++) {
        if (!the.heap.unknown.vals[i])
            continue;
        async_node_of(a, the.heap.unknown.keys[i], t0);
        classified++;
    }
    return pause ? pause : 1;
}

static void snapshot(struct agent *a)
{
    the.number++;
    uint64_t at = clock_now_ns();
    if (!the.first_ns)
        the.first_ns = at;
    uint64_t pause = 0;
    if (the.number == 1)
        pause += walk(a, 0); /* learning the types */
    uint64_t p = walk(a, 1);
    if (!p)
        return;
    pause += p;
    /* the operations of this snapshot, by where they were */
    struct map64 index;
    map64_init(&index);
    for (size_t i = 0; i < the.count; i++)
        if (the.tracked[i].seen == the.number && the.tracked[i].object)
            map64_put(&index, the.tracked[i].object, (uint32_t)i);
    size_t ops = 0;
    for (size_t k = 0; k < the.heap.count; k++) {
        const struct heap_op *op = &the.heap.ops[k];
        uint32_t i, up;
        if (!map64_get(&index, op->object, &i))
            continue;
        struct tracked *t = &the.tracked[i];
        if (t->since_ns == 0 || t->state != op->state) {
            t->state = op->state;
            t->since_ns = at;
        }
        uint64_t awaiter = op->awaiter && map64_get(&index, op->awaiter, &up) ? the.tracked[up].id
                                                                              : 0;
        const struct async_node *n = async_node_known(op->mt);
        uint32_t method = n ? (n->method ? n->method : n->frame) : 0;
        uint64_t values[FMT_ASYNC_VALUE_COUNT] = {[FMT_ASYNC_PENDING] = at - t->since_ns};
        uint64_t fields[FMT_ASYNC_FIELD_COUNT] = {
            [FMT_ASYNC_SNAPSHOT] = the.number,
            [FMT_ASYNC_OP] = t->id,
            [FMT_ASYNC_AWAITER] = awaiter,
            [FMT_ASYNC_METHOD] = method,
            [FMT_ASYNC_STATE] = zigzag(op->state == INT32_MIN ? -3 : op->state),
            [FMT_ASYNC_SINCE] = recorder_since_start(&a->out, t->since_ns),
            [FMT_ASYNC_END] = op->end_frame};
        recorder_record(&a->out, the.ev_op, 0, at, 0, values, FMT_ASYNC_VALUE_COUNT, fields,
                        FMT_ASYNC_FIELD_COUNT);
        ops++;
    }
    map64_free(&index);
    uint64_t values[FMT_ASYNC_SNAPSHOT_VALUE_COUNT] = {[FMT_ASYNC_SNAPSHOT_PAUSE] = pause};
    uint64_t fields[FMT_ASYNC_SNAPSHOT_FIELD_COUNT] = {[FMT_ASYNC_SNAPSHOT_SNAPSHOT] = the.number,
                                                       [FMT_ASYNC_SNAPSHOT_OBJECTS] =
                                                           the.heap.objects,
                                                       [FMT_ASYNC_SNAPSHOT_OPS] = ops};
    recorder_record(&a->out, the.ev_snapshot, 0, at, 0, values, FMT_ASYNC_SNAPSHOT_VALUE_COUNT,
                    fields, FMT_ASYNC_SNAPSHOT_FIELD_COUNT);
    /* the operations no snapshot finds any more finished */
    size_t kept = 0;
    for (size_t i = 0; i < the.count; i++) {
        if (the.tracked[i].seen == the.number)
            the.tracked[kept++] = the.tracked[i];
        else
            a->info->lpVtbl->DestroyHandle(a->info, the.tracked[i].handle);
    }
    the.count = kept;
    if (the.heap.failed)
        log_warn("async: out of memory during a heap walk: a snapshot is partial");
}

static uint64_t snap_cycle(struct agent *a, struct source *s, uint64_t now)
{
    (void)s;
    if (!the.usable)
        return 0;
    if (now >= the.next_ns) {
        snapshot(a);
        the.next_ns = clock_now_ns() + SNAPSHOT_NS;
    }
    return the.next_ns;
}

static void snap_stop(struct agent *a, struct source *s)
{
    (void)s;
    if (!the.usable)
        return;
    /* detaching: the last moment, and the handles given back */
    if (atomic_load(&a->detaching)) {
        snapshot(a);
        for (size_t i = 0; i < the.count; i++)
            a->info->lpVtbl->DestroyHandle(a->info, the.tracked[i].handle);
        the.count = 0;
    }
}

static void snap_finish(struct agent *a, struct source *s)
{
    (void)a;
    (void)s;
    heap_snapshot_free(&the.heap);
    mem_free(the.tracked);
    the.tracked = NULL;
    the.count = the.cap = 0;
    async_types_free();
}

const struct source_ops source_async_snapshots = {
    .name = "async-snapshots",
    .init = snap_init,
    .start = snap_start,
    .cycle = snap_cycle,
    .stop = snap_stop,
    .finish = snap_finish,
};
