/*
 * report_text: the words every report writer shares (declared in report.h
 * beside the writers): the title, a value in its event's unit, what the
 * recording lost (from the format's counter words, format.h, and a cpu
 * profile's thin share of the CPU, cpu_share.h), how the
 * view's numbers were taken, and the warning for biased weights.  Apart
 * from report.c, which parses the options and calls the writers, so that a
 * writer depends on these and never on the command that runs it.
 */
#include <stdio.h>
#include <string.h>

#include "cli/cpu_share.h"
#include "cli/report.h"

void report_title(const struct profile *p, char *out, size_t size)
{
    const struct rec_str *cmd = rec_info(p->rec, FMT_INFO_COMMAND);
    if (cmd && cmd->len)
        snprintf(out, size, "%.*s (%s)", (int)cmd->len, cmd->p, prof_event_name(p));
    else
        snprintf(out, size, "profile (%s)", prof_event_name(p));
}

void report_format_value(const struct profile *p, uint64_t weight, char *out, size_t size)
{
    double v = prof_value(p, weight);
    const char *unit = prof_unit(p);
    if (strcmp(unit, "ns") == 0) {
        if (v >= 1e9)
            snprintf(out, size, "%.2f s", v / 1e9);
        else if (v >= 1e6)
            snprintf(out, size, "%.1f ms", v / 1e6);
        else if (v >= 1e3)
            snprintf(out, size, "%.0f us", v / 1e3);
        else /* a traced call's times */
            snprintf(out, size, "%.0f ns", v);
    } else if (strcmp(unit, "bytes") == 0) {
        if (v >= 1024.0 * 1024 * 1024)
            snprintf(out, size, "%.2f GiB", v / (1024.0 * 1024 * 1024));
        else if (v >= 1024.0 * 1024)
            snprintf(out, size, "%.1f MiB", v / (1024.0 * 1024));
        else
            snprintf(out, size, "%.1f KiB", v / 1024.0);
    } else {
        snprintf(out, size, "%.0f", v);
    }
}

/* The counters that say something could not be recorded as it happened
 * (their words come from the format, format.h). */
static const enum fmt_counter loss_counters[] = {
    FMT_COUNTER_DROPPED,     FMT_COUNTER_DROPPED_EVENTS, FMT_COUNTER_STALE_TICKS,
    FMT_COUNTER_FAILED_WALKS, FMT_COUNTER_TRUNCATED,     FMT_COUNTER_UNRESOLVED,
    FMT_COUNTER_SKIPPED_TICKS, FMT_COUNTER_WRITE_ERRORS,
    FMT_COUNTER_LIVE_UNTRACKED, FMT_COUNTER_LIVE_HANDLE_FAILURES, FMT_COUNTER_GC_UNMATCHED,
    FMT_COUNTER_UNTRACKED_CALLS, FMT_COUNTER_UNTRACED_THREADS,
};

void report_losses(const struct profile *p, char *out, size_t size)
{
    size_t used = 0;
    out[0] = '\0';
    for (size_t i = 0; i < sizeof loss_counters / sizeof loss_counters[0]; i++) {
        uint64_t v = rec_counter(p->rec, loss_counters[i]);
        if (!v || used >= size)
            continue;
        int n = snprintf(out + used, size - used, "%s%llu %s", used ? ", " : "",
                         (unsigned long long)v, schema_counter_words(loss_counters[i]));
        if (n > 0)
            used += (size_t)n;
    }
    /* a cpu view whose samples saw too little of the program's CPU */
    struct cpu_share share;
    if (used < size && !strcmp(prof_event_name(p), "cpu") && cpu_share_read(p->rec, &share) == 0 &&
        cpu_share_thin(&share))
        snprintf(out + used, size - used,
                 "%sthe cpu samples saw only %.1f%% of the CPU the process used while sampled "
                 "(`corscope check` says why)",
                 used ? ", " : "", 100.0 * (double)share.seen_ns / (double)share.cpu_ns);
}

/* The words --weight takes for the event's value (the first) and its
 * count (the second): its own names for them, "time" or "bytes" by the
 * value's unit, and "value" and "count" for any event. */
static int weight_is_value(const struct profile *p, const char *name)
{
    const char *unit = prof_unit(p);
    const struct rec_event *e = p->event >= 0 ? &p->rec->events[p->event] : NULL;
    return !strcmp(name, "value") || (e && e->recorded && rec_str_eq(e->value_names[0], name)) ||
           (!strcmp(name, "time") && !strcmp(unit, "ns")) ||
           (!strcmp(name, "bytes") && !strcmp(unit, "bytes"));
}

/* Has the event a count apart from its value?  A sampled event counts
 * samples; a recorded one its second value, when it has one. */
static int has_count(const struct profile *p)
{
    const struct rec_event *e = p->event >= 0 ? &p->rec->events[p->event] : NULL;
    return e && (!e->recorded || e->value_count > 1);
}

int report_weight(const struct profile *p, const char *name, int *by_count, char *why, size_t size)
{
    if (weight_is_value(p, name)) {
        *by_count = 0;
        return 0;
    }
    if (has_count(p) && (!strcmp(name, "count") || !strcmp(name, prof_count_name(p)))) {
        *by_count = 1;
        return 0;
    }
    const struct rec_event *e = p->event >= 0 ? &p->rec->events[p->event] : NULL;
    const char *unit = prof_unit(p);
    const char *value_word = !strcmp(unit, "ns") ? "time" : !strcmp(unit, "bytes") ? "bytes" : "value";
    char value_name[64] = "";
    if (e && e->recorded && !rec_str_eq(e->value_names[0], value_word))
        snprintf(value_name, sizeof value_name, "%.*s, ", (int)e->value_names[0].len,
                 e->value_names[0].p);
    if (has_count(p))
        snprintf(why, size, "the %s event is weighed by %s%s or by %s (count)", prof_event_name(p),
                 value_name, value_word, prof_count_name(p));
    else
        snprintf(why, size, "the %s event is weighed by %s%s only", prof_event_name(p),
                 value_name, value_word);
    return -1;
}

/* Is the view's event the schema's ev? */
static int view_is(const struct profile *p, enum fmt_ev ev)
{
    return p->event >= 0 && p->event == rec_event_of(p->rec, ev);
}

const char *report_runtime_change(const struct recording *r)
{
    if (!rec_counter(r, FMT_COUNTER_MULTICORE_JIT_OFF))
        return NULL;
    return "the program asked for multicore JIT (ProfileOptimization.SetProfileRoot), which the "
           "runtime does not start while a profiler follows compilations: under corscope nothing "
           "was compiled ahead from an earlier run's profile (its start-up compiled on its own "
           "threads), and no profile was written";
}

const char *report_biased(const struct profile *p)
{
    const struct rec_str *how = rec_info(p->rec, FMT_INFO_ALLOC);
    if ((!view_is(p, FMT_EV_ALLOC) && !view_is(p, FMT_EV_LIVE)) || !how || how->len < 14 ||
        memcmp(how->p, "AllocationTick", 14) != 0)
        return NULL;
    return "allocation weights are biased: this runtime (before .NET 10) has only "
           "AllocationTick, which names the object that crossed each ~100 KB";
}

void report_note(const struct profile *p, char *out, size_t size)
{
    out[0] = '\0';
    if (view_is(p, FMT_EV_LIVE)) {
        snprintf(out, size, "%s", p->shared->live_note);
    } else if (view_is(p, FMT_EV_ALLOC)) {
        const struct rec_str *how = rec_info(p->rec, FMT_INFO_ALLOC);
        if (how)
            snprintf(out, size, "alloc: %.*s", (int)how->len, how->p);
    }
}
