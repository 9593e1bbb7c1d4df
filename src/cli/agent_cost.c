/*
 * agent_cost: see agent_cost.h.
 */
#include "cli/agent_cost.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "common/units.h"

int agent_cost_read(const struct recording *r, struct agent_cost *out)
{
    memset(out, 0, sizeof *out);
    if (!rec_has_counter(r, FMT_COUNTER_SAMPLER_CPU_NS))
        return -1;
    out->thread_ns = rec_counter(r, FMT_COUNTER_SAMPLER_CPU_NS);
    out->handler_ns = rec_counter(r, FMT_COUNTER_HANDLER_NS);
    out->samples = rec_counter(r, FMT_COUNTER_SAMPLES);
    out->program_ns = rec_counter(r, FMT_COUNTER_CPU_WHILE_SAMPLED_NS);
    /* counted for a cpu recording of the signal sampler only */
    out->has_callbacks = out->program_ns && rec_has_counter(r, FMT_COUNTER_AGENT_CODE_SAMPLES);
    out->callback_samples = rec_counter(r, FMT_COUNTER_AGENT_CODE_SAMPLES);
    out->callback_ns = rec_counter(r, FMT_COUNTER_AGENT_CODE_NS);
    return 0;
}

/* Appends to out (a C string) what fmt says. */
__attribute__((format(printf, 3, 4))) static void add(char *out, size_t size, const char *fmt, ...)
{
    size_t used = strlen(out);
    if (used + 1 >= size)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(out + used, size - used, fmt, ap);
    va_end(ap);
}

/* ns in three figures: "36.6ms", "723us" (units' form, which keeps
 * microseconds exact: "723333ns") */
static void duration(uint64_t ns, char *out, size_t size)
{
    if (ns >= 1000 && ns < 1000000)
        snprintf(out, size, "%.3gus", (double)ns / 1e3);
    else
        units_format_duration(ns, out, size);
}

void agent_cost_text(const struct agent_cost *c, char *out, size_t size)
{
    char t[32];
    if (!size)
        return;
    out[0] = '\0';
    duration(c->thread_ns, t, sizeof t);
    add(out, size, "its own thread %s of CPU", t);
    if (c->handler_ns) {
        duration(c->handler_ns, t, sizeof t);
        add(out, size, "; its signal handler %s on the program's threads", t);
        /* a cpu sample is one run of the handler; wall mode repeats an
         * idle thread's last stack without one */
        if (c->samples && c->program_ns)
            add(out, size, " (%llu sample%s, %.1f us each)", (unsigned long long)c->samples,
                c->samples == 1 ? "" : "s", (double)c->handler_ns / 1e3 / (double)c->samples);
    }
    if (c->has_callbacks) {
        duration(c->callback_ns, t, sizeof t);
        add(out, size, "; its callbacks and hooks in %llu of the %llu cpu samples (%s)",
            (unsigned long long)c->callback_samples, (unsigned long long)c->samples, t);
    }
    /* the program's CPU holds the handler's and the callbacks'; the agent's
     * thread is beside it */
    if (c->program_ns) {
        uint64_t measured = c->thread_ns + c->handler_ns;
        double whole = (double)(c->program_ns + c->thread_ns);
        add(out, size, "; in all %.1f%% of the process's CPU",
            100.0 * (double)(measured + c->callback_ns) / whole);
        /* a few samples say little of the callbacks' time (one sample of
         * 10 ms in a short process: anywhere from none to several): the
         * counted part is said apart */
        if (c->callback_samples && c->callback_samples < AGENT_COST_FEW_SAMPLES)
            add(out, size, " (%.1f%% counted, the rest estimated from %llu sample%s)",
                100.0 * (double)measured / whole, (unsigned long long)c->callback_samples,
                c->callback_samples == 1 ? "" : "s");
    }
}

/* n per CPU-second of the process while sampled, 0 when that is not known. */
static double per_cpu_second(const struct recording *r, uint64_t n)
{
    uint64_t cpu_ns = rec_counter(r, FMT_COUNTER_CPU_WHILE_SAMPLED_NS);
    return cpu_ns ? (double)n * 1e9 / (double)cpu_ns : 0.0;
}

/* The count and, where known, its rate: "N thrown (R a CPU-second)".
 * Returns the rate, 0 when not known. */
static double count_and_rate(const struct recording *r, uint64_t n, const char *what, char *out,
                             size_t size)
{
    out[0] = '\0';
    add(out, size, "%llu%s", (unsigned long long)n, what);
    double rate = per_cpu_second(r, n);
    if (rate > 0.0)
        add(out, size, " (%.0f a CPU-second)", rate);
    return rate;
}

int agent_cost_exceptions_text(const struct recording *r, char *out, size_t size)
{
    uint64_t thrown = rec_counter(r, FMT_COUNTER_EXCEPTIONS_THROWN);
    if (!thrown)
        return 0;
    double rate = count_and_rate(r, thrown, " thrown", out, size);
    if (rate >= AGENT_COST_THROWS_NOTED)
        add(out, size, ": the runtime calls the agent at every frame of each throw, which "
                       "-e exceptions asks for (and, before .NET 10, every recording, to see an "
                       "unhandled exception coming); about "
                       "1 us a throw on our machines, some %.1f%% of this process's CPU, not in the "
                       "profiler line", rate * 1e-6 * 100.0);
    return 1;
}

/* Did the agent give the threads that switched most POSIX timers? */
static int switchy_moved(const struct rec_str *clock)
{
    size_t k = sizeof FMT_CPU_CLOCK_SWITCHY - 1;
    for (size_t i = 0; i + k <= clock->len; i++)
        if (memcmp(clock->p + i, FMT_CPU_CLOCK_SWITCHY, k) == 0)
            return 1;
    return 0;
}

double agent_cost_perf_switch_rate(const struct recording *r)
{
    const struct rec_str *clock = rec_info(r, FMT_INFO_CPU_CLOCK);
    if (!clock || clock->len < 10 || memcmp(clock->p, "perf_event", 10) != 0 ||
        switchy_moved(clock))
        return 0.0;
    return per_cpu_second(r, rec_counter(r, FMT_COUNTER_CONTEXT_SWITCHES));
}

int agent_cost_switches_text(const struct recording *r, char *out, size_t size)
{
    uint64_t switches = rec_counter(r, FMT_COUNTER_CONTEXT_SWITCHES);
    if (!switches)
        return 0;
    count_and_rate(r, switches, "", out, size);
    const struct rec_str *clock = rec_info(r, FMT_INFO_CPU_CLOCK);
    if (clock && switchy_moved(clock))
        add(out, size, ": the threads that switched most were given POSIX timers, which do not "
                       "pay them (the clock line)");
    double rate = agent_cost_perf_switch_rate(r);
    if (rate >= AGENT_COST_SWITCHES_NOTED)
        add(out, size, ": the perf_event clock's timer is stopped and started at each switch of "
                       "a sampled thread, about 2 us more a switch on virtual machines that make "
                       "timers dear (bench/sigcost.sh), some %.1f%% of this process's CPU there, "
                       "not in the profiler line; --cpu-clock posix does not pay it, with coarser "
                       "samples (README)", rate * AGENT_COST_SWITCH_NS * 1e-9 * 100.0);
    return 1;
}
