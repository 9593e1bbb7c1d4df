/*
 * report: `corscope report`: parses the options, loads the recording
 * through the filters into a profile, and hands it to one format's writer.
 * Also the table of formats (the words writers share are report_text.c's).
 *
 * Output goes to stdout or to -o FILE; a file is written under a temporary
 * name beside it and renamed into place only when the writer succeeded, so
 * a failed report never leaves half a file behind.
 */
#include "cli/report.h"

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "common/mem.h"
#include "common/units.h"

static const struct report_format formats[] = {
    {"top", ".txt", report_top, "flat table of methods by self and total share"},
    {"collapsed", ".collapsed", report_collapsed, "folded stacks for flame graph tools"},
    {"tree", ".tree", report_tree, "indented call tree with total and self shares (--min)"},
    {"flamegraph", ".html", report_flamegraph, "interactive flame graph, one self-contained HTML file"},
    {"speedscope", ".speedscope.json", report_speedscope, "speedscope's format, one time-ordered profile per (event, thread)"},
    {"pprof", ".pb.gz", report_pprof, "gzipped pprof protobuf (go tool pprof, Pyroscope), every event's sample types"},
    {"chrome", ".trace.json", report_chrome, "Chrome trace events for Perfetto and chrome://tracing"},
    /* tables of recorded events */
    {"gc", ".gc.txt", report_gc, "every collection (-e gc): pauses, generations, heap sizes"},
    {"exceptions", NULL, report_exceptions, "exceptions by type, throw site and catch site (-e exceptions)"},
    {"locks", NULL, report_locks, "contended lock waits by stack and owner (-e lock)"},
    {"jit", NULL, report_jit, "compilations, tiers, R2R code and loads (-e jit)"},
    {"threads", NULL, report_threads, "threads: lifetimes, names, CPU time, events"},
    {"calls", ".calls", report_calls, "per method: calls, inclusive, self, mean and max time (record --trace)"},
    {"async", NULL, report_async, "pending async operations, who awaits whom (corscope async -p, record --async=snapshots)"},
};

/* The formats that hold every event of the recording (the flame graph's
 * event selector, pprof's sample types, speedscope's profiles); the others
 * draw one. */
static int report_holds_every_event(const struct report_format *fmt)
{
    return fmt->write == report_flamegraph || fmt->write == report_pprof ||
           fmt->write == report_speedscope;
}

int report_is_table(const struct report_format *fmt)
{
    static const report_writer tables[] = {report_gc, report_exceptions, report_locks,
                                           report_jit, report_threads, report_async};
    for (size_t i = 0; i < sizeof tables / sizeof tables[0]; i++)
        if (fmt->write == tables[i])
            return 1;
    return 0;
}

const struct report_format *report_formats(size_t *count)
{
    *count = sizeof formats / sizeof formats[0];
    return formats;
}

const struct report_format *report_find(const char *name)
{
    for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++)
        if (strcmp(formats[i].name, name) == 0)
            return &formats[i];
    return NULL;
}

const struct report_format *report_for_path(const char *path)
{
    /* the longest extension that fits: x.gc.txt is gc, not top */
    size_t n = strlen(path), best_len = 0;
    const struct report_format *best = NULL;
    for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++) {
        const char *ext = formats[i].extension;
        size_t e = ext ? strlen(ext) : 0;
        if (e && n > e && e > best_len && strcmp(path + n - e, ext) == 0) {
            best = &formats[i];
            best_len = e;
        }
    }
    return best;
}

static const char report_options_usage[] =
    "  -o, --output FILE     write there instead of standard output\n"
    "      --event NAME      which event to report when the recording has several\n"
    "      --thread T        only threads whose name contains T, or whose tid is T\n"
    "      --pid PID         of several recordings, only the one of process PID\n"
    "      --from DURATION   only samples this long after the start (e.g. 2s)\n"
    "      --to DURATION     only samples before this time\n"
    "      --include REGEX   only stacks with a frame matching REGEX (POSIX ERE)\n"
    "      --exclude REGEX   drop stacks with a frame matching REGEX\n"
    "      --reverse         stacks leaf first: who calls the hot methods\n"
    "      --threads         start every stack with its thread's name\n"
    "      --native MODE     folded (default): runs of native frames without a symbol\n"
    "                        as one frame per library (libcoreclr.so), the host's\n"
    "                        start-up as [start], a thread's as [thread]; raw: every\n"
    "                        frame as recorded (libcoreclr.so!+0x4b025e)\n"
    "      --limit N         top and the tables: rows to show (default 50, 0 for all)\n"
    "      --min PERCENT     tree: leave out nodes under this share (default 0.5%)\n"
    "      --diff BASE       flamegraph: colour by the change from recording BASE\n"
    "      --at DURATION     live: the heap as of this time (default: the end)\n"
    "      --sort COLUMN     calls: sort by calls, inclusive, self (default), mean or max\n"
    "      --paths           calls: the call paths with their calls and times, not the\n"
    "                        methods\n"
    "      --weight W        collapsed, flamegraph: weigh stacks by the event's value\n"
    "                        (time, bytes) or by its count (calls, objects, samples)\n"
    "  -h, --help\n";

/* The usage text: the formats come from the table above. */
static void print_usage(FILE *out)
{
    fputs("usage: corscope report [options] RECORDING...\n"
          "       corscope report -f flamegraph --diff BASE.corscope NEW.corscope\n"
          "\n"
          "Several recordings (the processes of one `record`: app.corscope,\n"
          "app-4321.corscope ...) are reported together, each process a root frame.\n"
          "\n"
          "  -f, --format FORMAT   one of the formats below (default top), or picked by -o's\n"
          "                        extension\n",
          out);
    for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++)
        fprintf(out, "        %-11s %-17s %s\n", formats[i].name,
                formats[i].extension ? formats[i].extension : "", formats[i].description);
    fputs(report_options_usage, out);
}



enum {
    OPT_EVENT = 256,
    OPT_THREAD,
    OPT_FROM,
    OPT_TO,
    OPT_INCLUDE,
    OPT_EXCLUDE,
    OPT_REVERSE,
    OPT_NATIVE,
    OPT_THREADS,
    OPT_LIMIT,
    OPT_MIN,
    OPT_DIFF,
    OPT_PID,
    OPT_AT,
    OPT_SORT,
    OPT_PATHS,
    OPT_WEIGHT,
};

static int compile_regex(regex_t *re, const char *pattern, const char *option)
{
    int rc = regcomp(re, pattern, REG_EXTENDED | REG_NOSUB);
    if (rc != 0) {
        char msg[128];
        regerror(rc, re, msg, sizeof msg);
        cli_usage_error("report", "%s '%s': %s", option, pattern, msg);
        return -1;
    }
    return 0;
}

/* The report into f, which is closed; 0, or -1 after saying why. */
static int write_and_close(const struct report_format *fmt, const struct profile *p,
                           const struct report_options *o, FILE *f, const char *output)
{
    int rc = fmt->write(p, o, f);
    int write_errno = ferror(f) ? errno : 0;
    if (fclose(f) != 0 && !write_errno)
        write_errno = errno ? errno : EIO;
    if (rc == 0 && write_errno) {
        cli_error("cannot write %s: %s", output, strerror(write_errno));
        rc = -1;
    }
    return rc;
}

static int write_report(const struct report_format *fmt, const struct profile *p,
                        const struct report_options *o, const char *output)
{
    /* past RLIMIT_FSIZE a write must fail with EFBIG and be reported, not
     * kill us with SIGXFSZ */
    signal(SIGXFSZ, SIG_IGN);
    if (!output) {
        int rc = fmt->write(p, o, stdout);
        if (fflush(stdout) != 0 || ferror(stdout)) {
            cli_error("cannot write the report to standard output: %s", strerror(errno));
            return EXIT_WORK_FAILED;
        }
        return rc < 0 ? EXIT_WORK_FAILED : 0;
    }
    /* an output that is not a file (a FIFO, /dev/null, a terminal): written
     * in place -- a file renamed over it would replace it (as root,
     * `-o /dev/null` made /dev/null a regular file for every program after) */
    struct stat st;
    if (stat(output, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
        FILE *f = fopen(output, "w");
        if (!f) {
            cli_error("cannot write %s: %s", output, strerror(errno));
            return EXIT_WORK_FAILED;
        }
        return write_and_close(fmt, p, o, f, output) == 0 ? 0 : EXIT_WORK_FAILED;
    }
    /* a temporary file beside the output, with a name nobody can predict
     * (mkstemp: O_EXCL, random suffix, mode 0600), renamed into place */
    size_t n = strlen(output);
    char *tmp = mem_alloc(n + 32);
    if (!tmp) {
        cli_error("out of memory");
        return EXIT_WORK_FAILED;
    }
    snprintf(tmp, n + 32, "%s.tmp-XXXXXX", output);
    int fd = mkstemp(tmp);
    if (fd >= 0) {
        mode_t mask = umask(0);
        umask(mask);
        fchmod(fd, 0666 & ~mask); /* an ordinary file, as fopen would make */
    }
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f) {
        cli_error("cannot write %s: %s", output, strerror(errno));
        if (fd >= 0) {
            close(fd);
            unlink(tmp);
        }
        mem_free(tmp);
        return EXIT_WORK_FAILED;
    }
    int rc = write_and_close(fmt, p, o, f, output);
    if (rc == 0 && rename(tmp, output) != 0) {
        cli_error("cannot write %s: %s", output, strerror(errno));
        rc = -1;
    }
    if (rc != 0)
        unlink(tmp);
    mem_free(tmp);
    return rc == 0 ? 0 : EXIT_WORK_FAILED;
}

int report_render(const char *const *recordings, size_t count, const struct report_format *fmt,
                  const char *output)
{
    return report_render_limit(recordings, count, fmt, output, 50);
}

int report_render_limit(const char *const *recordings, size_t count,
                        const struct report_format *fmt, const char *output, long limit)
{
    struct prof_filter filter;
    memset(&filter, 0, sizeof filter);
    struct report_options ro = {.min_percent = 0.5, .limit = limit, .filter = &filter};
    struct profiles ps;
    char err[512];
    if (prof_load_many(&ps, recordings, count, 0, &filter, err, sizeof err) < 0) {
        cli_error("%s", err);
        return EXIT_WORK_FAILED;
    }
    int status = write_report(fmt, prof_current(&ps), &ro, output);
    prof_free(&ps);
    return status;
}

/* A report of one event from a recording of several says which it drew
 * and how to get the others, in one line (not an error: the same
 * `corscope:` line as one). */
static void say_other_events(const char *path, const struct report_format *fmt,
                             const struct profiles *ps)
{
    char others[256] = "", example[64] = "";
    for (size_t i = 0; i < ps->count; i++) {
        if (i == ps->current)
            continue;
        size_t used = strlen(others);
        if (!example[0]) /* prof_event_name's buffer is the next call's too: copied */
            snprintf(example, sizeof example, "%s", prof_event_name(&ps->views[i]));
        snprintf(others + used, sizeof others - used, "%s%s", used ? ", " : "",
                 prof_event_name(&ps->views[i]));
    }
    cli_error("%s: %s drew the %s event; the recording also has %s (--event %s)", path,
              fmt->name, prof_event_name(prof_current(ps)), others, example);
}

int cmd_report(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"format", required_argument, NULL, 'f'},   {"output", required_argument, NULL, 'o'},
        {"event", required_argument, NULL, OPT_EVENT}, {"thread", required_argument, NULL, OPT_THREAD},
        {"from", required_argument, NULL, OPT_FROM}, {"to", required_argument, NULL, OPT_TO},
        {"include", required_argument, NULL, OPT_INCLUDE},
        {"exclude", required_argument, NULL, OPT_EXCLUDE},
        {"reverse", no_argument, NULL, OPT_REVERSE}, {"threads", no_argument, NULL, OPT_THREADS},
        {"limit", required_argument, NULL, OPT_LIMIT}, {"help", no_argument, NULL, 'h'},
        {"min", required_argument, NULL, OPT_MIN},  {"diff", required_argument, NULL, OPT_DIFF},
        {"pid", required_argument, NULL, OPT_PID},
        {"at", required_argument, NULL, OPT_AT},
        {"sort", required_argument, NULL, OPT_SORT},
        {"paths", no_argument, NULL, OPT_PATHS},
        {"weight", required_argument, NULL, OPT_WEIGHT},
        {"native", required_argument, NULL, OPT_NATIVE},
        {NULL, 0, NULL, 0},
    };
    struct prof_filter filter;
    memset(&filter, 0, sizeof filter);
    struct report_options ro = {.min_percent = 0.5, .limit = 50, .filter = &filter};
    const char *diff_base = NULL, *sort = NULL, *weight = NULL;
    long pid = 0;
    struct profiles base;
    int have_base = 0;
    const char *format = NULL, *output = NULL;
    int status = EXIT_USAGE;
    const char *why;
    uint64_t v;

    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, "+:f:o:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'f': format = optarg; break;
        case 'o': output = optarg; break;
        case OPT_EVENT: filter.event = optarg; break;
        case OPT_THREAD: filter.thread = optarg; break;
        case OPT_FROM:
            if (units_parse_duration(optarg, 0, &filter.from_ns, &why) < 0) {
                cli_usage_error("report", "--from %s: %s", optarg, why);
                goto out;
            }
            break;
        case OPT_TO:
            if (units_parse_duration(optarg, 0, &filter.to_ns, &why) < 0 || filter.to_ns == 0) {
                cli_usage_error("report", "--to %s: %s", optarg,
                                filter.to_ns == 0 ? "must be after the start" : why);
                goto out;
            }
            break;
        case OPT_INCLUDE:
            if (filter.has_include)
                regfree(&filter.include);
            filter.has_include = 0;
            if (compile_regex(&filter.include, optarg, "--include") < 0)
                goto out;
            filter.has_include = 1;
            break;
        case OPT_EXCLUDE:
            if (filter.has_exclude)
                regfree(&filter.exclude);
            filter.has_exclude = 0;
            if (compile_regex(&filter.exclude, optarg, "--exclude") < 0)
                goto out;
            filter.has_exclude = 1;
            break;
        case OPT_REVERSE: filter.reverse = 1; break;
        case OPT_THREADS: filter.thread_roots = 1; break;
        case OPT_NATIVE:
            if (strcmp(optarg, "raw") == 0 || strcmp(optarg, "folded") == 0) {
                filter.native_raw = strcmp(optarg, "raw") == 0;
                break;
            }
            cli_usage_error("report", "--native %s: expected folded or raw", optarg);
            goto out;
        case OPT_LIMIT:
            if (units_parse_count(optarg, 1000000000, &v, &why) < 0) {
                cli_usage_error("report", "--limit %s: %s", optarg, why);
                goto out;
            }
            ro.limit = (long)v;
            break;
        case OPT_MIN: {
            char *end;
            double m = strtod(optarg, &end);
            if (end == optarg || (*end && strcmp(end, "%") != 0) || !(m >= 0 && m <= 100)) {
                cli_usage_error("report", "--min %s: not a percentage from 0 to 100", optarg);
                goto out;
            }
            ro.min_percent = m;
            break;
        }
        case OPT_DIFF: diff_base = optarg; break;
        case OPT_PID:
            if (units_parse_count(optarg, 1u << 30, &v, &why) < 0 || v == 0) {
                cli_usage_error("report", "--pid %s: not a process id", optarg);
                goto out;
            }
            pid = (long)v;
            break;
        case OPT_AT:
            if (units_parse_duration(optarg, 0, &filter.at_ns, &why) < 0) {
                cli_usage_error("report", "--at %s: %s", optarg, why);
                goto out;
            }
            filter.has_at = 1;
            break;
        case OPT_SORT:
            if (report_calls_sort(optarg) < 0) {
                cli_usage_error("report", "--sort %s: not a column (calls, inclusive, self, mean, "
                                "max)", optarg);
                goto out;
            }
            sort = optarg;
            break;
        case OPT_PATHS: ro.paths = 1; break;
        case OPT_WEIGHT: weight = optarg; break;
        case 'h':
            print_usage(stdout);
            status = 0;
            goto out;
        case ':':
            cli_usage_error("report", "option %s needs a value", argv[optind - 1]);
            goto out;
        default:
            cli_usage_error("report", "unknown option '%s'", argv[optind - 1]);
            goto out;
        }
    }
    if (optind >= argc) {
        cli_usage_error("report", "no recording given");
        goto out;
    }
    ro.from_ns = filter.from_ns;
    ro.to_ns = filter.to_ns;
    if (filter.to_ns && filter.to_ns <= filter.from_ns) {
        cli_usage_error("report", "--to must be later than --from");
        goto out;
    }
    const struct report_format *fmt = NULL;
    if (format) {
        fmt = report_find(format);
        if (!fmt) {
            size_t n;
            const struct report_format *all = report_formats(&n);
            char names[256] = "";
            for (size_t i = 0; i < n; i++) {
                size_t used = strlen(names);
                snprintf(names + used, sizeof names - used, "%s%s", i ? ", " : "", all[i].name);
            }
            cli_usage_error("report", "unknown format '%s' (formats: %s)", format, names);
            goto out;
        }
    } else {
        fmt = output ? report_for_path(output) : NULL;
        if (!fmt)
            fmt = report_find("top");
    }

    if (sort && strcmp(fmt->name, "calls") != 0) {
        cli_usage_error("report", "--sort goes with -f calls");
        goto out;
    }
    if (ro.paths && strcmp(fmt->name, "calls") != 0) {
        cli_usage_error("report", "--paths goes with -f calls");
        goto out;
    }
    if (weight && strcmp(fmt->name, "collapsed") != 0 && strcmp(fmt->name, "flamegraph") != 0) {
        cli_usage_error("report", "--weight goes with -f collapsed or -f flamegraph");
        goto out;
    }
    if (diff_base && strcmp(fmt->name, "flamegraph") != 0) {
        cli_usage_error("report", "--diff goes with -f flamegraph");
        goto out;
    }
    /* the calls table is the calls event's, whatever the default view */
    if (!strcmp(fmt->name, "calls") && !filter.event)
        filter.event = schema_event_name(FMT_EV_CALLS);
    const char *path = argv[optind];
    const char *const *paths = (const char *const *)argv + optind;
    size_t path_count = (size_t)(argc - optind);
    struct profiles ps;
    char err[512];
    if (diff_base) {
        if (prof_load(&base, diff_base, &filter, err, sizeof err) < 0) {
            cli_error("%s: %s", diff_base, err);
            status = EXIT_WORK_FAILED;
            goto out;
        }
        have_base = 1;
        ro.base = prof_current(&base);
    }
    if (prof_load_many(&ps, paths, path_count, pid, &filter, err, sizeof err) < 0) {
        if (!strcmp(fmt->name, "calls") && strstr(err, "no 'calls' event"))
            snprintf(err, sizeof err, "no calls were traced (record with --trace)");
        if (path_count == 1)
            cli_error("%s: %s", path, err);
        else
            cli_error("%s", err);
        status = EXIT_WORK_FAILED;
        goto out;
    }
    const struct profile *p = prof_current(&ps);
    if (filter.has_at && rec_event_of(p->rec, FMT_EV_LIVE) < 0) {
        cli_usage_error("report", "--at goes with a recording of -e live");
        prof_free(&ps);
        goto out;
    }
    char weight_why[256];
    if (weight && report_weight(p, weight, &ro.by_count, weight_why, sizeof weight_why) < 0) {
        cli_usage_error("report", "--weight %s: %s", weight, weight_why);
        prof_free(&ps);
        goto out;
    }
    char several[64];
    if (path_count > 1) {
        snprintf(several, sizeof several, "%zu recordings", path_count);
        path = several;
    }
    status = write_report(fmt, p, &ro, output);
    /* what the report could not show, once it exists (a report that could
     * not be written gets its one error line, nothing more) */
    if (status == 0) {
        if (p->rec->status != REC_COMPLETE)
            cli_warn("%s is %s (%s); the report covers what was recorded before that", path,
                     rec_status_name(p->rec->status), p->rec->problem);
        const struct rec_str *ended = rec_info(p->rec, FMT_INFO_ENDED_BY);
        if (ended && ended->len)
            cli_warn("%s: the program was ended by %.*s", path, (int)ended->len, ended->p);
        char losses[512];
        report_losses(p, losses, sizeof losses);
        if (losses[0])
            cli_warn("%s: %s", path, losses);
        if (report_biased(p))
            cli_warn("%s: %s", path, report_biased(p));
        if (report_runtime_change(p->rec))
            cli_warn("%s: %s", path, report_runtime_change(p->rec));
        if (p->selected_samples == 0 && !report_is_table(fmt))
            cli_warn("%s: no samples%s", path,
                     p->rec->sample_count ? " pass the filters" : " were recorded");
        if (!filter.event && ps.count > 1 && !report_is_table(fmt) &&
            !report_holds_every_event(fmt))
            say_other_events(path, fmt, &ps);
    }
    prof_free(&ps);
out:
    if (have_base)
        prof_free(&base);
    prof_filter_free(&filter);
    return status;
}
