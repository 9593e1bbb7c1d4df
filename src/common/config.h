/*
 * config: the profiler's settings, parsed by one piece of code whether they
 * come from `corscope record`'s options or from the agent's environment.
 *
 * The CLI validates each option with config_set(), then passes the settings
 * to the profiled process as CORSCOPE_* environment variables
 * (CONFIG_KEYS); the agent reads them back with config_from_env().  A
 * value the agent rejects makes it decline to load, with the same words the
 * CLI would have used.
 */
#ifndef CORSCOPE_CONFIG_H
#define CORSCOPE_CONFIG_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "common/visibility.h"

/* What to record (`-e cpu,alloc`): a set of these bits.  At most one of
 * cpu and wall, the sampled events; the others are the runtime's own. */
enum config_event {
    CONFIG_EVENT_CPU = 1u << 0,
    CONFIG_EVENT_WALL = 1u << 1,
    /* memory (sources/alloc.c, gc.c) */
    CONFIG_EVENT_ALLOC = 1u << 2, /* allocations, by stack and type */
    CONFIG_EVENT_GC = 1u << 3,    /* every collection, its pauses and heap sizes */
    CONFIG_EVENT_LIVE = 1u << 4,  /* which sampled allocations stay alive (implies alloc) */
    /* the runtime's other stories (sources/exceptions.c, lock.c, jit.c) */
    CONFIG_EVENT_EXCEPTIONS = 1u << 5,
    CONFIG_EVENT_LOCK = 1u << 6,
    CONFIG_EVENT_JIT = 1u << 7,
};
#define CONFIG_EVENT_SAMPLED (CONFIG_EVENT_CPU | CONFIG_EVENT_WALL)
enum config_sampler { CONFIG_SAMPLER_SIGNAL = 1, CONFIG_SAMPLER_SUSPEND = 2 };
/* The signal sampler's CPU clock in cpu mode: perf (a perf_event task-clock,
 * precise to the nanosecond; POSIX timers where perf_event is refused),
 * posix (POSIX thread-CPU-time timers, checked at the scheduler tick: coarser,
 * and cheaper where the machine makes timer interrupts dear), or auto (the
 * default: perf, unless at a short interval the agent measures at start
 * that its interrupts are too dear here; agent/sources/clock_cost.h). */
enum config_cpu_clock {
    CONFIG_CPU_CLOCK_PERF = 1,
    CONFIG_CPU_CLOCK_POSIX = 2,
    CONFIG_CPU_CLOCK_AUTO = 3
};
/* The CPU clock's periods: random (each one drawn afresh around the
 * interval, and each sample weighted by the CPU time it stands for, so work
 * that repeats with the interval's period is not always sampled at the
 * same phase), or fixed (exactly one interval each: for comparison). */
enum config_cpu_period { CONFIG_CPU_PERIOD_RANDOM = 1, CONFIG_CPU_PERIOD_FIXED = 2 };
/* How allocations are recorded: sampled (the runtime's randomized sampling,
 * or AllocationTick before .NET 10) or exact (every allocation, slow). */
enum config_alloc { CONFIG_ALLOC_SAMPLED = 1, CONFIG_ALLOC_EXACT = 2 };
enum config_log { CONFIG_LOG_ERROR, CONFIG_LOG_WARN, CONFIG_LOG_INFO, CONFIG_LOG_DEBUG };
/* Tracing (`record --trace`): every call of the traced methods through the
 * runtime's Enter/Leave hooks, per call path, with times (a TSC read per
 * Enter and Leave) or counts only; or (flat) calls per method counted by a
 * counter in each traced method's own code (IL), inlining kept. */
enum config_trace {
    CONFIG_TRACE_OFF = 0, CONFIG_TRACE_TIMES = 1, CONFIG_TRACE_COUNTS = 2, CONFIG_TRACE_FLAT = 3
};
#define CONFIG_REGEX_MAX 1024
/* `corscope cover`'s assembly and type filters: globs, comma-separated. */
#define CONFIG_COVER_FILTER_MAX 2048
/* Which processes of the tree under `record` are recorded: none but the
 * first .NET process (its children do not inherit the profiler), all of
 * them (each its own recording), or the application's only (every process
 * but the .NET SDK's own: what `dotnet run` and `dotnet test` mean). */
enum config_children { CONFIG_CHILDREN_NONE = 0, CONFIG_CHILDREN_ALL = 1, CONFIG_CHILDREN_APP = 2 };
/* Logical async stacks (`record --async`): samples and events taken in an
 * async method carry the methods awaiting it (src/agent/async); or
 * snapshots of the pending async operations (`--async=snapshots`, what
 * `corscope async -p` attaches with), alone. */
enum config_async { CONFIG_ASYNC_OFF = 0, CONFIG_ASYNC_ON = 1, CONFIG_ASYNC_SNAPSHOTS = 2 };

#define CONFIG_INTERVAL_MIN_NS 1000000ull       /* 1 ms */
#define CONFIG_INTERVAL_MAX_NS 1000000000ull    /* 1 s */
#define CONFIG_INTERVAL_DEFAULT_NS 10000000ull  /* 10 ms */
#define CONFIG_DEPTH_MIN 8
#define CONFIG_DEPTH_MAX 65536
#define CONFIG_DEPTH_DEFAULT 4096
#define CONFIG_CONTROL_MAX 100
/* The longest text form (config_to_text) the attach's client data carries. */
#define CONFIG_TEXT_MAX 16384
/* Lock waits shorter than this are counted, not recorded one by one. */
#define CONFIG_LOCK_MIN_DEFAULT_NS 10000ull     /* 10 us */
#define CONFIG_LOCK_MIN_MAX_NS 10000000000ull   /* 10 s */
/* Mean bytes between recorded allocation samples: the runtime's own mean
 * (fixed at 100 KiB in .NET 10) and above, by keeping a share of its samples. */
#define CONFIG_ALLOC_INTERVAL_MIN (100ull * 1024)
#define CONFIG_ALLOC_INTERVAL_MAX (1ull << 30)
#define CONFIG_LIVE_MAX_DEFAULT 100000u
#define CONFIG_LIVE_MAX_MAX 10000000u
/* `corscope watch`: the method pattern's longest text, the most methods a
 * pattern may rewrite by default, and the calls shown per second at most */
#define CONFIG_WATCH_MAX 512
#define CONFIG_WATCH_WHERE_MAX 200
#define CONFIG_WATCH_METHODS_DEFAULT 20u
#define CONFIG_WATCH_METHODS_MAX 1000u
#define CONFIG_WATCH_RATE_DEFAULT 1000u
#define CONFIG_WATCH_STACK_MAX 64u

struct config {
    char output[PATH_MAX]; /* may hold %p, replaced by the pid */
    uint32_t events;       /* set of enum config_event */
    uint64_t interval_ns;
    enum config_sampler sampler;
    int signal;            /* the signal sampler's signal (SIGPROF by default) */
    enum config_cpu_clock cpu_clock;
    enum config_cpu_period cpu_period;
    uint32_t max_depth;
    enum config_log log;
    enum config_children children;
    /* the corscope command's control socket ("@name", an abstract AF_UNIX
     * address; control.h), or "" for none */
    char control[CONFIG_CONTROL_MAX];
    uint64_t lock_min_ns;  /* -e lock: shorter waits are only counted */
    enum config_alloc alloc;
    uint64_t alloc_interval; /* bytes, >= CONFIG_ALLOC_INTERVAL_MIN */
    uint32_t live_max;       /* most objects -e live follows at once */
    enum config_trace trace;
    char trace_include[CONFIG_REGEX_MAX]; /* ERE over "Namespace.Type.Method"; both "": own code */
    char trace_exclude[CONFIG_REGEX_MAX]; /* "" = none */
    enum config_async async;
    /* coverage (`corscope cover`): the directory of the counter files, ""
     * when not covering; its filters over assembly and type names */
    char cover[PATH_MAX];
    char cover_include[CONFIG_COVER_FILTER_MAX];
    char cover_exclude[CONFIG_COVER_FILTER_MAX];
    /* live probes (`corscope watch`): "Namespace.Type.Method" ('*' at the
     * end of a part matches any rest), "" when not watching; the most
     * calls shown (0: no limit), methods rewritten, calls shown a second */
    char watch[CONFIG_WATCH_MAX];
    uint64_t watch_count;
    uint32_t watch_methods;
    uint32_t watch_rate;
    /* --stack: frames taken with each call (the probe and the method's own
     * included), 0 none */
    uint32_t watch_stack;
    /* --where: one comparison of an argument or the result (watch_where.h) */
    char watch_where[CONFIG_WATCH_WHERE_MAX];
    /* --fields: objects' and structs' own primitive fields shown (0/1) */
    uint32_t watch_fields;
};

/* The settings, by the names users type (record's long options). */
#define CONFIG_KEYS(X)            \
    X(output, "CORSCOPE_OUTPUT")  \
    X(event, "CORSCOPE_EVENT")    \
    X(interval, "CORSCOPE_INTERVAL") \
    X(sampler, "CORSCOPE_SAMPLER") \
    X(max_depth, "CORSCOPE_MAX_DEPTH") \
    X(signal, "CORSCOPE_SIGNAL") \
    X(cpu_clock, "CORSCOPE_CPU_CLOCK") \
    X(cpu_period, "CORSCOPE_CPU_PERIOD") \
    X(log, "CORSCOPE_LOG") \
    X(control, "CORSCOPE_CONTROL") \
    X(lock_min, "CORSCOPE_LOCK_MIN") \
    X(alloc, "CORSCOPE_ALLOC") \
    X(alloc_interval, "CORSCOPE_ALLOC_INTERVAL") \
    X(live_max, "CORSCOPE_LIVE_MAX") \
    X(trace, "CORSCOPE_TRACE") \
    X(trace_include, "CORSCOPE_TRACE_INCLUDE") \
    X(trace_exclude, "CORSCOPE_TRACE_EXCLUDE") \
    X(children, "CORSCOPE_CHILDREN") \
    X(async, "CORSCOPE_ASYNC") \
    X(cover, "CORSCOPE_COVER") \
    X(cover_include, "CORSCOPE_COVER_INCLUDE") \
    X(cover_exclude, "CORSCOPE_COVER_EXCLUDE") \
    X(watch, "CORSCOPE_WATCH") \
    X(watch_count, "CORSCOPE_WATCH_COUNT") \
    X(watch_methods, "CORSCOPE_WATCH_METHODS") \
    X(watch_rate, "CORSCOPE_WATCH_RATE") \
    X(watch_stack, "CORSCOPE_WATCH_STACK") \
    X(watch_where, "CORSCOPE_WATCH_WHERE") \
    X(watch_fields, "CORSCOPE_WATCH_FIELDS")

HIDDEN void config_defaults(struct config *c);
/* Sets one setting from text.  Returns 0, or -1 with a one-line reason
 * (without the "corscope: " prefix) in err. */
HIDDEN int config_set(struct config *c, const char *key, const char *value, char *err,
                      size_t err_size);
/* Reads every CORSCOPE_* variable through getenv.  Returns 0 or -1 with
 * the reason for the first bad one in err ("CORSCOPE_INTERVAL=abc: ..."). */
HIDDEN int config_from_env(struct config *c, char *err, size_t err_size);
/* All the settings as text, one "key=value" line each (the client data of
 * an attach, which has no environment).  Returns the length, or -1 when it
 * does not fit in size (with its NUL). */
HIDDEN int config_to_text(const struct config *c, char *out, size_t size);
/* Reads that text form back (len bytes, no NUL needed): defaults, then
 * every line through config_set.  Returns 0, or -1 with the reason for the
 * first bad line in err ("interval=abc: ..."). */
HIDDEN int config_from_text(struct config *c, const char *text, size_t len, char *err,
                            size_t err_size);
/* Text form of a setting, as config_set accepts it. */
HIDDEN void config_value_text(const struct config *c, const char *key, char *out, size_t size);
/* The sampled event (CONFIG_EVENT_CPU, _WALL) or 0 when none. */
static inline uint32_t config_sampled(const struct config *c)
{
    return c->events & CONFIG_EVENT_SAMPLED;
}
/* The name of one event bit ("cpu"). */
HIDDEN const char *config_event_name(uint32_t event_bit);
HIDDEN const char *config_sampler_name(enum config_sampler s);
HIDDEN const char *config_cpu_clock_name(enum config_cpu_clock k);
HIDDEN const char *config_cpu_period_name(enum config_cpu_period p);
HIDDEN const char *config_alloc_name(enum config_alloc m);
/* Settings an agent attached to a running process cannot honour: NULL, or
 * the one-line reason (without "corscope: ") to refuse the attach with. */
HIDDEN const char *config_attach_refusal(const struct config *c);
/* Replaces every %p in pattern with pid (and %% with %).  Returns 0, or -1
 * when the result does not fit. */
HIDDEN int config_expand_output(const char *pattern, long pid, char *out, size_t size);

#endif
