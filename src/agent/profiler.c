/*
 * profiler: the callback object the runtime talks to, in the Wine style: a
 * struct whose first field is the interface, then the reference count, then
 * the agent's state.  One vtable of ICorProfilerCallback11 answers
 * QueryInterface for IUnknown and every callback version, since each
 * version extends the one before (the runtime ignores a profiler that does
 * not answer version 3).
 *
 * Initialize reads the configuration; a bad value, a runtime that is too
 * old, or an output that cannot be opened makes it log one line and return
 * a failure, and the runtime then runs the program without us.  Otherwise
 * it takes the highest ICorProfilerInfo offered, sets the event mask,
 * removes corscope's variables from the program's environment (so the
 * program sees what it would see without us, and programs it starts are
 * not profiled into the same file), and starts the sampler.  Shutdown stops
 * the sampler thread and closes the recording.
 */
#include "agent/profiler.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "agent/agent.h"
#include "agent/codemap.h"
#include "agent/log.h"
#include "agent/threads.h"
#include "clr/clr_defaults.h"
#include "clr/clr_guids.h"
#include "common/mem.h"
#include "common/utf.h"

struct profiler {
    ICorProfilerCallback11 ICorProfilerCallback11_iface;
    _Atomic int refcount;
    int initialized; /* Initialize succeeded */
    int leak;        /* the sampler would not stop: never free the agent */
    struct agent agent;
};

static inline struct profiler *impl_from_ICorProfilerCallback11(ICorProfilerCallback11 *iface)
{
    return (struct profiler *)((char *)iface - offsetof(struct profiler, ICorProfilerCallback11_iface));
}

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

/* ---- ICorProfilerCallback ------------------------------------------------ */

static void log_ignored_callback(const char *method)
{
    log_debug("callback %s (ignored)", method);
}

/* Asks the runtime for the highest ICorProfilerInfo it has. */
static int acquire_info(struct agent *a, IUnknown *unk)
{
    for (int v = 15; v >= 1; v--) {
        void *info = NULL;
        if (unk->lpVtbl->QueryInterface(unk, clr_info_iids[v], &info) >= 0 && info) {
            a->info = info;
            a->info_version = v;
            return 0;
        }
    }
    return -1;
}

static void record_runtime_version(struct agent *a)
{
    USHORT instance = 0, major = 0, minor = 0, build = 0, qfe = 0;
    COR_PRF_RUNTIME_TYPE type;
    WCHAR wversion[64];
    ULONG len = 0;
    char version[128], text[192];
    if (a->info->lpVtbl->GetRuntimeInformation(a->info, &instance, &type, &major, &minor, &build,
                                               &qfe, 64, &len, wversion) < 0)
        return;
    utf16_to_utf8(wversion, len, version, sizeof version);
    snprintf(text, sizeof text, "%u.%u.%u.%u (%s), ICorProfilerInfo%d", major, minor, build, qfe,
             version, a->info_version);
    recorder_info(&a->rec, "runtime", text);
}

/* Removes a variable from the program's view of its environment (the
 * runtime keeps its own copy, which Environment and Process.Start use). */
static void hide_variable(struct agent *a, const char *name)
{
    WCHAR wname[64];
    size_t i = 0;
    for (; name[i] && i + 1 < sizeof wname / sizeof wname[0]; i++)
        wname[i] = (WCHAR)(unsigned char)name[i];
    wname[i] = 0;
    a->info->lpVtbl->SetEnvironmentVariable(a->info, wname, NULL);
    unsetenv(name);
}

static void hide_environment(struct agent *a)
{
    static const char *const ours[] = {"CORECLR_ENABLE_PROFILING", "CORECLR_PROFILER",
                                       "CORECLR_PROFILER_PATH",    "CORECLR_PROFILER_PATH_64"};
    for (size_t i = 0; i < sizeof ours / sizeof ours[0]; i++)
        hide_variable(a, ours[i]);
#define HIDE(key, env) hide_variable(a, env);
    CONFIG_KEYS(HIDE)
#undef HIDE
}

static HRESULT STDMETHODCALLTYPE profiler_Initialize(ICorProfilerCallback11 *iface, IUnknown *unk)
{
    struct profiler *p = impl_from_ICorProfilerCallback11(iface);
    struct agent *a = &p->agent;
    char err[512];

    pthread_mutex_init(&a->ids_lock, NULL);
    if (config_from_env(&a->cfg, err, sizeof err) < 0) {
        log_error("%s; profiling is off for this run", err);
        return E_FAIL;
    }
    log_set_level(a->cfg.log);
    if (log_enabled(CONFIG_LOG_DEBUG))
        clr_default_hook = log_ignored_callback;
    if (acquire_info(a, unk) < 0 || a->info_version < 10) {
        log_error("this runtime is too old: corscope needs ICorProfilerInfo10 (.NET 5 or later); "
                  "profiling is off for this run");
        if (a->info)
            a->info->lpVtbl->Release(a->info);
        a->info = NULL;
        return E_FAIL;
    }
    /* unloads, for every sampler: ids are valid only until their code goes
     * (agent_code_unloading) */
    DWORD mask = COR_PRF_MONITOR_THREADS | COR_PRF_ENABLE_STACK_SNAPSHOT |
                 COR_PRF_MONITOR_MODULE_LOADS;
    DWORD high = COR_PRF_HIGH_MONITOR_DYNAMIC_FUNCTION_UNLOADS;
    if (a->cfg.sampler == CONFIG_SAMPLER_SIGNAL)
        mask |= COR_PRF_MONITOR_JIT_COMPILATION; /* the code map: where each method's code is */
    HRESULT hr = a->info->lpVtbl->SetEventMask2(a->info, mask, high);
    if (hr < 0) {
        log_error("SetEventMask2 failed (0x%08x); profiling is off for this run", (unsigned)hr);
        goto decline;
    }
    if (config_expand_output(a->cfg.output, (long)getpid(), a->output, sizeof a->output) < 0) {
        log_error("CORSCOPE_OUTPUT: path too long; profiling is off for this run");
        goto decline;
    }
    if (recorder_open(&a->rec, &a->cfg, a->output, err, sizeof err) < 0) {
        log_error("%s; profiling is off for this run", err);
        goto decline;
    }
    record_runtime_version(a);
    if (names_init(&a->names, a->info, a->info_version, &a->rec) < 0 || threads_init() < 0 ||
        sampler_start(a) < 0) {
        log_error("cannot start (out of memory or threads); profiling is off for this run");
        recorder_close(&a->rec);
        names_free(&a->names);
        goto decline;
    }
    hide_environment(a);
    p->initialized = 1;
    log_info("recording %s every %llu ns into %s (ICorProfilerInfo%d)",
             config_event_name(a->cfg.event), (unsigned long long)a->cfg.interval_ns, a->output,
             a->info_version);
    return S_OK;

decline:
    a->info->lpVtbl->Release(a->info);
    a->info = NULL;
    return E_FAIL;
}

static HRESULT STDMETHODCALLTYPE profiler_Shutdown(ICorProfilerCallback11 *iface)
{
    struct profiler *p = impl_from_ICorProfilerCallback11(iface);
    struct agent *a = &p->agent;
    if (!p->initialized)
        return S_OK;
    p->initialized = 0;
    if (sampler_stop(a) < 0) {
        /* the sampler still owns the recorder and the names: leave them */
        p->leak = 1;
        return S_OK;
    }
    recorder_close(&a->rec);
    names_free(&a->names);
    threads_shutdown();
    log_info("recording closed: %s", a->output);
    return S_OK;
}

static HRESULT STDMETHODCALLTYPE profiler_ThreadCreated(ICorProfilerCallback11 *iface, ThreadID thread)
{
    (void)iface;
    threads_created(thread);
    return S_OK;
}

static HRESULT STDMETHODCALLTYPE profiler_ThreadDestroyed(ICorProfilerCallback11 *iface,
                                                          ThreadID thread)
{
    (void)iface;
    threads_destroyed(thread);
    return S_OK;
}

static HRESULT STDMETHODCALLTYPE profiler_ThreadAssignedToOSThread(ICorProfilerCallback11 *iface,
                                                                   ThreadID thread, DWORD os_thread)
{
    (void)iface;
    threads_assigned_os_thread(thread, (pid_t)os_thread);
    /* on the thread itself: its stack's exact bounds, so the signal
     * sampler needs no read of /proc/self/maps for it */
    if ((pid_t)syscall(SYS_gettid) == (pid_t)os_thread) {
        pthread_attr_t attr;
        void *addr;
        size_t size;
        if (pthread_getattr_np(pthread_self(), &attr) == 0) {
            if (pthread_attr_getstack(&attr, &addr, &size) == 0)
                threads_set_stack(thread, (uintptr_t)addr, (uintptr_t)addr + size);
            pthread_attr_destroy(&attr);
        }
    }
    struct profiler *p = impl_from_ICorProfilerCallback11(iface);
    if (p->initialized && p->agent.cfg.sampler == CONFIG_SAMPLER_SIGNAL)
        agent_poke(&p->agent);
    return S_OK;
}

static HRESULT STDMETHODCALLTYPE profiler_ThreadNameChanged(ICorProfilerCallback11 *iface,
                                                            ThreadID thread, ULONG length,
                                                            WCHAR name[])
{
    (void)iface;
    char utf8[96];
    utf16_to_utf8(name, name ? length : 0, utf8, sizeof utf8);
    threads_renamed(thread, utf8);
    return S_OK;
}

/* The code map (codemap.h) learns about code from these; they only queue. */
static HRESULT STDMETHODCALLTYPE profiler_JITCompilationFinished(ICorProfilerCallback11 *iface,
                                                                 FunctionID function,
                                                                 HRESULT status, BOOL safe)
{
    (void)iface;
    (void)safe;
    if (status >= 0)
        codemap_note(function);
    return S_OK;
}

static HRESULT STDMETHODCALLTYPE profiler_DynamicMethodJITCompilationFinished(
    ICorProfilerCallback11 *iface, FunctionID function, HRESULT status, BOOL safe)
{
    return profiler_JITCompilationFinished(iface, function, status, safe);
}

/* The last moments of code and of its ids: a DynamicMethod's MethodDesc
 * and code are freed right after this callback, a collectible module's
 * after ModuleUnloadStarted returns. */
static HRESULT STDMETHODCALLTYPE profiler_DynamicMethodUnloaded(ICorProfilerCallback11 *iface,
                                                                FunctionID function)
{
    struct profiler *p = impl_from_ICorProfilerCallback11(iface);
    if (function)
        agent_code_unloading(&p->agent, 0, function);
    return S_OK;
}

static HRESULT STDMETHODCALLTYPE profiler_ModuleUnloadStarted(ICorProfilerCallback11 *iface,
                                                              ModuleID module)
{
    struct profiler *p = impl_from_ICorProfilerCallback11(iface);
    if (module)
        agent_code_unloading(&p->agent, module, 0);
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
    .ThreadCreated = profiler_ThreadCreated,
    .ThreadDestroyed = profiler_ThreadDestroyed,
    .ThreadAssignedToOSThread = profiler_ThreadAssignedToOSThread,
    .JITCompilationFinished = profiler_JITCompilationFinished,
    .ModuleUnloadStarted = profiler_ModuleUnloadStarted,
    /* ICorProfilerCallback2 */
    .ThreadNameChanged = profiler_ThreadNameChanged,
    /* ICorProfilerCallback8, 9 */
    .DynamicMethodJITCompilationFinished = profiler_DynamicMethodJITCompilationFinished,
    .DynamicMethodUnloaded = profiler_DynamicMethodUnloaded,
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
