/*
 * alloc: where allocations come from (-e alloc), and which of them stay
 * alive (-e live, live.h).  Each recorded allocation is an "alloc" record:
 * its allocating stack, taken on the allocating thread (managed and native
 * frames as for CPU samples) with the type as the leaf frame ("[alloc]
 * System.Byte[]"), weighed by the bytes and objects it stands for.
 *
 * Three ways, chosen in Initialize:
 *   sampled  .NET 10 and later: the runtime's randomized allocation
 *            sampling (AllocationSampled, an in-process EventPipe event):
 *            every byte allocated is picked with probability p = 1/102400,
 *            an object of `size` bytes with 1-(1-p)^size, so each sampled
 *            object stands for size/(1-(1-p)^size) bytes and
 *            1/(1-(1-p)^size) objects (an unbiased estimate).  The runtime's
 *            mean is fixed; --alloc-interval keeps only a share q of its
 *            samples (each at random) and weighs them by 1/q more.
 *   tick     older runtimes: AllocationTick, raised when about 100 KB were
 *            allocated since the last one, naming only the object that
 *            crossed the line and weighed by all those bytes: biased
 *            towards large objects and types allocated at steady rates.
 *            Labelled as biased in `check` and every report.
 *   exact    --alloc exact: every allocation (ObjectAllocated), which turns
 *            off the runtime's fast allocation helpers for the whole run;
 *            slow, for checking the sampler on small programs.
 * The event callbacks run on the allocating thread in cooperative mode
 * (a collection waits for them), before the object is built in the sampled
 * and tick cases: they read only the event's own fields, never the object,
 * walk their own stack into the thread's event queue (evq.h) and return.
 */
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "agent/agent.h"
#include "agent/async/compose.h"
#include "agent/codemap.h"
#include "agent/eventpipe.h"
#include "agent/evq.h"
#include "agent/log.h"
#include "agent/sources/live.h"
#include "agent/stacks.h"
#include "common/clock.h"
#include "common/mem.h"
#include "common/strtab.h"
#include "common/utf.h"

#define KEYWORD_GC 0x1ull
#define KEYWORD_ALLOCATION_SAMPLING 0x80000000000ull
#define EVENT_ALLOCATION_TICK 10
#define EVENT_ALLOCATION_SAMPLED 303
/* The runtime's mean distance between samples (gcheaputilities.h,
 * SamplingDistributionMean), fixed in .NET 10. */
#define RUNTIME_MEAN_BYTES 102400.0
/* Longest type name carried, in UTF-16 units (longer ones are cut). */
#define NAME_UNITS 240
/* LOH threshold, for the kind of an allocation ObjectAllocated reports */
#define LOH_BYTES 85000u

enum how { HOW_SAMPLED = 1, HOW_TICK = 2, HOW_EXACT = 3 };
enum { ENTRY_ALLOC = 1 };

/* Payload of an entry, in words. */
enum {
    P_SIZE,     /* object size, bytes */
    P_AMOUNT,   /* tick: bytes allocated since the last tick; else 0 */
    P_HANDLE,   /* live: the weak handle, or 0 */
    P_CLASS,    /* TypeID / ClassID */
    P_META,     /* kind (bits 0-7), name length in UTF-16 units (8-23), thinned weight scale */
    P_NAME,     /* the name, four UTF-16 units a word */
};

struct alloc_state {
    enum how how;
    int live;
    int biased;            /* tick: the weights are not an unbiased estimate */
    uint64_t keep_below;   /* keep a runtime sample when a random word is below this */
    double keep;           /* the share kept */
    uint32_t max_depth;
    _Atomic uint64_t samples, thinned;
    _Atomic uint64_t callback_ns; /* spent in the callbacks, on the allocating threads */
    _Atomic uint64_t callbacks_timed;
    _Atomic int waits_given_up; /* exact: a wait for the loop ran out (wait_for_room) */
    uint32_t event;
    struct stackb stack;
    struct strtab names;   /* type name -> index into label */
    uint32_t *label;
    size_t label_cap;
    struct map64 class_index; /* exact: ClassID -> index into names */
    uint64_t rng;
    uint64_t entries;      /* handed over since the last cycle */
};

/* A thread's event queue holds about 700 samples with their stacks: when
 * they come fast, the loop comes back sooner than its usual 10 ms. */
#define BUSY_ENTRIES 32
#define BUSY_CYCLE_NS 1000000ull

static int alloc_init(struct agent *a, struct source *s, DWORD *mask, DWORD *high)
{
    struct alloc_state *st = mem_calloc(1, sizeof *st);
    if (!st)
        return -1;
    s->state = st;
    st->live = (a->cfg.events & CONFIG_EVENT_LIVE) != 0;
    st->max_depth = a->cfg.max_depth;
    st->keep = RUNTIME_MEAN_BYTES / (double)a->cfg.alloc_interval;
    if (st->keep >= 1.0) {
        st->keep = 1.0;
        st->keep_below = UINT64_MAX;
    } else {
        st->keep_below = (uint64_t)(st->keep * 18446744073709551616.0);
    }
    st->rng = 0x9e3779b97f4a7c15ull ^ (uint64_t)getpid();
    map64_init(&st->class_index);
    if (strtab_init(&st->names) < 0)
        return -1;
    int major = a->runtime_major; /* read before the sources start */
    if (a->cfg.alloc == CONFIG_ALLOC_EXACT) {
        st->how = HOW_EXACT;
        /* ENABLE_OBJECT_ALLOCATED can only be set here, in Initialize */
        *mask |= COR_PRF_MONITOR_OBJECT_ALLOCATED | COR_PRF_ENABLE_OBJECT_ALLOCATED;
    } else if (major >= 10) {
        st->how = HOW_SAMPLED;
        if (eventpipe_want(EVENTPIPE_RUNTIME, KEYWORD_ALLOCATION_SAMPLING, 4) < 0)
            return -1;
    } else {
        st->how = HOW_TICK;
        st->biased = 1;
        /* AllocationTick is a verbose GC event */
        if (eventpipe_want(EVENTPIPE_RUNTIME, KEYWORD_GC, 5) < 0)
            return -1;
    }
    if (st->live) {
        if (a->info_version < 13) {
            log_warn("-e live needs ICorProfilerInfo13 (.NET 7 or later) for weak handles; live "
                     "objects are not recorded");
            st->live = 0;
        } else {
            live_init(a->cfg.live_max);
            *high |= COR_PRF_HIGH_BASIC_GC; /* when collections end; changes nothing */
        }
    }
    return 0;
}

static int alloc_start(struct agent *a, struct source *s)
{
    struct alloc_state *st = s->state;
    st->event = recorder_define_event(&a->out, FMT_EV_ALLOC);
    char text[256];
    if (st->how == HOW_SAMPLED)
        snprintf(text, sizeof text,
                 "sampled (AllocationSampled: the runtime's randomized sampling, a sample every "
                 "%.0f KiB on average%s; weights are unbiased estimates)",
                 RUNTIME_MEAN_BYTES / st->keep / 1024.0,
                 st->keep < 1.0 ? ", keeping a share of the runtime's samples" : "");
    else if (st->how == HOW_TICK)
        snprintf(text, sizeof text,
                 "AllocationTick (biased: this runtime has no randomized allocation sampling, "
                 "which came with .NET 10; each tick names the object that crossed ~100 KB)");
    else
        snprintf(text, sizeof text, "exact (ObjectAllocated: every allocation; slows the program)");
    recorder_info(&a->out, FMT_INFO_ALLOC, text);
    if (a->cfg.events & CONFIG_EVENT_LIVE) {
        if (st->live) {
            snprintf(text, sizeof text,
                     "weak handles on sampled allocations, at most %u at once; looked at after "
                     "collections; GC modes unchanged",
                     a->cfg.live_max);
            live_start(a);
        } else {
            snprintf(text, sizeof text,
                     "not available: this runtime has no ICorProfilerInfo13 (weak handles, .NET 7)");
        }
        recorder_info(&a->out, FMT_INFO_LIVE, text);
    }
    return 0;
}

/* ---- callbacks ------------------------------------------------------------------ */

static __thread uint64_t thread_rng;

static uint64_t next_random(uint64_t *x)
{
    if (!*x)
        *x = 0x2545f4914f6cdd1dull ^ ((uint64_t)syscall(SYS_gettid) << 17) ^ (uint64_t)clock();
    /* xorshift64* */
    *x ^= *x >> 12;
    *x ^= *x << 25;
    *x ^= *x >> 27;
    return *x * 0x2545f4914f6cdd1dull;
}

static uint64_t read_u64(const BYTE *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

static uint32_t read_u32(const BYTE *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

/* Length in UTF-16 units of the NUL-terminated string at p, within end;
 * -1 when it is not terminated. */
static long wstr_units(const BYTE *p, const BYTE *end)
{
    for (const BYTE *q = p; q + 2 <= end; q += 2)
        if (q[0] == 0 && q[1] == 0)
            return (q - p) / 2;
    return -1;
}

static void push(struct source *s, uint64_t size, uint64_t amount, ObjectHandleID handle,
                 uint64_t klass, unsigned kind, const BYTE *name, long units)
{
    struct alloc_state *st = s->state;
    uint64_t payload[P_NAME + NAME_UNITS / 4];
    if (units > NAME_UNITS)
        units = NAME_UNITS;
    if (units < 0)
        units = 0;
    payload[P_SIZE] = size;
    payload[P_AMOUNT] = amount;
    payload[P_HANDLE] = (uint64_t)(uintptr_t)handle;
    payload[P_CLASS] = klass;
    payload[P_META] = (kind & 0xffu) | (uint64_t)units << 8;
    uint32_t words = P_NAME + (uint32_t)(units + 3) / 4;
    memset(payload + P_NAME, 0, (size_t)(words - P_NAME) * 8);
    if (units)
        memcpy(payload + P_NAME, name, (size_t)units * 2);
    if (evq_push(s->index, ENTRY_ALLOC, payload, words, st->max_depth) < 0 && handle)
        live_untrack(s->agent->info, handle); /* dropped: nobody will look at it */
}

/* Counts a runtime sample and says whether this one is kept. */
static int keep_sample(struct alloc_state *st)
{
    atomic_fetch_add_explicit(&st->samples, 1, memory_order_relaxed);
    if (st->keep_below == UINT64_MAX || next_random(&thread_rng) < st->keep_below)
        return 1;
    atomic_fetch_add_explicit(&st->thinned, 1, memory_order_relaxed);
    return 0;
}

#define CALLBACK_TIMED_NS 200000ull

static void take_event(struct source *s, DWORD id, DWORD version, const BYTE *p, ULONG size);

static void alloc_eventpipe(struct source *s, EVENTPIPE_PROVIDER provider, DWORD id,
                            DWORD version, const BYTE *p, ULONG size, ThreadID thread)
{
    (void)thread;
    struct alloc_state *st = s->state;
    if (!p || (id != EVENT_ALLOCATION_SAMPLED && id != EVENT_ALLOCATION_TICK))
        return;
    if ((id == EVENT_ALLOCATION_SAMPLED) != (st->how == HOW_SAMPLED) || st->how == HOW_EXACT)
        return;
    if (!eventpipe_is_runtime(s->agent->info, provider))
        return;
    /* what corscope costs the allocating thread, for docs/performance.md:
     * a callback the scheduler interrupted (longer than CALLBACK_TIMED_NS)
     * would count the other programs' time, and is left out */
    uint64_t t0 = clock_now_ns();
    take_event(s, id, version, p, size);
    uint64_t spent = clock_now_ns() - t0;
    if (spent <= CALLBACK_TIMED_NS) {
        atomic_fetch_add_explicit(&st->callback_ns, spent, memory_order_relaxed);
        atomic_fetch_add_explicit(&st->callbacks_timed, 1, memory_order_relaxed);
    }
}

static void take_event(struct source *s, DWORD id, DWORD version, const BYTE *p, ULONG size)
{
    struct alloc_state *st = s->state;
    const BYTE *end = p + size;
    if (id == EVENT_ALLOCATION_SAMPLED) {
        /* AllocationKind u32, ClrInstanceID u16, TypeID ptr, TypeName wstr,
         * Address ptr, ObjectSize u64, SampledByteOffset u64 */
        if (size < 14 + 2 + 24)
            return;
        long units = wstr_units(p + 14, end);
        if (units < 0 || p + 14 + 2 * units + 2 + 24 > end)
            return;
        const BYTE *after = p + 14 + 2 * units + 2;
        if (!keep_sample(st))
            return;
        ObjectID address = (ObjectID)read_u64(after);
        ObjectHandleID h = st->live && address ? live_track(s->agent->info, address) : NULL;
        push(s, read_u64(after + 8), 0, h, read_u64(p + 6), read_u32(p), p + 14, units);
        return;
    }
    /* GCAllocationTick V2..V4: AllocationAmount u32, AllocationKind u32,
     * ClrInstanceID u16, AllocationAmount64 u64, TypeID ptr, TypeName wstr,
     * HeapIndex u32, then (V3) Address ptr, (V4) ObjectSize u64 */
    if (version < 2 || size < 26 + 2)
        return;
    long units = wstr_units(p + 26, end);
    if (units < 0)
        return;
    const BYTE *after = p + 26 + 2 * units + 2;
    ObjectID address = 0;
    uint64_t object_size = 0;
    if (version >= 3 && after + 4 + 8 <= end)
        address = (ObjectID)read_u64(after + 4);
    if (version >= 4 && after + 4 + 16 <= end)
        object_size = read_u64(after + 12);
    if (!keep_sample(st))
        return;
    ObjectHandleID h = st->live && address ? live_track(s->agent->info, address) : NULL;
    push(s, object_size, read_u64(p + 10), h, read_u64(p + 18), read_u32(p + 4), p + 26, units);
}

/* --alloc exact is for counting every allocation: when the thread's queue
 * is full, the allocation waits for the loop to empty it, a little at a
 * time.  EXACT_WAIT_NS (real time) without the loop taking anything from
 * the queue means the loop is held up (a stalled disk): the allocation is
 * dropped and counted, and from then on no allocation waits, so that a
 * loop held up for good costs the program one wait, not one per
 * allocation.  The budget was 50 ms in all, counted in pauses asked for:
 * a recording whose file stopped taking data for 150 ms (a slow disk, a
 * pipe's reader busy a moment) gave up waiting and lost a third of an
 * allocation-bound method's objects (t_exact_stall); and on a machine far
 * busier than two CPU hogs, t_alloc's exact count once came out 6,738 of
 * 15,000.  Nothing waits once the recording halted (evq_room says so:
 * nothing drains the queues then).  Sampled allocations never wait. */
#define EXACT_ENTRY_WORDS 64
#define EXACT_WAIT_NS 250000000ull

static void wait_for_room(struct source *s)
{
    struct alloc_state *st = s->state;
    if (atomic_load_explicit(&st->waits_given_up, memory_order_relaxed))
        return;
    struct timespec pause = {0, 200000};
    uint64_t drained = evq_drained(), since = clock_now_ns();
    while (!evq_room(EXACT_ENTRY_WORDS)) {
        if (!s->agent->loop_started || atomic_load(&s->agent->stopping))
            return;
        uint64_t now = clock_now_ns(), d = evq_drained();
        if (d != drained) {
            drained = d;
            since = now;
        } else if (now - since >= EXACT_WAIT_NS) {
            if (!atomic_exchange(&st->waits_given_up, 1))
                log_warn("--alloc exact: the agent's thread took nothing from this thread's "
                         "queue for %llu ms; allocations no longer wait for it (those its queue "
                         "cannot hold are dropped, and counted)",
                         (unsigned long long)(EXACT_WAIT_NS / 1000000ull));
            return;
        }
        agent_hurry(s->agent);
        nanosleep(&pause, NULL);
    }
}

static void alloc_object_allocated(struct source *s, ObjectID object, ClassID klass)
{
    struct alloc_state *st = s->state;
    if (st->how != HOW_EXACT)
        return;
    wait_for_room(s);
    atomic_fetch_add_explicit(&st->samples, 1, memory_order_relaxed);
    SIZE_T size = 0;
    s->agent->info->lpVtbl->GetObjectSize2(s->agent->info, object, &size);
    size = (size + 7) & ~(SIZE_T)7; /* what the heap gives it: objects are 8-byte aligned */
    ObjectHandleID h = st->live ? live_track(s->agent->info, object) : NULL;
    push(s, size, 0, h, klass, size >= LOH_BYTES ? 1u : 0u, NULL, 0);
}

static void alloc_gc_finished(struct source *s)
{
    struct alloc_state *st = s->state;
    if (st->live)
        live_gc_finished();
}

/* ---- the loop ------------------------------------------------------------------ */

/* The index of a type name in st->names, its label frame "[alloc] TYPE"
 * made the first time; UINT32_MAX when out of memory. */
static uint32_t type_index(struct agent *a, struct alloc_state *st, const char *name, size_t len)
{
    int is_new;
    uint32_t at = strtab_intern(&st->names, name, len, &is_new);
    if (at == UINT32_MAX || !is_new)
        return at;
    uint32_t *grown = mem_grow(st->label, &st->label_cap, (size_t)at + 1, sizeof *grown);
    if (!grown)
        return UINT32_MAX;
    st->label = grown;
    st->label[at] = recorder_label(&a->out, "alloc", st->names.strs[at], 0);
    return at;
}

/* Rounds x to a whole number at random, up with the probability of its
 * fraction: sums of many stay unbiased. */
static uint64_t round_random(struct alloc_state *st, double x)
{
    double whole = floor(x);
    double frac = x - whole;
    if (frac > 0 && (double)(next_random(&st->rng) >> 11) * 0x1p-53 < frac)
        whole += 1;
    return whole < 0 ? 0 : (uint64_t)whole;
}

static void alloc_entry(struct agent *a, struct source *s, const struct evq_entry *e)
{
    struct alloc_state *st = s->state;
    if (e->kind != ENTRY_ALLOC || e->words < P_NAME)
        return;
    st->entries++;
    const uint64_t *w = e->payload;
    uint64_t size = w[P_SIZE], amount = w[P_AMOUNT];
    unsigned kind = (unsigned)(w[P_META] & 0xff);
    size_t units = (size_t)(w[P_META] >> 8 & 0xffff);
    if (P_NAME + (units + 3) / 4 > e->words)
        units = 0;
    char name[4 * NAME_UNITS + 8] = "";
    uint32_t type = UINT32_MAX;
    if (units) {
        WCHAR wide[NAME_UNITS];
        memcpy(wide, w + P_NAME, units * 2);
        utf16_to_utf8(wide, (ULONG)units, name, sizeof name);
        type = type_index(a, st, name, strlen(name));
    } else if (st->how == HOW_EXACT && w[P_CLASS]) {
        if (!map64_get(&st->class_index, w[P_CLASS], &type) && codemap_ids_begin(e->time)) {
            /* the class may be of an assembly unloaded since: asked only
             * when nothing was unloaded after the allocation */
            int ok = names_describe_class(a->info, (ClassID)w[P_CLASS], name, sizeof name) == 0;
            codemap_ids_end();
            type = ok ? type_index(a, st, name, strlen(name)) : UINT32_MAX;
            if (type != UINT32_MAX)
                map64_put(&st->class_index, w[P_CLASS], type);
        }
    }
    if (type == UINT32_MAX)
        type = type_index(a, st, "?", 1);
    uint32_t label = type != UINT32_MAX ? st->label[type] : 0;
    const char *type_name = type != UINT32_MAX ? st->names.strs[type] : "?";
    double bytes, objects;
    if (st->how == HOW_SAMPLED) {
        double p = 1.0 / RUNTIME_MEAN_BYTES;
        double picked = size ? -expm1((double)size * log1p(-p)) : p;
        bytes = (double)size / picked / st->keep;
        objects = 1.0 / picked / st->keep;
    } else if (st->how == HOW_TICK) {
        bytes = (double)amount / st->keep;
        objects = (size ? fmax(1.0, (double)amount / (double)size) : 1.0) / st->keep;
    } else {
        bytes = (double)size;
        objects = 1.0;
    }
    struct stackb *b = &st->stack;
    stackb_reset(b);
    /* the walker steps an on-stack-replaced method over its tier-0 frame */
    for (uint32_t k = 0; k < e->depth; k++)
        stackb_put(b, resolve_ip(&a->resolver, (uintptr_t)e->ips[k], k > 0, e->time));
    struct async_chain chain = {e->chain, e->chain_n, e->chain_end, e->runner};
    struct stack_meta m = {.seen_ns = e->time,
                           .tid = e->tid,
                           .walk_flags = e->walk_flags & 0xffff,
                           .trim_runtime = 1,
                           .leaf = label,
                           .chain = e->chain_n ? &chain : NULL,
                           .ips = e->ips};
    uint32_t stack = stacks_finish(a, b, &m);
    uint64_t id = 0;
    if (st->live)
        live_seen(e->time);
    if (w[P_HANDLE])
        id = live_add((ObjectHandleID)(uintptr_t)w[P_HANDLE], e->time);
    uint64_t values[FMT_ALLOC_VALUE_COUNT] = {[FMT_ALLOC_SPACE] = round_random(st, bytes)};
    values[FMT_ALLOC_OBJECTS] = round_random(st, objects);
    if (!values[FMT_ALLOC_OBJECTS])
        values[FMT_ALLOC_OBJECTS] = 1; /* fewer than one object is not a thing to show */
    uint64_t fields[FMT_ALLOC_FIELD_COUNT] = {
        [FMT_ALLOC_TYPE] = recorder_string(&a->out, type_name, strlen(type_name)),
        [FMT_ALLOC_SIZE] = size,
        [FMT_ALLOC_HEAP] = kind,
        [FMT_ALLOC_OBJECT] = id};
    uint32_t thread = thread_ids_get(&a->thread_ids, &a->out, e->tid);
    recorder_record(&a->out, st->event, thread, e->time, stack, values, FMT_ALLOC_VALUE_COUNT,
                    fields, FMT_ALLOC_FIELD_COUNT);
}

static uint64_t alloc_cycle(struct agent *a, struct source *s, uint64_t now)
{
    struct alloc_state *st = s->state;
    if (st->live)
        live_cycle(a, now, 0);
    uint64_t busy = st->entries >= BUSY_ENTRIES;
    st->entries = 0;
    return busy ? now + BUSY_CYCLE_NS : 0;
}

static void alloc_finish(struct agent *a, struct source *s)
{
    struct alloc_state *st = s->state;
    if (st->live) {
        live_cycle(a, clock_now_ns(), 1);
        live_finish(a);
    }
    recorder_count(&a->out, FMT_COUNTER_ALLOC_SAMPLES, atomic_load(&st->samples));
    recorder_count(&a->out, FMT_COUNTER_ALLOC_THINNED, atomic_load(&st->thinned));
    recorder_count(&a->out, FMT_COUNTER_ALLOC_CALLBACK_NS, atomic_load(&st->callback_ns));
    recorder_count(&a->out, FMT_COUNTER_ALLOC_CALLBACKS_TIMED, atomic_load(&st->callbacks_timed));
    stackb_free(&st->stack);
    strtab_free(&st->names);
    mem_free(st->label);
    map64_free(&st->class_index);
    /* the state stays: a callback may still be running (they stop with the
     * runtime's events, after Shutdown); it is small */
    memset(&st->stack, 0, sizeof st->stack);
}

static const struct source_hooks alloc_hooks = {
    .eventpipe_event = alloc_eventpipe,
    .object_allocated = alloc_object_allocated,
    .gc_finished = alloc_gc_finished,
};

const struct source_ops source_alloc = {
    .name = "allocations",
    .init = alloc_init,
    .start = alloc_start,
    .cycle = alloc_cycle,
    .entry = alloc_entry,
    .finish = alloc_finish,
    .hooks = &alloc_hooks,
};
