/*
 * exceptions: every throw (-e exceptions), with its type, the stack it was
 * thrown from, and how it ended: where it was caught (the catching method,
 * and whether a `when` filter chose the clause), or that it went unhandled,
 * was swallowed by a filter, or was replaced by another thrown from a
 * finally block.  Rethrows (`throw;`, `throw e`, ExceptionDispatchInfo as
 * `await` uses it) are told apart from new throws.  Counts are exact: each
 * ExceptionThrown callback is one throw (a full queue drops it and counts
 * it).  The message is never read; its length is.
 *
 * On the throwing thread (the callbacks, several in cooperative mode: a GC
 * waits while they run, so they only read and queue):
 *   ExceptionThrown   the object's class (its MethodTable; the ClassID and
 *                     the name from the runtime the first time this
 *                     thread meets it), whether it
 *                     was thrown before (its stack trace field is set: the
 *                     runtime clears it for a new throw and keeps it for a
 *                     rethrow), the message's length, and the stack
 *                     (evq_push walks it in place);
 *   the other steps   exflow.h follows the two passes and says how each
 *                     throw ended; each end is queued behind its throw.
 * The two fields are found once, by name, in System.Exception's layout
 * (GetClassLayout and the metadata), so no offset is assumed.
 *
 * Type names: ClassIDs of collectible assemblies are freed and reused when
 * the assembly is unloaded.  A thread sends a class's name with the first
 * throw of that class in the current "epoch", which every module unload
 * ends; the loop keys names by (class, epoch).  So a reused ClassID is
 * named again, never by an old name.
 *
 * On the loop thread: a throw waits (bounded) for its end, then becomes one
 * `exceptions` record: weight 1 (the flame graph of exceptions counts
 * throws), the stack with a "[throw] Type" label at the leaf, the type, the
 * outcome and the catching method.  Throws still in flight when the
 * recording ends are written with the outcome unknown.
 *
 * An unhandled exception ends the program (abort, no Shutdown): its pass 2
 * begins right after the runtime printed it, and the process dies moments
 * later.  Only then does a callback wait for the loop: it asks for
 * everything queued so far to be written (agent_sync, at most 250 ms), so
 * the exception that ended the program is in the recording.  The runtime
 * takes the same path (no catcher in managed code, then pass 2) when it
 * catches an exception itself where it called managed code (a static
 * constructor's exception becomes a TypeInitializationException); there it
 * goes straight to pass 2, while for an unhandled one it spends long
 * between the passes printing it.  A gap of more than 1 ms tells them
 * apart: the outcome is "unhandled" or "caught by the runtime".
 */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "agent/agent.h"
#include "agent/agent_thread.h"
#include "agent/codemap.h"
#include "agent/evq.h"
#include "agent/log.h"
#include "agent/names.h"
#include "agent/sources/exflow.h"
#include "agent/stacks.h"
#include "clr/clr_guids.h"
#include "common/clock.h"
#include "common/map.h"
#include "common/mem.h"
#include "common/utf.h"

enum { KIND_THROW = 1, KIND_END = 2 };

/* Outcomes as recorded (exflow's, and one it cannot know by itself). */
enum { OUTCOME_RUNTIME = 5 };

#define NAME_WORDS 48          /* a type name in a queue entry: 383 bytes */
#define MAX_PENDING 65536      /* throws waiting for their end */
#define UNHANDLED_GAP_NS 1000000ull
#define SYNC_TIMEOUT_NS 250000000ull

/* the source's own (one agent per process) */
static struct source *self;
static _Atomic uint32_t epoch = 1;

/* System.Exception's fields, found once (0 unknown, 1 being found, 2
 * found, 3 not found). */
static _Atomic int layout_state;
static uint32_t stack_trace_offset, message_offset, string_length_offset;

/* ---- the throwing thread ------------------------------------------------------ */

/* The thread's state (agent_thread.h); NULL when it has no block (out of
 * memory: counted there), and then its throws go unrecorded. */
static struct agent_exceptions *own(void)
{
    struct agent_thread *t = agent_thread_get();
    return t ? &t->exceptions : NULL;
}

/* Is the TypeDef the named type? */
static int name_is(ICorProfilerInfo15 *info, ModuleID module, mdTypeDef token, const char *want)
{
    char name[128];
    return names_type_of(info, module, token, name, sizeof name) == 0 && !strcmp(name, want);
}

/* Finds System.Exception's _stackTrace and _message offsets from a class
 * derived from it (any thread; once). */
static void find_layout(ICorProfilerInfo15 *info, ClassID klass)
{
    int expected = 0;
    if (!atomic_compare_exchange_strong(&layout_state, &expected, 1))
        return;
    int found = 0;
    for (int depth = 0; klass && depth < 32 && !found; depth++) {
        ModuleID module = 0;
        mdTypeDef token = 0;
        ClassID parent = 0;
        ULONG32 nargs = 0;
        if (info->lpVtbl->GetClassIDInfo2(info, klass, &module, &token, &parent, 0, &nargs,
                                          NULL) < 0)
            break;
        if (name_is(info, module, token, "System.Exception")) {
            static const char *const wanted[2] = {"_stackTrace", "_message"};
            int32_t offsets[2];
            int have = names_field_offsets(info, klass, module, wanted, offsets, 2) == 2;
            if (have) {
                stack_trace_offset = (uint32_t)offsets[0];
                message_offset = (uint32_t)offsets[1];
            }
            ULONG buffer_offset = 0, length_offset = 0;
            if (info->lpVtbl->GetStringLayout2(info, &length_offset, &buffer_offset) >= 0)
                string_length_offset = length_offset;
            found = have && length_offset;
            break;
        }
        klass = parent;
    }
    atomic_store(&layout_state, found ? 2 : 3);
    if (!found)
        log_warn("System.Exception's fields were not found: rethrows are told only by their "
                 "catch blocks, message lengths are unknown");
}

static void queue_ends(const struct exflow_end *ends, uint32_t n, int runtime_caught)
{
    for (uint32_t i = 0; i < n; i++) {
        uint64_t outcome = ends[i].outcome;
        if (outcome == EXFLOW_UNHANDLED && runtime_caught)
            outcome = OUTCOME_RUNTIME;
        uint64_t w[3] = {ends[i].seq | outcome << 32 | (uint64_t)ends[i].by_filter << 40,
                         ends[i].function, ends[i].filters_run};
        evq_push(self->index, KIND_END, w, 3, 0);
    }
}

static void on_thrown(ICorProfilerInfo15 *info, ObjectID object, struct agent_exceptions *t)
{
    /* cooperative mode: the object does not move while we read it */
    uintptr_t table = object ? *(const uintptr_t *)object : 0;
    uint32_t ep = atomic_load_explicit(&epoch, memory_order_relaxed);
    struct agent_ex_class *seen = &t->seen[(table >> 4) % AGENT_EX_CLASSES];
    int known = table && seen->table == table && seen->epoch == ep;
    ClassID klass = known ? seen->klass : 0;
    if (!known && info->lpVtbl->GetClassFromObject(info, object, &klass) < 0)
        klass = 0;
    int state = atomic_load_explicit(&layout_state, memory_order_acquire);
    if (state == 0 && klass) {
        find_layout(info, klass);
        state = atomic_load_explicit(&layout_state, memory_order_acquire);
    }
    int thrown_before = 0;
    int64_t message_length = -1;
    if (state == 2 && object) {
        thrown_before = *(const uint64_t *)(object + stack_trace_offset) != 0;
        uint64_t message = *(const uint64_t *)(object + message_offset);
        message_length = message ? *(const int32_t *)(message + string_length_offset) : 0;
    }
    /* an object's identity for matching catch blocks: its address and its
     * class (an address alone may be another object's after a GC) */
    uint64_t identity = object ^ table * 0x9e3779b97f4a7c15ull;
    struct exflow_end ends[EXFLOW_MAX_ENDS];
    uint32_t seq = 0;
    int rethrow = 0;
    uint32_t n = exflow_thrown(&t->flow, identity, thrown_before, &seq, &rethrow, ends);
    queue_ends(ends, n, 0);

    uint64_t w[3 + NAME_WORDS];
    uint32_t words = 3;
    int named = 0;
    if (klass && !known) {
        char *name = (char *)(w + 3);
        if (names_describe_class(info, klass, name, NAME_WORDS * 8) == 0) {
            words += (uint32_t)((strlen(name) + 8) / 8);
            named = 1;
            seen->table = table;
            seen->klass = klass;
            seen->epoch = ep;
        }
    }
    w[0] = seq | (uint64_t)rethrow << 32 | (uint64_t)named << 33;
    w[1] = klass;
    w[2] = ep | (uint64_t)(uint32_t)(message_length + 1) << 32;
    evq_push(self->index, KIND_THROW, w, words, self->agent->cfg.max_depth);
    if (evq_pressed())
        agent_hurry(self->agent);
    t->pass1_ns = clock_now_ns();
}

static void exception(struct source *s, enum source_exception_step step, FunctionID function,
                      ObjectID object)
{
    /* pass 1 entering a frame: the commonest callback, and nothing for
     * exflow to follow (it stays a no-op there); return before reaching the
     * thread's state */
    if (step == SOURCE_EX_SEARCH_ENTER)
        return;
    struct agent_exceptions *t = own();
    if (!t)
        return;
    ICorProfilerInfo15 *info = s->agent->info;
    if (step == SOURCE_EX_THROWN) {
        on_thrown(info, object, t);
        return;
    }
    uint64_t identity = 0;
    if (step == SOURCE_EX_CATCHER_ENTER && object)
        identity = object ^ *(const uintptr_t *)object * 0x9e3779b97f4a7c15ull;
    struct exflow_end ends[EXFLOW_MAX_ENDS];
    uint32_t n = exflow_step(&t->flow, step, function, identity, ends);
    if (step == SOURCE_EX_FILTER_LEAVE) {
        t->pass1_ns = clock_now_ns();
    } else if (step == SOURCE_EX_UNWIND_ENTER) {
        for (uint32_t i = 0; i < n; i++) {
            if (ends[i].outcome != EXFLOW_UNHANDLED)
                continue;
            /* long since the first pass: the runtime reported it unhandled,
             * and the program is about to end */
            int unhandled = clock_now_ns() - t->pass1_ns > UNHANDLED_GAP_NS;
            queue_ends(ends, n, !unhandled);
            if (unhandled && agent_sync(s->agent, SYNC_TIMEOUT_NS) < 0)
                log_debug("the unhandled exception may not be in the recording");
            return;
        }
    }
    queue_ends(ends, n, 0);
}

static void thread_destroyed(struct source *s, ThreadID thread)
{
    (void)s;
    (void)thread;
    /* on the dying thread itself: what it still had in flight */
    struct agent_thread *t = agent_thread_peek();
    if (!t)
        return;
    struct exflow_end ends[EXFLOW_MAX_ENDS];
    queue_ends(ends, exflow_finish(&t->exceptions.flow, ends), 0);
}

static void module_unloading(struct source *s, ModuleID module)
{
    (void)s;
    (void)module;
    atomic_fetch_add(&epoch, 1);
}

/* ---- the loop ------------------------------------------------------------------ */

struct pending {
    uint64_t key;        /* tid << 32 | seq; 0 = free */
    uint64_t time;
    uint32_t thread, stack, type;
    uint32_t rethrow;
    int64_t message_length;
};

struct exsource {
    uint32_t event;
    struct stackb stack;
    struct map64 type_of;   /* class | epoch << 48 -> string id */
    struct map64 label_of;  /* type string id -> "[throw] Type" frame */
    struct map64 pending_of; /* tid << 32 | seq -> index into pending */
    struct pending *pending;
    size_t pending_count, pending_cap;
    uint32_t *free_slots;
    size_t free_count, free_cap;
};

static struct exsource state;

static int init(struct agent *a, struct source *s, DWORD *mask, DWORD *high)
{
    (void)a;
    (void)high;
    self = s;
    s->state = &state;
    *mask |= COR_PRF_MONITOR_EXCEPTIONS | COR_PRF_MONITOR_THREADS;
    return 0;
}

static int start(struct agent *a, struct source *s)
{
    (void)s;
    struct exsource *x = &state;
    map64_init(&x->type_of);
    map64_init(&x->label_of);
    map64_init(&x->pending_of);
    x->event = recorder_define_event(&a->out, FMT_EV_EXCEPTIONS);
    return x->event ? 0 : -1;
}

static uint32_t type_string(struct agent *a, const struct evq_entry *e)
{
    struct exsource *x = &state;
    ClassID klass = e->payload[1];
    uint32_t ep = (uint32_t)e->payload[2];
    uint64_t key = klass | (uint64_t)(ep & 0xffff) << 48;
    uint32_t sid;
    if (e->payload[0] >> 33 & 1) {
        const char *name = (const char *)(e->payload + 3);
        size_t len = strnlen(name, (e->words - 3) * 8);
        sid = recorder_string(&a->out, name, len);
        if (sid)
            map64_put(&x->type_of, key, sid);
        return sid;
    }
    if (map64_get(&x->type_of, key, &sid))
        return sid;
    /* its first throw was dropped: ask, if the class cannot have been
     * unloaded since */
    char name[NAME_WORDS * 8];
    if (klass && codemap_ids_begin(e->time)) {
        int ok = names_describe_class(a->info, klass, name, sizeof name) == 0;
        codemap_ids_end();
        if (ok && (sid = recorder_string(&a->out, name, strlen(name))) != 0) {
            map64_put(&x->type_of, key, sid);
            return sid;
        }
    }
    return recorder_string(&a->out, "[unknown type]", 14);
}

static uint32_t throw_label(struct agent *a, uint32_t type)
{
    struct exsource *x = &state;
    uint32_t frame;
    if (map64_get(&x->label_of, type, &frame))
        return frame;
    const struct strtab *strings = &a->out.strings;
    frame = recorder_label(&a->out, "throw", type < strings->count ? strings->strs[type] : NULL, 0);
    if (frame)
        map64_put(&x->label_of, type, frame);
    return frame;
}

static void write_throw(struct agent *a, const struct pending *p, uint64_t outcome,
                        FunctionID catcher, uint64_t seen_ns, uint64_t by_filter, uint64_t filters)
{
    struct exsource *x = &state;
    uint64_t ml = (uint64_t)p->message_length;
    uint64_t values[FMT_EXCEPTIONS_VALUE_COUNT] = {[FMT_EXCEPTIONS_EXCEPTIONS] = 1};
    uint64_t fields[FMT_EXCEPTIONS_FIELD_COUNT] = {
        [FMT_EXCEPTIONS_TYPE] = p->type,
        [FMT_EXCEPTIONS_RETHROW] = p->rethrow,
        [FMT_EXCEPTIONS_OUTCOME] = outcome,
        [FMT_EXCEPTIONS_CATCH] = catcher ? resolve_function(&a->resolver, catcher, seen_ns) : 0,
        [FMT_EXCEPTIONS_BY_FILTER] = by_filter,
        [FMT_EXCEPTIONS_FILTERS] = filters,
        [FMT_EXCEPTIONS_MESSAGE_LENGTH] = ml << 1 ^ (uint64_t)(p->message_length >> 63)};
    recorder_record(&a->out, x->event, p->thread, p->time, p->stack, values,
                    FMT_EXCEPTIONS_VALUE_COUNT, fields, FMT_EXCEPTIONS_FIELD_COUNT);
}

static void release(uint32_t at)
{
    struct exsource *x = &state;
    map64_remove(&x->pending_of, x->pending[at].key);
    x->pending[at].key = 0;
    uint32_t *grown = mem_grow(x->free_slots, &x->free_cap, x->free_count + 1, sizeof *grown);
    if (grown) {
        x->free_slots = grown;
        x->free_slots[x->free_count++] = at;
    }
}

static void on_throw(struct agent *a, const struct evq_entry *e)
{
    struct exsource *x = &state;
    if (e->words < 3)
        return;
    struct pending p;
    p.key = (uint64_t)(uint32_t)e->tid << 32 | (uint32_t)e->payload[0];
    p.time = e->time;
    p.thread = thread_ids_get_at(&a->thread_ids, &a->out, e->tid, e->time);
    p.type = type_string(a, e);
    p.stack = stacks_of_event(a, &x->stack, e, STACKS_TRIM_RUNTIME | STACKS_TRIM_MACHINERY,
                              throw_label(a, p.type));
    p.rethrow = (uint32_t)(e->payload[0] >> 32 & 1);
    p.message_length = (int64_t)(e->payload[2] >> 32) - 1;
    uint32_t at;
    if (map64_get(&x->pending_of, p.key, &at)) {
        /* the same thread and number again: the thread id was reused */
        write_throw(a, &x->pending[at], EXFLOW_UNKNOWN, 0, 0, 0, 0);
        release(at);
    }
    if (x->pending_count - x->free_count >= MAX_PENDING) {
        write_throw(a, &p, EXFLOW_UNKNOWN, 0, 0, 0, 0);
        return;
    }
    if (x->free_count) {
        at = x->free_slots[--x->free_count];
    } else {
        struct pending *grown = mem_grow(x->pending, &x->pending_cap, x->pending_count + 1,
                                         sizeof *grown);
        if (!grown) {
            write_throw(a, &p, EXFLOW_UNKNOWN, 0, 0, 0, 0);
            return;
        }
        x->pending = grown;
        at = (uint32_t)x->pending_count++;
    }
    x->pending[at] = p;
    if (map64_put(&x->pending_of, p.key, at) < 0) {
        write_throw(a, &p, EXFLOW_UNKNOWN, 0, 0, 0, 0);
        x->pending[at].key = 0;
        release(at);
    }
}

static void on_end(struct agent *a, const struct evq_entry *e)
{
    struct exsource *x = &state;
    if (e->words < 3)
        return;
    uint64_t key = (uint64_t)(uint32_t)e->tid << 32 | (uint32_t)e->payload[0];
    uint32_t at;
    if (!map64_get(&x->pending_of, key, &at))
        return; /* its throw was dropped (counted) */
    write_throw(a, &x->pending[at], e->payload[0] >> 32 & 0xff, (FunctionID)e->payload[1],
                e->time, e->payload[0] >> 40 & 1, e->payload[2]);
    release(at);
}

static void entry(struct agent *a, struct source *s, const struct evq_entry *e)
{
    (void)s;
    if (e->kind == KIND_THROW)
        on_throw(a, e);
    else if (e->kind == KIND_END)
        on_end(a, e);
}

static void finish(struct agent *a, struct source *s)
{
    (void)s;
    struct exsource *x = &state;
    /* in flight when the recording ended */
    for (size_t i = 0; i < x->pending_count; i++)
        if (x->pending[i].key)
            write_throw(a, &x->pending[i], EXFLOW_UNKNOWN, 0, 0, 0, 0);
    map64_free(&x->type_of);
    map64_free(&x->label_of);
    map64_free(&x->pending_of);
    mem_free(x->pending);
    mem_free(x->free_slots);
    stackb_free(&x->stack);
    memset(x, 0, sizeof *x);
}

static const struct source_hooks hooks = {
    .exception = exception,
    .thread_destroyed = thread_destroyed,
    .module_unloading = module_unloading,
};

const struct source_ops source_exceptions = {
    .name = "exceptions",
    .init = init,
    .start = start,
    .entry = entry,
    .finish = finish,
    .hooks = &hooks,
};
