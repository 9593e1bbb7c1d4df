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
};
#define CONFIG_EVENT_SAMPLED (CONFIG_EVENT_CPU | CONFIG_EVENT_WALL)
enum config_sampler { CONFIG_SAMPLER_SIGNAL = 1, CONFIG_SAMPLER_SUSPEND = 2 };
/* The signal sampler's CPU clock in cpu mode: perf (a perf_event task-clock,
 * precise to the nanosecond; POSIX timers where perf_event is refused) or
 * posix (POSIX thread-CPU-time timers, checked at the scheduler tick: coarser,
 * and cheaper where the machine makes timer interrupts dear). */
enum config_cpu_clock { CONFIG_CPU_CLOCK_PERF = 1, CONFIG_CPU_CLOCK_POSIX = 2 };
enum config_log { CONFIG_LOG_ERROR, CONFIG_LOG_WARN, CONFIG_LOG_INFO, CONFIG_LOG_DEBUG };
/* Which processes of the tree under `record` are recorded: none but the
 * first .NET process (its children do not inherit the profiler), all of
 * them (each its own recording), or the application's only (every process
 * but the .NET SDK's own: what `dotnet run` and `dotnet test` mean). */
enum config_children { CONFIG_CHILDREN_NONE = 0, CONFIG_CHILDREN_ALL = 1, CONFIG_CHILDREN_APP = 2 };

#define CONFIG_INTERVAL_MIN_NS 1000000ull       /* 1 ms */
#define CONFIG_INTERVAL_MAX_NS 1000000000ull    /* 1 s */
#define CONFIG_INTERVAL_DEFAULT_NS 10000000ull  /* 10 ms */
#define CONFIG_DEPTH_MIN 8
#define CONFIG_DEPTH_MAX 65536
#define CONFIG_DEPTH_DEFAULT 4096

struct config {
    char output[PATH_MAX]; /* may hold %p, replaced by the pid */
    uint32_t events;       /* set of enum config_event */
    uint64_t interval_ns;
    enum config_sampler sampler;
    int signal;            /* the signal sampler's signal (SIGPROF by default) */
    enum config_cpu_clock cpu_clock;
    uint32_t max_depth;
    enum config_log log;
    enum config_children children;
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
    X(log, "CORSCOPE_LOG") \
    X(children, "CORSCOPE_CHILDREN")

HIDDEN void config_defaults(struct config *c);
/* Sets one setting from text.  Returns 0, or -1 with a one-line reason
 * (without the "corscope: " prefix) in err. */
HIDDEN int config_set(struct config *c, const char *key, const char *value, char *err,
                      size_t err_size);
/* Reads every CORSCOPE_* variable through getenv.  Returns 0 or -1 with
 * the reason for the first bad one in err ("CORSCOPE_INTERVAL=abc: ..."). */
HIDDEN int config_from_env(struct config *c, char *err, size_t err_size);
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
/* Replaces every %p in pattern with pid (and %% with %).  Returns 0, or -1
 * when the result does not fit. */
HIDDEN int config_expand_output(const char *pattern, long pid, char *out, size_t size);

#endif
