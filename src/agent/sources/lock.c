/*
 * lock: contended lock waits (-e lock): each time a thread had to wait for
 * a Monitor (`lock`) or a System.Threading.Lock held by another, with the
 * waiting stack, the wait's duration and the thread that held the lock.
 *
 * The runtime says it in its Contention events (EventPipe, keyword 0x4000,
 * docs/events.md), raised on the waiting thread: ContentionStart before it
 * blocks (with the lock's id and, .NET 8 and later, the OS thread id of the
 * owner), ContentionStop once it has the lock (with the wait's duration in
 * ns on .NET 8 and later; timed here from the start otherwise).  Both run
 * inside the waiting thread's Enter, so the stack taken at the stop is the
 * waiting stack, and a wait shorter than --lock-min costs only the two
 * callbacks: it is added to a total, not walked, and the totals are
 * recorded now and then as one record without a stack (below_min 1).
 * Monitor's events come in cooperative mode, Lock's in preemptive: the
 * hook only reads the payload and queues.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "agent/agent.h"
#include "agent/agent_thread.h"
#include "agent/eventpipe.h"
#include "agent/evq.h"
#include "agent/stacks.h"
#include "common/clock.h"

enum { KIND_WAIT = 1 };
enum { EVENT_CONTENTION_START = 81, EVENT_CONTENTION_STOP = 91 };
#define KEYWORD_CONTENTION 0x4000ull
/* the short waits' totals are recorded at most this often */
#define SHORT_EVERY_NS 1000000000ull

static struct source *self;
static uint64_t min_ns;
static _Atomic uint64_t short_count, short_ns;

static uint64_t u64_at(const BYTE *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

static void eventpipe_event(struct source *s, EVENTPIPE_PROVIDER provider, DWORD id,
                            DWORD version, const BYTE *payload, ULONG size, ThreadID thread)
{
    (void)thread;
    if (id != EVENT_CONTENTION_START && id != EVENT_CONTENTION_STOP)
        return;
    if (!eventpipe_is_runtime(s->agent->info, provider))
        return;
    /* the thread's open wait (agent_thread.h); without a block (out of
     * memory: counted there) only a stop that carries its duration is
     * recorded */
    struct agent_thread *t = agent_thread_get();
    struct agent_lock_wait none = {0}, *w = t ? &t->lock_wait : &none;
    if (id == EVENT_CONTENTION_START) {
        /* V2: u8 flags, u16 instance, ptr LockID, ptr object, u64 owner */
        w->start_ns = clock_now_ns();
        w->flags = size >= 1 ? payload[0] : 0;
        w->lock = size >= 11 ? u64_at(payload + 3) : 0;
        w->owner = version >= 2 && size >= 27 ? u64_at(payload + 19) : 0;
        w->open = 1;
        return;
    }
    /* V1: u8 flags, u16 instance, double DurationNs */
    uint64_t duration;
    if (version >= 1 && size >= 11) {
        double d;
        memcpy(&d, payload + 3, 8);
        duration = d > 0 ? (uint64_t)d : 0;
    } else if (w->open) {
        duration = clock_now_ns() - w->start_ns;
    } else {
        return;
    }
    int open = w->open;
    w->open = 0;
    if (duration < min_ns) {
        atomic_fetch_add_explicit(&short_count, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&short_ns, duration, memory_order_relaxed);
        return;
    }
    uint64_t p[4] = {duration, open ? w->owner : 0, open ? w->lock : 0, open ? w->flags : 0};
    evq_push(self->index, KIND_WAIT, p, 4, self->agent->cfg.max_depth);
    if (evq_pressed())
        agent_hurry(self->agent);
}

/* ---- the loop -------------------------------------------------------------------- */

struct locksource {
    uint32_t event;
    struct stackb stack;
    uint64_t short_count_seen, short_ns_seen, short_written_ns;
};

static struct locksource state;

static int init(struct agent *a, struct source *s, DWORD *mask, DWORD *high)
{
    (void)mask;
    (void)high;
    self = s;
    s->state = &state;
    min_ns = a->cfg.lock_min_ns;
    return eventpipe_want(EVENTPIPE_RUNTIME, KEYWORD_CONTENTION, 4);
}

static int start(struct agent *a, struct source *s)
{
    (void)s;
    state.event = recorder_define_event(&a->out, FMT_EV_LOCK);
    char min[32];
    snprintf(min, sizeof min, "%llu", (unsigned long long)min_ns);
    recorder_info(&a->out, FMT_INFO_LOCK_MIN_NS, min);
    return state.event ? 0 : -1;
}

static void entry(struct agent *a, struct source *s, const struct evq_entry *e)
{
    (void)s;
    if (e->kind != KIND_WAIT || e->words < 4)
        return;
    uint32_t thread = thread_ids_get_at(&a->thread_ids, &a->out, e->tid, e->time);
    uint32_t stack =
        stacks_of_event(a, &state.stack, e, STACKS_TRIM_RUNTIME | STACKS_TRIM_MACHINERY, 0);
    uint64_t owner = e->payload[1];
    uint32_t owner_thread = owner && owner < (1ull << 31)
                                ? thread_ids_get_at(&a->thread_ids, &a->out, (pid_t)owner, e->time)
                                : 0;
    uint64_t values[FMT_LOCK_VALUE_COUNT] = {[FMT_LOCK_WAIT] = e->payload[0], [FMT_LOCK_WAITS] = 1};
    uint64_t fields[FMT_LOCK_FIELD_COUNT] = {[FMT_LOCK_OWNER] = owner_thread,
                                             [FMT_LOCK_LOCK] = e->payload[2],
                                             [FMT_LOCK_NATIVE] = e->payload[3] & 1};
    recorder_record(&a->out, state.event, thread, e->time, stack, values, FMT_LOCK_VALUE_COUNT,
                    fields, FMT_LOCK_FIELD_COUNT);
}

/* The waits under --lock-min since the last time, as one record. */
static void write_short(struct agent *a, uint64_t now)
{
    uint64_t count = atomic_load_explicit(&short_count, memory_order_relaxed);
    uint64_t ns = atomic_load_explicit(&short_ns, memory_order_relaxed);
    if (count == state.short_count_seen)
        return;
    uint64_t values[FMT_LOCK_VALUE_COUNT] = {[FMT_LOCK_WAIT] = ns - state.short_ns_seen,
                                             [FMT_LOCK_WAITS] = count - state.short_count_seen};
    uint64_t fields[FMT_LOCK_FIELD_COUNT] = {[FMT_LOCK_BELOW_MIN] = 1};
    recorder_record(&a->out, state.event, 0, now, 0, values, FMT_LOCK_VALUE_COUNT, fields,
                    FMT_LOCK_FIELD_COUNT);
    state.short_count_seen = count;
    state.short_ns_seen = ns;
    state.short_written_ns = now;
}

static uint64_t cycle(struct agent *a, struct source *s, uint64_t now)
{
    (void)s;
    if (now - state.short_written_ns >= SHORT_EVERY_NS)
        write_short(a, now);
    return 0;
}

static void finish(struct agent *a, struct source *s)
{
    (void)s;
    write_short(a, clock_now_ns());
    stackb_free(&state.stack);
    memset(&state, 0, sizeof state);
    atomic_store(&short_count, 0);
    atomic_store(&short_ns, 0);
}

static const struct source_hooks hooks = {
    .eventpipe_event = eventpipe_event,
};

const struct source_ops source_lock = {
    .name = "lock",
    .init = init,
    .start = start,
    .cycle = cycle,
    .entry = entry,
    .finish = finish,
    .hooks = &hooks,
};
