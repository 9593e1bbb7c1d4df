/*
 * jit: compiling and loading (-e jit).
 *
 *   compiles   every JIT compilation, timed on the compiling thread from
 *              JITCompilationStarted to ...Finished (the runtime calls both
 *              there, for every tier of a method), with the stack that
 *              needed it (a tier-0 compile happens on the first call; a
 *              tier-1 one on the runtime's background thread, which has no
 *              managed frames: its stack is the label alone) and the tier.
 *              The tier comes from the runtime's MethodLoadVerbose event
 *              (EventPipe, JIT keyword at level 5), raised on the same
 *              thread between the two callbacks; its MethodFlags bits 7-9
 *              say tier 0, tier 0 instrumented, tier 1, tier 1
 *              instrumented, OSR, optimized (not tiered) or minopts.
 *              Recorded as `jit` events: the compile time, a "[JIT tier1]
 *              Method" label at the leaf of the stack, the method, its
 *              tier, and whether the method had ReadyToRun code before.
 *   R2R code   methods whose precompiled (ReadyToRun) code was used
 *              instead of compiling them (JITCachedFunctionSearchFinished):
 *              counted, not recorded one by one (thousands at start-up).
 *   loads      assemblies and modules, timed on the loading thread
 *              (*LoadStarted/Finished): `loads` events with the name.
 *   classes    classes loaded (ClassLoadFinished): counted.
 * The counts are recorded as `jit_counts` events (increments, now and then).
 */
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include "agent/agent.h"
#include "agent/agent_thread.h"
#include "agent/eventpipe.h"
#include "agent/evq.h"
#include "agent/log.h"
#include "agent/stacks.h"
#include "common/clock.h"

enum { KIND_COMPILE = 1, KIND_R2R = 2, KIND_LOAD = 3 };
enum { EVENT_METHOD_LOAD_VERBOSE = 143 };
#define KEYWORD_JIT 0x10ull
#define COUNTS_EVERY_NS 250000000ull
#define NESTED AGENT_JIT_NESTED /* compiles (or loads) nested on one thread */
#define NAME_WORDS 32      /* a module's name in a queue entry: 255 bytes */

/* Tiers as recorded: MethodFlags' JitOptimizationTier + 1 (0 unknown). */
enum {
    TIER_UNKNOWN = 0,
    TIER_MINOPT = 2,
    TIER_OPTIMIZED = 3,
    TIER_0 = 4,
    TIER_1 = 5,
    TIER_OSR = 6,
    TIER_0_INSTRUMENTED = 7,
    TIER_1_INSTRUMENTED = 8,
};

static const char *const tier_labels[] = {
    [TIER_UNKNOWN] = "JIT",        [1] = "JIT",
    [TIER_MINOPT] = "JIT minopts", [TIER_OPTIMIZED] = "JIT optimized",
    [TIER_0] = "JIT tier0",        [TIER_1] = "JIT tier1",
    [TIER_OSR] = "JIT OSR",        [TIER_0_INSTRUMENTED] = "JIT tier0 instrumented",
    [TIER_1_INSTRUMENTED] = "JIT tier1 instrumented",
};
#define TIERS (sizeof tier_labels / sizeof tier_labels[0])

static struct source *self;
static _Atomic uint64_t classes_loaded, r2r_used;

/* The thread's open compiles and loads (agent_thread.h); NULL when it has
 * no block (out of memory: counted there), and then they go unrecorded. */
static struct agent_jit *own(void)
{
    struct agent_thread *t = agent_thread_get();
    return t ? &t->jit : NULL;
}

static void push(struct agent_jit_work *w, uint32_t *depth, uint64_t id, uint32_t kind)
{
    if (*depth < NESTED) {
        struct agent_jit_work o = {id, clock_now_ns(), TIER_UNKNOWN, kind};
        w[*depth] = o;
    }
    (*depth)++;
}

/* The innermost open work on id (popping it and any left open inside it);
 * 0 when none. */
static int pop(struct agent_jit_work *w, uint32_t *depth, uint64_t id, struct agent_jit_work *out)
{
    uint32_t n = *depth < NESTED ? *depth : NESTED;
    for (uint32_t i = n; i > 0; i--) {
        if (w[i - 1].id == id) {
            *out = w[i - 1];
            *depth = i - 1;
            return 1;
        }
    }
    if (*depth > NESTED)
        (*depth)--;
    return 0;
}

static void jit_started(struct source *s, FunctionID f, int dynamic)
{
    (void)s;
    struct agent_jit *mine = own();
    if (mine)
        push(mine->compiles, &mine->compile_depth, f, (uint32_t)dynamic);
}

static void jit_finished(struct source *s, FunctionID f, HRESULT status, int dynamic)
{
    (void)s;
    struct agent_jit *mine = own();
    struct agent_jit_work o;
    if (!mine || !pop(mine->compiles, &mine->compile_depth, f, &o))
        return;
    uint64_t w[3] = {f, clock_now_ns() - o.start_ns,
                     o.tier | (uint64_t)(dynamic != 0) << 8 | (uint64_t)(status < 0) << 9};
    evq_push(self->index, KIND_COMPILE, w, 3, self->agent->cfg.max_depth);
    if (evq_pressed())
        agent_hurry(self->agent);
}

static void eventpipe_event(struct source *s, EVENTPIPE_PROVIDER provider, DWORD id,
                            DWORD version, const BYTE *payload, ULONG size, ThreadID thread)
{
    (void)version;
    (void)thread;
    if (id != EVENT_METHOD_LOAD_VERBOSE || size < 36)
        return;
    struct agent_thread *t = agent_thread_peek(); /* none: no compile open */
    struct agent_jit *mine = t ? &t->jit : NULL;
    if (!mine || !mine->compile_depth || !eventpipe_is_runtime(s->agent->info, provider))
        return;
    /* u64 MethodID, u64 ModuleID, u64 start, u32 size, u32 token, u32 MethodFlags */
    uint64_t method;
    uint32_t flags;
    memcpy(&method, payload, 8);
    memcpy(&flags, payload + 32, 4);
    uint32_t n = mine->compile_depth < NESTED ? mine->compile_depth : NESTED;
    for (uint32_t i = n; i > 0; i--) {
        if (mine->compiles[i - 1].id == method) {
            mine->compiles[i - 1].tier = (flags >> 7 & 7) + 1;
            return;
        }
    }
}

static void jit_cache_search(struct source *s, FunctionID f, int finished,
                             COR_PRF_JIT_CACHE result)
{
    (void)s;
    if (finished && result == COR_PRF_CACHED_FUNCTION_FOUND) {
        atomic_fetch_add_explicit(&r2r_used, 1, memory_order_relaxed);
        /* remembered by the loop, to say which compiles replaced R2R code */
        uint64_t w[1] = {f};
        evq_push(self->index, KIND_R2R, w, 1, 0);
        if (evq_pressed())
            agent_hurry(self->agent);
    }
}

static void load(struct source *s, enum source_load_kind kind, int finished, uintptr_t id,
                 HRESULT status)
{
    if (kind == SOURCE_LOAD_CLASS) {
        if (finished && status >= 0)
            atomic_fetch_add_explicit(&classes_loaded, 1, memory_order_relaxed);
        return;
    }
    struct agent_jit *mine = own();
    if (!mine)
        return;
    if (!finished) {
        push(mine->loads, &mine->load_depth, id, kind);
        return;
    }
    struct agent_jit_work o;
    if (!pop(mine->loads, &mine->load_depth, id, &o))
        return;
    uint64_t w[4 + NAME_WORDS];
    w[0] = kind;
    w[1] = clock_now_ns() - o.start_ns;
    w[2] = (uint32_t)status;
    char *name = (char *)(w + 3);
    ICorProfilerInfo15 *info = s->agent->info;
    int ok = kind == SOURCE_LOAD_ASSEMBLY
                 ? names_describe_assembly(info, (AssemblyID)id, name, NAME_WORDS * 8)
                 : names_describe_module(info, (ModuleID)id, name, NAME_WORDS * 8);
    if (ok < 0)
        name[0] = '\0';
    evq_push(self->index, KIND_LOAD, w, 3 + (uint32_t)(strlen(name) + 8) / 8, 0);
}

/* ---- the loop ---------------------------------------------------------------------- */

struct jitsource {
    uint32_t compile_event, load_event, counts_event;
    struct stackb stack;
    struct map64 r2r;       /* FunctionIDs whose R2R code was used */
    struct map64 label_of;  /* method frame << 8 | tier -> label frame */
    uint64_t classes_seen, r2r_seen, counts_written_ns;
};

static struct jitsource state;

static int init(struct agent *a, struct source *s, DWORD *mask, DWORD *high)
{
    (void)high;
    self = s;
    s->state = &state;
    *mask |= COR_PRF_MONITOR_JIT_COMPILATION | COR_PRF_MONITOR_CACHE_SEARCHES |
             COR_PRF_MONITOR_CLASS_LOADS | COR_PRF_MONITOR_MODULE_LOADS |
             COR_PRF_MONITOR_ASSEMBLY_LOADS;
    /* the tiers come from the runtime's events, in process from .NET 5 */
    if (a->info_version < 12) {
        log_warn("-e jit: compiles are recorded without their tiers (the runtime's events need "
                 ".NET 5 or later)");
        return 0;
    }
    return eventpipe_want(EVENTPIPE_RUNTIME, KEYWORD_JIT, 5);
}

static int start(struct agent *a, struct source *s)
{
    (void)s;
    map64_init(&state.r2r);
    map64_init(&state.label_of);
    state.compile_event = recorder_define_event(&a->out, FMT_EV_JIT);
    state.load_event = recorder_define_event(&a->out, FMT_EV_LOADS);
    state.counts_event = recorder_define_event(&a->out, FMT_EV_JIT_COUNTS);
    return state.compile_event && state.load_event && state.counts_event ? 0 : -1;
}

static uint32_t compile_label(struct agent *a, uint32_t method, uint32_t tier)
{
    uint64_t key = (uint64_t)method << 8 | tier;
    uint32_t frame;
    if (map64_get(&state.label_of, key, &frame))
        return frame;
    frame = recorder_label(&a->out, tier_labels[tier < TIERS ? tier : 0], NULL, method);
    if (frame)
        map64_put(&state.label_of, key, frame);
    return frame;
}

static void entry(struct agent *a, struct source *s, const struct evq_entry *e)
{
    (void)s;
    uint32_t unused;
    if (e->kind == KIND_R2R && e->words >= 1) {
        map64_put(&state.r2r, e->payload[0], 1);
    } else if (e->kind == KIND_COMPILE && e->words >= 3) {
        FunctionID f = (FunctionID)e->payload[0];
        uint32_t tier = (uint32_t)(e->payload[2] & 0xff);
        uint32_t method = resolve_function(&a->resolver, f, e->time);
        uint32_t thread = thread_ids_get_at(&a->thread_ids, &a->out, e->tid, e->time);
        /* a compile on a thread with no managed frames (the tiering
         * thread): the label alone */
        uint32_t stack = stacks_of_event(a, &state.stack, e,
                                         STACKS_TRIM_RUNTIME | STACKS_TRIM_NO_MANAGED,
                                         compile_label(a, method, tier));
        uint64_t values[FMT_JIT_VALUE_COUNT] = {[FMT_JIT_COMPILE] = e->payload[1],
                                                [FMT_JIT_COMPILES] = 1};
        uint64_t fields[FMT_JIT_FIELD_COUNT] = {
            [FMT_JIT_METHOD] = method,
            [FMT_JIT_TIER] = tier,
            [FMT_JIT_DYNAMIC] = e->payload[2] >> 8 & 1,
            [FMT_JIT_FAILED] = e->payload[2] >> 9 & 1,
            [FMT_JIT_HAD_R2R] = map64_get(&state.r2r, f, &unused)};
        recorder_record(&a->out, state.compile_event, thread, e->time, stack, values,
                        FMT_JIT_VALUE_COUNT, fields, FMT_JIT_FIELD_COUNT);
    } else if (e->kind == KIND_LOAD && e->words >= 3) {
        const char *name = (const char *)(e->payload + 3);
        uint32_t sid = recorder_string(&a->out, name, strnlen(name, (e->words - 3) * 8));
        uint32_t thread = thread_ids_get_at(&a->thread_ids, &a->out, e->tid, e->time);
        uint64_t values[FMT_LOADS_VALUE_COUNT] = {[FMT_LOADS_LOAD] = e->payload[1]};
        uint64_t fields[FMT_LOADS_FIELD_COUNT] = {[FMT_LOADS_KIND] = e->payload[0],
                                                  [FMT_LOADS_NAME] = sid,
                                                  [FMT_LOADS_STATUS] = e->payload[2]};
        recorder_record(&a->out, state.load_event, thread, e->time, 0, values,
                        FMT_LOADS_VALUE_COUNT, fields, FMT_LOADS_FIELD_COUNT);
    }
}

static void write_counts(struct agent *a, uint64_t now)
{
    uint64_t classes = atomic_load_explicit(&classes_loaded, memory_order_relaxed);
    uint64_t r2r = atomic_load_explicit(&r2r_used, memory_order_relaxed);
    if (classes == state.classes_seen && r2r == state.r2r_seen)
        return;
    uint64_t values[FMT_JIT_COUNTS_VALUE_COUNT] = {
        [FMT_JIT_COUNTS_CLASSES] = classes - state.classes_seen,
        [FMT_JIT_COUNTS_R2R_METHODS] = r2r - state.r2r_seen};
    recorder_record(&a->out, state.counts_event, 0, now, 0, values, FMT_JIT_COUNTS_VALUE_COUNT,
                    NULL, 0);
    state.classes_seen = classes;
    state.r2r_seen = r2r;
    state.counts_written_ns = now;
}

static uint64_t cycle(struct agent *a, struct source *s, uint64_t now)
{
    (void)s;
    if (now - state.counts_written_ns >= COUNTS_EVERY_NS)
        write_counts(a, now);
    return 0;
}

static void finish(struct agent *a, struct source *s)
{
    (void)s;
    write_counts(a, clock_now_ns());
    map64_free(&state.r2r);
    map64_free(&state.label_of);
    stackb_free(&state.stack);
    memset(&state, 0, sizeof state);
    atomic_store(&classes_loaded, 0);
    atomic_store(&r2r_used, 0);
}

static const struct source_hooks hooks = {
    .jit_started = jit_started,
    .jit_finished = jit_finished,
    .eventpipe_event = eventpipe_event,
    .jit_cache_search = jit_cache_search,
    .load = load,
};

const struct source_ops source_jit = {
    .name = "jit",
    .init = init,
    .start = start,
    .cycle = cycle,
    .entry = entry,
    .finish = finish,
    .hooks = &hooks,
};
