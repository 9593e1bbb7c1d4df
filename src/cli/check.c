/*
 * check: `corscope check RECORDING...`: validates recordings the way the
 * reader does and says, for each, what it holds and what (if anything) is
 * wrong with it, in the manner of redis-check-rdb.
 *
 * Exit status: 0 every recording is complete and valid; 3 some are
 * truncated but readable (the process died before closing them); 1 some are
 * corrupt or unreadable; 2 bad command line.
 */
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "cli/agent_cost.h"
#include "cli/agent_probe.h"
#include "cli/cli.h"
#include "cli/cpu_share.h"
#include "cli/launch.h"
#include "cli/report.h"
#include "cli/runtime_share.h"
#include "common/units.h"
#include "format/recording.h"

static const char check_usage[] =
    "usage: corscope check RECORDING...\n"
    "       corscope check --agent\n"
    "\n"
    "Validates each recording: header, chunk checksums, record structure and\n"
    "references. Prints what it holds and what is wrong.\n"
    "Exit status: 0 complete, 3 truncated but readable, 1 corrupt or unreadable.\n"
    "\n"
    "--agent loads the agent (libcorscope.so) as the runtime would, in this\n"
    "environment, and says whether it loads, and if not, the loader's reason.\n"
    "Exit status: 0 it loads, 1 it does not.\n";

static void print_info(const struct recording *r, const char *key, const char *label)
{
    const struct rec_str *v = rec_info(r, key);
    if (v && v->len)
        printf("  %-12s %.*s\n", label, (int)v->len, v->p);
}

static const char *const gap_keys[] = {
#define GAP_KEY(name, key, what) key,
    FMT_UNWIND_GAPS(GAP_KEY)
#undef GAP_KEY
};
static const char *const gap_whats[] = {
#define GAP_WHAT(name, key, what) what,
    FMT_UNWIND_GAPS(GAP_WHAT)
#undef GAP_WHAT
};

/* The value of `key=N` among the tokens of [p, end), or 0. */
static unsigned long long gap_value(const char *p, const char *end, const char *key)
{
    size_t klen = strlen(key);
    while (p < end) {
        const char *tok_end = memchr(p, ' ', (size_t)(end - p));
        if (!tok_end)
            tok_end = end;
        if ((size_t)(tok_end - p) > klen && !memcmp(p, key, klen) && p[klen] == '=')
            return strtoull(p + klen + 1, NULL, 10);
        p = tok_end + 1;
    }
    return 0;
}

/* The base name of a path of `len` bytes. */
static const char *base_of(const char *p, int *len)
{
    for (int i = *len - 1; i >= 0; i--)
        if (p[i] == '/') {
            *len -= i + 1;
            return p + i + 1;
        }
    return p;
}

/* The native libraries the unwinder did not wholly follow (the agent's
 * unwind_gaps INFO, one line per library): why a walk ended in native
 * code.  Libraries where walks stopped, and those without unwind data that
 * walks went through, get a line each; the others, whose gaps no walk met,
 * share one. */
static void print_unwind_gaps(const struct recording *r)
{
    const struct rec_str *v = rec_info(r, FMT_INFO_UNWIND_GAPS);
    if (!v || !v->len)
        return;
    const char *label = "unwind gaps";
    int quiet = 0;
    for (int pass = 0; pass < 2; pass++) {
        const char *p = v->p, *end = v->p + v->len;
        while (p < end) {
            const char *path = p;
            const char *nl = memchr(p, '\n', (size_t)(end - p));
            const char *line_end = nl ? nl : end;
            const char *tab = memchr(p, '\t', (size_t)(line_end - p));
            const char *fields = tab ? tab + 1 : line_end;
            int path_len = (int)((tab ? tab : line_end) - p);
            unsigned long long stopped = gap_value(fields, line_end, FMT_UNWIND_WALKS_STOPPED);
            int no_eh = gap_value(fields, line_end, FMT_UNWIND_NO_EH_FRAME) != 0;
            p = line_end + 1;
            if (pass == 0 && no_eh) {
                printf("  %-12s %.*s: no .eh_frame_hdr%s; %llu walks went through it by frame "
                       "pointers\n", label, path_len, path,
                       gap_value(fields, line_end, FMT_UNWIND_DEBUG_FRAME)
                           ? " (its unwind data is in .debug_frame only)"
                           : "",
                       gap_value(fields, line_end, FMT_UNWIND_WALKS_THROUGH));
                label = "";
            } else if (pass == 0 && stopped) {
                printf("  %-12s %.*s: %llu walks stopped there; of %llu functions:", label, path_len,
                       path, stopped,
                       gap_value(fields, line_end, FMT_UNWIND_FUNCTIONS));
                label = "";
                const char *sep = " ";
                for (size_t g = 0; g < sizeof gap_keys / sizeof gap_keys[0]; g++) {
                    unsigned long long n = gap_value(fields, line_end, gap_keys[g]);
                    if (n) {
                        printf("%s%llu with %s", sep, n, gap_whats[g]);
                        sep = ", ";
                    }
                }
                printf("\n");
            } else if (pass == 1 && !no_eh && !stopped) {
                unsigned long long n = 0;
                for (size_t g = 0; g < sizeof gap_keys / sizeof gap_keys[0]; g++)
                    n += gap_value(fields, line_end, gap_keys[g]);
                int len = path_len;
                const char *name = base_of(path, &len);
                if (!quiet)
                    printf("  %-12s no walk stopped at the rules it does not follow in:", label);
                printf("%s %.*s (%llu functions)", quiet ? "," : "", len, name, n);
                quiet = 1;
                label = "";
            }
        }
    }
    if (quiet)
        printf("\n");
}

/* What share of the CPU the samples stand for; why, when it is thin. */
static void print_cpu_share(const struct recording *r)
{
    struct cpu_share share;
    if (cpu_share_read(r, &share) < 0)
        return;
    char text[256], causes[1024];
    cpu_share_text(&share, text, sizeof text);
    printf("  cpu share    %s\n", text);
    if (cpu_share_thin(&share)) {
        cpu_share_causes(r, causes, sizeof causes);
        printf("  warning      a quarter or more of the CPU was seen by no sample. What can "
               "leave it out: %s\n", causes);
    }
}

static int check_one(const char *path)
{
    struct recording r;
    char err[512];
    if (rec_load_file(path, &r, err, sizeof err) < 0) {
        cli_error("%s: %s", path, err);
        return EXIT_WORK_FAILED;
    }
    printf("%s: corscope recording, format %u.%u, %zu bytes\n", path, r.version_major,
           r.version_minor, r.size);
    print_info(&r, FMT_INFO_COMMAND, "command");
    print_info(&r, FMT_INFO_PID, "pid");
    print_info(&r, FMT_INFO_MODE, "mode");
    print_info(&r, FMT_INFO_START_REALTIME_NS, "started");
    print_info(&r, FMT_INFO_RUNTIME, "runtime");
    print_info(&r, FMT_INFO_EVENTS, "recorded");
    print_info(&r, FMT_INFO_SAMPLER, "sampler");
    print_info(&r, FMT_INFO_CPU_CLOCK, "clock");
    print_info(&r, FMT_INFO_ALLOC, "alloc");
    print_info(&r, FMT_INFO_LIVE, "live");
    print_info(&r, FMT_INFO_GC, "gc");
    print_info(&r, FMT_INFO_ENDED_BY, "ended by");
    print_info(&r, FMT_INFO_TRACE, "traced");
    print_info(&r, FMT_INFO_TRACE_METHODS, "methods");
    print_info(&r, FMT_INFO_TRACE_CLOCK, "trace clock");
    print_info(&r, FMT_INFO_ASYNC, "async");
    for (size_t i = 0; i < r.event_count; i++) {
        char period[32];
        uint64_t weight = 0, samples = 0, records = 0;
        for (size_t s = 0; s < r.sample_count; s++) {
            if (r.samples[s].event == i) {
                samples++;
                weight += r.samples[s].weight;
            }
        }
        if (r.events[i].recorded) {
            for (size_t k = 0; k < r.record_count; k++)
                records += r.records[k].event == i;
            printf("  event        %.*s: %llu records, %llu with a stack\n",
                   (int)r.events[i].name.len, r.events[i].name.p, (unsigned long long)records,
                   (unsigned long long)samples);
            continue;
        }
        if (rec_str_eq(r.events[i].unit, "ns"))
            units_format_duration(r.events[i].period, period, sizeof period);
        else
            snprintf(period, sizeof period, "%llu %.*s", (unsigned long long)r.events[i].period,
                     (int)r.events[i].unit.len, r.events[i].unit.p);
        /* a weight unit finer than the interval: each sample weighs the
         * time it stands for (the cpu clock's periods vary) */
        char every[96];
        uint64_t interval = rec_info_u64(&r, FMT_INFO_INTERVAL_NS);
        if (interval && rec_str_eq(r.events[i].unit, "ns") && interval != r.events[i].period) {
            char ivs[32];
            units_format_duration(interval, ivs, sizeof ivs);
            snprintf(every, sizeof every, "%s (weights in %s)", ivs, period);
        } else {
            snprintf(every, sizeof every, "%s", period);
        }
        /* wall mode: how many samples took a signal; the others repeated
         * the last stack of a thread that had not run since */
        char signals[96] = "";
        if (r.events[i].id == FMT_EVENT_WALL && rec_has_counter(&r, FMT_COUNTER_WALL_SIGNALS))
            snprintf(signals, sizeof signals, " (%llu by a signal, the rest a waiting thread's last)",
                     (unsigned long long)rec_counter(&r, FMT_COUNTER_WALL_SIGNALS));
        printf("  event        %.*s every %s: %llu samples%s, weight %llu\n",
               (int)r.events[i].name.len, r.events[i].name.p, every,
               (unsigned long long)samples, signals, (unsigned long long)weight);
    }
    print_cpu_share(&r);
    struct agent_cost cost;
    if (agent_cost_read(&r, &cost) == 0) {
        char text[512];
        agent_cost_text(&cost, text, sizeof text);
        printf("  profiler     %s\n", text);
    }
    char thrown[512];
    if (agent_cost_exceptions_text(&r, thrown, sizeof thrown))
        printf("  exceptions   %s\n", thrown);
    char switches[512];
    if (agent_cost_switches_text(&r, switches, sizeof switches))
        printf("  switches     %s\n", switches);
    for (size_t i = 0; i < r.event_count; i++) {
        struct runtime_share rs;
        if (r.events[i].recorded || runtime_share_count(&r, i, &rs) < 0 || !rs.samples)
            continue;
        printf("  runtime work %.*s: %.1f%% in the runtime's own code, "
               "%.1f%% of that named by what it did\n",
               (int)r.events[i].name.len, r.events[i].name.p,
               100.0 * (double)rs.runtime / (double)rs.samples,
               rs.runtime ? 100.0 * (double)rs.named / (double)rs.runtime : 0.0);
    }
    const char *change = report_runtime_change(&r);
    if (change)
        printf("  warning      %s\n", change);
    uint64_t last = r.sample_count ? r.samples[r.sample_count - 1].time : 0;
    uint64_t recorded = rec_counter(&r, FMT_COUNTER_RECORDED_NS);
    if (recorded)
        printf("  duration     %.3f s recorded, the last sample at %.3f s\n",
               (double)recorded / 1e9, (double)last / 1e9);
    else
        printf("  duration     %.3f s (to the last sample)\n", (double)last / 1e9);
    printf("  tables       %zu threads, %zu stacks, %zu frames, %zu strings, %llu chunks\n",
           r.thread_count, r.stack_count - 1, r.frame_count - 1, r.string_count - 1,
           (unsigned long long)r.chunks);
    print_unwind_gaps(&r);
    if (r.stat_count) {
        printf("  counters    ");
        for (size_t i = 0; i < r.stat_count; i++)
            printf(" %.*s=%llu", (int)r.stats[i].key.len, r.stats[i].key.p,
                   (unsigned long long)r.stats[i].value);
        printf("\n");
    }
    int status = 0;
    switch (r.status) {
    case REC_COMPLETE: printf("  status       complete\n"); break;
    case REC_TRUNCATED:
        printf("  status       truncated at byte %zu: %s\n", r.problem_offset, r.problem);
        status = EXIT_TRUNCATED;
        break;
    case REC_CORRUPT:
        printf("  status       corrupt at byte %zu: %s\n", r.problem_offset, r.problem);
        status = EXIT_WORK_FAILED;
        break;
    }
    rec_free(&r);
    return status;
}

/* check --agent: the agent's load, as agent_probe.h tries it */
static int check_agent(void)
{
    char path[PATH_MAX], why[512];
    size_t tls = 0;
    if (launch_find_agent(path, sizeof path) < 0) {
        cli_error("cannot find libcorscope.so beside corscope or in ../lib/corscope");
        return EXIT_WORK_FAILED;
    }
    if (agent_probe(path, why, sizeof why, &tls) < 0) {
        agent_probe_explain(path);
        return EXIT_WORK_FAILED;
    }
    printf("%s: loads (%zu bytes of thread-locals)\n", path, tls);
    return 0;
}

int cmd_check(int argc, char **argv)
{
    static const struct option longopts[] = {{"help", no_argument, NULL, 'h'},
                                             {"agent", no_argument, NULL, 'a'},
                                             {NULL, 0, NULL, 0}};
    optind = 1;
    opterr = 0;
    int c, agent = 0;
    while ((c = getopt_long(argc, argv, "+h", longopts, NULL)) != -1) {
        if (c == 'h') {
            fputs(check_usage, stdout);
            return 0;
        }
        if (c == 'a') {
            agent = 1;
            continue;
        }
        return cli_usage_error("check", "unknown option '%s'", argv[optind - 1]);
    }
    if (agent) {
        if (optind < argc)
            return cli_usage_error("check", "--agent takes no recording");
        return check_agent();
    }
    if (optind >= argc)
        return cli_usage_error("check", "no recording given");
    int worst = 0;
    for (int i = optind; i < argc; i++) {
        int s = check_one(argv[i]);
        /* corrupt (1) outranks truncated (3) */
        if (s == EXIT_WORK_FAILED || (s == EXIT_TRUNCATED && worst == 0))
            worst = s;
    }
    fflush(stdout);
    return worst;
}
