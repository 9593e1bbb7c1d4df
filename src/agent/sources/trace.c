/*
 * trace: tracing mode (`record --trace`): every call of every traced
 * method, counted exactly, with its inclusive, self and longest time, per
 * thread and per call path, recorded as the `calls` event.
 *
 * In Initialize it hands the runtime the hooks (shadow.h: assembly that
 * keeps a shadow stack and a call tree per thread) and the FunctionIDMapper2
 * that decides, at JIT time, which methods call them (methods.h:
 * --include/--exclude; a method left out is compiled without hooks and
 * costs nothing, its callees attach to the nearest traced caller).  The
 * hooks are set once and cannot be taken back, so this works only for an
 * agent loaded at the program's start, and a traced program can never
 * detach the agent: an attaching agent that is asked to trace says so and
 * steps aside.
 *
 * The loop reads the trees without stopping their threads: once a second,
 * or less often when many paths change (HARVEST_NS), and when a thread
 * ends, and at the end, it records, for every call path
 * whose counters moved, one `calls` record with the differences since the
 * last: values self time (ns, what stack reports weigh) and calls, fields
 * inclusive time and the longest call so far (max).  The record's stack is
 * the path, leaf first, so every stack format draws the exact call tree
 * (report --event calls), and `report -f calls` sums it per method.  Times
 * are TSC ticks, converted with a rate the loop measures against
 * CLOCK_MONOTONIC over the whole run.  Calls still running at the end
 * (threads blocked at exit) are closed then and counted.
 *
 * Inclusive time and the maximum count outermost activations only when a
 * path was cut at the depth limit (the same node open twice); elsewhere
 * each path node is one activation at a time, and `report -f calls` counts
 * a recursive method's inclusive time at its outermost paths only.
 */
#include <stdio.h>
#include <string.h>

#include "agent/agent.h"
#include "agent/log.h"
#include "agent/os_thread.h"
#include "agent/trace/methods.h"
#include "agent/trace/shadow.h"
#include "common/clock.h"
#include "common/mem.h"

/* Live threads are read this often, or less often when many paths change:
 * each record written puts the next reading off by RECORD_NS, so that a
 * long run writes at most about 10,000 records a second (up to one reading
 * a minute); ended threads are read every cycle. */
#define HARVEST_NS 1000000000ull
#define HARVEST_MAX_NS 60000000000ull
#define RECORD_NS 100000ull
/* The tick rate is taken over at least this long before times are recorded. */
#define CALIBRATE_NS 20000000ull
/* The hooks' own cost is measured at start over this many rounds of this
 * many calls (about 3 ms). */
#define COST_CALLS 10000u
#define COST_ROUNDS 9u
/* The deepest call path kept (the stack limit may lower it). */
#define PATH_DEPTH_MAX 1024u


struct node_seen {
    uint64_t calls, incl, self, max; /* as last recorded, ticks */
    uint32_t stack;                  /* the recording's stack of the path, 0 until made */
};

struct thread_seen {
    uint32_t thread; /* the recording's id */
    struct node_seen *nodes;
    size_t cap;
    uint64_t untracked, closed_at_end, abandoned, unmatched; /* as last counted */
    uint64_t run_ns, wait_ns; /* the thread's schedstat as last read */
};

struct trace_state {
    uint32_t event;
    int timed;
    uint32_t path_depth;
    uint64_t tick0, ns0; /* the calibration's start */
    double ns_per_tick;
    int cost_known;
    double cost_call, cost_own; /* ticks (shadow_calibrate) */
    uint64_t last_harvest_ns;
    uint64_t harvest_every_ns; /* the next reading of live threads after this long */
    uint64_t records;          /* written so far */
    uint32_t deeper_frame, untracked_frame, unknown_frame;
    uint32_t *frames; /* scratch: a path's frames */
    /* traced threads' time on a processor and waiting for one (schedstat) */
    uint64_t run_ns, wait_ns;
};

/* ---- Initialize ------------------------------------------------------------------------- */

#if defined(__x86_64__)
#include <cpuid.h>
#endif

/* Does the hooks' tick count (shadow_ticks) run at one rate on every
 * processor?  x86-64: the TSC when the processor says it is invariant;
 * arm64: the generic timer's virtual count always is (the architecture's
 * rule, CNTFRQ_EL0 a fixed frequency). */
static int constant_rate_ticks(void)
{
#if defined(__x86_64__)
    unsigned eax, ebx, ecx, edx;
    if (!__get_cpuid(0x80000007, &eax, &ebx, &ecx, &edx))
        return 0;
    return (edx >> 8) & 1;
#elif defined(__aarch64__)
    return 1;
#else
    return 0;
#endif
}

static int trace_init(struct agent *a, struct source *s, DWORD *mask, DWORD *high)
{
    (void)high;
    struct trace_state *st = mem_calloc(1, sizeof *st);
    if (!st)
        return -1;
    s->state = st;
    st->timed = a->cfg.trace == CONFIG_TRACE_TIMES;
    st->path_depth = a->cfg.max_depth - 1 < PATH_DEPTH_MAX ? a->cfg.max_depth - 1 : PATH_DEPTH_MAX;
    char err[256];
    if (methods_init(a->info, a->info_version, a->cfg.trace_include, a->cfg.trace_exclude, err,
                     sizeof err) < 0) {
        log_error("%s", err);
        return -1;
    }
    if (shadow_init(st->timed, st->path_depth) < 0)
        return -1; /* a machine without hooks (logged) */
    if (st->timed && !constant_rate_ticks()) {
        log_error("--trace times calls with the processor's time-stamp counter, which does not "
                  "run at a constant rate on this machine; --trace=counts counts calls without "
                  "times");
        return -1;
    }
    /* measured before any method has hooks, on this thread: the median of
     * short rounds, so a busy machine's preemptions rarely count */
    if (st->timed)
        st->cost_known = shadow_calibrate(COST_CALLS, COST_ROUNDS, &st->cost_call,
                                          &st->cost_own) == 0;
    FunctionEnter3 *enter;
    FunctionLeave3 *leave;
    FunctionTailcall3 *tail;
    shadow_hooks(&enter, &leave, &tail);
    HRESULT hr = a->info->lpVtbl->SetEnterLeaveFunctionHooks3(a->info, enter, leave, tail);
    if (hr == CORPROF_E_UNSUPPORTED_FOR_ATTACHING_PROFILER) {
        log_error("%s", config_attach_refusal(&a->cfg));
        return -1;
    }
    if (hr >= 0)
        hr = a->info->lpVtbl->SetFunctionIDMapper2(a->info, methods_mapper, NULL);
    if (hr < 0) {
        log_error("the runtime refused the Enter/Leave hooks (0x%08x); --trace is not possible "
                  "with this runtime", (unsigned)hr);
        return -1;
    }
    /* JIT compilation: the JITInlining callback refuses to inline traced
     * callees (a traced method inlined into its caller would call no
     * hooks) and only them */
    *mask |= COR_PRF_MONITOR_ENTERLEAVE | COR_PRF_MONITOR_EXCEPTIONS |
             COR_PRF_MONITOR_JIT_COMPILATION;
    return 0;
}

static void trace_inlining(struct source *s, FunctionID caller, FunctionID callee,
                           BOOL *should_inline)
{
    (void)s;
    if (*should_inline && !methods_inline(caller, callee))
        *should_inline = FALSE;
}

/* The unwinder closes the frames an exception removes (shadow.h). */
static void trace_exception(struct source *s, enum source_exception_step step,
                            FunctionID function, ObjectID object)
{
    (void)s;
    (void)object;
    switch (step) {
    case SOURCE_EX_UNWIND_ENTER: shadow_unwind_enter(function); break;
    case SOURCE_EX_UNWIND_LEAVE: shadow_unwind_leave(); break;
    case SOURCE_EX_CATCHER_ENTER: shadow_catcher_enter(function); break;
    default: break;
    }
}

/* ---- the loop ------------------------------------------------------------------------------ */

static int trace_start(struct agent *a, struct source *s)
{
    struct trace_state *st = s->state;
    struct writer_event_def d;
    if (st->timed)
        schema_event_def(&d, FMT_EV_CALLS);
    else /* --trace=counts: the calls alone */
        schema_event_def_part(&d, FMT_EV_CALLS, 1u << FMT_CALLS_CALLS, 0);
    st->event = recorder_define(&a->out, &d);
    st->frames = mem_alloc((st->path_depth + 4) * sizeof *st->frames);
    if (!st->event || !st->frames)
        return -1;
    char text[3 * CONFIG_REGEX_MAX];
    const char *what = st->timed ? "calls and times" : "calls";
    const char *inc = a->cfg.trace_include, *exc = a->cfg.trace_exclude;
    if (!methods_filtered())
        snprintf(text, sizeof text, "%s of the program's own code (not the framework's or "
                 "packages' assemblies, whose calls count in their callers' self time); "
                 "traced methods were not inlined", what);
    else
        snprintf(text, sizeof text, "%s of the methods%s%s%s%s%s%s; traced methods were not inlined",
                 what, inc[0] ? " matching /" : "", inc, inc[0] ? "/" : "",
                 exc[0] ? " except /" : "", exc, exc[0] ? "/" : "");
    recorder_info(&a->out, FMT_INFO_TRACE, text);
    st->tick0 = shadow_ticks();
    st->ns0 = clock_now_ns();
    st->last_harvest_ns = st->ns0;
    st->harvest_every_ns = HARVEST_NS;
    return 0;
}

static void calibrate(struct trace_state *st, uint64_t now_ns, uint64_t now_ticks)
{
    if (!st->timed || now_ticks <= st->tick0 || now_ns - st->ns0 < CALIBRATE_NS / 4)
        return;
    st->ns_per_tick = (double)(now_ns - st->ns0) / (double)(now_ticks - st->tick0);
}

static uint64_t to_ns(const struct trace_state *st, uint64_t ticks)
{
    return (uint64_t)((double)ticks * st->ns_per_tick + 0.5);
}

static uint32_t method_frame(struct agent *a, struct trace_state *st, const struct trace_node *n)
{
    if (n->index == SHADOW_LOST || !n->method) {
        if (!st->untracked_frame)
            st->untracked_frame = recorder_label(&a->out, "untracked calls", NULL, 0);
        return st->untracked_frame;
    }
    struct trace_method *m = methods_get(n->method);
    if (!m) {
        if (!st->unknown_frame)
            st->unknown_frame = recorder_synthetic(&a->out, "[unknown]");
        return st->unknown_frame;
    }
    if (!m->frame)
        m->frame = recorder_frame(&a->out, FMT_FRAME_MANAGED, m->module, m->type, m->name,
                                  m->arity);
    return m->frame;
}

/* The recording's stack of a node's path, leaf first; a node at the depth
 * limit stands for every call at that depth and deeper, said by a label. */
static uint32_t path_stack(struct agent *a, struct trace_state *st, const struct trace_node *node)
{
    uint32_t depth = 0;
    for (const struct trace_node *n = node; n && n->parent; n = n->parent) {
        if (depth + 2 > st->path_depth + 3)
            break;
        st->frames[depth++] = method_frame(a, st, n);
        if (n->depth >= st->path_depth) {
            if (!st->deeper_frame)
                st->deeper_frame = recorder_label(&a->out, "deeper calls", NULL, 0);
            st->frames[depth++] = st->deeper_frame;
        }
    }
    return depth ? recorder_stack(&a->out, st->frames, depth) : 0;
}

struct harvest {
    struct agent *a;
    struct trace_state *st;
    uint64_t now_ns;
    int live_too; /* read live threads (once a second, and at the end) */
    int final;    /* the end: close live threads' open frames */
};

/* Extra time of the frames a live thread still has open at the end:
 * per node, inclusive (outermost activation only), self and max. */
struct open_extra {
    uint64_t incl, self, max;
};

static struct open_extra *open_frames_at_end(struct harvest *h, struct trace_thread *t,
                                             uint32_t nodes, uint64_t *open_count)
{
    struct trace_frame *frames = mem_alloc((size_t)SHADOW_FRAMES * sizeof *frames);
    struct open_extra *extra = mem_calloc(nodes ? nodes : 1, sizeof *extra);
    uint8_t *seen = mem_calloc(nodes ? nodes : 1, 1);
    if (!frames || !extra || !seen) {
        mem_free(frames);
        mem_free(seen);
        mem_free(extra);
        return NULL;
    }
    uint64_t now = shadow_ticks();
    uint32_t n = shadow_open_frames(t, frames, SHADOW_FRAMES);
    *open_count = n;
    for (uint32_t k = 0; k < n && h->st->timed; k++) {
        const struct trace_node *node = frames[k].node;
        if (!node || node->index >= nodes)
            continue;
        uint64_t incl = now > frames[k].t0 ? now - frames[k].t0 : 0;
        uint64_t inner = 0;
        if (k + 1 < n)
            inner = now > frames[k + 1].t0 ? now - frames[k + 1].t0 : 0;
        uint64_t busy = frames[k].child + inner;
        struct open_extra *e = &extra[node->index];
        e->self += incl > busy ? incl - busy : 0;
        if (!seen[node->index]) { /* the outermost activation of the node */
            seen[node->index] = 1;
            e->incl += incl;
            if (incl > e->max)
                e->max = incl;
        }
    }
    mem_free(frames);
    mem_free(seen);
    return extra;
}

/* A busy machine stretches the hooks' wall time as it stretches
 * everything else on the thread: by its time waiting for a processor over
 * its time on one, which the kernel counts (/proc/.../schedstat: ns on a
 * processor, ns runnable but waiting).  Read each time the thread's
 * counters are, summed over the traced threads. */
static void read_stretch(struct trace_state *st, struct thread_seen *ts, pid_t tid)
{
    struct os_schedstat now;
    if (os_thread_schedstat(tid, &now) < 0 || now.run_ns < ts->run_ns || now.wait_ns < ts->wait_ns)
        return;
    st->run_ns += now.run_ns - ts->run_ns;
    st->wait_ns += now.wait_ns - ts->wait_ns;
    ts->run_ns = now.run_ns;
    ts->wait_ns = now.wait_ns;
}

static void count_delta(struct agent *a, enum fmt_counter c, const uint64_t *counter,
                        uint64_t *seen)
{
    uint64_t now = shadow_read(counter);
    if (now > *seen) {
        recorder_count(&a->out, c, now - *seen);
        *seen = now;
    }
}

static int harvest_thread(void *ctx, struct trace_thread *t, int ended)
{
    struct harvest *h = ctx;
    struct agent *a = h->a;
    struct trace_state *st = h->st;
    struct thread_seen *ts = t->loop_data;
    if (!ts) {
        ts = mem_calloc(1, sizeof *ts);
        if (!ts)
            return 0;
        t->loop_data = ts;
    }
    if (!ts->thread)
        ts->thread = thread_ids_get(&a->thread_ids, &a->out, t->tid);
    if (!ended && !h->live_too)
        return 0;
    if (st->timed && st->ns_per_tick == 0.0)
        return 0; /* the tick rate is not known yet: read it later */
    uint32_t n = shadow_node_count(t);
    if (n > ts->cap) {
        size_t old = ts->cap;
        struct node_seen *grown = mem_grow(ts->nodes, &ts->cap, n, sizeof *grown);
        if (!grown)
            return 0;
        memset(grown + old, 0, (ts->cap - old) * sizeof *grown);
        ts->nodes = grown;
    }
    if (st->timed && !ended)
        read_stretch(st, ts, t->tid);
    uint64_t open = 0;
    struct open_extra *extra = h->final && !ended ? open_frames_at_end(h, t, n, &open) : NULL;
    for (uint32_t i = SHADOW_LOST + 1; i < n; i++) {
        struct trace_node *node = shadow_node(t, i);
        struct node_seen *seen = &ts->nodes[i];
        uint64_t calls = shadow_read(&node->calls);
        uint64_t incl = shadow_read(&node->incl), self = shadow_read(&node->self);
        uint64_t max = shadow_read(&node->max);
        uint64_t d_calls = calls - seen->calls, d_incl = incl - seen->incl;
        uint64_t d_self = self - seen->self;
        /* a read between two of the thread's updates: take it next time */
        if ((int64_t)d_incl < 0)
            d_incl = 0, incl = seen->incl;
        if ((int64_t)d_self < 0)
            d_self = 0, self = seen->self;
        uint64_t report_max = max > seen->max ? max : seen->max;
        if (extra) {
            d_incl += extra[i].incl;
            d_self += extra[i].self;
            if (extra[i].max > report_max)
                report_max = extra[i].max;
        }
        if (!d_calls && !d_incl && !d_self && report_max == seen->max)
            continue;
        if (!seen->stack)
            seen->stack = path_stack(a, st, node);
        uint64_t values[FMT_CALLS_VALUE_COUNT], fields[FMT_CALLS_FIELD_COUNT];
        uint32_t value_count = 1, field_count = 0;
        if (st->timed) {
            values[FMT_CALLS_SELF] = to_ns(st, d_self);
            values[FMT_CALLS_CALLS] = d_calls;
            fields[FMT_CALLS_INCLUSIVE] = to_ns(st, d_incl);
            fields[FMT_CALLS_MAX] = to_ns(st, report_max);
            value_count = FMT_CALLS_VALUE_COUNT;
            field_count = FMT_CALLS_FIELD_COUNT;
        } else {
            values[0] = d_calls; /* the one value of the counts' definition */
        }
        recorder_record(&a->out, st->event, ts->thread, h->now_ns, seen->stack, values,
                        value_count, fields, field_count);
        st->records++;
        seen->calls = calls;
        seen->incl = incl;
        seen->self = self;
        seen->max = max > seen->max ? max : seen->max;
    }
    mem_free(extra);
    /* calls counted in no path: the lost node's, reported as a counter */
    count_delta(a, FMT_COUNTER_UNTRACKED_CALLS, &t->untracked, &ts->untracked);
    count_delta(a, FMT_COUNTER_OPEN_AT_END, &t->closed_at_end, &ts->closed_at_end);
    count_delta(a, FMT_COUNTER_ABANDONED_FRAMES, &t->abandoned, &ts->abandoned);
    count_delta(a, FMT_COUNTER_UNMATCHED_LEAVES, &t->unmatched, &ts->unmatched);
    if (open)
        recorder_count(&a->out, FMT_COUNTER_OPEN_AT_END, open);
    return ended;
}

static void free_seen(void *p)
{
    struct thread_seen *ts = p;
    if (ts)
        mem_free(ts->nodes);
    mem_free(ts);
}

static void harvest(struct agent *a, struct trace_state *st, uint64_t now, int live_too,
                    int final)
{
    calibrate(st, now, shadow_ticks());
    struct harvest h = {a, st, now, live_too, final};
    shadow_each(harvest_thread, &h, 0, free_seen);
}

static uint64_t trace_cycle(struct agent *a, struct source *s, uint64_t now)
{
    struct trace_state *st = s->state;
    int live_too = now - st->last_harvest_ns >= st->harvest_every_ns;
    uint64_t before = st->records;
    harvest(a, st, now, live_too, 0);
    if (live_too) {
        st->last_harvest_ns = now;
        uint64_t every = (st->records - before) * RECORD_NS;
        st->harvest_every_ns = every < HARVEST_NS ? HARVEST_NS
                             : every > HARVEST_MAX_NS ? HARVEST_MAX_NS : every;
    }
    return 0;
}

static void trace_stop(struct agent *a, struct source *s)
{
    struct trace_state *st = s->state;
    uint64_t now = clock_now_ns();
    if (st->timed && now - st->ns0 < CALIBRATE_NS) {
        /* a very short run: the rate needs a moment more */
        struct timespec pause = {0, (long)(CALIBRATE_NS - (now - st->ns0))};
        nanosleep(&pause, NULL);
        now = clock_now_ns();
    }
    harvest(a, st, now, 1, 1);
    recorder_count(&a->out, FMT_COUNTER_UNTRACED_THREADS, shadow_failed_threads());
    uint64_t traced, excluded, unnamed, refused;
    methods_counts(&traced, &excluded, &unnamed, &refused);
    char text[256];
    snprintf(text, sizeof text,
             "%llu methods traced, %llu left out (the scope or --include/--exclude, the "
             "runtime's exception dispatch), %llu without a name (not traced), %llu inlinings "
             "of traced methods refused",
             (unsigned long long)traced, (unsigned long long)excluded,
             (unsigned long long)unnamed, (unsigned long long)refused);
    recorder_info(&a->out, FMT_INFO_TRACE_METHODS, text);
    if (!methods_filtered()) {
        char scope[1024];
        methods_scope(scope, sizeof scope);
        recorder_info(&a->out, FMT_INFO_TRACE_SCOPE, scope);
    }
    if (st->timed) {
        snprintf(text, sizeof text, "time-stamp counter, %.6f GHz (measured against "
                 "CLOCK_MONOTONIC over %.1f s)", 1.0 / st->ns_per_tick,
                 (double)(now - st->ns0) / 1e9);
        recorder_info(&a->out, FMT_INFO_TRACE_CLOCK, text);
        if (st->cost_known) {
            double stretch = st->run_ns ? (double)(st->run_ns + st->wait_ns) / st->run_ns : 1;
            snprintf(text, sizeof text, "call_ns=%.3f own_ns=%.3f pairs=%u rounds=%u "
                     "stretch=%.3f", st->cost_call * st->ns_per_tick,
                     st->cost_own * st->ns_per_tick, COST_CALLS, COST_ROUNDS, stretch);
            recorder_info(&a->out, FMT_INFO_TRACE_COST, text);
        }
    }
}

static void trace_finish(struct agent *a, struct source *s)
{
    (void)a;
    struct trace_state *st = s->state;
    /* the threads' states stay: the hooks run on after Shutdown */
    mem_free(st->frames);
    mem_free(st);
    s->state = NULL;
}

static const struct source_hooks trace_hooks = {
    .jit_inlining = trace_inlining,
    .exception = trace_exception,
};

const struct source_ops source_trace = {
    .name = "tracer",
    .init = trace_init,
    .start = trace_start,
    .cycle = trace_cycle,
    .stop = trace_stop,
    .finish = trace_finish,
    .hooks = &trace_hooks,
};
