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
 * it takes the highest ICorProfilerInfo offered, lets the sources claim
 * their event-mask bits, sets the mask, removes corscope's variables from
 * the program's environment (so the program sees what it would see without
 * us), and starts the loop.  Shutdown stops the loop and closes the
 * recording.
 *
 * InitializeForAttach does the same for a process that is already running,
 * with the settings from the attach's client data (config_to_text) and the
 * event mask cut to what the runtime allows after an attach;
 * ProfilerAttachComplete registers the threads that were already there
 * (the code compiled before is listed by the loop, attach.c).  When the
 * corscope command asks (or goes away), the loop closes the recording and
 * asks the runtime to detach; ProfilerDetachSucceeded joins the loop and
 * frees the rest.  The library stays loaded after that (it is linked with
 * -z nodelete, so a late signal still finds its handler), with its
 * globals: every Initialize starts them again.
 *
 * Every other callback is dispatched here, once: to the agent's core (the
 * thread registry, the code map, what each thread is doing for the signal
 * sampler's labels) and to the sources that hook it (source.h).  Callbacks
 * run on the program's threads, often with the runtime in a state where
 * waiting would stall it: nothing here waits for the loop.
 */
#include "agent/profiler.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "agent/agent.h"
#include "agent/clrdesc.h"
#include "agent/codemap.h"
#include "agent/companion.h"
#include "common/pushcfg.h"
#include "agent/eventpipe.h"
#include "agent/evq.h"
#include "agent/log.h"
#include "agent/proctree.h"
#include "agent/remote.h"
#include "agent/threads.h"
#include "agent/unhandled.h"
#include "agent/signal/activity.h"
#include "agent/signal/ending.h"
#include "agent/signal/nativeunwind.h"
#include "agent/signal/slots.h"
#include "agent/signal/stackmaps.h"
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

/* ---- what each thread is doing (activity.h) ------------------------------ */

#define ACTIVITY_DEPTH 16

/* A thread's activities, outermost first, each with the address of the
 * callback frame that began it.  The runtime does not always report an
 * end: a ReadyToRun lookup whose fixups fail or throw has no
 * JITCachedFunctionSearchFinished, and failed loads may lack theirs.  Two
 * rules keep such work from being named after it ended:
 *   - the stack discipline: a callback running shallower in the stack than
 *     the one that began an activity proves that the runtime function
 *     which began it has returned, so that activity is over;
 *   - a method whose ReadyToRun code was rejected is compiled next: its
 *     JITCompilationStarted ends its lookup. */
struct activity_stack {
    pid_t tid;
    uint32_t run;   /* run_number when last used */
    uint32_t depth;
    uint64_t words[ACTIVITY_DEPTH];
    uintptr_t frames[ACTIVITY_DEPTH];
};

static __thread struct activity_stack activities;
/* Bumped by every Initialize: a thread's stack from an earlier attach
 * (the library and its thread-locals outlive a detach) is stale. */
static _Atomic uint32_t run_number;

static struct activity_stack *own_activities(void)
{
    struct activity_stack *st = &activities;
    uint32_t run = atomic_load_explicit(&run_number, memory_order_relaxed);
    if (st->run != run) {
        st->run = run;
        st->depth = 0;
    }
    return st;
}

static pid_t own_tid(void)
{
    if (!activities.tid)
        activities.tid = (pid_t)syscall(SYS_gettid);
    return activities.tid;
}

static void publish_activity(void)
{
    struct activity_stack *st = &activities;
    uint32_t n = st->depth < ACTIVITY_DEPTH ? st->depth : ACTIVITY_DEPTH;
    activity_set(own_tid(), n ? st->words[n - 1] : 0, n ? st->words[0] : 0);
}

/* The runtime calls JITCachedFunctionSearchStarted and ...Finished from
 * the same function (ReadyToRunInfo::GetEntryPoint) through wrappers whose
 * frames differ by up to 16 bytes (measured on .NET 10); anything else it
 * does for that lookup runs deeper.  Other kinds are not unwound this way:
 * a module's or an assembly's load goes on in callers shallower than the
 * callback that began it (ModuleLoadFinished came up to 496 bytes higher
 * than its Started), and their ends are reported. */
#define R2R_FRAME_SLACK 64

/* Ends the ReadyToRun lookups begun deeper in the stack than `frame`:
 * the function that began them has returned. */
static void activity_unwind(struct activity_stack *st, uintptr_t frame)
{
    while (st->depth > 0 && st->depth <= ACTIVITY_DEPTH &&
           activity_kind_of(st->words[st->depth - 1]) == ACTIVITY_R2R_LOOKUP &&
           st->frames[st->depth - 1] + R2R_FRAME_SLACK < frame)
        st->depth--;
}

/* Ends the innermost activity of that kind and subject, and what was begun
 * inside it (work that failed may end without its own end).  Returns
 * whether it was found. */
static int activity_pop(struct activity_stack *st, uint64_t word)
{
    uint32_t n = st->depth < ACTIVITY_DEPTH ? st->depth : ACTIVITY_DEPTH;
    for (uint32_t i = n; i > 0; i--) {
        if (st->words[i - 1] == word) {
            st->depth = i - 1;
            return 1;
        }
    }
    return 0;
}

/* `frame` is the calling callback's own frame address: a callback of the
 * runtime calls this directly, so the frames of two callbacks compare as
 * their callers' depths do. */
static void activity_begin_at(struct profiler *p, enum activity_kind kind, uint64_t subject,
                              uintptr_t frame)
{
    if (!p->labels)
        return;
    struct activity_stack *st = own_activities();
    activity_unwind(st, frame);
    /* ReadyToRun code rejected by its fixups: the method is compiled now */
    if (kind == ACTIVITY_JIT)
        activity_pop(st, activity_word(ACTIVITY_R2R_LOOKUP, subject));
    if (st->depth < ACTIVITY_DEPTH) {
        st->words[st->depth] = activity_word(kind, subject);
        st->frames[st->depth] = frame;
    }
    st->depth++;
    publish_activity();
}

#define activity_begin(p, kind, subject)                                                  \
    activity_begin_at((p), (kind), (subject), (uintptr_t)__builtin_frame_address(0))

static void activity_end_at(struct profiler *p, enum activity_kind kind, uint64_t subject,
                            uintptr_t frame)
{
    if (!p->labels)
        return;
    struct activity_stack *st = own_activities();
    uint32_t before = st->depth;
    activity_unwind(st, frame);
    if (!activity_pop(st, activity_word(kind, subject)) && st->depth > ACTIVITY_DEPTH)
        st->depth--; /* beyond what is kept */
    if (st->depth != before)
        publish_activity();
}

#define activity_end(p, kind, subject)                                                    \
    activity_end_at((p), (kind), (subject), (uintptr_t)__builtin_frame_address(0))

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

/* ---- Initialize and Shutdown ---------------------------------------------- */

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
    recorder_info(&a->out, FMT_INFO_RUNTIME, text);
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
    /* a tree of processes is recorded: the children need the profiler's
     * variables, and see them (so does the program) */
    if (a->cfg.children != CONFIG_CHILDREN_NONE)
        return;
    static const char *const ours[] = {"CORECLR_ENABLE_PROFILING", "CORECLR_PROFILER",
                                       "CORECLR_PROFILER_PATH",    "CORECLR_PROFILER_PATH_64"};
    for (size_t i = 0; i < sizeof ours / sizeof ours[0]; i++)
        hide_variable(a, ours[i]);
#define HIDE(key, env) hide_variable(a, env);
    CONFIG_KEYS(HIDE)
    PUSH_KEYS(HIDE)
#undef HIDE
    hide_variable(a, PUSH_PASSWORD_ENV);
    hide_variable(a, PUSH_TOKEN_ENV);
}

/* The agent's tables the signal handler and the callbacks' walks read. */
static int core_init(struct profiler *p)
{
    struct agent *a = &p->agent;
    if (slots_init() < 0 || activity_init() < 0) {
        log_error("cannot map the agent's thread tables");
        return -1;
    }
    /* the native unwind tables are not parsed here, on the program's main
     * thread: the loop lists the libraries, and parses a table when a walk
     * first needs it (nativeunwind.h) */
    stackmaps_refresh();
    ending_install();
    codemap_init(a->info, a->info_version, &a->out);
    evq_open();
    /* the core: threads, code (where each method is, and when it goes) */
    a->mask |= COR_PRF_MONITOR_THREADS | COR_PRF_MONITOR_JIT_COMPILATION |
               COR_PRF_MONITOR_MODULE_LOADS;
    /* an exception no managed code catches ends the process without
     * Shutdown: its last moments are recorded (unhandled.h) */
    a->mask |= COR_PRF_MONITOR_EXCEPTIONS;
    a->high_mask |= COR_PRF_HIGH_MONITOR_DYNAMIC_FUNCTION_UNLOADS;
    /* what the runtime does on each thread, to name the signal sampler's
     * samples in its own code; none of these changes how the runtime
     * works (not COR_PRF_MONITOR_GC, which turns concurrent GC off) */
    p->labels = a->cfg.sampler == CONFIG_SAMPLER_SIGNAL && config_sampled(&a->cfg);
    if (p->labels) {
        struct clrdesc_frames layout;
        if (clrdesc_read_frames(&layout) == 0)
            activity_set_frame_layout(&layout);
        else
            log_debug("the runtime describes no frame layout: labels come from callbacks alone");
        a->mask |= COR_PRF_MONITOR_CLASS_LOADS | COR_PRF_MONITOR_ASSEMBLY_LOADS |
                   COR_PRF_MONITOR_SUSPENDS;
        /* ReadyToRun lookups: refused after an attach (then samples in
         * them are named by the method, without the label) */
        if (!a->attached)
            a->mask |= COR_PRF_MONITOR_CACHE_SEARCHES;
        a->high_mask |= COR_PRF_HIGH_BASIC_GC;
    }
    return 0;
}

/* After an attach the runtime refuses part of the event mask (and then the
 * whole of it): what a source asked for beyond that is dropped, said once. */
static void mask_for_attach(struct agent *a)
{
    DWORD refused = a->mask & ~(DWORD)COR_PRF_ALLOWABLE_AFTER_ATTACH;
    DWORD refused_high = a->high_mask & ~(DWORD)COR_PRF_HIGH_ALLOWABLE_AFTER_ATTACH;
    if (!refused && !refused_high)
        return;
    static const struct {
        DWORD bit;
        const char *what;
    } named[] = {
        {COR_PRF_MONITOR_CACHE_SEARCHES, "ReadyToRun lookups"},
        {COR_PRF_MONITOR_OBJECT_ALLOCATED, "every allocation (--alloc exact)"},
        {COR_PRF_ENABLE_OBJECT_ALLOCATED, "every allocation (--alloc exact)"},
        {COR_PRF_MONITOR_ENTERLEAVE, "method entries and exits"},
    };
    char what[160] = "";
    size_t used = 0;
    for (size_t i = 0; i < sizeof named / sizeof named[0] && used < sizeof what; i++)
        if ((refused & named[i].bit) && !strstr(what, named[i].what))
            used += (size_t)snprintf(what + used, sizeof what - used, "%s%s", used ? ", " : "",
                                     named[i].what);
    log_warn("after an attach the runtime does not allow %s (event-mask bits 0x%08x/0x%08x); "
             "the events that need them are missing", used ? what : "some events",
             (unsigned)refused, (unsigned)refused_high);
    a->mask &= ~refused;
    a->high_mask &= ~refused_high;
}

/* Both ways in: the settings are in a->cfg.  Returns S_OK, or a failure
 * (logged) with nothing of ours left active. */
static HRESULT begin(struct profiler *p, IUnknown *unk)
{
    struct agent *a = &p->agent;
    char err[512];
    uint64_t began = agent_now_ns();

    atomic_fetch_add(&run_number, 1);
    log_set_level(a->cfg.log);
    if (a->cfg.children == CONFIG_CHILDREN_APP && proctree_is_sdk()) {
        /* `dotnet run`, `dotnet test`: the SDK's own processes step aside,
         * and leave the profiler's environment to the application they
         * start (proctree.h) */
        log_info("a process of the .NET SDK: not recorded (its children are)");
        return E_FAIL;
    }
    log_set_remote(a->attached);
    clr_default_hook = log_enabled(CONFIG_LOG_DEBUG) ? log_ignored_callback : NULL;
    if (a->cfg.control[0] && remote_connect(a->cfg.control) < 0) {
        if (a->attached)
            return E_FAIL; /* corscope cannot be told, and would not hear its stop */
        log_warn("cannot reach the corscope command (%s); the recording goes on without its "
                 "status line and duration", a->cfg.control);
    }
    if (acquire_info(a, unk) < 0 || a->info_version < 10) {
        log_error("this runtime is too old: corscope needs ICorProfilerInfo10 (.NET 5 or later); "
                  "profiling is off for this run");
        if (a->info)
            a->info->lpVtbl->Release(a->info);
        a->info = NULL;
        remote_close();
        return E_FAIL;
    }
    if (core_init(p) < 0 || agent_init_sources(a) < 0 ||
        eventpipe_start(a->info, a->info_version) < 0)
        goto decline;
    if (a->attached)
        mask_for_attach(a);
    HRESULT hr = a->info->lpVtbl->SetEventMask2(a->info, a->mask, a->high_mask);
    if (hr < 0) {
        log_error("SetEventMask2 failed (0x%08x); profiling is off for this run", (unsigned)hr);
        goto decline;
    }
    if (config_expand_output(a->cfg.output, (long)getpid(), a->output, sizeof a->output) < 0) {
        log_error("CORSCOPE_OUTPUT: path too long; profiling is off for this run");
        goto decline;
    }
    int pushing = companion_open(a); /* CORSCOPE_PUSH: to the uploader's pipe */
    if (pushing < 0)
        goto decline;
    if (pushing) {
    } else if (a->cfg.children == CONFIG_CHILDREN_NONE) {
        /* the first process only, and never over another's recording */
        int fd = proctree_claim_first(a->output);
        if (fd < 0 && errno == EEXIST) {
            log_warn("%s is another process's recording; this process (%ld) is not recorded",
                     a->output, (long)getpid());
            goto decline;
        }
        if (fd < 0) {
            log_error("cannot open %s: %s; profiling is off for this run", a->output,
                      errno == ELOOP ? "it is a symbolic link" : strerror(errno));
            goto decline;
        }
        if (recorder_open_fd(&a->out, &a->cfg, fd, a->output, err, sizeof err) < 0) {
            log_error("%s; profiling is off for this run", err);
            goto decline;
        }
    } else {
        /* one of a tree of processes: the first takes the output, the
         * others write beside it (proctree.h) */
        char wanted[sizeof a->output];
        snprintf(wanted, sizeof wanted, "%s", a->output);
        int fd = proctree_claim(wanted, (long)getpid(), a->output, sizeof a->output);
        if (fd < 0) {
            log_error("cannot create a recording beside %s: %s; profiling is off for this "
                      "process", wanted, strerror(errno));
            goto decline;
        }
        if (recorder_open_fd(&a->out, &a->cfg, fd, a->output, err, sizeof err) < 0) {
            log_error("%s; profiling is off for this process", err);
            goto decline;
        }
    }
    record_runtime_version(a);
    /* what Initialize held the program's start for (before the loop owns
     * the recorder; the rest of Initialize takes microseconds) */
    recorder_count(&a->out, FMT_COUNTER_INIT_NS, agent_now_ns() - began);
    recorder_info(&a->out, FMT_INFO_MODE, a->attached ? "attached" : "launched");
    if (names_init(&a->names, a->info, a->info_version, &a->out) < 0 || agent_start(a) < 0) {
        log_error("cannot start (out of memory or threads); profiling is off for this run");
        recorder_close(&a->out);
        names_free(&a->names);
        goto decline;
    }
    if (!a->attached)
        hide_environment(a);
    p->initialized = 1;
    char events[128];
    config_value_text(&a->cfg, "event", events, sizeof events);
    log_info("recording %s every %llu ns into %s (ICorProfilerInfo%d)", events,
             (unsigned long long)a->cfg.interval_ns, a->output, a->info_version);
    return S_OK;

decline:
    /* the runtime goes on without us: nothing we set up may stay active */
    eventpipe_stop(a->info);
    a->info->lpVtbl->SetEventMask2(a->info, 0, 0);
    a->info->lpVtbl->Release(a->info);
    a->info = NULL;
    remote_close(); /* nothing of ours runs: no sender is left */
    return E_FAIL;
}

static HRESULT STDMETHODCALLTYPE profiler_Initialize(ICorProfilerCallback11 *iface, IUnknown *unk)
{
    struct profiler *p = impl_from_ICorProfilerCallback11(iface);
    char err[512];
    if (config_from_env(&p->agent.cfg, err, sizeof err) < 0) {
        log_set_remote(0);
        log_error("%s; profiling is off for this run", err);
        return E_FAIL;
    }
    return begin(p, unk);
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
    return begin(p, unk);
}

/* The runtime delivers callbacks from now on; what was there before gets
 * none: the threads are registered here (few, and a dying one must be
 * caught between its listing and its ThreadDestroyed, threads.h), the code
 * by the loop (many). */
static HRESULT STDMETHODCALLTYPE profiler_ProfilerAttachComplete(ICorProfilerCallback11 *iface)
{
    struct profiler *p = impl_from_ICorProfilerCallback11(iface);
    struct agent *a = &p->agent;
    if (!p->initialized)
        return S_OK;
    unsigned count = 0;
    threads_adopt_begin();
    ICorProfilerThreadEnum *threads = NULL;
    if (a->info->lpVtbl->EnumThreads(a->info, &threads) >= 0 && threads) {
        ThreadID ids[64];
        ULONG got = 0;
        while (threads->lpVtbl->Next(threads, 64, ids, &got) >= 0 && got) {
            for (ULONG i = 0; i < got; i++) {
                DWORD tid = 0;
                if (a->info->lpVtbl->GetThreadInfo(a->info, ids[i], &tid) < 0)
                    tid = 0;
                if (!threads_adopt(ids[i], (pid_t)tid))
                    continue;
                count++;
                DISPATCH(p, thread_created, ids[i]);
                if (tid)
                    DISPATCH(p, thread_os_assigned, ids[i], (pid_t)tid);
            }
        }
        threads->lpVtbl->Release(threads);
    }
    threads_adopt_end();
    atomic_store(&a->threads_listed, count);
    atomic_store(&a->catch_up, 1);
    agent_poke(a);
    log_info("attached: %u managed threads were running", count);
    return S_OK;
}

/* What the loop and the callbacks shared, freed once neither runs. */
static void free_core(struct agent *a)
{
    recorder_close(&a->out);
    names_free(&a->names);
    codemap_shutdown();
    nativeunwind_shutdown();
    stackmaps_shutdown();
    slots_shutdown();
    threads_shutdown();
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
    if (agent_stop(a) < 0) {
        p->leak = 1; /* cannot happen: the loop ended before it asked */
        return S_OK;
    }
    free_core(a);
    evq_free_all();
    a->info->lpVtbl->Release(a->info);
    a->info = NULL;
    log_info("detached");
    remote_send("detached");
    remote_close();
    return S_OK;
}

static HRESULT STDMETHODCALLTYPE profiler_Shutdown(ICorProfilerCallback11 *iface)
{
    struct profiler *p = impl_from_ICorProfilerCallback11(iface);
    struct agent *a = &p->agent;
    if (!p->initialized)
        return S_OK;
    p->initialized = 0;
    /* no event after this: the queues are drained by the loop's last cycle */
    eventpipe_stop(a->info);
    if (agent_stop(a) < 0) {
        /* the loop still owns the recorder and the names: leave them */
        p->leak = 1;
        return S_OK;
    }
    int was_open = a->out.open;
    free_core(a);
    companion_finish(); /* its pipe is closed: it sends the last profiles */
    evq_shutdown();
    log_info("recording closed: %s", a->output);
    if (was_open) {
        struct control_counts c = {a->out.counters[FMT_COUNTER_SAMPLES],
                                   a->out.counters[FMT_COUNTER_EVENTS],
                                   a->out.counters[FMT_COUNTER_DROPPED] +
                                       a->out.counters[FMT_COUNTER_DROPPED_EVENTS],
                                   a->out.file_size};
        remote_send_counts(CONTROL_CLOSED, &c);
    }
    /* other threads may still be in callbacks that log: the line is cut,
     * its descriptor kept (never reused under a sender) */
    remote_hangup();
    return S_OK;
}

/* ---- threads ---------------------------------------------------------------- */

static HRESULT STDMETHODCALLTYPE profiler_ThreadCreated(ICorProfilerCallback11 *iface, ThreadID thread)
{
    struct profiler *p = impl_from_ICorProfilerCallback11(iface);
    threads_created(thread);
    DISPATCH(p, thread_created, thread);
    return S_OK;
}

static HRESULT STDMETHODCALLTYPE profiler_ThreadDestroyed(ICorProfilerCallback11 *iface,
                                                          ThreadID thread)
{
    struct profiler *p = impl_from_ICorProfilerCallback11(iface);
    /* the Thread is about to go: no handler may read it after this */
    if (p->labels)
        activity_forget_thread(own_tid(), (uintptr_t)thread);
    DISPATCH(p, thread_destroyed, thread);
    threads_destroyed(thread);
    if (p->initialized)
        agent_poke(&p->agent); /* its clock's descriptor is closed now */
    return S_OK;
}

static HRESULT STDMETHODCALLTYPE profiler_ThreadAssignedToOSThread(ICorProfilerCallback11 *iface,
                                                                   ThreadID thread, DWORD os_thread)
{
    struct profiler *p = impl_from_ICorProfilerCallback11(iface);
    threads_assigned_os_thread(thread, (pid_t)os_thread);
    /* on the thread itself: its stack's exact bounds, so the signal
     * sampler needs no read of /proc/self/maps for it */
    if (own_tid() == (pid_t)os_thread) {
        if (p->labels)
            activity_set_thread(own_tid(), (uintptr_t)thread);
        pthread_attr_t attr;
        void *addr;
        size_t size;
        if (pthread_getattr_np(pthread_self(), &attr) == 0) {
            if (pthread_attr_getstack(&attr, &addr, &size) == 0)
                threads_set_stack(thread, (uintptr_t)addr, (uintptr_t)addr + size);
            pthread_attr_destroy(&attr);
        }
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
    threads_renamed(thread, utf8);
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
    if (use_cached)
        *use_cached = TRUE;
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
    DISPATCH(p, module_unloading, module);
    if (module)
        codemap_unloading(module, 0);
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
    activity_begin(impl_from_ICorProfilerCallback11(iface), ACTIVITY_PAUSE, (uint64_t)reason);
    return S_OK;
}

static void pause_end(struct profiler *p)
{
    if (!p->labels)
        return;
    struct activity_stack *st = &activities;
    uint32_t n = st->depth < ACTIVITY_DEPTH ? st->depth : ACTIVITY_DEPTH;
    for (uint32_t i = n; i > 0; i--) {
        if (activity_kind_of(st->words[i - 1]) == ACTIVITY_PAUSE) {
            st->depth = i - 1;
            publish_activity();
            return;
        }
    }
}

static HRESULT STDMETHODCALLTYPE profiler_RuntimeSuspendAborted(ICorProfilerCallback11 *iface)
{
    pause_end(impl_from_ICorProfilerCallback11(iface));
    return S_OK;
}

static HRESULT STDMETHODCALLTYPE profiler_RuntimeResumeFinished(ICorProfilerCallback11 *iface)
{
    pause_end(impl_from_ICorProfilerCallback11(iface));
    return S_OK;
}

static _Atomic uint32_t gc_seq;

static HRESULT STDMETHODCALLTYPE profiler_GarbageCollectionStarted(ICorProfilerCallback11 *iface,
                                                                   int generations,
                                                                   BOOL collected[],
                                                                   COR_PRF_GC_REASON reason)
{
    struct profiler *p = impl_from_ICorProfilerCallback11(iface);
    unsigned gen = 0;
    /* gen0, gen1, gen2, then the large and pinned object heaps, which
     * only a gen2 collection collects */
    for (int g = 0; g < generations && g <= 2; g++)
        if (collected && collected[g])
            gen = (unsigned)g;
    if (p->labels) {
        uint32_t seq = atomic_fetch_add(&gc_seq, 1) + 1;
        activity_gc_set(activity_gc_word(seq ? seq : 1, own_tid(),
                                         reason == COR_PRF_GC_INDUCED ? 1u : 0u, gen));
    }
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
    .RuntimeResumeFinished = profiler_RuntimeResumeFinished,
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
