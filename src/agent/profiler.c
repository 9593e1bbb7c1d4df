/*
 * profiler: the callback object the runtime talks to, in the Wine style: a
 * struct whose first field is the interface, then the reference count, then
 * the agent's state.  One vtable of ICorProfilerCallback11 answers
 * QueryInterface for IUnknown and every callback version, since each
 * version extends the one before (the runtime ignores a profiler that does
 * not answer version 3).
 *
 * Initialize, InitializeForAttach, ProfilerAttachComplete,
 * ProfilerDetachSucceeded and Shutdown hand over to lifecycle.h.  Every
 * other callback is dispatched here, once: to the agent's core (the thread
 * registry, the code map, what each thread is doing for the signal
 * sampler's labels: callback_activity.h) and to the sources that hook it
 * (source.h).  Callbacks run on the program's threads, often with the
 * runtime in a state where waiting would stall it: nothing here waits for
 * the loop.
 */
#include "agent/profiler.h"

#include <stdatomic.h>

#include "agent/agent.h"
#include "agent/callback_activity.h"
#include "agent/codemap.h"
#include "agent/lifecycle.h"
#include "agent/log.h"
#include "agent/signal/achain.h"
#include "agent/signal/activity.h"
#include "agent/signal/hijack.h"
#include "agent/signal/stack_bounds.h"
#include "agent/thread_registry.h"
#include "agent/unhandled.h"
#include "agent/unhandled_probe.h"
#include "clr/clr_defaults.h"
#include "clr/clr_guids.h"
#include "common/mem.h"
#include "common/utf.h"

struct profiler {
    ICorProfilerCallback11 ICorProfilerCallback11_iface;
    _Atomic int refcount;
    int initialized; /* Initialize succeeded */
    int leak;        /* the loop would not stop: never free the agent */
    int labels;      /* follow what threads do, for the signal sampler's labels */
    struct agent agent;
};

static inline struct profiler *impl_from_ICorProfilerCallback11(ICorProfilerCallback11 *iface)
{
    return (struct profiler *)((char *)iface - offsetof(struct profiler, ICorProfilerCallback11_iface));
}

/* Calls hook `name` of every source that has it (none once the agent is
 * on its way out: the sources are finished). */
#define DISPATCH(p, name, ...)                                                        \
    do {                                                                              \
        struct agent *a_ = &(p)->agent;                                               \
        if (atomic_load_explicit(&a_->detaching, memory_order_relaxed))              \
            break;                                                                    \
        for (uint32_t i_ = 0; i_ < a_->source_count; i_++) {                          \
            struct source *s_ = &a_->sources[i_];                                     \
            if (s_->ops->hooks && s_->ops->hooks->name)                               \
                s_->ops->hooks->name(s_, ##__VA_ARGS__);                              \
        }                                                                             \
    } while (0)

/* What the thread is doing, for the signal sampler's labels
 * (callback_activity.h): `frame` is the callback's own frame address. */
#define activity_begin(p, kind, subject)                                                  \
    do {                                                                                  \
        if ((p)->labels)                                                                  \
            callback_activity_begin((kind), (subject), (uintptr_t)__builtin_frame_address(0)); \
    } while (0)
#define activity_end(p, kind, subject)                                                    \
    do {                                                                                  \
        if ((p)->labels)                                                                  \
            callback_activity_end((kind), (subject), (uintptr_t)__builtin_frame_address(0)); \
    } while (0)

/* ---- IUnknown ------------------------------------------------------------ */

static HRESULT STDMETHODCALLTYPE profiler_QueryInterface(ICorProfilerCallback11 *iface, REFIID riid,
                                                         void **out)
{
    if (!out)
        return E_POINTER;
    for (int v = 0; v <= 11; v++) {
        if (clr_guid_equal(riid, clr_callback_iids[v])) {
            iface->lpVtbl->AddRef(iface);
            *out = iface;
            return S_OK;
        }
    }
    *out = NULL;
    return E_NOINTERFACE;
}

static ULONG STDMETHODCALLTYPE profiler_AddRef(ICorProfilerCallback11 *iface)
{
    struct profiler *p = impl_from_ICorProfilerCallback11(iface);
    return (ULONG)(atomic_fetch_add(&p->refcount, 1) + 1);
}

static ULONG STDMETHODCALLTYPE profiler_Release(ICorProfilerCallback11 *iface)
{
    struct profiler *p = impl_from_ICorProfilerCallback11(iface);
    int left = atomic_fetch_sub(&p->refcount, 1) - 1;
    if (left == 0 && !p->leak)
        mem_free(p);
    return (ULONG)left;
}

/* ---- Initialize and Shutdown (lifecycle.h) --------------------------------- */

static HRESULT STDMETHODCALLTYPE profiler_Initialize(ICorProfilerCallback11 *iface, IUnknown *unk)
{
    struct profiler *p = impl_from_ICorProfilerCallback11(iface);
    char err[512];
    if (config_from_env(&p->agent.cfg, err, sizeof err) < 0) {
        log_set_remote(0);
        log_error("%s; profiling is off for this run", err);
        return E_FAIL;
    }
    return lifecycle_start(&p->agent, unk, &p->labels, &p->initialized);
}

/* Runs on the runtime's diagnostics thread, which answers nothing else
 * meanwhile: quick.  The settings come in the client data, never from the
 * environment (the service's, not ours). */
static HRESULT STDMETHODCALLTYPE profiler_InitializeForAttach(ICorProfilerCallback11 *iface,
                                                              IUnknown *unk, void *data,
                                                              UINT size)
{
    struct profiler *p = impl_from_ICorProfilerCallback11(iface);
    struct agent *a = &p->agent;
    char err[512];
    a->attached = 1;
    log_set_remote(1); /* nothing on the service's stderr, even before we can tell corscope */
    if (!data || config_from_text(&a->cfg, data, size, err, sizeof err) < 0) {
        /* not from this corscope (another version?): it sees the attach
         * fail without a hello */
        return E_FAIL;
    }
    return lifecycle_start(&p->agent, unk, &p->labels, &p->initialized);
}

/* A thread that was running before the attach, now registered (after
 * ProfilerAttachComplete, thread_registry.h): the sources hear of it as if
 * it had just started. */
static void adopted(void *ctx, ThreadID thread, pid_t tid)
{
    struct profiler *p = ctx;
    DISPATCH(p, thread_created, thread);
    if (tid)
        DISPATCH(p, thread_os_assigned, thread, tid);
}

/* The runtime delivers callbacks from now on; what was there before gets
 * none: the threads are registered here (few, and a dying one must be
 * caught between its listing and its ThreadDestroyed, thread_registry.h), the code
 * by the loop (many). */
static HRESULT STDMETHODCALLTYPE profiler_ProfilerAttachComplete(ICorProfilerCallback11 *iface)
{
    struct profiler *p = impl_from_ICorProfilerCallback11(iface);
    struct agent *a = &p->agent;
    if (!p->initialized)
        return S_OK;
    lifecycle_attach_complete(a, adopted, p);
    return S_OK;
}

/* The runtime has stopped calling us and no callback is running (it
 * checked); the loop asked for this and has ended.  Runs on the runtime's
 * detach thread, holding a lock that makes the next attach wait: quick. */
static HRESULT STDMETHODCALLTYPE profiler_ProfilerDetachSucceeded(ICorProfilerCallback11 *iface)
{
    struct profiler *p = impl_from_ICorProfilerCallback11(iface);
    struct agent *a = &p->agent;
    if (!p->initialized)
        return S_OK;
    p->initialized = 0;
    if (lifecycle_detached(a) < 0)
        p->leak = 1;
    return S_OK;
}

static HRESULT STDMETHODCALLTYPE profiler_Shutdown(ICorProfilerCallback11 *iface)
{
    struct profiler *p = impl_from_ICorProfilerCallback11(iface);
    struct agent *a = &p->agent;
    if (!p->initialized)
        return S_OK;
    p->initialized = 0;
    if (lifecycle_shutdown(a) < 0)
        p->leak = 1;
    return S_OK;
}

/* ---- threads ---------------------------------------------------------------- */

/* Is tid the agent's loop thread?  The runtime sets up one of its threads
 * for it when it asks for a ReJIT (the unhandled probe at every start, the
 * async rewrite after the first yield): ThreadCreated and ThreadDestroyed
 * then come on that thread, ThreadAssignedToOSThread names it.  The loop
 * creates no managed thread, so a callback on it is about itself. */
static int agents_own(const struct profiler *p, pid_t tid)
{
    return tid && tid == atomic_load(&p->agent.loop_tid);
}

static HRESULT STDMETHODCALLTYPE profiler_ThreadCreated(ICorProfilerCallback11 *iface, ThreadID thread)
{
    struct profiler *p = impl_from_ICorProfilerCallback11(iface);
    if (agents_own(p, callback_activity_tid()))
        return S_OK; /* not the program's: not listed, never sampled */
    thread_registry_created(thread);
    DISPATCH(p, thread_created, thread);
    return S_OK;
}

static HRESULT STDMETHODCALLTYPE profiler_ThreadDestroyed(ICorProfilerCallback11 *iface,
                                                          ThreadID thread)
{
    struct profiler *p = impl_from_ICorProfilerCallback11(iface);
    if (agents_own(p, callback_activity_tid()))
        return S_OK;
    /* the Thread is about to go: no handler may read it after this */
    if (p->labels)
        activity_forget_thread(callback_activity_tid(), (uintptr_t)thread);
    DISPATCH(p, thread_destroyed, thread);
    thread_registry_destroyed(thread);
    if (p->initialized)
        agent_poke(&p->agent); /* its clock's descriptor is closed now */
    return S_OK;
}

static HRESULT STDMETHODCALLTYPE profiler_ThreadAssignedToOSThread(ICorProfilerCallback11 *iface,
                                                                   ThreadID thread, DWORD os_thread)
{
    struct profiler *p = impl_from_ICorProfilerCallback11(iface);
    if (agents_own(p, (pid_t)os_thread))
        return S_OK;
    thread_registry_assigned_os_thread(thread, (pid_t)os_thread);
    /* on the thread itself: its stack's exact bounds, so the signal
     * sampler needs no read of /proc/self/maps for it */
    if (callback_activity_tid() == (pid_t)os_thread) {
        if (p->labels)
            activity_set_thread(callback_activity_tid(), (uintptr_t)thread);
        uintptr_t lo, hi;
        if (stack_bounds_own(&lo, &hi))
            thread_registry_set_stack(thread, lo, hi);
    }
    DISPATCH(p, thread_os_assigned, thread, (pid_t)os_thread);
    if (p->initialized)
        agent_poke(&p->agent);
    return S_OK;
}

static HRESULT STDMETHODCALLTYPE profiler_ThreadNameChanged(ICorProfilerCallback11 *iface,
                                                            ThreadID thread, ULONG length,
                                                            WCHAR name[])
{
    struct profiler *p = impl_from_ICorProfilerCallback11(iface);
    char utf8[96];
    utf16_to_utf8(name, name ? length : 0, utf8, sizeof utf8);
    thread_registry_renamed(thread, utf8);
    DISPATCH(p, thread_renamed, thread, utf8);
    return S_OK;
}

/* ---- code ------------------------------------------------------------------- */

static HRESULT STDMETHODCALLTYPE profiler_JITCompilationStarted(ICorProfilerCallback11 *iface,
                                                                FunctionID function, BOOL safe)
{
    (void)safe;
    struct profiler *p = impl_from_ICorProfilerCallback11(iface);
    activity_begin(p, ACTIVITY_JIT, function);
    DISPATCH(p, jit_started, function, 0);
    return S_OK;
}

static HRESULT STDMETHODCALLTYPE profiler_JITCompilationFinished(ICorProfilerCallback11 *iface,
                                                                 FunctionID function,
                                                                 HRESULT status, BOOL safe)
{
    (void)safe;
    struct profiler *p = impl_from_ICorProfilerCallback11(iface);
    if (status >= 0)
        codemap_jitted(function, 0);
    DISPATCH(p, jit_finished, function, status, 0);
    activity_end(p, ACTIVITY_JIT, function);
    return S_OK;
}

static HRESULT STDMETHODCALLTYPE profiler_DynamicMethodJITCompilationStarted(
    ICorProfilerCallback11 *iface, FunctionID function, BOOL safe, LPCBYTE header, ULONG size)
{
    (void)safe;
    (void)header;
    (void)size;
    struct profiler *p = impl_from_ICorProfilerCallback11(iface);
    activity_begin(p, ACTIVITY_JIT, function);
    DISPATCH(p, jit_started, function, 1);
    return S_OK;
}

static HRESULT STDMETHODCALLTYPE profiler_DynamicMethodJITCompilationFinished(
    ICorProfilerCallback11 *iface, FunctionID function, HRESULT status, BOOL safe)
{
    (void)safe;
    struct profiler *p = impl_from_ICorProfilerCallback11(iface);
    if (status >= 0)
        codemap_jitted(function, 1);
    DISPATCH(p, jit_finished, function, status, 1);
    activity_end(p, ACTIVITY_JIT, function);
    return S_OK;
}

static HRESULT STDMETHODCALLTYPE profiler_JITCachedFunctionSearchStarted(
    ICorProfilerCallback11 *iface, FunctionID function, BOOL *use_cached)
{
    struct profiler *p = impl_from_ICorProfilerCallback11(iface);
    if (use_cached) {
        *use_cached = TRUE;
        DISPATCH(p, r2r_lookup, function, use_cached);
    }
    activity_begin(p, ACTIVITY_R2R_LOOKUP, function);
    DISPATCH(p, jit_cache_search, function, 0, COR_PRF_CACHED_FUNCTION_FOUND);
    return S_OK;
}

static HRESULT STDMETHODCALLTYPE profiler_JITCachedFunctionSearchFinished(
    ICorProfilerCallback11 *iface, FunctionID function, COR_PRF_JIT_CACHE result)
{
    struct profiler *p = impl_from_ICorProfilerCallback11(iface);
    DISPATCH(p, jit_cache_search, function, 1, result);
    activity_end(p, ACTIVITY_R2R_LOOKUP, function);
    return S_OK;
}

static HRESULT STDMETHODCALLTYPE profiler_ClassLoadStarted(ICorProfilerCallback11 *iface,
                                                           ClassID klass)
{
    struct profiler *p = impl_from_ICorProfilerCallback11(iface);
    activity_begin(p, ACTIVITY_LOAD_TYPE, klass);
    DISPATCH(p, load, SOURCE_LOAD_CLASS, 0, klass, S_OK);
    return S_OK;
}

static HRESULT STDMETHODCALLTYPE profiler_ClassLoadFinished(ICorProfilerCallback11 *iface,
                                                            ClassID klass, HRESULT status)
{
    struct profiler *p = impl_from_ICorProfilerCallback11(iface);
    DISPATCH(p, load, SOURCE_LOAD_CLASS, 1, klass, status);
    activity_end(p, ACTIVITY_LOAD_TYPE, klass);
    return S_OK;
}

static HRESULT STDMETHODCALLTYPE profiler_AssemblyLoadStarted(ICorProfilerCallback11 *iface,
                                                              AssemblyID assembly)
{
    struct profiler *p = impl_from_ICorProfilerCallback11(iface);
    activity_begin(p, ACTIVITY_LOAD_ASSEMBLY, assembly);
    DISPATCH(p, load, SOURCE_LOAD_ASSEMBLY, 0, assembly, S_OK);
    return S_OK;
}

static HRESULT STDMETHODCALLTYPE profiler_AssemblyLoadFinished(ICorProfilerCallback11 *iface,
                                                               AssemblyID assembly, HRESULT status)
{
    struct profiler *p = impl_from_ICorProfilerCallback11(iface);
    DISPATCH(p, load, SOURCE_LOAD_ASSEMBLY, 1, assembly, status);
    activity_end(p, ACTIVITY_LOAD_ASSEMBLY, assembly);
    return S_OK;
}

static HRESULT STDMETHODCALLTYPE profiler_ModuleLoadStarted(ICorProfilerCallback11 *iface,
                                                            ModuleID module)
{
    struct profiler *p = impl_from_ICorProfilerCallback11(iface);
    activity_begin(p, ACTIVITY_LOAD_MODULE, module);
    DISPATCH(p, load, SOURCE_LOAD_MODULE, 0, module, S_OK);
    return S_OK;
}

static HRESULT STDMETHODCALLTYPE profiler_ModuleLoadFinished(ICorProfilerCallback11 *iface,
                                                             ModuleID module, HRESULT status)
{
    struct profiler *p = impl_from_ICorProfilerCallback11(iface);
    if (status >= 0)
        codemap_module_loaded(module);
    DISPATCH(p, load, SOURCE_LOAD_MODULE, 1, module, status);
    activity_end(p, ACTIVITY_LOAD_MODULE, module);
    return S_OK;
}

/* The last moments of code and of its ids: a DynamicMethod's MethodDesc
 * and code are freed right after this callback, a collectible module's
 * after ModuleUnloadStarted returns.  Nothing here waits for the loop. */
static HRESULT STDMETHODCALLTYPE profiler_DynamicMethodUnloaded(ICorProfilerCallback11 *iface,
                                                                FunctionID function)
{
    (void)iface;
    if (function)
        codemap_unloading(0, function);
    return S_OK;
}

static HRESULT STDMETHODCALLTYPE profiler_ModuleUnloadStarted(ICorProfilerCallback11 *iface,
                                                              ModuleID module)
{
    struct profiler *p = impl_from_ICorProfilerCallback11(iface);
    /* a discarded copy of a module whose load was never finished (the
     * loser of a race to load it) ends that load */
    activity_end(p, ACTIVITY_LOAD_MODULE, module);
    /* its types' MethodTables will be reused: async chains must not
     * follow them by what was learned of the old ones */
    achain_types_clear();
    DISPATCH(p, module_unloading, module);
    if (module)
        codemap_unloading(module, 0);
    return S_OK;
}

/* The loser of a race to load an assembly gets no AssemblyLoadFinished,
 * only this for its discarded copy: that load is over. */
static HRESULT STDMETHODCALLTYPE profiler_AssemblyUnloadStarted(ICorProfilerCallback11 *iface,
                                                                AssemblyID assembly)
{
    struct profiler *p = impl_from_ICorProfilerCallback11(iface);
    activity_end(p, ACTIVITY_LOAD_ASSEMBLY, assembly);
    return S_OK;
}

/* ---- exceptions ----------------------------------------------------------------- */

/* Every exception callback, to the sources that follow throws (they run on
 * the throwing thread, several in cooperative mode: nothing here waits). */
#define EXCEPTION_CALLBACK(name, step, params, function, object)                      \
    static HRESULT STDMETHODCALLTYPE profiler_##name params                           \
    {                                                                                 \
        struct profiler *p_ = impl_from_ICorProfilerCallback11(iface);                \
        unhandled_step(p_->agent.info, step, object); /* the core's (unhandled.h) */ \
        DISPATCH(p_, exception, step, function, object);                              \
        return S_OK;                                                                  \
    }
EXCEPTION_CALLBACK(ExceptionThrown, SOURCE_EX_THROWN,
                   (ICorProfilerCallback11 *iface, ObjectID object), 0, object)
EXCEPTION_CALLBACK(ExceptionSearchFunctionEnter, SOURCE_EX_SEARCH_ENTER,
                   (ICorProfilerCallback11 *iface, FunctionID function), function, 0)
EXCEPTION_CALLBACK(ExceptionSearchCatcherFound, SOURCE_EX_SEARCH_CATCHER,
                   (ICorProfilerCallback11 *iface, FunctionID function), function, 0)
EXCEPTION_CALLBACK(ExceptionSearchFilterEnter, SOURCE_EX_FILTER_ENTER,
                   (ICorProfilerCallback11 *iface, FunctionID function), function, 0)
EXCEPTION_CALLBACK(ExceptionSearchFilterLeave, SOURCE_EX_FILTER_LEAVE,
                   (ICorProfilerCallback11 *iface), 0, 0)
EXCEPTION_CALLBACK(ExceptionUnwindFunctionEnter, SOURCE_EX_UNWIND_ENTER,
                   (ICorProfilerCallback11 *iface, FunctionID function), function, 0)
EXCEPTION_CALLBACK(ExceptionUnwindFunctionLeave, SOURCE_EX_UNWIND_LEAVE,
                   (ICorProfilerCallback11 *iface), 0, 0)
EXCEPTION_CALLBACK(ExceptionUnwindFinallyEnter, SOURCE_EX_FINALLY_ENTER,
                   (ICorProfilerCallback11 *iface, FunctionID function), function, 0)
EXCEPTION_CALLBACK(ExceptionCatcherEnter, SOURCE_EX_CATCHER_ENTER,
                   (ICorProfilerCallback11 *iface, FunctionID function, ObjectID object),
                   function, object)
EXCEPTION_CALLBACK(ExceptionCatcherLeave, SOURCE_EX_CATCHER_LEAVE,
                   (ICorProfilerCallback11 *iface), 0, 0)
#undef EXCEPTION_CALLBACK

/* ---- collections and runtime events ------------------------------------------ */

/* The thread that suspends the runtime (for a collection, mostly) does so
 * between these: the pause around the collection, waiting for threads to
 * reach safe points and letting them go, is named with it. */
static HRESULT STDMETHODCALLTYPE profiler_RuntimeSuspendStarted(ICorProfilerCallback11 *iface,
                                                                COR_PRF_SUSPEND_REASON reason)
{
    /* before the runtime hijacks any thread's return address (hijack.h) */
    hijack_refresh();
    /* objects may move from now on (async chains read outside cooperative
     * mode are not trusted across this) */
    achain_suspend_begin();
    if (reason == COR_PRF_SUSPEND_FOR_APPDOMAIN_SHUTDOWN)
        codemap_unload_suspension(1); /* collectible code leaves the lists */
    activity_begin(impl_from_ICorProfilerCallback11(iface), ACTIVITY_PAUSE, (uint64_t)reason);
    return S_OK;
}

static HRESULT STDMETHODCALLTYPE profiler_RuntimeResumeStarted(ICorProfilerCallback11 *iface)
{
    (void)iface;
    codemap_unload_suspension(0); /* after an unload's: its ids may now be freed */
    return S_OK;
}

static HRESULT STDMETHODCALLTYPE profiler_RuntimeSuspendAborted(ICorProfilerCallback11 *iface)
{
    struct profiler *p = impl_from_ICorProfilerCallback11(iface);
    if (p->labels)
        callback_activity_pause_end();
    achain_suspend_end();
    return S_OK;
}

static HRESULT STDMETHODCALLTYPE profiler_RuntimeResumeFinished(ICorProfilerCallback11 *iface)
{
    struct profiler *p = impl_from_ICorProfilerCallback11(iface);
    if (p->labels)
        callback_activity_pause_end();
    achain_suspend_end();
    return S_OK;
}

static HRESULT STDMETHODCALLTYPE profiler_GarbageCollectionStarted(ICorProfilerCallback11 *iface,
                                                                   int generations,
                                                                   BOOL collected[],
                                                                   COR_PRF_GC_REASON reason)
{
    struct profiler *p = impl_from_ICorProfilerCallback11(iface);
    if (p->labels)
        callback_activity_gc_started(generations, collected, reason);
    DISPATCH(p, gc_started, generations, collected, reason);
    return S_OK;
}

static HRESULT STDMETHODCALLTYPE profiler_GarbageCollectionFinished(ICorProfilerCallback11 *iface)
{
    struct profiler *p = impl_from_ICorProfilerCallback11(iface);
    if (p->labels)
        activity_gc_set(0);
    DISPATCH(p, gc_finished);
    return S_OK;
}

static HRESULT STDMETHODCALLTYPE profiler_EventPipeEventDelivered(
    ICorProfilerCallback11 *iface, EVENTPIPE_PROVIDER provider, DWORD event_id, DWORD version,
    ULONG metadata_size, LPCBYTE metadata, ULONG payload_size, LPCBYTE payload,
    LPCGUID activity, LPCGUID related, ThreadID thread, ULONG frames, UINT_PTR stack[])
{
    (void)metadata_size;
    (void)metadata;
    (void)activity;
    (void)related;
    (void)frames;
    (void)stack;
    struct profiler *p = impl_from_ICorProfilerCallback11(iface);
    DISPATCH(p, eventpipe_event, provider, event_id, version, payload, payload_size, thread);
    return S_OK;
}

static HRESULT STDMETHODCALLTYPE profiler_ObjectAllocated(ICorProfilerCallback11 *iface,
                                                          ObjectID object, ClassID klass)
{
    struct profiler *p = impl_from_ICorProfilerCallback11(iface);
    DISPATCH(p, object_allocated, object, klass);
    return S_OK;
}

/* ---- ReJIT (the unhandled probe, async, watch) ----------------------------------------- */

/* The new body of a method a source asked to be rejitted: the first
 * source that says it is its own gives it. */
static HRESULT STDMETHODCALLTYPE profiler_GetReJITParameters(ICorProfilerCallback11 *iface,
                                                             ModuleID module, mdMethodDef method,
                                                             ICorProfilerFunctionControl *control)
{
    struct agent *a = &impl_from_ICorProfilerCallback11(iface)->agent;
    if (control && unhandled_probe_parameters(module, method, control) >= 0)
        return S_OK; /* the core's (unhandled_probe.h) */
    for (uint32_t i = 0; control && i < a->source_count; i++) {
        struct source *src = &a->sources[i];
        if (src->ops->hooks && src->ops->hooks->rejit_parameters &&
            src->ops->hooks->rejit_parameters(src, module, method, control) >= 0)
            return S_OK;
    }
    return E_FAIL;
}

static HRESULT STDMETHODCALLTYPE profiler_ReJITError(ICorProfilerCallback11 *iface, ModuleID module,
                                                     mdMethodDef method, FunctionID function,
                                                     HRESULT status)
{
    (void)function;
    struct profiler *p = impl_from_ICorProfilerCallback11(iface);
    unhandled_probe_failed(module, method, status);
    DISPATCH(p, rejit_error, module, method, status);
    return S_OK;
}

/* A rewritten body's code, like any compiled method's: the walker steps
 * its frames by their shape (on arm64 a frame record alone does not give
 * the caller's stack pointer, which tells which frame holds the async
 * slot's local) and the async composer knows its FunctionID. */
static HRESULT STDMETHODCALLTYPE profiler_ReJITCompilationFinished(ICorProfilerCallback11 *iface,
                                                                   FunctionID function,
                                                                   ReJITID rejit, HRESULT status,
                                                                   BOOL safe)
{
    (void)iface;
    (void)rejit;
    (void)safe;
    if (status >= 0)
        codemap_rejitted(function, rejit);
    return S_OK;
}

/* ---- inlining (tracing) ---------------------------------------------------------- */

static HRESULT STDMETHODCALLTYPE profiler_JITInlining(ICorProfilerCallback11 *iface,
                                                      FunctionID caller, FunctionID callee,
                                                      BOOL *should_inline)
{
    struct profiler *p = impl_from_ICorProfilerCallback11(iface);
    if (should_inline)
        DISPATCH(p, jit_inlining, caller, callee, should_inline);
    return S_OK;
}

CLR_VTBL_BEGIN
static const ICorProfilerCallback11Vtbl profiler_vtbl = {
    CLR_CALLBACK_DEFAULTS
    /* IUnknown */
    .QueryInterface = profiler_QueryInterface,
    .AddRef = profiler_AddRef,
    .Release = profiler_Release,
    /* ICorProfilerCallback */
    .Initialize = profiler_Initialize,
    .Shutdown = profiler_Shutdown,
    /* ICorProfilerCallback3 */
    .InitializeForAttach = profiler_InitializeForAttach,
    .ProfilerAttachComplete = profiler_ProfilerAttachComplete,
    .ProfilerDetachSucceeded = profiler_ProfilerDetachSucceeded,
    .AssemblyLoadStarted = profiler_AssemblyLoadStarted,
    .AssemblyLoadFinished = profiler_AssemblyLoadFinished,
    .ModuleLoadStarted = profiler_ModuleLoadStarted,
    .ModuleLoadFinished = profiler_ModuleLoadFinished,
    .ModuleUnloadStarted = profiler_ModuleUnloadStarted,
    .AssemblyUnloadStarted = profiler_AssemblyUnloadStarted,
    .ClassLoadStarted = profiler_ClassLoadStarted,
    .ClassLoadFinished = profiler_ClassLoadFinished,
    .JITCompilationStarted = profiler_JITCompilationStarted,
    .JITCompilationFinished = profiler_JITCompilationFinished,
    .JITCachedFunctionSearchStarted = profiler_JITCachedFunctionSearchStarted,
    .JITCachedFunctionSearchFinished = profiler_JITCachedFunctionSearchFinished,
    .ThreadCreated = profiler_ThreadCreated,
    .ThreadDestroyed = profiler_ThreadDestroyed,
    .ThreadAssignedToOSThread = profiler_ThreadAssignedToOSThread,
    .ObjectAllocated = profiler_ObjectAllocated,
    /* ICorProfilerCallback2 */
    .ThreadNameChanged = profiler_ThreadNameChanged,
    .GarbageCollectionStarted = profiler_GarbageCollectionStarted,
    .GarbageCollectionFinished = profiler_GarbageCollectionFinished,
    .RuntimeSuspendStarted = profiler_RuntimeSuspendStarted,
    .RuntimeSuspendAborted = profiler_RuntimeSuspendAborted,
    .RuntimeResumeStarted = profiler_RuntimeResumeStarted,
    .RuntimeResumeFinished = profiler_RuntimeResumeFinished,
    /* ICorProfilerCallback4: async stacks and live probes */
    .GetReJITParameters = profiler_GetReJITParameters,
    .ReJITError = profiler_ReJITError,
    .ReJITCompilationFinished = profiler_ReJITCompilationFinished,
    /* ICorProfilerCallback8, 9 */
    .DynamicMethodJITCompilationStarted = profiler_DynamicMethodJITCompilationStarted,
    .DynamicMethodJITCompilationFinished = profiler_DynamicMethodJITCompilationFinished,
    .DynamicMethodUnloaded = profiler_DynamicMethodUnloaded,
    /* exceptions (ICorProfilerCallback) */
    .ExceptionThrown = profiler_ExceptionThrown,
    .ExceptionSearchFunctionEnter = profiler_ExceptionSearchFunctionEnter,
    .ExceptionSearchCatcherFound = profiler_ExceptionSearchCatcherFound,
    .ExceptionSearchFilterEnter = profiler_ExceptionSearchFilterEnter,
    .ExceptionSearchFilterLeave = profiler_ExceptionSearchFilterLeave,
    .ExceptionUnwindFunctionEnter = profiler_ExceptionUnwindFunctionEnter,
    .ExceptionUnwindFunctionLeave = profiler_ExceptionUnwindFunctionLeave,
    .ExceptionUnwindFinallyEnter = profiler_ExceptionUnwindFinallyEnter,
    .ExceptionCatcherEnter = profiler_ExceptionCatcherEnter,
    .ExceptionCatcherLeave = profiler_ExceptionCatcherLeave,
    /* ICorProfilerCallback10 */
    .EventPipeEventDelivered = profiler_EventPipeEventDelivered,
    /* tracing */
    .JITInlining = profiler_JITInlining,
};
CLR_VTBL_END

ICorProfilerCallback11 *profiler_create(void)
{
    struct profiler *p = mem_calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->ICorProfilerCallback11_iface.lpVtbl = &profiler_vtbl;
    atomic_store(&p->refcount, 1);
    return &p->ICorProfilerCallback11_iface;
}
