/*
 * config: see config.h.
 */
#include "common/config.h"
#include "common/watch_where.h"

#include <regex.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/units.h"

void config_defaults(struct config *c)
{
    memset(c, 0, sizeof *c);
    snprintf(c->output, sizeof c->output, "corscope-%%p.corscope");
    c->events = CONFIG_EVENT_CPU;
    c->interval_ns = CONFIG_INTERVAL_DEFAULT_NS;
    c->sampler = CONFIG_SAMPLER_SIGNAL;
    c->signal = SIGPROF;
    c->cpu_clock = CONFIG_CPU_CLOCK_AUTO;
    c->cpu_period = CONFIG_CPU_PERIOD_RANDOM;
    c->max_depth = CONFIG_DEPTH_DEFAULT;
    c->log = CONFIG_LOG_WARN;
    c->lock_min_ns = CONFIG_LOCK_MIN_DEFAULT_NS;
    c->alloc = CONFIG_ALLOC_SAMPLED;
    c->alloc_interval = CONFIG_ALLOC_INTERVAL_MIN;
    c->live_max = CONFIG_LIVE_MAX_DEFAULT;
    c->watch_methods = CONFIG_WATCH_METHODS_DEFAULT;
    c->watch_rate = CONFIG_WATCH_RATE_DEFAULT;
}

/* The words of each choice, indexed by its enum value, for the parser and
 * for the text forms alike. */
/* one word per event bit, in bit order */
static const char *const event_names[] = {"cpu",  "wall",       "alloc", "gc",
                                           "live", "exceptions", "lock",  "jit"};
static const char *const sampler_names[] = {[CONFIG_SAMPLER_SIGNAL] = "signal",
                                            [CONFIG_SAMPLER_SUSPEND] = "suspend"};
static const char *const cpu_clock_names[] = {[CONFIG_CPU_CLOCK_PERF] = "perf",
                                              [CONFIG_CPU_CLOCK_POSIX] = "posix",
                                              [CONFIG_CPU_CLOCK_AUTO] = "auto"};
static const char *const cpu_period_names[] = {[CONFIG_CPU_PERIOD_RANDOM] = "random",
                                               [CONFIG_CPU_PERIOD_FIXED] = "fixed"};
static const char *const alloc_names[] = {[CONFIG_ALLOC_SAMPLED] = "sampled",
                                          [CONFIG_ALLOC_EXACT] = "exact"};
static const char *const log_names[] = {"error", "warn", "info", "debug"};
static const char *const trace_names[] = {[CONFIG_TRACE_OFF] = "off", [CONFIG_TRACE_TIMES] = "times",
                                          [CONFIG_TRACE_COUNTS] = "counts",
                                          [CONFIG_TRACE_FLAT] = "flat"};
static const char *const children_names[] = {[CONFIG_CHILDREN_NONE] = "none",
                                             [CONFIG_CHILDREN_ALL] = "all",
                                             [CONFIG_CHILDREN_APP] = "app"};
static const char *const async_names[] = {[CONFIG_ASYNC_OFF] = "off", [CONFIG_ASYNC_ON] = "on",
                                          [CONFIG_ASYNC_SNAPSHOTS] = "snapshots"};
#define CHOICES(names) names, sizeof names / sizeof names[0]

/* The enum value whose word is `value`, or -1. */
static int choice(const char *value, const char *const *names, size_t count)
{
    for (size_t i = 0; i < count; i++)
        if (names[i] && !strcmp(value, names[i]))
            return (int)i;
    return -1;
}

static const char *choice_name(const char *const *names, size_t count, int value)
{
    return value >= 0 && (size_t)value < count && names[value] ? names[value] : "?";
}

const char *config_event_name(uint32_t event_bit)
{
    for (size_t i = 0; i < sizeof event_names / sizeof event_names[0]; i++)
        if (event_names[i] && event_bit == 1u << i)
            return event_names[i];
    return "?";
}

/* "cpu,alloc" -> a set of event bits; NULL, or why not. */
static const char *parse_events(const char *value, uint32_t *out)
{
    static char why[160];
    uint32_t set = 0;
    const char *p = value;
    if (!strcmp(value, "none")) { /* nothing sampled or traced: async snapshots alone, or
                                   * coverage, where the agent only instruments */
        *out = 0;
        return NULL;
    }
    for (;;) {
        const char *comma = strchr(p, ',');
        size_t n = comma ? (size_t)(comma - p) : strlen(p);
        int found = -1;
        for (size_t i = 0; i < sizeof event_names / sizeof event_names[0]; i++)
            if (event_names[i] && strlen(event_names[i]) == n && !strncmp(p, event_names[i], n))
                found = (int)i;
        if (found < 0) {
            size_t used = (size_t)snprintf(why, sizeof why, "unknown event '%.*s' (events:",
                                           (int)(n > 32 ? 32 : n), p);
            for (size_t i = 0; i < sizeof event_names / sizeof event_names[0] && used < sizeof why; i++)
                if (event_names[i])
                    used += (size_t)snprintf(why + used, sizeof why - used, "%s %s", i ? "," : "",
                                             event_names[i]);
            if (used < sizeof why)
                snprintf(why + used, sizeof why - used, ")");
            return why;
        }
        set |= 1u << found;
        if (!comma)
            break;
        p = comma + 1;
    }
    if ((set & CONFIG_EVENT_SAMPLED) == CONFIG_EVENT_SAMPLED)
        return "cpu and wall cannot be recorded together (choose one)";
    if (set & CONFIG_EVENT_LIVE)
        set |= CONFIG_EVENT_ALLOC; /* live objects are sampled allocations */
    *out = set;
    return NULL;
}

const char *config_sampler_name(enum config_sampler s)
{
    return choice_name(CHOICES(sampler_names), (int)s);
}

const char *config_cpu_period_name(enum config_cpu_period p)
{
    return choice_name(CHOICES(cpu_period_names), (int)p);
}

const char *config_cpu_clock_name(enum config_cpu_clock k)
{
    return choice_name(CHOICES(cpu_clock_names), (int)k);
}

const char *config_alloc_name(enum config_alloc m)
{
    return choice_name(CHOICES(alloc_names), (int)m);
}

/* Signals the sampler may use: ones the runtime and the C library leave
 * alone.  Not SIGRTMIN (the runtime's activation signal) nor the two after
 * it, not the fault signals the runtime turns into exceptions, not the
 * ones that stop or kill. */
static const struct {
    const char *name;
    int number;
} usable_signals[] = {
    {"SIGPROF", SIGPROF}, {"SIGVTALRM", SIGVTALRM}, {"SIGALRM", SIGALRM},
    {"SIGUSR1", SIGUSR1}, {"SIGUSR2", SIGUSR2},
};

static int parse_signal(const char *text, int *out)
{
    const char *name = strncmp(text, "SIG", 3) == 0 ? text + 3 : text;
    for (size_t i = 0; i < sizeof usable_signals / sizeof usable_signals[0]; i++) {
        if (!strcmp(name, usable_signals[i].name + 3)) {
            *out = usable_signals[i].number;
            return 0;
        }
    }
    char *end;
    long n = strtol(text, &end, 10);
    if (*text && !*end) {
        for (size_t i = 0; i < sizeof usable_signals / sizeof usable_signals[0]; i++) {
            if (usable_signals[i].number == n) {
                *out = (int)n;
                return 0;
            }
        }
        if (n >= SIGRTMIN + 3 && n <= SIGRTMAX) {
            *out = (int)n;
            return 0;
        }
    }
    return -1;
}

/* A method-name filter: a POSIX extended regular expression; NULL, or why not. */
static const char *set_regex(char *out, const char *value)
{
    static char why[160];
    if (!value[0]) { /* no filter */
        out[0] = '\0';
        return NULL;
    }
    if (strlen(value) >= CONFIG_REGEX_MAX)
        return "regular expression too long";
    regex_t re;
    int rc = regcomp(&re, value, REG_EXTENDED | REG_NOSUB);
    if (rc != 0) {
        char what[128];
        regerror(rc, &re, what, sizeof what);
        snprintf(why, sizeof why, "not a regular expression: %s", what);
        return why;
    }
    regfree(&re);
    snprintf(out, CONFIG_REGEX_MAX, "%s", value);
    return NULL;
}

int config_set(struct config *c, const char *key, const char *value, char *err, size_t err_size)
{
    const char *why = NULL;
    char where_why[160];
    if (!strcmp(key, "output")) {
        if (!value[0])
            why = "empty path";
        else if (strlen(value) >= sizeof c->output)
            why = "path too long";
        else if (strchr(value, '\n'))
            why = "a path with a newline in it";
        else
            snprintf(c->output, sizeof c->output, "%s", value);
    } else if (!strcmp(key, "event")) {
        why = parse_events(value, &c->events);
    } else if (!strcmp(key, "interval")) {
        uint64_t ns;
        if (units_parse_duration(value, 0, &ns, &why) == 0) {
            if (ns < CONFIG_INTERVAL_MIN_NS || ns > CONFIG_INTERVAL_MAX_NS)
                why = "out of range (1ms to 1s)";
            else
                c->interval_ns = ns;
        }
    } else if (!strcmp(key, "sampler")) {
        int v = choice(value, CHOICES(sampler_names));
        if (v < 0)
            why = "unknown sampler (samplers: signal, suspend)";
        else
            c->sampler = (enum config_sampler)v;
    } else if (!strcmp(key, "signal")) {
        if (parse_signal(value, &c->signal) < 0)
            why = "not a signal the sampler may use (SIGPROF, SIGVTALRM, SIGALRM, SIGUSR1, "
                  "SIGUSR2, or a number from SIGRTMIN+3 to SIGRTMAX)";
    } else if (!strcmp(key, "cpu_clock")) {
        int v = choice(value, CHOICES(cpu_clock_names));
        if (v < 0)
            why = "unknown CPU clock (clocks: auto, perf, posix)";
        else
            c->cpu_clock = (enum config_cpu_clock)v;
    } else if (!strcmp(key, "cpu_period")) {
        int v = choice(value, CHOICES(cpu_period_names));
        if (v < 0)
            why = "unknown CPU period (periods: random, fixed)";
        else
            c->cpu_period = (enum config_cpu_period)v;
    } else if (!strcmp(key, "max_depth")) {
        uint64_t n;
        if (units_parse_count(value, UINT32_MAX, &n, &why) == 0) {
            if (n < CONFIG_DEPTH_MIN || n > CONFIG_DEPTH_MAX)
                why = "out of range (8 to 65536)";
            else
                c->max_depth = (uint32_t)n;
        }
    } else if (!strcmp(key, "lock_min")) {
        uint64_t ns = 0; /* "0": every wait */
        if (!strcmp(value, "0") || units_parse_duration(value, 0, &ns, &why) == 0) {
            if (ns > CONFIG_LOCK_MIN_MAX_NS)
                why = "out of range (0 to 10s)";
            else
                c->lock_min_ns = ns;
        }
    } else if (!strcmp(key, "log")) {
        int v = choice(value, CHOICES(log_names));
        if (v < 0)
            why = "unknown level (levels: error, warn, info, debug)";
        else
            c->log = (enum config_log)v;
    } else if (!strcmp(key, "children")) {
        int v = choice(value, CHOICES(children_names));
        if (v < 0)
            why = "unknown choice (none, all, app)";
        else
            c->children = (enum config_children)v;
    } else if (!strcmp(key, "async")) {
        int v = choice(value, CHOICES(async_names));
        if (v < 0)
            why = "unknown choice (on, off, snapshots)";
        else
            c->async = (enum config_async)v;
    } else if (!strcmp(key, "control")) {
        size_t n = strlen(value);
        int ok = n == 0 || (value[0] == '@' && n >= 2 && n < sizeof c->control);
        for (size_t i = 0; ok && i < n; i++)
            ok = value[i] > ' ' && value[i] < 0x7f;
        if (!ok)
            why = "not a control socket address (@ and a name of up to 98 printable characters)";
        else
            snprintf(c->control, sizeof c->control, "%s", value);
    } else if (!strcmp(key, "alloc")) {
        int v = choice(value, CHOICES(alloc_names));
        if (v < 0)
            why = "unknown allocation mode (modes: sampled, exact)";
        else
            c->alloc = (enum config_alloc)v;
    } else if (!strcmp(key, "alloc_interval")) {
        uint64_t n;
        if (units_parse_size(value, UINT64_MAX, &n, &why) == 0) {
            if (n < CONFIG_ALLOC_INTERVAL_MIN || n > CONFIG_ALLOC_INTERVAL_MAX)
                why = "out of range (100KiB, the runtime's own mean, to 1GiB)";
            else
                c->alloc_interval = n;
        }
    } else if (!strcmp(key, "live_max")) {
        uint64_t n;
        if (units_parse_count(value, UINT32_MAX, &n, &why) == 0) {
            if (n < 1 || n > CONFIG_LIVE_MAX_MAX)
                why = "out of range (1 to 10000000)";
            else
                c->live_max = (uint32_t)n;
        }
    } else if (!strcmp(key, "trace")) {
        int v = choice(value, CHOICES(trace_names));
        if (v < 0)
            why = "unknown tracing mode (modes: times, counts, off)";
#if !defined(__x86_64__) && !defined(__aarch64__)
        else if (v != CONFIG_TRACE_OFF)
            why = "tracing needs an x86-64 or arm64 machine (its hooks are written for their JITs)";
#endif
        else
            c->trace = (enum config_trace)v;
    } else if (!strcmp(key, "trace_include")) {
        why = set_regex(c->trace_include, value);
    } else if (!strcmp(key, "trace_exclude")) {
        why = set_regex(c->trace_exclude, value);
    } else if (!strcmp(key, "cover")) {
        if (value[0] && value[0] != '/')
            why = "not an absolute path";
        else if (strlen(value) >= sizeof c->cover - 64)
            why = "path too long";
        else
            snprintf(c->cover, sizeof c->cover, "%s", value);
    } else if (!strcmp(key, "cover_include") || !strcmp(key, "cover_exclude")) {
        char *dst = key[6] == 'i' ? c->cover_include : c->cover_exclude;
        if (strlen(value) >= CONFIG_COVER_FILTER_MAX)
            why = "too many filters";
        else if (strchr(value, '\n'))
            why = "a filter with a newline in it";
        else
            snprintf(dst, CONFIG_COVER_FILTER_MAX, "%s", value);
    } else if (!strcmp(key, "watch")) {
        if (strlen(value) >= CONFIG_WATCH_MAX)
            why = "method pattern too long";
        else if (strpbrk(value, "\n\r "))
            why = "a method pattern has no spaces or newlines";
        else
            snprintf(c->watch, sizeof c->watch, "%s", value);
    } else if (!strcmp(key, "watch_count")) {
        uint64_t n;
        if (units_parse_count(value, UINT64_MAX, &n, &why) == 0)
            c->watch_count = n;
    } else if (!strcmp(key, "watch_methods")) {
        uint64_t n;
        if (units_parse_count(value, UINT32_MAX, &n, &why) == 0) {
            if (n < 1 || n > CONFIG_WATCH_METHODS_MAX)
                why = "out of range (1 to 1000)";
            else
                c->watch_methods = (uint32_t)n;
        }
    } else if (!strcmp(key, "watch_rate")) {
        uint64_t n;
        if (units_parse_count(value, UINT32_MAX, &n, &why) == 0) {
            if (n < 1 || n > 1000000)
                why = "out of range (1 to 1000000 calls a second)";
            else
                c->watch_rate = (uint32_t)n;
        }
    } else if (!strcmp(key, "watch_stack")) {
        uint64_t n;
        if (units_parse_count(value, UINT32_MAX, &n, &why) == 0) {
            if (n > CONFIG_WATCH_STACK_MAX)
                why = "out of range (0 to 64 frames)";
            else
                c->watch_stack = (uint32_t)n;
        }
    } else if (!strcmp(key, "watch_fields")) {
        if (!strcmp(value, "0") || !strcmp(value, "1"))
            c->watch_fields = (uint32_t)(value[0] - '0');
        else
            why = "0 or 1";
    } else if (!strcmp(key, "watch_where")) {
        struct watch_where_expr expr;
        if (strlen(value) >= CONFIG_WATCH_WHERE_MAX)
            why = "expression too long";
        else if (strpbrk(value, "\n\r"))
            why = "an expression has no newlines";
        else if (value[0] && watch_where_parse(value, &expr, where_why, sizeof where_why) < 0)
            why = where_why;
        else
            snprintf(c->watch_where, sizeof c->watch_where, "%s", value);
    } else {
        why = "unknown setting";
    }
    if (why) {
        snprintf(err, err_size, "%s", why);
        return -1;
    }
    return 0;
}

int config_from_env(struct config *c, char *err, size_t err_size)
{
    config_defaults(c);
    char why[256];
#define READ(k, env)                                                          \
    do {                                                                      \
        const char *v = getenv(env);                                          \
        if (v && config_set(c, #k, v, why, sizeof why) < 0) {                 \
            snprintf(err, err_size, "%s=%.64s: %s", env, v, why);             \
            return -1;                                                        \
        }                                                                     \
    } while (0);
    CONFIG_KEYS(READ)
#undef READ
    return 0;
}

int config_to_text(const struct config *c, char *out, size_t size)
{
    size_t used = 0;
    char value[PATH_MAX];
#define LINE(k, env)                                                              \
    do {                                                                          \
        config_value_text(c, #k, value, sizeof value);                            \
        int n = snprintf(out + used, size - used, "%s=%s\n", #k, value);          \
        if (n < 0 || (size_t)n >= size - used)                                    \
            return -1;                                                            \
        used += (size_t)n;                                                        \
    } while (0);
    if (!size)
        return -1;
    out[0] = '\0';
    CONFIG_KEYS(LINE)
#undef LINE
    return (int)used;
}

int config_from_text(struct config *c, const char *text, size_t len, char *err, size_t err_size)
{
    config_defaults(c);
    if (len > CONFIG_TEXT_MAX || memchr(text, '\0', len)) {
        snprintf(err, err_size, "the settings are not text (%zu bytes)", len);
        return -1;
    }
    size_t at = 0;
    while (at < len) {
        const char *line = text + at;
        const char *nl = memchr(line, '\n', len - at);
        size_t n = nl ? (size_t)(nl - line) : len - at;
        at += n + (nl ? 1 : 0);
        if (!n)
            continue;
        const char *eq = memchr(line, '=', n);
        char key[32], value[PATH_MAX], why[256];
        size_t klen = eq ? (size_t)(eq - line) : 0;
        size_t vlen = eq ? n - klen - 1 : 0;
        if (!eq || !klen || klen >= sizeof key || vlen >= sizeof value) {
            snprintf(err, err_size, "'%.*s': not a setting (key=value)", (int)(n > 64 ? 64 : n),
                     line);
            return -1;
        }
        memcpy(key, line, klen);
        key[klen] = '\0';
        memcpy(value, eq + 1, vlen);
        value[vlen] = '\0';
        int known = 0;
#define KNOWN(k, env) known |= !strcmp(key, #k);
        CONFIG_KEYS(KNOWN)
#undef KNOWN
        if (!known) {
            snprintf(err, err_size, "%s: unknown setting", key);
            return -1;
        }
        if (config_set(c, key, value, why, sizeof why) < 0) {
            snprintf(err, err_size, "%s=%.64s: %s", key, value, why);
            return -1;
        }
    }
    return 0;
}

void config_value_text(const struct config *c, const char *key, char *out, size_t size)
{
    if (!strcmp(key, "output"))
        snprintf(out, size, "%s", c->output);
    else if (!strcmp(key, "event")) {
        size_t used = 0;
        if (size)
            snprintf(out, size, "%s", c->events ? "" : "none");
        for (size_t i = 0; i < sizeof event_names / sizeof event_names[0]; i++) {
            if (!event_names[i] || !(c->events & (1u << i)) || used >= size)
                continue;
            int n = snprintf(out + used, size - used, "%s%s", used ? "," : "", event_names[i]);
            if (n > 0)
                used += (size_t)n;
        }
        if (!c->events)
            snprintf(out, size, "none");
    }
    else if (!strcmp(key, "interval"))
        snprintf(out, size, "%lluns", (unsigned long long)c->interval_ns);
    else if (!strcmp(key, "sampler"))
        snprintf(out, size, "%s", config_sampler_name(c->sampler));
    else if (!strcmp(key, "signal"))
        snprintf(out, size, "%d", c->signal);
    else if (!strcmp(key, "cpu_clock"))
        snprintf(out, size, "%s", config_cpu_clock_name(c->cpu_clock));
    else if (!strcmp(key, "cpu_period"))
        snprintf(out, size, "%s", config_cpu_period_name(c->cpu_period));
    else if (!strcmp(key, "max_depth"))
        snprintf(out, size, "%u", c->max_depth);
    else if (!strcmp(key, "log"))
        snprintf(out, size, "%s", choice_name(CHOICES(log_names), (int)c->log));
    else if (!strcmp(key, "children"))
        snprintf(out, size, "%s", choice_name(CHOICES(children_names), (int)c->children));
    else if (!strcmp(key, "async"))
        snprintf(out, size, "%s", choice_name(CHOICES(async_names), (int)c->async));
    else if (!strcmp(key, "control"))
        snprintf(out, size, "%s", c->control);
    else if (!strcmp(key, "lock_min"))
        snprintf(out, size, "%lluns", (unsigned long long)c->lock_min_ns);
    else if (!strcmp(key, "alloc"))
        snprintf(out, size, "%s", config_alloc_name(c->alloc));
    else if (!strcmp(key, "alloc_interval"))
        snprintf(out, size, "%llu", (unsigned long long)c->alloc_interval);
    else if (!strcmp(key, "live_max"))
        snprintf(out, size, "%u", c->live_max);
    else if (!strcmp(key, "trace"))
        snprintf(out, size, "%s", choice_name(CHOICES(trace_names), (int)c->trace));
    else if (!strcmp(key, "trace_include"))
        snprintf(out, size, "%s", c->trace_include);
    else if (!strcmp(key, "trace_exclude"))
        snprintf(out, size, "%s", c->trace_exclude);
    else if (!strcmp(key, "cover"))
        snprintf(out, size, "%s", c->cover);
    else if (!strcmp(key, "cover_include"))
        snprintf(out, size, "%s", c->cover_include);
    else if (!strcmp(key, "cover_exclude"))
        snprintf(out, size, "%s", c->cover_exclude);
    else if (!strcmp(key, "watch"))
        snprintf(out, size, "%s", c->watch);
    else if (!strcmp(key, "watch_count"))
        snprintf(out, size, "%llu", (unsigned long long)c->watch_count);
    else if (!strcmp(key, "watch_methods"))
        snprintf(out, size, "%u", c->watch_methods);
    else if (!strcmp(key, "watch_rate"))
        snprintf(out, size, "%u", c->watch_rate);
    else if (!strcmp(key, "watch_stack"))
        snprintf(out, size, "%u", c->watch_stack);
    else if (!strcmp(key, "watch_where"))
        snprintf(out, size, "%s", c->watch_where);
    else if (!strcmp(key, "watch_fields"))
        snprintf(out, size, "%u", c->watch_fields);
    else if (size)
        out[0] = '\0';
}

const char *config_attach_refusal(const struct config *c)
{
    if (c->cover[0])
        return "coverage needs the agent loaded when the program starts: it rewrites methods "
               "before their first compilation";
    if (c->trace == CONFIG_TRACE_FLAT)
        return "--trace=flat needs the agent loaded when the program starts (corscope record): "
               "it counts in methods rewritten before their first compilation";
    if (c->trace)
        return "--trace needs the agent loaded when the program starts (corscope record): the "
               "runtime takes Enter/Leave hooks only then, and once set they make the agent "
               "impossible to detach";
    return NULL;
}

int config_expand_output(const char *pattern, long pid, char *out, size_t size)
{
    size_t o = 0;
    for (const char *p = pattern; *p; p++) {
        char piece[32];
        const char *add = piece;
        if (p[0] == '%' && p[1] == 'p') {
            snprintf(piece, sizeof piece, "%ld", pid);
            p++;
        } else if (p[0] == '%' && p[1] == '%') {
            piece[0] = '%';
            piece[1] = '\0';
            p++;
        } else {
            piece[0] = *p;
            piece[1] = '\0';
        }
        size_t n = strlen(add);
        if (o + n + 1 > size)
            return -1;
        memcpy(out + o, add, n);
        o += n;
    }
    if (o + 1 > size)
        return -1;
    out[o] = '\0';
    return 0;
}
