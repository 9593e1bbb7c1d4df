/*
 * lifecycle: see lifecycle.h.
 */
#include "agent/lifecycle.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/callback_activity.h"
#include "agent/codemap.h"
#include "agent/companion.h"
#include "agent/control_client.h"
#include "agent/eventpipe.h"
#include "agent/evq.h"
#include "agent/log.h"
#include "agent/os_thread.h"
#include "agent/proctree.h"
#include "agent/rendezvous.h"
#include "agent/signal/activity.h"
#include "agent/signal/fatal_signal.h"
#include "agent/signal/nativeunwind.h"
#include "agent/signal/stack_bounds.h"
#include "agent/signal/thread_rings.h"
#include "agent/signal/vma_query.h"
#include "agent/thread_registry.h"
#include "agent/unhandled.h"
#include "agent/unhandled_probe.h"
#include "clr/clr_defaults.h"
#include "clr/clr_guids.h"
#include "common/clock.h"
#include "common/pushcfg.h"
#include "common/utf.h"

/* Attached: how long InitializeForAttach waits for corscope to send the
 * recording's file (it does so the moment the agent connects). */
#define ATTACH_RECORDING_WAIT_MS 10000

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

/* The runtime's version, asked once: a->runtime_major (0 when it will not
 * say), for the sources' choices, and a->runtime_text, for the recording. */
static void read_runtime_version(struct agent *a)
{
    USHORT instance = 0, major = 0, minor = 0, build = 0, qfe = 0;
    COR_PRF_RUNTIME_TYPE type;
    WCHAR wversion[64];
    ULONG len = 0;
    char version[128];
    a->runtime_major = 0;
    a->runtime_text[0] = '\0';
    if (a->info->lpVtbl->GetRuntimeInformation(a->info, &instance, &type, &major, &minor, &build,
                                               &qfe, 64, &len, wversion) < 0)
        return;
    a->runtime_major = major;
    utf16_to_utf8(wversion, len, version, sizeof version);
    snprintf(a->runtime_text, sizeof a->runtime_text, "%u.%u.%u.%u (%s), ICorProfilerInfo%d",
             major, minor, build, qfe, version, a->info_version);
}

static void record_runtime_version(struct agent *a)
{
    if (a->runtime_text[0])
        recorder_info(&a->out, FMT_INFO_RUNTIME, a->runtime_text);
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

/* The core's event-mask bits: threads, code (where each method is, and
 * when it goes). */
static void core_mask(struct agent *a)
{
    a->mask |= COR_PRF_MONITOR_THREADS | COR_PRF_MONITOR_JIT_COMPILATION |
               COR_PRF_MONITOR_MODULE_LOADS;
    /* an exception no managed code catches ends the process without
     * Shutdown: its last moments are recorded (unhandled.h), told by the
     * runtime's last call, rewritten (unhandled_probe.h), which needs
     * ReJIT: the probe rides on a source that asks for it (async, by
     * default; watch), not asked for alone, since ReJIT makes the runtime
     * track every inlining the JIT does, and after an attach would keep it
     * from letting the agent go (unhandled_mask decides, after the
     * sources) */
    a->high_mask |= COR_PRF_HIGH_MONITOR_DYNAMIC_FUNCTION_UNLOADS;
    /* a collectible module's code leaves the runtime's lists while it is
     * suspended for the unload (codemap_unload_suspension) */
    a->mask |= COR_PRF_MONITOR_SUSPENDS;
}

/* After the sources' bits: without ReJIT (--async=off, an attach without
 * async or watch) or on a runtime before the probe's, the exception
 * callbacks tell of an unhandled exception. */
static void unhandled_mask(struct agent *a)
{
    if (!unhandled_probe_usable(a->mask, a->runtime_major))
        a->mask |= COR_PRF_MONITOR_EXCEPTIONS;
    /* throws are counted when the callbacks come from the start */
    a->thrown_counted = (a->mask & COR_PRF_MONITOR_EXCEPTIONS) != 0;
}

/* The agent's tables the signal handler and the callbacks' walks read. */
static int core_init(struct agent *a, int *labels)
{
    if (thread_rings_init() < 0 || activity_init() < 0) {
        log_error("cannot map the agent's thread tables");
        return -1;
    }
    /* the native unwind tables are not parsed here, on the program's main
     * thread: the loop lists the libraries, and parses a table when a walk
     * first needs it (nativeunwind.h); nor is /proc/self/maps read for the
     * stacks' bounds (0.3 to 0.45 ms of CPU): the kernel is asked for one
     * mapping at a time where it can be (vma_query.h), else the loop reads
     * the file before it lets the first threads be sampled
     * (sampled_threads.c, make_ready).  Its one descriptor stays where
     * open() puts it: moving it above 1024 (fds.h) would grow the
     * process's descriptor table here, which in a process with threads
     * waits for an RCU grace period (13 to 31 ms of the program's start,
     * measured; the loop's first clock pays that instead) */
    int maps = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
    if (!vma_query_start(maps))
        log_info("the kernel answers no query of one mapping (PROCMAP_QUERY): "
                 "/proc/self/maps is read whole");
    fatal_signal_install();
    codemap_init(a->info, a->info_version, &a->out);
    evq_open();
    core_mask(a);
    /* what the runtime does on each thread, to name the signal sampler's
     * samples in its own code; none of these changes how the runtime
     * works (not COR_PRF_MONITOR_GC, which turns concurrent GC off) */
    *labels = agent_labels(a);
    if (*labels) {
        /* the runtime's frame layout is read by the agent's thread before
         * its sampler starts (0.2 ms of parsing the program no longer waits
         * for) */
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

HRESULT lifecycle_start(struct agent *a, IUnknown *unk, int *labels, int *initialized)
{
    char err[512];
    uint64_t began = clock_now_ns();
    a->init_began_ns = began;
    a->thrown_before = unhandled_thrown();
    a->switches_before = os_process_switches();

    callback_activity_new_run();
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
    if (a->cfg.control[0] && control_client_connect(a->cfg.control) < 0) {
        if (a->attached)
            return E_FAIL; /* corscope cannot be told, and would not hear its stop */
        log_warn("cannot reach the corscope command (%s); the recording goes on without its "
                 "status line and duration", a->cfg.control);
    }
    if (acquire_info(a, unk) < 0 || a->info_version < AGENT_INFO_MIN) {
        char offers[32] = "none";
        if (a->info)
            snprintf(offers, sizeof offers, "ICorProfilerInfo%d", a->info_version);
        log_error("this runtime is too old for corscope, which needs ICorProfilerInfo%d (.NET Core "
                  "3.1 or later; it offers %s): the program runs without the profiler",
                  AGENT_INFO_MIN, offers);
        if (a->info)
            a->info->lpVtbl->Release(a->info);
        a->info = NULL;
        control_client_close();
        return E_FAIL;
    }
    read_runtime_version(a);
    if (core_init(a, labels) < 0 || agent_init_sources(a) < 0 ||
        eventpipe_start(a->info, a->info_version) < 0)
        goto decline;
    if (a->attached)
        mask_for_attach(a);
    unhandled_mask(a);
    HRESULT hr = a->info->lpVtbl->SetEventMask2(a->info, a->mask, a->high_mask);
    if (hr < 0) {
        log_error("SetEventMask2 failed (0x%08x); profiling is off for this run", (unsigned)hr);
        goto decline;
    }
    if (config_expand_output(a->cfg.output, (long)getpid(), a->output, sizeof a->output) < 0) {
        log_error("CORSCOPE_OUTPUT: path too long; profiling is off for this run");
        goto decline;
    }
    /* CORSCOPE_PUSH (the agent alone): the recorder writes into the
     * uploader's pipe, opened by companion_open */
    int pushing = companion_open(a);
    if (pushing < 0)
        goto decline;
    if (pushing) {
        /* opened */
    } else if (a->attached) {
        /* corscope created the file where it was asked, and sends it open:
         * no path of ours is opened in the process's mount namespace, as
         * its user (control.h) */
        int fd = control_client_receive_recording(ATTACH_RECORDING_WAIT_MS);
        if (fd < 0) {
            log_error("corscope did not send the recording's file; profiling is off");
            goto decline;
        }
        if (recorder_open_fd(&a->out, &a->cfg, fd, a->output, err, sizeof err) < 0) {
            log_error("%s; profiling is off", err);
            goto decline;
        }
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
    recorder_count(&a->out, FMT_COUNTER_INIT_NS, clock_now_ns() - began);
    recorder_info(&a->out, FMT_INFO_MODE, a->attached ? "attached" : "launched");
    if (names_init(&a->names, a->info, a->info_version, &a->out) < 0 || agent_start(a) < 0) {
        log_error("cannot start (out of memory or threads); profiling is off for this run");
        recorder_close(&a->out);
        names_free(&a->names);
        goto decline;
    }
    if (!a->attached)
        hide_environment(a);
    *initialized = 1;
    char events[128];
    config_value_text(&a->cfg, "event", events, sizeof events);
    log_info("recording %s every %llu ns into %s (ICorProfilerInfo%d)", events,
             (unsigned long long)a->cfg.interval_ns, a->output, a->info_version);
    return S_OK;

decline:
    /* the runtime goes on without us: nothing we set up may stay active */
    eventpipe_stop(a->info);
    vma_query_stop_unused(); /* no sampler has started */
    a->info->lpVtbl->SetEventMask2(a->info, 0, 0);
    a->info->lpVtbl->Release(a->info);
    a->info = NULL;
    control_client_close(); /* nothing of ours runs: no sender is left */
    return E_FAIL;
}

int lifecycle_resume(struct agent *a, const struct config *cfg, char *why, size_t why_size)
{
    char err[512];
    a->init_began_ns = clock_now_ns();
    a->thrown_before = unhandled_thrown();
    a->switches_before = os_process_switches();
    /* the last session's loop has ended (it made us dormant): joined, its
     * own freed; what the callbacks share (code map, threads, queues)
     * stays, as it did while dormant */
    if (agent_stop(a) < 0) {
        snprintf(why, why_size, "the last session's thread did not end");
        return -1;
    }
    atomic_store(&a->stopping, 0);
    nativeunwind_resume();
    a->cfg = *cfg;
    log_set_level(a->cfg.log);
    if (config_expand_output(a->cfg.output, (long)getpid(), a->output, sizeof a->output) < 0)
        snprintf(a->output, sizeof a->output, "(the recording corscope sends)");
    control_client_close(); /* the last session's line, hung up when it ended */
    if (control_client_connect(a->cfg.control) < 0) {
        snprintf(why, why_size, "cannot reach corscope at %s", a->cfg.control);
        return -1;
    }
    int fd = control_client_receive_recording(ATTACH_RECORDING_WAIT_MS);
    if (fd < 0) {
        snprintf(why, why_size, "corscope did not send the recording's file");
        goto fail;
    }
    if (recorder_open_fd(&a->out, &a->cfg, fd, a->output, err, sizeof err) < 0) {
        snprintf(why, why_size, "%s", err);
        goto fail;
    }
    names_free(&a->names);
    if (names_init(&a->names, a->info, a->info_version, &a->out) < 0) {
        snprintf(why, why_size, "out of memory");
        goto fail_recording;
    }
    /* the sources afresh (the last session's were finished); the hooks
     * are not called for them until detaching is cleared below */
    a->source_count = 0;
    a->mask = a->high_mask = 0;
    core_mask(a);
    if (agent_init_sources(a) < 0) {
        snprintf(why, why_size, "the sources would not start (said above)");
        goto fail_recording;
    }
    mask_for_attach(a);
    unhandled_mask(a);
    HRESULT hr = a->info->lpVtbl->SetEventMask2(a->info, a->mask, a->high_mask);
    if (hr < 0) {
        snprintf(why, why_size, "SetEventMask2 failed (0x%08x)", (unsigned)hr);
        goto fail_recording;
    }
    record_runtime_version(a);
    recorder_info(&a->out, FMT_INFO_MODE, "attached");
    a->dormant = 0;
    a->detach_requested = 0;
    a->halted = 0;
    atomic_store(&a->detaching, 0);
    if (agent_start(a) < 0) {
        atomic_store(&a->detaching, 1);
        snprintf(why, why_size, "cannot start the agent's thread");
        goto fail_recording;
    }
    log_info("a new session in the agent that stayed loaded (ICorProfilerInfo%d)",
             a->info_version);
    return 0;

fail_recording:
    recorder_close(&a->out);
fail:
    a->dormant = 1;
    control_client_send("dormant %s", why);
    control_client_hangup();
    return -1;
}

void lifecycle_attach_complete(struct agent *a,
                               void (*adopted)(void *ctx, ThreadID thread, pid_t tid), void *ctx)
{
    unsigned count = 0;
    thread_registry_adopt_begin();
    ICorProfilerThreadEnum *threads = NULL;
    if (a->info->lpVtbl->EnumThreads(a->info, &threads) >= 0 && threads) {
        ThreadID ids[64];
        ULONG got = 0;
        while (threads->lpVtbl->Next(threads, 64, ids, &got) >= 0 && got) {
            for (ULONG i = 0; i < got; i++) {
                DWORD tid = 0;
                if (a->info->lpVtbl->GetThreadInfo(a->info, ids[i], &tid) < 0)
                    tid = 0;
                if (!thread_registry_adopt(ids[i], (pid_t)tid))
                    continue;
                count++;
                adopted(ctx, ids[i], (pid_t)tid);
            }
        }
        threads->lpVtbl->Release(threads);
    }
    thread_registry_adopt_end();
    atomic_store(&a->threads_listed, count);
    atomic_store(&a->catch_up, 1);
    agent_poke(a);
    log_info("attached: %u managed threads were running", count);
}

/* What the loop and the callbacks shared, freed once neither runs. */
static void free_core(struct agent *a)
{
    recorder_close(&a->out);
    names_free(&a->names);
    codemap_shutdown();
    nativeunwind_shutdown();
    stack_bounds_shutdown();
    vma_query_stop();
    thread_rings_shutdown();
    thread_registry_shutdown();
}

int lifecycle_detached(struct agent *a)
{
    if (agent_stop(a) < 0)
        return -1; /* cannot happen: the loop ended before it asked */
    free_core(a);
    evq_free_all();
    a->info->lpVtbl->Release(a->info);
    a->info = NULL;
    log_info("detached");
    control_client_send("detached");
    control_client_close();
    return 0;
}

int lifecycle_shutdown(struct agent *a)
{
    uint64_t began = clock_now_ns();
    rendezvous_close(); /* no session starts from now on */
    /* no event after this: the queues are drained by the loop's last cycle */
    eventpipe_stop(a->info);
    if (agent_stop(a) < 0)
        return -1; /* the loop still owns the recorder and the names: leave them */
    int was_open = a->out.open;
    /* what the program's exit waited for, up to the recording's close */
    recorder_count(&a->out, FMT_COUNTER_SHUTDOWN_NS, clock_now_ns() - began);
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
        control_client_send_counts(CONTROL_CLOSED, &c);
    }
    /* other threads may still be in callbacks that log: the line is cut,
     * its descriptor kept (never reused under a sender) */
    control_client_hangup();
    return 0;
}
