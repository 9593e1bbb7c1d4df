/*
 * summary: see summary.h.
 */
#include "cli/summary.h"

#include <signal.h>
#include <stdio.h>
#include <sys/stat.h>

#include "cli/agent_cost.h"
#include "cli/cli.h"
#include "cli/cpu_share.h"
#include "cli/event_table.h"
#include "cli/merge.h"
#include "cli/report.h"
#include "cli/termsafe.h"
#include "format/recording.h"

/* A process's own time: its recording's (recorded_ns), or, in a
 * recording older than that counter, to its last sample or event. */
static double own_seconds(const struct recording *r)
{
    uint64_t ns = rec_counter(r, FMT_COUNTER_RECORDED_NS);
    return (double)(ns ? ns : event_table_duration(r)) / 1e9;
}

/* "1 sample", "2 samples": a noun's ending for a count. */
static const char *plural(uint64_t n)
{
    return n == 1 ? "" : "s";
}

int summary_print(const char *path, double seconds, int quiet, int many)
{
    struct stat st;
    if (stat(path, &st) == 0 && st.st_size == 0)
        return -1;
    struct recording r;
    char err[512];
    if (rec_load_file(path, &r, err, sizeof err) < 0) {
        cli_error("%s: %s", path, err);
        return 0;
    }
    /* what each event holds: cpu 1234 samples, alloc 5678 records ... */
    char events[256] = "";
    size_t used = 0;
    for (size_t e = 0; e < r.event_count && used < sizeof events; e++) {
        uint64_t n = 0;
        if (r.events[e].recorded) {
            for (size_t i = 0; i < r.record_count; i++)
                n += r.records[i].event == e;
        } else {
            for (size_t i = 0; i < r.sample_count; i++)
                n += r.samples[i].event == e;
        }
        int k = snprintf(events + used, sizeof events - used, "%s%.*s %llu %s%s", used ? ", " : "",
                         (int)r.events[e].name.len, r.events[e].name.p, (unsigned long long)n,
                         r.events[e].recorded ? "record" : "sample", plural(n));
        if (k > 0)
            used += (size_t)k;
    }
    uint64_t dropped =
        rec_counter(&r, FMT_COUNTER_DROPPED) + rec_counter(&r, FMT_COUNTER_DROPPED_EVENTS);
    uint64_t failed = rec_counter(&r, FMT_COUNTER_FAILED_WALKS);
    if (!quiet) {
        char extra[160] = "";
        if (failed)
            snprintf(extra, sizeof extra, ", %llu failed walk%s", (unsigned long long)failed,
                     plural(failed));
        const struct rec_str *ended = rec_info(&r, FMT_INFO_ENDED_BY);
        char state[256] = "";
        if (r.status != REC_COMPLETE && ended && ended->len)
            snprintf(state, sizeof state, " (%s; ended by %.*s)", rec_status_name(r.status),
                     (int)ended->len, ended->p);
        else if (r.status != REC_COMPLETE)
            snprintf(state, sizeof state, " (%s)", rec_status_name(r.status));
        else if (ended && ended->len)
            snprintf(state, sizeof state, " (ended by %.*s)", (int)ended->len, ended->p);
        long pid = merge_pid_of(&r);
        const struct rec_str *cmd = rec_info(&r, FMT_INFO_COMMAND);
        char who[160] = "";
        if (many && pid > 0) {
            /* the process's own words (another user's, for root): escaped */
            char raw[101], safe[sizeof who];
            snprintf(raw, sizeof raw, "%.*s", cmd ? (int)(cmd->len > 100 ? 100 : cmd->len) : 0,
                     cmd ? cmd->p : "");
            snprintf(who, sizeof who, "process %ld (%s): ", pid, termsafe(raw, safe, 120));
        }
        if (r.status != REC_COMPLETE && pid > 0 && kill((pid_t)pid, 0) == 0) {
            /* a process that outlived the command: its recording goes on */
            snprintf(state, sizeof state, " (still being written: process %ld is running)", pid);
        }
        fprintf(stderr, "corscope: %s%.2f s, %s, %llu dropped%s -> %s%s\n", who,
                seconds < 0 ? own_seconds(&r) : seconds,
                events[0] ? events : "nothing recorded", (unsigned long long)dropped, extra, path,
                state);
        if (r.status != REC_COMPLETE)
            fprintf(stderr, "corscope: %s: %s\n", path, r.problem);
        struct cpu_share share;
        if (cpu_share_read(&r, &share) == 0 && cpu_share_thin(&share)) {
            char text[256];
            cpu_share_text(&share, text, sizeof text);
            fprintf(stderr, "corscope: %swarning: %s; `corscope check %s` says why\n", who, text,
                    path);
        }
        double switches = agent_cost_perf_switch_rate(&r);
        if (switches >= AGENT_COST_SWITCHES_SAID)
            fprintf(stderr,
                    "corscope: %snote: %.0f context switches a CPU-second, and the perf_event "
                    "clock costs each (about 2 us on virtual machines that make timers dear, some "
                    "%.0f%% of the CPU there); --cpu-clock posix does not pay it (`corscope check "
                    "%s`)\n",
                    who, switches, switches * AGENT_COST_SWITCH_NS * 1e-9 * 100.0, path);
        const char *change = report_runtime_change(&r);
        if (change)
            fprintf(stderr, "corscope: %swarning: %s\n", who, change);
    }
    rec_free(&r);
    return 0;
}
