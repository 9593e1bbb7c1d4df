/*
 * async: logical async stacks (`record --async`, docs/async.md).  This
 * source records nothing of its own; it makes the samples and events of
 * the other sources carry, above a resumed async method, the methods that
 * await it (async/compose.h, with what the signal handler read:
 * signal/achain.h).  Its part:
 *
 *   init     asks for ReJIT (async/rewrite.h), for class loads and for
 *            the runtime's suspensions (a chain read outside cooperative
 *            mode is kept only when no suspension overlapped it)
 *   start, load (ModuleLoadFinished, ClassLoadFinished), cycle
 *            once System.Private.CoreLib is loaded and the first state
 *            machine box has been (an async method yielded: before that
 *            nothing is resumed), has the runtime's resuming methods
 *            rewritten (the loop asks: never from the callback), having
 *            found in the runtime's contract descriptor where a thread
 *            says it runs in cooperative mode; after an attach at once,
 *            the boxes of a running service being there
 *   rejit    hands the new bodies over (GetReJITParameters)
 *   module unloads forget the types learned (their MethodTables are reused)
 *   stop     at a detach, puts the original methods back
 *
 * INFO "async" says what the run got: "on (N runtime methods rewritten)",
 * "on (no async method yielded: nothing rewritten)", or why not.
 */
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>

#include "agent/agent.h"
#include "agent/async/compose.h"
#include "agent/async/enter.h"
#include "agent/async/rewrite.h"
#include "agent/async/types.h"
#include "agent/clrdesc.h"
#include "agent/log.h"
#include "agent/signal/achain.h"
#include "common/clock.h"

static _Atomic ModuleID corelib;
static int requested;
/* Waiting for the first box.  CoreLib's ModuleLoadFinished publishes
 * `corelib`; the loop then looks the boxes' types up (half a millisecond of
 * metadata, kept off the loading thread) and publishes `types_ready`.  A
 * class of CoreLib that loads in between is noted in `early`, which the
 * loop reads once the types are known (a note made after the loop counted
 * them finds `types_ready` set and checks itself).  `yielded` once a box
 * loaded, or at once when it cannot be told (an attach, more early classes
 * than noted, no box type found). */
#define BOX_TYPES 4
#define EARLY 1024
static mdTypeDef box_types[BOX_TYPES];
static size_t box_type_count;
static _Atomic int types_ready;
static _Atomic mdTypeDef early[EARLY];
static _Atomic uint32_t early_count, early_noted;
static _Atomic int yielded;

static int is_box(mdTypeDef type)
{
    for (size_t i = 0; i < box_type_count; i++)
        if (box_types[i] == type)
            return 1;
    return 0;
}

static void find_box_types(struct agent *a, ModuleID m)
{
    box_type_count = rewrite_box_types(a->info, m, box_types, BOX_TYPES);
    atomic_store(&types_ready, 1);
    uint32_t n = atomic_load(&early_count);
    while (atomic_load(&early_noted) < n)
        sched_yield(); /* a note in flight: one store */
    int seen = !box_type_count || n > EARLY;
    for (uint32_t i = 0; i < n && !seen; i++)
        seen = is_box(atomic_load(&early[i]));
    if (seen)
        atomic_store(&yielded, 1);
}
/* Runtimes before .NET 8 (ICorProfilerInfo14) are not rewritten: .NET
 * Core 3.1 crashed with the rewrite (tests/e2e/t_core31.sh), and 5 to 7
 * were never tried; their samples keep their real stacks. */
#define ASYNC_INFO_MIN 14
static int too_old;

static void request(struct agent *a)
{
    ModuleID m = atomic_load(&corelib);
    if (requested || !m)
        return;
    if (!too_old) {
        if (!atomic_load(&types_ready))
            find_box_types(a, m);
        if (!atomic_load(&yielded))
            return;
    }
    requested = 1;
    if (too_old) {
        recorder_info(&a->out, FMT_INFO_ASYNC,
                      "off (logical async stacks need .NET 8 or later: ICorProfilerInfo14)");
        log_info("logical async stacks need .NET 8 or later: samples keep their real stacks");
        return;
    }
    /* read by the signal handler only for chains the rewritten methods
     * publish, so here, before the request, and not in Initialize (0.3 ms
     * of parsing the program's start would wait for) */
    struct clrdesc_frames layout;
    clrdesc_read_frames(&layout);
    achain_set_coop_offset(layout.thread_coop);
    if (layout.thread_coop < 0)
        log_debug("async: the runtime does not say where a thread's GC mode is: every async "
                  "chain is read through the kernel");
    /* what the rewrite costs the agent's thread, said in the recording */
    uint64_t cpu = clock_ns(CLOCK_THREAD_CPUTIME_ID);
    int n = rewrite_request(a->info, m);
    recorder_count(&a->out, FMT_COUNTER_ASYNC_REWRITE_NS, clock_ns(CLOCK_THREAD_CPUTIME_ID) - cpu);
    char text[96];
    if (n)
        snprintf(text, sizeof text, "on (%d runtime methods rewritten)", n);
    else
        snprintf(text, sizeof text, "off (the runtime's async methods could not be rewritten)");
    recorder_info(&a->out, FMT_INFO_ASYNC, text);
}

static int async_init(struct agent *a, struct source *s, DWORD *mask, DWORD *high)
{
    (void)s;
    (void)high;
    atomic_store(&corelib, 0);
    requested = 0;
    box_type_count = 0;
    atomic_store(&types_ready, 0);
    atomic_store(&early_count, 0);
    atomic_store(&early_noted, 0);
    /* a service attached to has yielded long ago, and its class loads
     * were before the agent */
    atomic_store(&yielded, a->attached);
    too_old = a->info_version < ASYNC_INFO_MIN;
    *mask |= COR_PRF_MONITOR_MODULE_LOADS;
    if (too_old)
        return 0;
    *mask |= COR_PRF_ENABLE_REJIT | COR_PRF_MONITOR_SUSPENDS;
    if (!a->attached)
        *mask |= COR_PRF_MONITOR_CLASS_LOADS; /* the first box's */
    return achain_init();
}

/* async_enter_too_deep() when this recording began: the count is the
 * library's, kept across attaches */
static uint64_t too_deep_before;

static int async_start(struct agent *a, struct source *s)
{
    (void)s;
    too_deep_before = async_enter_too_deep();
    /* started after the program's first moments (an attach, or a late
     * loop): CoreLib is there already */
    if (!atomic_load(&corelib)) {
        /* launched, CoreLib's ModuleLoadFinished is on its way (no managed
         * code has run, so no box has loaded); after an attach `yielded`
         * is set already */
        ModuleID found = rewrite_find_corelib(a->info);
        if (found)
            atomic_store(&corelib, found);
    }
    request(a);
    return 0;
}

static uint64_t async_cycle(struct agent *a, struct source *s, uint64_t now)
{
    (void)s;
    (void)now;
    request(a);
    return 0;
}

/* Loop, at the end: a program that never yielded had nothing rewritten;
 * the recording says so (and stays "on": its state machines are still
 * named as written). */
static void async_note_unused(struct agent *a)
{
    if (requested || too_old || !atomic_load(&corelib))
        return;
    requested = 1;
    recorder_info(&a->out, FMT_INFO_ASYNC,
                  "on (no async method yielded: nothing rewritten)");
}

static void async_stop(struct agent *a, struct source *s)
{
    (void)s;
    recorder_count(&a->out, FMT_COUNTER_ASYNC_TOO_DEEP, async_enter_too_deep() - too_deep_before);
    if (atomic_load(&a->detaching) && !too_old)
        rewrite_revert(a->info);
    async_note_unused(a);
}

static void async_finish(struct agent *a, struct source *s)
{
    (void)a;
    (void)s;
    async_types_free();
    async_compose_forget();
}

static void async_load(struct source *s, enum source_load_kind kind, int finished, uintptr_t id,
                       HRESULT status)
{
    if (!finished || status < 0)
        return;
    ModuleID m = atomic_load(&corelib);
    if (kind == SOURCE_LOAD_CLASS) {
        if (!m || atomic_load(&yielded))
            return;
        ModuleID module = 0;
        mdTypeDef type = 0;
        if (s->agent->info->lpVtbl->GetClassIDInfo2(s->agent->info, (ClassID)id, &module, &type,
                                                    NULL, 0, NULL, NULL) < 0 ||
            module != m)
            return;
        if (!atomic_load(&types_ready)) {
            uint32_t i = atomic_fetch_add(&early_count, 1);
            if (i < EARLY)
                atomic_store(&early[i], type);
            atomic_fetch_add(&early_noted, 1);
            if (!atomic_load(&types_ready))
                return; /* the loop will read the note */
        }
        if (is_box(type)) {
            atomic_store(&yielded, 1);
            agent_poke(s->agent);
        }
        return;
    }
    if (kind != SOURCE_LOAD_MODULE || m || !rewrite_is_corelib(s->agent->info, (ModuleID)id))
        return;
    atomic_store(&corelib, (ModuleID)id);
    agent_poke(s->agent);
}

static HRESULT async_rejit_parameters(struct source *s, ModuleID module, mdMethodDef method,
                                      ICorProfilerFunctionControl *control)
{
    (void)s;
    return rewrite_parameters(module, method, control);
}

static void async_rejit_error(struct source *s, ModuleID module, mdMethodDef method,
                              HRESULT status)
{
    (void)s;
    rewrite_failed(module, method, status);
}

static const struct source_hooks hooks = {
    .load = async_load,
    .rejit_parameters = async_rejit_parameters,
    .rejit_error = async_rejit_error,
};

const struct source_ops source_async = {
    .name = "async",
    .init = async_init,
    .start = async_start,
    .cycle = async_cycle,
    .stop = async_stop,
    .finish = async_finish,
    .hooks = &hooks,
};
