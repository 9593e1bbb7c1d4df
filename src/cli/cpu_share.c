/*
 * cpu_share: see cpu_share.h.
 */
#include "cli/cpu_share.h"

#include <stdio.h>
#include <string.h>

#include "cli/agent_cost.h"
#include "common/units.h"

/* The share under which a profile is thin, and the least CPU (in
 * intervals) it must miss: a run of a few samples can miss a few
 * intervals by chance alone. */
#define THIN_SHARE 0.75
#define THIN_INTERVALS 20
/* The most one sample is taken to have seen: intervals, and ns */
#define SEEN_CAP 2
#define SEEN_CAP_MIN_NS 20000000ull

/* An INFO's value as a C string (empty when absent). */
static void info_text(const struct recording *r, const char *key, char *out, size_t size)
{
    const struct rec_str *v = rec_info(r, key);
    snprintf(out, size, "%.*s", v ? (int)v->len : 0, v ? v->p : "");
}

int cpu_share_read(const struct recording *r, struct cpu_share *out)
{
    memset(out, 0, sizeof *out);
    out->cpu_ns = rec_counter(r, FMT_COUNTER_CPU_WHILE_SAMPLED_NS);
    if (!out->cpu_ns)
        return -1;
    size_t event = r->event_count;
    for (size_t i = 0; i < r->event_count; i++)
        if (!r->events[i].recorded && rec_str_eq(r->events[i].name, "cpu") &&
            rec_str_eq(r->events[i].unit, "ns"))
            event = i;
    if (event == r->event_count)
        return -1;
    out->interval_ns = rec_info_u64(r, FMT_INFO_INTERVAL_NS);
    uint64_t unit = r->events[event].period ? r->events[event].period : 1;
    uint64_t cap = SEEN_CAP * out->interval_ns;
    if (cap < SEEN_CAP_MIN_NS)
        cap = SEEN_CAP_MIN_NS;
    for (size_t s = 0; s < r->sample_count; s++) {
        if (r->samples[s].event != event)
            continue;
        uint64_t w = r->samples[s].weight * unit;
        if (w > cap) {
            out->late_ns += w - cap;
            out->late_samples++;
            w = cap;
        }
        out->seen_ns += w;
    }
    return 0;
}

int cpu_share_thin(const struct cpu_share *s)
{
    if (!s->cpu_ns || (double)s->seen_ns >= THIN_SHARE * (double)s->cpu_ns)
        return 0;
    uint64_t missed = s->cpu_ns - s->seen_ns;
    return missed >= THIN_INTERVALS * (s->interval_ns ? s->interval_ns : 10000000ull);
}

void cpu_share_text(const struct cpu_share *s, char *out, size_t size)
{
    char seen[32], cpu[32], late[32];
    units_format_duration(s->seen_ns, seen, sizeof seen);
    units_format_duration(s->cpu_ns, cpu, sizeof cpu);
    units_format_duration(s->late_ns, late, sizeof late);
    int n = snprintf(out, size, "the cpu samples saw %s of the %s of CPU the process used while "
                     "sampled (%.1f%%)",
                     seen, cpu, s->cpu_ns ? 100.0 * (double)s->seen_ns / (double)s->cpu_ns : 0.0);
    if (s->late_samples && n > 0 && (size_t)n < size)
        snprintf(out + n, size - (size_t)n, "; %llu sample%s carried %s more, unseen CPU charged "
                 "to where a tick found its thread",
                 (unsigned long long)s->late_samples, s->late_samples == 1 ? "" : "s", late);
}

/* Appends "; what" (or "what" first) to out. */
static void add(char *out, size_t size, const char *what)
{
    size_t used = strlen(out);
    if (used + 1 < size)
        snprintf(out + used, size - used, "%s%s", used ? "; " : "", what);
}

void cpu_share_causes(const struct recording *r, char *out, size_t size)
{
    char clock[512], line[256];
    if (!size)
        return;
    out[0] = '\0';
    info_text(r, FMT_INFO_CPU_CLOCK, clock, sizeof clock);
    if (strstr(clock, "user time only"))
        add(out, size, "the clock counts user time only: time in the kernel is in no sample");
    double switch_rate = agent_cost_perf_switch_rate(r);
    if (switch_rate >= AGENT_COST_SWITCHES_NOTED) {
        snprintf(line, sizeof line,
                 "context switches, %.0f a CPU-second: the perf_event clock does not count a "
                 "thread's time in switching, which the scheduler charges to it (--cpu-clock "
                 "posix counts it)",
                 switch_rate);
        add(out, size, line);
    }
    if (strstr(clock, "posix-cpu-timer"))
        add(out, size,
            "POSIX timers fire only at a scheduler tick that finds the thread running: work "
            "done between ticks is seen by no sample (--cpu-clock perf sees it)");
    uint64_t n = rec_counter(r, FMT_COUNTER_DROPPED);
    if (n) {
        snprintf(line, sizeof line, "%llu samples were dropped (their buffers were full)",
                 (unsigned long long)n);
        add(out, size, line);
    }
    if ((n = rec_counter(r, FMT_COUNTER_UNSAMPLED_THREADS)) != 0) {
        snprintf(line, sizeof line, "%llu threads got no clock", (unsigned long long)n);
        add(out, size, line);
    }
    if ((n = rec_counter(r, FMT_COUNTER_STALE_TICKS)) != 0) {
        snprintf(line, sizeof line, "%llu samples fell in code unloaded meanwhile",
                 (unsigned long long)n);
        add(out, size, line);
    }
    if (!out[0])
        add(out, size,
            "threads run before their clocks started (short-lived threads; `report -f threads` "
            "shows each thread's CPU and what was sampled of it)");
}
