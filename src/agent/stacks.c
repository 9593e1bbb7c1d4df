/*
 * stacks: see stacks.h.
 */
#include "agent/stacks.h"

#include <stdio.h>
#include <string.h>

#include "agent/agent.h"
#include "agent/async/compose.h"
#include "agent/async/types.h"
#include "agent/codemap.h"
#include "agent/evq.h"
#include "agent/names.h"
#include "agent/signal/activity.h"
#include "agent/signal/walk.h"
#include "common/map.h"
#include "common/mem.h"

/* (kind << 56 | subject) -> label frame; GC labels by generation and reason */
static struct map64 label_of;

void stackb_reset(struct stackb *b)
{
    b->n = 0;
    b->failed = 0;
}

void stackb_put(struct stackb *b, uint32_t frame)
{
    uint32_t *grown = mem_grow(b->frames, &b->cap, (size_t)b->n + 1, sizeof *grown);
    if (!grown) {
        b->failed = 1;
        return;
    }
    b->frames = grown;
    b->frames[b->n++] = frame;
}

void stackb_free(struct stackb *b)
{
    mem_free(b->frames);
    memset(b, 0, sizeof *b);
}

int stackb_in_agent(const struct agent *a, const struct stackb *b)
{
    for (uint32_t k = 0; k < b->n; k++)
        if (resolve_frame_class(&a->resolver, b->frames[k]) == FRAME_AGENT)
            return 1;
    return 0;
}

static void insert_at(struct stackb *b, uint32_t at, uint32_t frame)
{
    stackb_put(b, 0);
    if (b->failed)
        return;
    memmove(b->frames + at + 1, b->frames + at, (b->n - 1 - at) * sizeof *b->frames);
    b->frames[at] = frame;
}

static const char *const activity_labels[ACTIVITY_KIND_COUNT] = {
    [ACTIVITY_JIT] = "JIT",
    [ACTIVITY_LOAD_TYPE] = "load type",
    [ACTIVITY_LOAD_ASSEMBLY] = "load assembly",
    [ACTIVITY_LOAD_MODULE] = "load module",
    [ACTIVITY_R2R_LOOKUP] = "load R2R code",
};

/* How a thread entered the runtime (clrdesc.h), by its innermost frame. */
static const char *const frame_labels[CLR_FRAME_KIND_COUNT] = {
    [CLR_FRAME_PRESTUB] = "prepare",
    [CLR_FRAME_CALL_COUNTING] = "call counting",
    [CLR_FRAME_DISPATCH] = "interface dispatch",
    [CLR_FRAME_EXTERNAL] = "resolve call",
    [CLR_FRAME_FIXUP] = "resolve fixup",
    [CLR_FRAME_SUSPENDED] = "suspended for GC",
    [CLR_FRAME_EXCEPTION] = "exception",
};

/* Label keys apart from activity words (kind < ACTIVITY_KIND_COUNT) and
 * GC labels (ACTIVITY_KIND_COUNT). */
#define FRAME_LABEL_KEY(kind, method_frame) ((uint64_t)(0x80 | (kind)) << 56 | (method_frame))

/* The label of a thread's innermost runtime frame; 0 when none.  The
 * method a prestub frame names is read from the stack unchecked: it is
 * used only when the agent already knows it as a FunctionID. */
static uint32_t frame_label(struct agent *a, const struct activity_frame *fr, uint64_t seen_ns)
{
    if (fr->kind >= CLR_FRAME_KIND_COUNT || !frame_labels[fr->kind])
        return 0;
    uint32_t method = 0;
    if ((fr->kind == CLR_FRAME_PRESTUB || fr->kind == CLR_FRAME_CALL_COUNTING) && fr->method) {
        method = names_known(&a->names, (FunctionID)fr->method);
        if (!method && codemap_permanent((FunctionID)fr->method))
            method = resolve_function(&a->resolver, (FunctionID)fr->method, seen_ns);
    }
    uint64_t key = FRAME_LABEL_KEY(fr->kind, method);
    uint32_t frame;
    if (map64_get(&label_of, key, &frame))
        return frame;
    frame = recorder_label(&a->out, frame_labels[fr->kind], NULL, method);
    if (frame)
        map64_put(&label_of, key, frame);
    return frame;
}

/* Is this activity compiling or loading code (what a prestub does)? */
static int prepares_code(uint64_t word)
{
    enum activity_kind k = activity_kind_of(word);
    return k == ACTIVITY_JIT || k == ACTIVITY_R2R_LOOKUP;
}

/* The label frame of an activity word; 0 when none can be made. */
static uint32_t activity_label(struct agent *a, uint64_t word, uint64_t seen_ns)
{
    enum activity_kind kind = activity_kind_of(word);
    if (kind <= ACTIVITY_NONE || kind >= ACTIVITY_KIND_COUNT)
        return 0;
    uint32_t frame;
    if (map64_get(&label_of, word, &frame))
        return frame;
    uint64_t subject = activity_subject(word);
    char text[1024] = "";
    frame = 0;
    if (kind == ACTIVITY_PAUSE) {
        /* from the runtime's suspension to its resumption, the collection
         * (or other work) it was for included */
        static const char *const why[] = {[1] = "GC pause", [7] = "GC pause",
                                          [4] = "shutdown pause", [6] = "debugger pause",
                                          [8] = "ReJIT pause"};
        const char *text_of = subject < sizeof why / sizeof why[0] && why[subject]
                                  ? why[subject] : "runtime pause";
        frame = recorder_label(&a->out, text_of, NULL, 0);
    } else if (kind == ACTIVITY_JIT || kind == ACTIVITY_R2R_LOOKUP) {
        uint32_t method = resolve_function(&a->resolver, (FunctionID)subject, seen_ns);
        frame = recorder_label(&a->out, activity_labels[kind], NULL, method);
    } else {
        int ok = 0;
        if (codemap_ids_begin(seen_ns)) {
            if (kind == ACTIVITY_LOAD_TYPE)
                ok = names_describe_class(a->info, (ClassID)subject, text, sizeof text) == 0;
            else if (kind == ACTIVITY_LOAD_ASSEMBLY)
                ok = names_describe_assembly(a->info, (AssemblyID)subject, text, sizeof text) == 0;
            else
                ok = names_describe_module(a->info, (ModuleID)subject, text, sizeof text) == 0;
            codemap_ids_end();
        }
        /* a type still loading may not be nameable yet: the label says
         * what kind of work it was, and is not remembered */
        frame = recorder_label(&a->out, activity_labels[kind], ok ? text : NULL, 0);
        if (!ok)
            return frame;
    }
    if (frame)
        map64_put(&label_of, word, frame);
    return frame;
}

static const char *const gc_reasons[] = {"other", "induced"};

static uint32_t gc_label(struct agent *a, uint64_t gc)
{
    unsigned gen = (unsigned)(gc & 15), reason = (unsigned)(gc >> 4 & 15);
    uint64_t key = (uint64_t)ACTIVITY_KIND_COUNT << 56 | gen << 4 | reason;
    uint32_t frame;
    if (map64_get(&label_of, key, &frame))
        return frame;
    char text[64];
    snprintf(text, sizeof text, "GC gen%u %s", gen,
             reason < sizeof gc_reasons / sizeof gc_reasons[0] ? gc_reasons[reason] : "other");
    frame = recorder_label(&a->out, text, NULL, 0);
    if (frame)
        map64_put(&label_of, key, frame);
    return frame;
}

/* The agent's own frames, then (if asked) the runtime's, at the leaf. */
static void trim_leaf(struct agent *a, struct stackb *b, const struct stack_meta *m)
{
    const struct resolver *res = &a->resolver;
    uint32_t skip = 0;
    while (skip < b->n && resolve_frame_class(res, b->frames[skip]) == FRAME_AGENT)
        skip++;
    if (m->trim_runtime) {
        uint32_t k = skip;
        while (k < b->n && resolve_frame_class(res, b->frames[k]) != FRAME_MANAGED)
            k++;
        if (k < b->n)
            skip = k;
        else if (m->trim_runtime == 2)
            skip = b->n; /* no managed frame at all: nothing (the event's label) */
        /* else no managed frame at all: keep the native stack */
    }
    if (skip) {
        memmove(b->frames, b->frames + skip, (b->n - skip) * sizeof *b->frames);
        b->n -= skip;
    }
}

uint32_t stacks_finish(struct agent *a, struct stackb *b, const struct stack_meta *m)
{
    return stacks_finish_sample(a, b, m, NULL);
}

uint32_t stacks_finish_sample(struct agent *a, struct stackb *b, const struct stack_meta *m,
                              const struct activity_frame *fr)
{
    struct recorder *out = &a->out;
    const struct resolver *res = &a->resolver;
    struct stack_meta logical;
    if (m->chain && m->ips && async_compose(a, b, m->ips, m->chain, m->seen_ns)) {
        /* a walk that stopped above the resumed method stopped in what the
         * chain replaced */
        logical = *m;
        logical.walk_flags &= ~(uint32_t)(WALK_TRUNCATED | WALK_FAILED);
        m = &logical;
    }
    trim_leaf(a, b, m);
    /* where the program handed over to the runtime: leafward of the
     * innermost managed frame, or at the root when there is none */
    uint32_t at = 0;
    while (at < b->n && resolve_frame_class(res, b->frames[at]) != FRAME_MANAGED)
        at++;
    /* a sample in managed code is the program's work, whatever the
     * runtime said last (an activity whose end was never reported) */
    int in_runtime = at > 0 || b->n == 0;
    if (!in_runtime)
        goto labelled;
    /* root to leaf: how the thread entered the runtime, placed at the
     * managed frame that entered it; then, at the innermost managed frame,
     * the outer and the inner activity and the collection */
    if (fr && fr->kind &&
        !(fr->kind == CLR_FRAME_PRESTUB &&
          (prepares_code(m->activity) || prepares_code(m->activity_outer)))) {
        uint32_t f = frame_label(a, fr, m->seen_ns);
        uint32_t where = at;
        if (f && fr->ret) {
            uint32_t caller = resolve_ip(&a->resolver, (uintptr_t)fr->ret, 1, m->seen_ns);
            for (uint32_t k = at; k < b->n; k++) {
                if (b->frames[k] == caller) {
                    where = k;
                    break;
                }
            }
        }
        if (f)
            insert_at(b, where, f);
    }
    /* the collection itself is named by the GC word; the pause around it
     * (suspending threads, resuming them) by the pause activity alone */
    uint64_t gc = m->gc;
    int collecting = gc && (pid_t)(gc >> 8 & 0xffffff) == (m->tid & 0xffffff);
    uint64_t outer = m->activity_outer, inner = m->activity;
    if (collecting && activity_kind_of(outer) == ACTIVITY_PAUSE)
        outer = 0;
    if (collecting && activity_kind_of(inner) == ACTIVITY_PAUSE)
        inner = 0;
    if (outer && outer != inner) {
        uint32_t f = activity_label(a, outer, m->seen_ns);
        if (f)
            insert_at(b, at, f);
    }
    if (inner) {
        uint32_t f = activity_label(a, inner, m->seen_ns);
        if (f)
            insert_at(b, at, f);
    }
    if (collecting) {
        uint32_t f = gc_label(a, gc);
        if (f)
            insert_at(b, at, f);
    }
labelled:
    if (m->leaf)
        insert_at(b, 0, m->leaf);
    if (m->walk_flags & WALK_TRUNCATED) {
        stackb_put(b, recorder_synthetic(out, "[truncated]"));
        recorder_count(out, FMT_COUNTER_TRUNCATED, 1);
    } else if (m->walk_flags & WALK_FAILED) {
        stackb_put(b, recorder_synthetic(out, "[unknown]"));
        recorder_count(out, FMT_COUNTER_FAILED_WALKS, 1);
    }
    if (b->n > FMT_MAX_STACK_DEPTH && !b->failed) {
        /* a walk at the deepest limit, with labels added: the format's
         * limit cuts it at the root like the walk's own limit would */
        if (!(m->walk_flags & WALK_TRUNCATED))
            recorder_count(out, FMT_COUNTER_TRUNCATED, 1);
        b->n = FMT_MAX_STACK_DEPTH;
        b->frames[b->n - 1] = recorder_synthetic(out, "[truncated]");
    }
    if (b->failed || b->n == 0) {
        recorder_count(out, FMT_COUNTER_DROPPED, 1);
        return 0;
    }
    for (uint32_t k = 0; k < b->n; k++) {
        if (!b->frames[k]) {
            recorder_count(out, FMT_COUNTER_DROPPED, 1);
            return 0;
        }
    }
    uint32_t stack = recorder_stack(out, b->frames, b->n);
    if (!stack)
        recorder_count(out, FMT_COUNTER_DROPPED, 1);
    return stack;
}

/* The runtime's managed code that raises events: the exception dispatch
 * of .NET 9 and later, the event source that raises Lock's contention. */
static const char *const machinery_types[] = {
    "System.Runtime.EH",
    "System.Diagnostics.Tracing.NativeRuntimeEventSource",
};

/* FunctionID -> 2 machinery, 1 not (only methods never unloaded) */
static struct map64 machinery_of;

static int is_machinery(struct agent *a, FunctionID f)
{
    uint32_t known;
    if (map64_get(&machinery_of, f, &known))
        return known == 2;
    if (!codemap_permanent(f))
        return 0;
    struct method_desc d;
    int yes = 0;
    if (names_describe(a->info, a->info_version, f, &d) == 0) {
        for (size_t i = 0; i < sizeof machinery_types / sizeof machinery_types[0] && !yes; i++) {
            size_t n = strlen(machinery_types[i]);
            yes = !strncmp(d.type, machinery_types[i], n) && (!d.type[n] || d.type[n] == '+');
        }
    }
    map64_put(&machinery_of, f, yes ? 2 : 1);
    return yes;
}

/* Addresses at the leaf of an event's stack up to the last managed frame
 * of the machinery before the first managed frame of anything else. */
static uint32_t machinery_frames(struct agent *a, const struct evq_entry *e)
{
    uint32_t skip = 0;
    for (uint32_t k = 0; k < e->depth; k++) {
        uintptr_t ip = (uintptr_t)e->ips[k];
        resolve_ip(&a->resolver, ip, 1, e->time); /* learns ReadyToRun code's ranges */
        const struct code_range *range = code_index_find(ip - 1);
        if (!range)
            continue;
        if (!is_machinery(a, range->function))
            break;
        skip = k + 1;
    }
    return skip;
}

uint32_t stacks_of_event(struct agent *a, struct stackb *b, const struct evq_entry *e,
                         unsigned trim, uint32_t leaf)
{
    stackb_reset(b);
    uint32_t from = trim & STACKS_TRIM_MACHINERY ? machinery_frames(a, e) : 0;
    for (uint32_t k = from; k < e->depth; k++)
        stackb_put(b, resolve_ip(&a->resolver, (uintptr_t)e->ips[k], 1, e->time));
    int runtime = trim & STACKS_TRIM_NO_MANAGED ? 2 : trim & STACKS_TRIM_RUNTIME ? 1 : 0;
    struct stack_meta m = {e->time, e->tid, 0,   0,       0, e->walk_flags & 0xffff,
                           runtime, 0,      NULL, NULL};
    struct async_chain chain = {e->chain, e->chain_n, e->chain_end,
                                e->runner != UINT32_MAX && e->runner >= from ? e->runner - from
                                                                             : UINT32_MAX};
    /* before anything moves the frames the runner's index counts */
    if (e->chain_n && async_compose(a, b, e->ips + from, &chain, e->time))
        m.walk_flags &= ~(uint32_t)(WALK_TRUNCATED | WALK_FAILED);
    if (leaf) {
        /* the label goes below the trimmed leaf: trim first, then put it */
        trim_leaf(a, b, &m);
        insert_at(b, 0, leaf);
        m.trim_runtime = 0;
    }
    return stacks_finish(a, b, &m);
}

void stacks_forget(void)
{
    map64_clear(&label_of);
    async_types_forget();
    async_compose_forget();
}

void stacks_shutdown(void)
{
    map64_free(&machinery_of);
    map64_free(&label_of);
}
