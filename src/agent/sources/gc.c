/*
 * gc: every collection (-e gc): its number, generation, reason, kind
 * (blocking, background, foreground during a background one), whether it
 * compacted, when it started and how long it ran, the heap's generation
 * sizes after it; and every suspension of the runtime for it (the pause
 * the program feels, from the start of the suspension to the end of the
 * resumption).  From the runtime's GC events (keyword GC, informational),
 * which change nothing in how the GC works; COR_PRF_MONITOR_GC, which
 * turns concurrent GC off, is never asked for.
 *
 * The events come on the collecting thread while the runtime is suspended
 * (a background collection's on its own thread, the runtime running); the
 * hook copies their fields into the thread's event queue and returns.  The
 * loop receives them in time order across threads (evq.h) and puts each
 * collection together: GCStart opens it (by its number; a background
 * collection starts on one thread and ends on another), the
 * GCGlobalHeapHistory on the same generation says whether it compacted,
 * GCEnd ends it, and the GCHeapStats that follows GCEnd on that thread
 * gives the sizes; then one "gc" record.  A pause (GCSuspendEEBegin to
 * GCRestartEEEnd on one thread) is one "gc-pause" record, for the last
 * blocking collection that started in it, else the background one under
 * way.  Payload layouts: docs/events.md.
 */
#include <stdatomic.h>
#include <string.h>

#include "agent/agent.h"
#include "agent/eventpipe.h"
#include "agent/evq.h"
#include "common/clock.h"
#include "common/mem.h"

#define KEYWORD_GC 0x1ull

enum gc_event {
    EV_START = 1,
    EV_END = 2,
    EV_RESTART_END = 3,
    EV_HEAP_STATS = 4,
    EV_SUSPEND_BEGIN = 9,
    EV_GLOBAL_HISTORY = 205,
};

/* Payload words of each entry. */
enum { W_COUNT, W_GEN, W_REASON, W_TYPE };                     /* start; end: count, gen */
enum { W_SUSPEND_REASON };                                     /* suspend begin */
enum { W_CONDEMNED, W_HISTORY_REASON, W_MECHANISMS };          /* global heap history */
enum { W_GEN0, W_GEN1, W_GEN2, W_LOH, W_POH, W_PROMOTED, W_PINNED, W_STATS_WORDS };

#define MECHANISM_COMPACTION 0x2u
#define PENDING_MAX 16
#define PAUSES_MAX 16

struct pending {
    uint32_t count, gen, reason, type;
    uint64_t start, end;
    pid_t end_tid;
    int ended;
    int compacting; /* 0 no, 1 yes, 2 unknown */
};

struct pause {
    pid_t tid;      /* 0 = free */
    uint64_t start;
    uint32_t reason;
    uint32_t gc;     /* the last blocking collection started in it */
    uint32_t bgc;    /* or a background one started in it */
};

struct gc_state {
    uint32_t ev_gc, ev_pause;
    struct pending pending[PENDING_MAX];
    uint32_t pending_count;
    struct pause pauses[PAUSES_MAX];
    uint32_t background; /* the background collection under way, 0 = none */
    uint64_t unmatched;
};

static int gc_init(struct agent *a, struct source *s, DWORD *mask, DWORD *high)
{
    (void)a;
    (void)mask;
    (void)high;
    struct gc_state *st = mem_calloc(1, sizeof *st);
    if (!st)
        return -1;
    s->state = st;
    return eventpipe_want(EVENTPIPE_RUNTIME, KEYWORD_GC, 4);
}

static int gc_start(struct agent *a, struct source *s)
{
    struct gc_state *st = s->state;
    st->ev_gc = recorder_define_event(&a->out, FMT_EV_GC);
    st->ev_pause = recorder_define_event(&a->out, FMT_EV_GC_PAUSE);
    recorder_info(&a->out, FMT_INFO_GC,
                  "the runtime's GC events (EventPipe, keyword GC, informational); GC modes "
                  "unchanged (concurrent GC as the program configured it)");
    return 0;
}

/* ---- the hook -------------------------------------------------------------------- */

static uint64_t u32_at(const BYTE *p, ULONG size, ULONG off)
{
    uint32_t v = 0;
    if (off + 4 <= size)
        memcpy(&v, p + off, 4);
    return v;
}

static uint64_t u64_at(const BYTE *p, ULONG size, ULONG off)
{
    uint64_t v = 0;
    if (off + 8 <= size)
        memcpy(&v, p + off, 8);
    return v;
}

static void gc_eventpipe(struct source *s, EVENTPIPE_PROVIDER provider, DWORD id, DWORD version,
                         const BYTE *p, ULONG size, ThreadID thread)
{
    (void)version;
    (void)thread;
    if (!p)
        return;
    uint64_t w[W_STATS_WORDS];
    uint32_t words;
    switch (id) {
    case EV_START: /* Count, Depth, Reason, Type (V1+) */
    case EV_END:   /* Count, Depth */
        if (size < 8)
            return;
        w[W_COUNT] = u32_at(p, size, 0);
        w[W_GEN] = u32_at(p, size, 4);
        w[W_REASON] = u32_at(p, size, 8);
        w[W_TYPE] = u32_at(p, size, 12);
        words = 4;
        break;
    case EV_SUSPEND_BEGIN: /* Reason, Count */
        w[W_SUSPEND_REASON] = u32_at(p, size, 0);
        words = 1;
        break;
    case EV_RESTART_END:
        words = 0;
        break;
    case EV_GLOBAL_HISTORY: /* ... CondemnedGeneration @12, Reason @20, GlobalMechanisms @24 */
        if (size < 28)
            return;
        w[W_CONDEMNED] = u32_at(p, size, 12);
        w[W_HISTORY_REASON] = u32_at(p, size, 20);
        w[W_MECHANISMS] = u32_at(p, size, 24);
        words = 3;
        break;
    case EV_HEAP_STATS: /* sizes and promoted bytes per generation, V2 adds the POH */
        if (size < 92)
            return;
        w[W_GEN0] = u64_at(p, size, 0);
        w[W_GEN1] = u64_at(p, size, 16);
        w[W_GEN2] = u64_at(p, size, 32);
        w[W_LOH] = u64_at(p, size, 48);
        w[W_POH] = u64_at(p, size, 94);
        w[W_PROMOTED] = u64_at(p, size, 8) + u64_at(p, size, 24) + u64_at(p, size, 40) +
                        u64_at(p, size, 56) + u64_at(p, size, 102);
        w[W_PINNED] = u32_at(p, size, 80);
        words = W_STATS_WORDS;
        break;
    default:
        return;
    }
    if (!eventpipe_is_runtime(s->agent->info, provider))
        return;
    evq_push(s->index, (uint32_t)id, w, words, 0);
}

/* ---- the loop -------------------------------------------------------------------- */

static struct pause *pause_of(struct gc_state *st, pid_t tid, int make)
{
    struct pause *free_slot = NULL;
    for (int i = 0; i < PAUSES_MAX; i++) {
        if (st->pauses[i].tid == tid)
            return &st->pauses[i];
        if (!st->pauses[i].tid && !free_slot)
            free_slot = &st->pauses[i];
    }
    if (!make || !free_slot)
        return NULL;
    memset(free_slot, 0, sizeof *free_slot);
    free_slot->tid = tid;
    return free_slot;
}

static struct pending *pending_of(struct gc_state *st, uint32_t count)
{
    for (uint32_t i = 0; i < st->pending_count; i++)
        if (st->pending[i].count == count)
            return &st->pending[i];
    return NULL;
}

static void pending_drop(struct gc_state *st, struct pending *p)
{
    *p = st->pending[--st->pending_count];
}

static void record_gc(struct agent *a, struct gc_state *st, const struct pending *p,
                      const uint64_t *stats, uint64_t now)
{
    uint64_t duration = p->end > p->start ? p->end - p->start : 0;
    uint64_t values[FMT_GC_VALUE_COUNT] = {[FMT_GC_DURATION] = duration};
    uint64_t fields[FMT_GC_FIELD_COUNT] = {
        [FMT_GC_NUMBER] = p->count,
        [FMT_GC_GENERATION] = p->gen,
        [FMT_GC_REASON] = p->reason,
        [FMT_GC_KIND] = p->type,
        [FMT_GC_COMPACTING] = (uint64_t)p->compacting,
        [FMT_GC_START] = recorder_since_start(&a->out, p->start),
        [FMT_GC_GEN0] = stats ? stats[W_GEN0] : 0,
        [FMT_GC_GEN1] = stats ? stats[W_GEN1] : 0,
        [FMT_GC_GEN2] = stats ? stats[W_GEN2] : 0,
        [FMT_GC_LOH] = stats ? stats[W_LOH] : 0,
        [FMT_GC_POH] = stats ? stats[W_POH] : 0,
        [FMT_GC_PROMOTED] = stats ? stats[W_PROMOTED] : 0,
        [FMT_GC_PINNED_OBJECTS] = stats ? stats[W_PINNED] : 0};
    recorder_record(&a->out, st->ev_gc, 0, now, 0, values, FMT_GC_VALUE_COUNT, fields,
                    FMT_GC_FIELD_COUNT);
}

static void gc_entry(struct agent *a, struct source *s, const struct evq_entry *e)
{
    struct gc_state *st = s->state;
    const uint64_t *w = e->payload;
    switch (e->kind) {
    case EV_SUSPEND_BEGIN: {
        struct pause *pa = pause_of(st, e->tid, 1);
        if (pa) {
            pa->start = e->time;
            pa->reason = e->words > W_SUSPEND_REASON ? (uint32_t)w[W_SUSPEND_REASON] : 0;
            pa->gc = pa->bgc = 0;
        }
        break;
    }
    case EV_START: {
        if (e->words < 4)
            break;
        struct pending *p = pending_of(st, (uint32_t)w[W_COUNT]);
        if (!p) {
            if (st->pending_count == PENDING_MAX) {
                st->unmatched++; /* the oldest never ended: forget it */
                pending_drop(st, &st->pending[0]);
            }
            p = &st->pending[st->pending_count++];
        }
        memset(p, 0, sizeof *p);
        p->count = (uint32_t)w[W_COUNT];
        p->gen = (uint32_t)w[W_GEN];
        p->reason = (uint32_t)w[W_REASON];
        p->type = (uint32_t)w[W_TYPE];
        p->start = e->time;
        p->compacting = 2;
        struct pause *pa = pause_of(st, e->tid, 0);
        if (p->type == 1) {
            st->background = p->count;
            if (pa && !pa->bgc)
                pa->bgc = p->count;
        } else if (pa) {
            pa->gc = p->count;
        }
        break;
    }
    case EV_GLOBAL_HISTORY: {
        /* the latest collection of that generation still running */
        struct pending *best = NULL;
        for (uint32_t i = 0; i < st->pending_count; i++) {
            struct pending *p = &st->pending[i];
            if (!p->ended && p->gen == w[W_CONDEMNED] && (!best || p->start >= best->start))
                best = p;
        }
        if (best)
            best->compacting = (w[W_MECHANISMS] & MECHANISM_COMPACTION) ? 1 : 0;
        break;
    }
    case EV_END: {
        struct pending *p = pending_of(st, (uint32_t)w[W_COUNT]);
        if (!p) {
            st->unmatched++;
            break;
        }
        p->end = e->time;
        p->end_tid = e->tid;
        p->ended = 1;
        if (st->background == p->count)
            st->background = 0;
        break;
    }
    case EV_HEAP_STATS: {
        /* the collection that just ended on this thread */
        struct pending *best = NULL;
        for (uint32_t i = 0; i < st->pending_count; i++) {
            struct pending *p = &st->pending[i];
            if (p->ended && p->end_tid == e->tid && (!best || p->end >= best->end))
                best = p;
        }
        if (!best || e->words < W_STATS_WORDS) {
            st->unmatched += !best;
            break;
        }
        record_gc(a, st, best, w, e->time);
        pending_drop(st, best);
        break;
    }
    case EV_RESTART_END: {
        struct pause *pa = pause_of(st, e->tid, 0);
        if (!pa)
            break;
        uint64_t length = e->time > pa->start ? e->time - pa->start : 0;
        uint32_t gc = pa->gc ? pa->gc : pa->bgc ? pa->bgc : st->background;
        uint64_t values[FMT_GC_PAUSE_VALUE_COUNT] = {[FMT_GC_PAUSE_PAUSE] = length};
        uint64_t fields[FMT_GC_PAUSE_FIELD_COUNT] = {
            [FMT_GC_PAUSE_START] = recorder_since_start(&a->out, pa->start),
            [FMT_GC_PAUSE_REASON] = pa->reason,
            [FMT_GC_PAUSE_GC] = gc};
        recorder_record(&a->out, st->ev_pause, 0, e->time, 0, values, FMT_GC_PAUSE_VALUE_COUNT,
                        fields, FMT_GC_PAUSE_FIELD_COUNT);
        pa->tid = 0;
        break;
    }
    default:
        break;
    }
}

static void gc_finish(struct agent *a, struct source *s)
{
    struct gc_state *st = s->state;
    /* collections that ended without their sizes, then the unfinished */
    for (uint32_t i = 0; i < st->pending_count; i++) {
        if (st->pending[i].ended)
            record_gc(a, st, &st->pending[i], NULL, clock_now_ns());
        else
            st->unmatched++;
    }
    st->pending_count = 0;
    recorder_count(&a->out, FMT_COUNTER_GC_UNMATCHED, st->unmatched);
}

static const struct source_hooks gc_hooks = {
    .eventpipe_event = gc_eventpipe,
};

const struct source_ops source_gc = {
    .name = "collections",
    .init = gc_init,
    .start = gc_start,
    .entry = gc_entry,
    .finish = gc_finish,
    .hooks = &gc_hooks,
};
