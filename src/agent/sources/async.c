/*
 * async: logical async stacks (`record --async`, docs/async.md).  This
 * source records nothing of its own; it makes the samples and events of
 * the other sources carry, above a resumed async method, the methods that
 * await it (async/compose.h, with what the signal handler read:
 * signal/achain.h).  Its part:
 *
 *   init     asks for ReJIT (async/rewrite.h) and for the runtime's
 *            suspensions (a chain read outside cooperative mode is kept
 *            only when no suspension overlapped it); finds, in the
 *            runtime's contract descriptor, where a thread says it runs in
 *            cooperative mode
 *   start, load (ModuleLoadFinished), cycle
 *            once System.Private.CoreLib is loaded, has the runtime's
 *            resuming methods rewritten (the loop asks: never from the
 *            callback)
 *   rejit    hands the new bodies over (GetReJITParameters)
 *   module unloads forget the types learned (their MethodTables are reused)
 *   stop     at a detach, puts the original methods back
 *
 * INFO "async" says what the run got: "on (N methods)", or why not.
 */
#include <stdatomic.h>
#include <stdio.h>

#include "agent/agent.h"
#include "agent/async/compose.h"
#include "agent/async/rewrite.h"
#include "agent/async/types.h"
#include "agent/clrdesc.h"
#include "agent/log.h"
#include "agent/signal/achain.h"

static _Atomic ModuleID corelib;
static int requested;
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
    requested = 1;
    if (too_old) {
        recorder_info(&a->out, FMT_INFO_ASYNC,
                      "off (logical async stacks need .NET 8 or later: ICorProfilerInfo14)");
        log_info("logical async stacks need .NET 8 or later: samples keep their real stacks");
        return;
    }
    int n = rewrite_request(a->info, m);
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
    too_old = a->info_version < ASYNC_INFO_MIN;
    *mask |= COR_PRF_MONITOR_MODULE_LOADS;
    if (too_old)
        return 0;
    *mask |= COR_PRF_ENABLE_REJIT | COR_PRF_MONITOR_SUSPENDS;
    struct clrdesc_frames layout;
    clrdesc_read_frames(&layout);
    achain_set_coop_offset(layout.thread_coop);
    if (layout.thread_coop < 0)
        log_debug("async: the runtime does not say where a thread's GC mode is: every async "
                  "chain is read through the kernel");
    return achain_init();
}

static int async_start(struct agent *a, struct source *s)
{
    (void)s;
    /* started after the program's first moments (an attach, or a late
     * loop): CoreLib is there already */
    ICorProfilerModuleEnum *modules = NULL;
    if (!atomic_load(&corelib) && a->info->lpVtbl->EnumModules(a->info, &modules) >= 0 &&
        modules) {
        ModuleID ids[64];
        ULONG got = 0;
        while (!atomic_load(&corelib) &&
               modules->lpVtbl->Next(modules, 64, ids, &got) >= 0 && got)
            for (ULONG i = 0; i < got; i++)
                if (rewrite_is_corelib(a->info, ids[i]))
                    atomic_store(&corelib, ids[i]);
        modules->lpVtbl->Release(modules);
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

static void async_stop(struct agent *a, struct source *s)
{
    (void)s;
    if (atomic_load(&a->detaching) && !too_old)
        rewrite_revert(a->info);
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
    if (kind != SOURCE_LOAD_MODULE || !finished || status < 0 || atomic_load(&corelib))
        return;
    if (rewrite_is_corelib(s->agent->info, (ModuleID)id)) {
        atomic_store(&corelib, (ModuleID)id);
        agent_poke(s->agent);
    }
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
