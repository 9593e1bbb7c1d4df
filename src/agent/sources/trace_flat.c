/*
 * trace_flat: `record --trace=flat`: how many times each traced method was
 * called, counted by the method's own code.
 *
 * Tracing by the runtime's Enter/Leave hooks (trace.c) knows call paths and
 * times, but every traced call pays two calls into the agent and the code
 * the JIT puts around them, and a traced callee may not be inlined: with
 * every method traced a call-heavy program runs tens of times slower.  This
 * mode gives up paths and times for the one number most questions need:
 * at the first compilation of a traced method (JITCompilationStarted) its
 * IL gets, at entry, code that adds 1 to the method's 64-bit counter at its
 * address (agent/il; below), installed with
 * SetILFunctionBody, so every later compilation (tier 1, OSR, each generic
 * instantiation) and every inlining of the method carries it: inlining is
 * kept, and an inlined call counts as any other.  Which methods: the same
 * decision as the hooks' (methods.h: the program's own code by default,
 * --include/--exclude).
 *
 * The runtime's shortcuts that would skip the counter:
 *   - ReadyToRun code of a traced method is refused (JITCachedFunction-
 *     SearchStarted), so the method is compiled; untraced methods keep
 *     theirs (unlike the hooks, which turn ReadyToRun off for all);
 *   - inlining a traced method whose IL is not rewritten yet is refused
 *     (the inliner reads the callee's IL, the rewritten one once set).
 *
 * The counter is added to atomically: IL has no atomic add of its own, so
 * the probe calls System.Threading.Interlocked.Add(ref long, long), which
 * the JIT turns into one locked add (a call at tier 0): each module gets a
 * reference to it once (interlocked_ref.h).
 * A plain add lost 29% of the calls two threads made at once to a small
 * method (Trace race).  Interlocked itself is never counted (the probe
 * would call itself).  A module whose reference cannot be made is left
 * uncounted: its methods count among those left as they were.
 *
 * Counters live in chunks that never move or go away (compiled code holds
 * their addresses until the process ends).  Methods are keyed by (module,
 * token): generic instantiations share their method's IL and counter.  A
 * module that unloads is forgotten (ModuleUnloadStarted), so a module
 * given its ModuleID later gets a number, methods and a token of its own.  The
 * loop writes, about once a second and at the end, one `calls` record per
 * method whose counter moved (the count since its last record, the method
 * as the stack, on a thread "[all threads]" of the recording's, tid 0: a
 * method's count is the process's), the lesser
 * form of the event that --trace=counts writes, so `report -f calls` and
 * the stack formats read it unchanged.
 *
 * Threads: JIT callbacks come on any thread, several at once.  The method
 * table is appended under a mutex never held across a runtime call; each
 * method has a state byte: the first compilation to move it from unknown to
 * busy rewrites it, another one waits (briefly) for that.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "agent/agent.h"
#include "agent/il/il.h"
#include "agent/il_install.h"
#include "agent/log.h"
#include "agent/trace/interlocked_ref.h"
#include "agent/trace/methods.h"
#include "common/clock.h"
#include "common/map.h"
#include "common/mem.h"

#define CHUNK 4096u
#define MAX_CHUNKS 1024u
#define MAX_MODULES 4096u
#define HARVEST_NS 1000000000ull
#define BUSY_WAIT_NS 2000000000ull

enum { FLAT_UNKNOWN = 0, FLAT_BUSY = 1, FLAT_DONE = 2, FLAT_LEFT = 3 };
/* A module's token of Interlocked.Add, or one of these while it has none */
enum { ADD_UNKNOWN = 0, ADD_BUSY = 1, ADD_FAILED = 2 };

struct flat_method {
    uint64_t calls;         /* the counter the method's code adds to */
    uint64_t recorded;      /* the loop's: calls as last recorded */
    uint32_t client;        /* methods.h's id: the method's name */
    _Atomic uint8_t state;  /* FLAT_* */
};

struct flat_state {
    ICorProfilerInfo15 *info;
    uint32_t event;
    uint32_t thread;           /* "[all threads]": a method's count is the process's */
    uint64_t last_harvest_ns;
    pthread_mutex_t lock;      /* the maps and appending */
    struct map64 modules;      /* ModuleID -> module number */
    struct map64 methods;      /* module number << 32 | token -> method index */
    uint32_t module_numbers;
    struct flat_method *chunks[MAX_CHUNKS];
    _Atomic uint32_t add_method[MAX_MODULES]; /* [module number]: ADD_* or the token */
    _Atomic uint32_t count;    /* methods below it are complete */
    _Atomic uint64_t rewritten, left, inlines_refused, r2r_refused, dynamic, waits;
};

static struct flat_method *method_at(struct flat_state *st, uint32_t i)
{
    return &st->chunks[i / CHUNK][i % CHUNK];
}

/* Under the lock: the method of (module, token), made when absent and
 * `client` is nonzero; NULL when absent (or out of memory or room).
 * *number: the module's number. */
static struct flat_method *method_of(struct flat_state *st, ModuleID module, mdToken token,
                                     uint32_t client, uint32_t *number_out)
{
    uint32_t number;
    if (!map64_get(&st->modules, (uint64_t)module, &number)) {
        if (!client || st->module_numbers >= MAX_MODULES ||
            map64_put(&st->modules, (uint64_t)module, st->module_numbers) < 0)
            return NULL;
        number = st->module_numbers++;
    }
    *number_out = number;
    uint64_t key = (uint64_t)number << 32 | token;
    uint32_t index;
    if (map64_get(&st->methods, key, &index))
        return method_at(st, index);
    index = atomic_load_explicit(&st->count, memory_order_relaxed);
    if (!client || index / CHUNK >= MAX_CHUNKS)
        return NULL;
    if (!st->chunks[index / CHUNK]) {
        st->chunks[index / CHUNK] = mem_calloc(CHUNK, sizeof(struct flat_method));
        if (!st->chunks[index / CHUNK])
            return NULL;
    }
    if (map64_put(&st->methods, key, index) < 0)
        return NULL;
    struct flat_method *m = method_at(st, index);
    m->client = client;
    atomic_store_explicit(&st->count, index + 1, memory_order_release);
    return m;
}

static struct flat_method *find_method(struct flat_state *st, FunctionID f, uint32_t client,
                                       ModuleID *module, mdToken *token, uint32_t *number)
{
    ClassID klass;
    if (st->info->lpVtbl->GetFunctionInfo(st->info, f, &klass, module, token) < 0 ||
        (*token >> 24) != 0x06) /* a MethodDef */
        return NULL;
    pthread_mutex_lock(&st->lock);
    struct flat_method *m = method_of(st, *module, *token, client, number);
    pthread_mutex_unlock(&st->lock);
    return m;
}

/* The module's token of Interlocked.Add, made once (another thread making
 * it is waited for, briefly); 0 when it cannot be had. */
static uint32_t add_method(struct flat_state *st, ModuleID module, uint32_t number, int corelib)
{
    _Atomic uint32_t *slot = &st->add_method[number];
    for (uint64_t waited = 0; waited < BUSY_WAIT_NS; waited += 50000) {
        uint32_t token = ADD_UNKNOWN;
        if (atomic_compare_exchange_strong(slot, &token, ADD_BUSY)) {
            token = interlocked_add_token(st->info, module, corelib);
            atomic_store(slot, token ? token : (uint32_t)ADD_FAILED);
            if (!token)
                log_info("trace: no reference to Interlocked.Add could be made in a module: "
                         "its methods are not counted");
            return token;
        }
        if (token == ADD_FAILED)
            return 0;
        if (token != ADD_BUSY)
            return token;
        struct timespec pause = {0, 50000};
        nanosleep(&pause, NULL);
    }
    return 0;
}

static int is_corelib(const char *module_path)
{
    const char *base = strrchr(module_path, '/');
    return !strcmp(base ? base + 1 : module_path, "System.Private.CoreLib.dll");
}

/* Rewrites one method (its state is busy, ours).  Returns the new state. */
static int rewrite(struct flat_state *st, struct flat_method *m, FunctionID f, ModuleID module,
                   mdToken token, uint32_t add)
{
    LPCBYTE old = NULL;
    ULONG old_size = 0;
    char why[256] = "";
    struct il_body body;
    struct il_edit edit;
    struct il_rewritten out;
    uint8_t probe[IL_ATOMIC_COUNTER_PROBE_SIZE];
    int result = FLAT_LEFT;
    if (st->info->lpVtbl->GetILFunctionBody(st->info, module, token, &old, &old_size) < 0 ||
        !old) {
        log_debug("trace: method %08x has no IL body: not counted", (unsigned)token);
        return FLAT_LEFT;
    }
    if (il_parse(old, old_size, &body, why, sizeof why) < 0) {
        log_debug("trace: method %08x not counted: %s", (unsigned)token, why);
        return FLAT_LEFT;
    }
    il_edit_init(&edit);
    memset(&out, 0, sizeof out);
    il_atomic_counter_probe(probe, (uint64_t)(uintptr_t)&m->calls, add);
    if (il_edit_add(&edit, &body, 0, IL_ENTRY, 0, probe, sizeof probe,
                    IL_ATOMIC_COUNTER_PROBE_STACK, why, sizeof why) == 0 &&
        il_rewrite(&body, &edit, &out, why, sizeof why) == 0 &&
        il_check(&body, &edit, &out, why, sizeof why) == 0 &&
        il_install(st->info, module, token, f, &out, why, sizeof why) == 0)
        result = FLAT_DONE;
    else
        log_debug("trace: method %08x not counted: %s", (unsigned)token, why);
    il_rewritten_free(&out);
    il_edit_free(&edit);
    il_body_free(&body);
    return result;
}

static void jit_started(struct source *s, FunctionID f, int dynamic)
{
    struct flat_state *st = s->state;
    if (dynamic) {
        atomic_fetch_add(&st->dynamic, 1);
        return;
    }
    BOOL hook;
    uint32_t client = (uint32_t)methods_mapper(f, NULL, &hook);
    struct trace_method *tm = hook ? methods_get(client) : NULL;
    if (!tm)
        return;
    int corelib = is_corelib(tm->module);
    if (corelib && !strcmp(tm->type, "System.Threading.Interlocked"))
        return; /* the probe calls it */
    ModuleID module;
    mdToken token;
    uint32_t number;
    struct flat_method *m = find_method(st, f, client, &module, &token, &number);
    if (!m)
        return;
    for (uint64_t waited = 0;; waited += 50000) {
        uint8_t state = FLAT_UNKNOWN;
        if (atomic_compare_exchange_strong(&m->state, &state, FLAT_BUSY)) {
            uint32_t add = add_method(st, module, number, corelib);
            int done = add ? rewrite(st, m, f, module, token, add) : FLAT_LEFT;
            atomic_fetch_add(done == FLAT_DONE ? &st->rewritten : &st->left, 1);
            atomic_store(&m->state, (uint8_t)done);
            return;
        }
        if (state != FLAT_BUSY)
            return; /* every later compilation reads the rewritten IL, or it was left */
        if (waited == 0)
            atomic_fetch_add(&st->waits, 1);
        if (waited >= BUSY_WAIT_NS)
            return;
        struct timespec pause = {0, 50000};
        nanosleep(&pause, NULL);
    }
}

static void jit_inlining(struct source *s, FunctionID caller, FunctionID callee,
                         BOOL *should_inline)
{
    (void)caller;
    struct flat_state *st = s->state;
    if (!*should_inline || !methods_decide(callee))
        return;
    ModuleID module;
    mdToken token;
    uint32_t number;
    struct flat_method *m = find_method(st, callee, 0, &module, &token, &number);
    if (!m || atomic_load(&m->state) != FLAT_DONE) {
        *should_inline = FALSE; /* its IL has no counter yet */
        atomic_fetch_add(&st->inlines_refused, 1);
    }
}

static void r2r_lookup(struct source *s, FunctionID f, BOOL *use_cached)
{
    struct flat_state *st = s->state;
    if (*use_cached && methods_decide(f)) {
        *use_cached = FALSE;
        atomic_fetch_add(&st->r2r_refused, 1);
    }
}

/* A module going away: its ModuleID may be given to the next module, which
 * must get a number (and a token of Interlocked.Add) of its own. */
static void module_unloading(struct source *s, ModuleID module)
{
    struct flat_state *st = s->state;
    pthread_mutex_lock(&st->lock);
    map64_remove(&st->modules, (uint64_t)module);
    pthread_mutex_unlock(&st->lock);
}

static int flat_init(struct agent *a, struct source *s, DWORD *mask, DWORD *high)
{
    (void)high;
    char err[256];
    if (methods_init(a->info, a->info_version, a->cfg.trace_include, a->cfg.trace_exclude, err,
                     sizeof err) < 0) {
        log_error("%s", err);
        return -1;
    }
    struct flat_state *st = mem_calloc(1, sizeof *st);
    if (!st)
        return -1;
    st->info = a->info;
    pthread_mutex_init(&st->lock, NULL);
    map64_init(&st->modules);
    map64_init(&st->methods);
    s->state = st;
    *mask |= COR_PRF_MONITOR_JIT_COMPILATION | COR_PRF_MONITOR_CACHE_SEARCHES |
             COR_PRF_MONITOR_MODULE_LOADS;
    return 0;
}

static int flat_start(struct agent *a, struct source *s)
{
    struct flat_state *st = s->state;
    struct writer_event_def d;
    schema_event_def_part(&d, FMT_EV_CALLS, 1u << FMT_CALLS_CALLS, 0);
    st->event = recorder_define(&a->out, &d);
    if (!st->event)
        return -1;
    char text[3 * CONFIG_REGEX_MAX];
    const char *inc = a->cfg.trace_include, *exc = a->cfg.trace_exclude;
    const char *how = "counted per method in each method's own code (--trace=flat: no call "
                      "paths or times; inlining kept, inlined calls counted)";
    if (!methods_filtered())
        snprintf(text, sizeof text, "calls of the program's own code (not the framework's or "
                 "packages' assemblies), %s", how);
    else
        snprintf(text, sizeof text, "calls of the methods%s%s%s%s%s%s, %s",
                 inc[0] ? " matching /" : "", inc, inc[0] ? "/" : "",
                 exc[0] ? " except /" : "", exc, exc[0] ? "/" : "", how);
    recorder_info(&a->out, FMT_INFO_TRACE, text);
    return 0;
}

/* One record per method whose counter moved since its last. */
static void harvest(struct agent *a, struct flat_state *st, uint64_t now)
{
    uint32_t n = atomic_load_explicit(&st->count, memory_order_acquire);
    for (uint32_t i = 0; i < n; i++) {
        struct flat_method *m = method_at(st, i);
        uint64_t calls = __atomic_load_n(&m->calls, __ATOMIC_RELAXED);
        if (calls <= m->recorded)
            continue;
        struct trace_method *tm = methods_get(m->client);
        if (!tm)
            continue;
        if (!tm->frame)
            tm->frame = recorder_frame(&a->out, FMT_FRAME_MANAGED, tm->module, tm->type,
                                       tm->name, tm->arity);
        uint32_t stack = tm->frame ? recorder_stack(&a->out, &tm->frame, 1) : 0;
        uint64_t value = calls - m->recorded;
        if (!st->thread)
            st->thread = thread_ids_named(&a->thread_ids, &a->out, 0, now, "[all threads]");
        if (!st->thread)
            return;
        recorder_record(&a->out, st->event, st->thread, now, stack, &value, 1, NULL, 0);
        m->recorded = calls;
    }
    st->last_harvest_ns = now;
}

static uint64_t flat_cycle(struct agent *a, struct source *s, uint64_t now)
{
    struct flat_state *st = s->state;
    if (now - st->last_harvest_ns >= HARVEST_NS)
        harvest(a, st, now);
    return 0;
}

static void flat_stop(struct agent *a, struct source *s)
{
    struct flat_state *st = s->state;
    harvest(a, st, clock_now_ns());
    uint64_t traced, excluded, unnamed, refused;
    methods_counts(&traced, &excluded, &unnamed, &refused);
    char text[512];
    snprintf(text, sizeof text,
             "%llu methods counted (%llu left as they were: the engine or the runtime refused "
             "their body), %llu left out (the scope or --include/--exclude), %llu without a "
             "name (not counted), %llu dynamic methods (not counted), %llu inlinings refused "
             "until the callee was rewritten, %llu ReadyToRun methods compiled instead",
             (unsigned long long)atomic_load(&st->rewritten),
             (unsigned long long)atomic_load(&st->left), (unsigned long long)excluded,
             (unsigned long long)unnamed, (unsigned long long)atomic_load(&st->dynamic),
             (unsigned long long)atomic_load(&st->inlines_refused),
             (unsigned long long)atomic_load(&st->r2r_refused));
    recorder_info(&a->out, FMT_INFO_TRACE_METHODS, text);
    if (!methods_filtered()) {
        char scope[1024];
        methods_scope(scope, sizeof scope);
        recorder_info(&a->out, FMT_INFO_TRACE_SCOPE, scope);
    }
}

static void flat_finish(struct agent *a, struct source *s)
{
    (void)a;
    (void)s;
    /* nothing is freed: compiled code adds to the counters until the
     * process's last instant */
}

static const struct source_hooks flat_hooks = {
    .jit_started = jit_started,
    .jit_inlining = jit_inlining,
    .r2r_lookup = r2r_lookup,
    .module_unloading = module_unloading,
};

const struct source_ops source_trace_flat = {
    .name = "tracer (flat)",
    .init = flat_init,
    .start = flat_start,
    .cycle = flat_cycle,
    .stop = flat_stop,
    .finish = flat_finish,
    .hooks = &flat_hooks,
};
