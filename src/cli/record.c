/*
 * record: `corscope record [options] -- COMMAND [ARGS...]`: runs a program
 * with the profiler loaded and waits for it (launch.h); `corscope record
 * -p PID` attaches to one that is running (attach.h) and leaves it running.
 * While it records, a status line shows on a terminal, and -d ends the
 * recording on time (session.h).  corscope exits with the program's
 * status, or 128+signal when it was killed, and prints one summary line on
 * stderr per recording (summary.h): one per process of the tree it started
 * (process_tree.h).  With -o app.html (any report's extension) the
 * recording goes to app.corscope and that report is written from it.
 *
 * The recording file is created here first, exclusively, without following
 * symlinks, mode 0600 (--force replaces an existing regular file): so a bad
 * path is reported before the program starts, and the agent only ever
 * opens a file that corscope made.  With --push the agent writes into a
 * FIFO instead, which record reads and copies to that file (record_push.h);
 * without -o, --push keeps no recording.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli/agent_probe.h"
#include "cli/attach.h"
#include "cli/cli.h"
#include "cli/launch.h"
#include "cli/process_tree.h"
#include "cli/push.h"
#include "cli/record_push.h"
#include "cli/report.h"
#include "cli/session.h"
#include "cli/summary.h"
#include "common/clock.h"
#include "common/config.h"
#include "common/product.h"
#include "common/pushcfg.h"
#include "common/units.h"
#include "format/recording.h"


static const char record_usage[] =
    "usage: corscope record [options] [--] COMMAND [ARGS...]\n"
    "       corscope record [options] -p PID\n"
    "\n"
    "Runs COMMAND (a .NET program: `dotnet App.dll`, or an app host) with the\n"
    "profiler loaded and writes a recording; or attaches to the running .NET\n"
    "process PID (see `corscope ps`), records, and detaches, leaving it running.\n"
    "\n"
    "  -p, --pid PID           attach to a running process (.NET Core 3.1 on) until\n"
    "                          -d or Ctrl-C\n"
    "  -d, --duration TIME     end the recording after TIME (30s, 5m); a program\n"
    "                          corscope started then gets SIGTERM\n"
    "  -o, --output FILE       recording to write (default NAME-DATE-TIME.corscope);\n"
    "                          with a report's extension (app.html, app.pb.gz ...)\n"
    "                          the recording goes to app.corscope and that report\n"
    "                          is written from it when the program ends\n"
    "  -e, --event EVENT,...   cpu (default): where CPU time goes, per thread CPU clock\n"
    "                          wall: where every thread is, running or waiting\n"
    "                          alloc: allocations by stack and type (bytes, objects)\n"
    "                          live: which sampled allocations stay alive (with alloc)\n"
    "                          gc: every collection, its pauses and heap sizes\n"
    "                          exceptions: every throw, its stack, type and catch site\n"
    "                          lock: contended lock waits, their stacks and times\n"
    "                          jit: compilations (time, tier), R2R code used, loads\n"
    "                          several with commas: -e cpu,alloc,gc,exceptions\n"
    "  -i, --interval TIME     sampling interval, 1ms to 1s (default 10ms)\n"
    "      --sampler S         how stacks are taken: signal (default) interrupts each\n"
    "                          thread where it runs and walks managed and native\n"
    "                          frames; suspend stops the runtime and asks it for the\n"
    "                          managed stacks (safepoint-biased, for comparison)\n"
    "      --signal SIG        the signal sampler's signal (default SIGPROF; also\n"
    "                          SIGVTALRM, SIGALRM, SIGUSR1, SIGUSR2, SIGRTMIN+3..)\n"
    "      --cpu-clock C       the signal sampler's clock in cpu mode: perf signals\n"
    "                          after each interval of a thread's CPU time, to the\n"
    "                          nanosecond; posix is checked at the kernel's tick\n"
    "                          (coarser), and cheaper on virtual machines that make\n"
    "                          timer interrupts dear; auto (default): perf, unless\n"
    "                          under 10ms an interrupt measured at start costs over\n"
    "                          1% of a core (check says which; docs/performance.md)\n"
    "      --cpu-period P      random (default): each period of the CPU clock drawn\n"
    "                          anew between half and one and a half intervals, each\n"
    "                          sample weighted by the CPU time it stands for, so\n"
    "                          work that repeats with the interval is not aliased;\n"
    "                          fixed: exactly one interval each\n"
    "      --max-depth N       deepest stack kept, 8 to 65536 (default 4096)\n"
    "      --no-children       record the first .NET process only, not the processes\n"
    "                          it starts (by default each process of the tree gets a\n"
    "                          recording: FILE for the first, FILE-PID beside it for\n"
    "                          the others)\n"
    "      --all-processes     dotnet run, dotnet test: record the .NET SDK's own\n"
    "                          processes too (by default only the application's)\n"
    "      --lock-min TIME     -e lock: shorter waits are counted, not recorded one by\n"
    "                          one (default 10us; 0 records every wait)\n"
    "      --alloc MODE        sampled (default): the runtime's randomized sampling\n"
    "                          (.NET 10; AllocationTick, biased, before); exact: every\n"
    "                          allocation, slow (turns off the fast allocators), for\n"
    "                          checking the sampler on small programs\n"
    "      --alloc-interval SIZE  mean bytes between recorded samples, from 100KiB\n"
    "                          (the runtime's own, the default) up: keeps a random\n"
    "                          share of the runtime's samples, weighing each more\n"
    "      --live-max N        most objects -e live follows at once (default 100000)\n"
    "      --trace[=counts]    also count every call, with its times (=counts: none),\n"
    "                          per call path: the calls event, report -f calls\n"
    "      --trace=flat        calls per method only, counted in the methods' own\n"
    "                          code: no paths or times, inlining kept, cheapest\n"
    "      --include RE        trace only methods matching RE (Namespace.Type.Method)\n"
    "      --exclude RE        do not trace methods matching RE\n"
    "      --async[=off]       logical async stacks (the default, but with -p): a\n"
    "                          sample or event in an async method shows the methods\n"
    "                          awaiting it ([async] A, [async] B) instead of the\n"
    "                          thread pool's frames, and async methods are named\n"
    "                          as written (docs/async.md); with -p the agent then\n"
    "                          cannot detach (it stays, idle)\n"
    "      --async=snapshots   no samples: the pending async operations, who awaits\n"
    "                          whom, every 500 ms (.NET 9+; report -f async; what\n"
    "                          `corscope async -p PID` does)\n"
    "      --force             overwrite FILE if it exists\n"
    "  -q, --quiet             no summary line, no status line\n"
    "  -h, --help\n"
    "\n"
    "Exit status: the program's, or 128+N when signal N ended it (0 when -d\n"
    "ended it); 2 for a bad command line; 127/126 when COMMAND cannot be run.\n"
    "Attached: 0 when the recording was made, 1 when not.\n";

/* NAME-YYYYmmdd-HHMMSS.corscope, NAME from the program (App for
 * `dotnet App.dll`). */
static void default_output(char **cmd, char *out, size_t size)
{
    const char *name = cmd[0];
    const char *base = strrchr(name, '/') ? strrchr(name, '/') + 1 : name;
    char stem[64];
    if (!strcmp(base, "dotnet") && cmd[1]) {
        const char *dll = strrchr(cmd[1], '/') ? strrchr(cmd[1], '/') + 1 : cmd[1];
        snprintf(stem, sizeof stem, "%s", dll);
        char *dot = strrchr(stem, '.');
        if (dot && (!strcmp(dot, ".dll") || !strcmp(dot, ".exe")))
            *dot = '\0';
    } else {
        snprintf(stem, sizeof stem, "%s", base);
    }
    time_t now = time(NULL);
    struct tm tm;
    localtime_r(&now, &tm);
    char stamp[32];
    strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
    snprintf(out, size, "%s-%s.corscope", stem[0] ? stem : "corscope", stamp);
}

/* Creates the recording file (see the top of this file).  Returns its
 * descriptor, or -1 after printing the reason. */
static int create_output(const char *path, int force)
{
    int flags = O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC | (force ? O_TRUNC : O_EXCL);
    int fd = open(path, flags, 0600);
    if (fd < 0) {
        int e = errno;
        struct stat st;
        if (e == EEXIST)
            cli_error("%s exists (use --force to overwrite it)", path);
        else if (e == ELOOP || (lstat(path, &st) == 0 && S_ISLNK(st.st_mode)))
            cli_error("%s is a symbolic link; refusing to write through it", path);
        else
            cli_error("cannot create %s: %s", path, strerror(e));
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) == 0 && !S_ISREG(st.st_mode)) {
        cli_error("%s is not a regular file", path);
        close(fd);
        return -1;
    }
    return fd;
}

/* Writes the report asked for with -o app.html; returns code, or the
 * report's failure when code is 0. */
static int render_report(const char *const *paths, size_t count,
                         const struct report_format *render, const char *report_path, int quiet,
                         int code)
{
    int rc = report_render(paths, count, render, report_path);
    if (rc != 0)
        return code ? code : rc;
    if (!quiet)
        fprintf(stderr, "corscope: %s report -> %s\n", render->name, report_path);
    return code;
}

enum {
    OPT_SAMPLER = 256,
    OPT_SIGNAL,
    OPT_CPU_CLOCK,
    OPT_CPU_PERIOD,
    OPT_MAX_DEPTH,
    OPT_FORCE,
    OPT_LOCK_MIN,
    OPT_ALLOC,
    OPT_ALLOC_INTERVAL,
    OPT_LIVE_MAX,
    OPT_TRACE,
    OPT_INCLUDE,
    OPT_EXCLUDE,
    OPT_ASYNC,
    OPT_NO_CHILDREN,
    OPT_ALL_PROCESSES,
};

/* -d's value: a duration (30s, 5m, 1h; plain seconds). */
static int parse_duration(const char *text, uint64_t *ns, char *err, size_t err_size)
{
    const char *why = NULL;
    if (units_parse_duration(text, 1000000000ull, ns, &why) < 0 || !*ns) {
        snprintf(err, err_size, "%s", why ? why : "must be more than 0");
        return -1;
    }
    return 0;
}

/* What one `corscope record` works with. */
struct record_run {
    struct config cfg;
    const char *output; /* -o as given, or NULL */
    int force, quiet;
    pid_t attach_pid;   /* -p, or 0 */
    uint64_t duration_ns;
    char **cmd;         /* the command to run (not with -p) */
    char name[PATH_MAX], recording_name[PATH_MAX]; /* the output's names made here */
    struct push_config push; /* --push: */
    int pushing, keep;       /* ... and a recording kept (not --push without -o) */
    struct record_push rp;
    const char *agent_output; /* where the agent writes: the recording, or rp's FIFO */
};

#define GO_ON (-1)

/* Reads the command line into *rr.  Returns GO_ON, or the exit status
 * when there is nothing to record (--help, a bad command line). */
static int parse_args(int argc, char **argv, struct record_run *rr)
{
    static const struct option longopts[] = {
        {"output", required_argument, NULL, 'o'},   {"event", required_argument, NULL, 'e'},
        {"interval", required_argument, NULL, 'i'}, {"sampler", required_argument, NULL, OPT_SAMPLER},
        {"signal", required_argument, NULL, OPT_SIGNAL},
        {"cpu-clock", required_argument, NULL, OPT_CPU_CLOCK},
        {"cpu-period", required_argument, NULL, OPT_CPU_PERIOD},
        {"max-depth", required_argument, NULL, OPT_MAX_DEPTH},
        {"lock-min", required_argument, NULL, OPT_LOCK_MIN},
        {"force", no_argument, NULL, OPT_FORCE},    {"quiet", no_argument, NULL, 'q'},
        {"no-children", no_argument, NULL, OPT_NO_CHILDREN},
        {"all-processes", no_argument, NULL, OPT_ALL_PROCESSES},
        {"pid", required_argument, NULL, 'p'},      {"duration", required_argument, NULL, 'd'},
        {"alloc", required_argument, NULL, OPT_ALLOC},
        {"alloc-interval", required_argument, NULL, OPT_ALLOC_INTERVAL},
        {"live-max", required_argument, NULL, OPT_LIVE_MAX},
        {"trace", optional_argument, NULL, OPT_TRACE},
        {"include", required_argument, NULL, OPT_INCLUDE},
        {"exclude", required_argument, NULL, OPT_EXCLUDE},
        {"async", optional_argument, NULL, OPT_ASYNC},
        {"help", no_argument, NULL, 'h'},           PUSH_LONGOPTS,
        {NULL, 0, NULL, 0},
    };
    char err[256];
    struct config *cfg = &rr->cfg;
    /* --push's options, checked as they come and applied after the
     * CORSCOPE_PUSH* variables (read only when there is one) */
    push_config_defaults(&rr->push);
    int push_opts[64];
    const char *push_args[64];
    size_t push_count = 0;
    config_defaults(cfg);
    /* the agent's log level is the one setting taken from our environment */
    const char *level = getenv("CORSCOPE_LOG");
    if (level && config_set(cfg, "log", level, err, sizeof err) < 0)
        return cli_usage_error("record", "CORSCOPE_LOG=%s: %s", level, err);
    int no_children = 0, all_processes = 0;
    /* options that only some settings use, for the conflict checks */
    const char *signal_opt = NULL, *clock_opt = NULL, *lock_min_opt = NULL, *alloc_opt = NULL,
               *live_opt = NULL, *filter_opt = NULL;
    int event_opt = 0, async_opt = 0;

    optind = 1;
    opterr = 0;
    int c, longindex = -1;
    while ((c = getopt_long(argc, argv, "+:o:e:i:p:d:qh", longopts, &longindex)) != -1) {
        /* the option as the user spelled it, for messages */
        char opt[64];
        cli_spelled_option(opt, sizeof opt, longopts, &longindex, c, argv);
        const char *key = NULL;
        switch (c) {
        case 'o': rr->output = optarg; break;
        case 'e': key = "event"; event_opt = 1; break;
        case 'i': key = "interval"; break;
        case OPT_SAMPLER: key = "sampler"; break;
        case OPT_SIGNAL: key = "signal"; signal_opt = "--signal"; break;
        case OPT_CPU_CLOCK: key = "cpu_clock"; clock_opt = "--cpu-clock"; break;
        case OPT_CPU_PERIOD: key = "cpu_period"; clock_opt = "--cpu-period"; break;
        case OPT_MAX_DEPTH: key = "max_depth"; break;
        case OPT_LOCK_MIN: key = "lock_min"; lock_min_opt = "--lock-min"; break;
        case OPT_FORCE: rr->force = 1; break;
        case OPT_NO_CHILDREN: no_children = 1; break;
        case OPT_ALL_PROCESSES: all_processes = 1; break;
        case OPT_ALLOC: key = "alloc"; alloc_opt = "--alloc"; break;
        case OPT_ALLOC_INTERVAL: key = "alloc_interval"; alloc_opt = "--alloc-interval"; break;
        case OPT_LIVE_MAX: key = "live_max"; live_opt = "--live-max"; break;
        case OPT_TRACE: key = "trace"; optarg = optarg ? optarg : "times"; break;
        case OPT_INCLUDE: key = "trace_include"; filter_opt = "--include"; break;
        case OPT_EXCLUDE: key = "trace_exclude"; filter_opt = "--exclude"; break;
        case OPT_ASYNC: key = "async"; optarg = optarg ? optarg : "on"; async_opt = 1; break;
        case 'q': rr->quiet = 1; break;
        case 'p':
            if (attach_parse_pid(optarg, &rr->attach_pid, err, sizeof err) < 0)
                return cli_usage_error("record", "%s %s: %s", opt, optarg, err);
            break;
        case 'd':
            if (parse_duration(optarg, &rr->duration_ns, err, sizeof err) < 0)
                return cli_usage_error("record", "%s %s: %s", opt, optarg, err);
            break;
        case 'h':
            fputs(record_usage, stdout);
            printf("\nContinuous profiling to Grafana Pyroscope (docs/push.md):\n%s",
                   push_usage_options);
            return 0;
        case ':': return cli_usage_error("record", "option %s needs a value", opt);
        default:
            if (c >= PUSH_OPT_URL && c < PUSH_OPT_END) {
                if (push_option(&rr->push, c, optarg, err, sizeof err) < 0)
                    return cli_usage_error("record", "%s: %s", opt, err);
                if (push_count == sizeof push_opts / sizeof push_opts[0])
                    return cli_usage_error("record", "too many push options");
                push_opts[push_count] = c;
                push_args[push_count++] = optarg;
                break;
            }
            return cli_usage_error("record", "unknown option '%s'", opt);
        }
        if (key && config_set(cfg, key, optarg, err, sizeof err) < 0)
            return cli_usage_error("record", "%s %s: %s", opt, optarg, err);
    }
    /* logical async stacks unless asked not to, for a program record starts
     * (docs/async.md: about 16 ns per resumption); not by default
     * for an attach: the runtime does not let an agent that rewrote code
     * detach */
    if (!async_opt && !rr->attach_pid)
        cfg->async = CONFIG_ASYNC_ON;
    /* snapshots of pending async operations: nothing sampled unless asked */
    if (cfg->async == CONFIG_ASYNC_SNAPSHOTS && !event_opt)
        cfg->events = 0;
    if (!cfg->events && cfg->async != CONFIG_ASYNC_SNAPSHOTS)
        return cli_usage_error("record", "-e none records nothing (it goes with --async=snapshots)");
    if (cfg->sampler == CONFIG_SAMPLER_SUSPEND && (signal_opt || clock_opt))
        return cli_usage_error("record", "%s goes with the signal sampler, not --sampler suspend",
                               signal_opt ? signal_opt : clock_opt);
    if (clock_opt && config_sampled(cfg) != CONFIG_EVENT_CPU)
        return cli_usage_error("record", "%s goes with -e cpu (wall mode signals every thread "
                               "at each tick of the wall clock)", clock_opt);
    if (lock_min_opt && !(cfg->events & CONFIG_EVENT_LOCK))
        return cli_usage_error("record", "--lock-min goes with -e lock");
    if (alloc_opt && !(cfg->events & CONFIG_EVENT_ALLOC))
        return cli_usage_error("record", "%s goes with -e alloc (or live)", alloc_opt);
    if (live_opt && !(cfg->events & CONFIG_EVENT_LIVE))
        return cli_usage_error("record", "%s goes with -e live", live_opt);
    if (cfg->alloc == CONFIG_ALLOC_EXACT && cfg->alloc_interval != CONFIG_ALLOC_INTERVAL_MIN)
        return cli_usage_error("record", "--alloc-interval goes with sampled allocations, not "
                               "--alloc exact (which records every one)");
    if (filter_opt && !cfg->trace)
        return cli_usage_error("record", "%s chooses the methods --trace traces; add --trace",
                               filter_opt);
    if (rr->attach_pid && config_attach_refusal(cfg))
        return cli_usage_error("record", "-p: %s", config_attach_refusal(cfg));
    if (rr->attach_pid && optind < argc)
        return cli_usage_error("record", "-p attaches to a running process: no command goes with it");
    if (!rr->attach_pid && optind >= argc)
        return cli_usage_error("record", "no command to run (usage: corscope record -- dotnet App.dll)");
    rr->cmd = argv + optind;
    if (push_count) {
        if (push_config_settings_from_env(&rr->push, err, sizeof err) < 0)
            return cli_usage_error("record", "%s", err);
        for (size_t i = 0; i < push_count; i++)
            push_option(&rr->push, push_opts[i], push_args[i], err, sizeof err);
    }
    rr->pushing = rr->push.url_text[0] != '\0';
    rr->keep = !rr->pushing || rr->output;
    if (!rr->pushing && (rr->push.service[0] || rr->push.label_count))
        return cli_usage_error("record", "--service and --label name what --push sends; add --push URL");
    if (rr->pushing && push_config_check(&rr->push, err, sizeof err) < 0)
        return cli_usage_error("record", "--push: %s", err);
    if (no_children && all_processes)
        return cli_usage_error("record", "--no-children and --all-processes contradict each other");
    if (rr->attach_pid && (no_children || all_processes))
        return cli_usage_error("record", "%s goes with a command that record starts, not -p",
                               no_children ? "--no-children" : "--all-processes");
    /* an attached process's children are its own business */
    cfg->children = no_children || rr->attach_pid                   ? CONFIG_CHILDREN_NONE
                   : process_tree_runs_an_application(rr->cmd) && !all_processes ? CONFIG_CHILDREN_APP
                                                                : CONFIG_CHILDREN_ALL;
    /* after every refusal, so that a refused command line says one line;
     * measured on .NET 10.0.12 with the walks left out: docs/reliability.md */
    if (cfg->sampler == CONFIG_SAMPLER_SUSPEND && !rr->quiet)
        cli_warn("--sampler suspend: the runtime's own suspensions can make it lose a caught "
                 "exception, in rare runs of a program that throws many "
                 "(docs/reliability.md); the default sampler does not suspend the runtime");
    return GO_ON;
}

/* The recording's absolute path (created: create_output) into path and,
 * with -o app.html (any report's extension), the report to write from it
 * at the end.  Returns the created file's descriptor, or -1 after printing
 * why. */
static int output_paths(struct record_run *rr, const struct attach_target *target, char *path,
                        const struct report_format **render_out, const char **report_path)
{
    const char *output = rr->output;
    if (!output) {
        if (rr->attach_pid)
            attach_default_output(target, rr->name, sizeof rr->name);
        else
            default_output(rr->cmd, rr->name, sizeof rr->name);
        output = rr->name;
    }
    /* -o app.html (or any report's extension): the recording goes beside
     * it as app.corscope, and the report is written from it at the end */
    const struct report_format *render = *render_out = report_for_path(output);
    if (render) {
        *report_path = output;
        const char *ext = strrchr(output, '.');
        size_t stem = (size_t)(ext - output);
        if (strchr(render->extension + 1, '.')) /* .speedscope.json, .pb.gz, .gc.txt ... */
            stem = strlen(output) - strlen(render->extension);
        if (stem + sizeof ".corscope" > sizeof rr->recording_name) {
            cli_error("output path too long: %s", output);
            return -1;
        }
        snprintf(rr->recording_name, sizeof rr->recording_name, "%.*s.corscope", (int)stem, output);
        if (!rr->force && access(*report_path, F_OK) == 0) {
            cli_error("%s exists; use --force to overwrite it", *report_path);
            return -1;
        }
        output = rr->recording_name;
    }
    if (output[0] == '/') {
        snprintf(path, PATH_MAX, "%s", output);
    } else {
        char cwd[PATH_MAX];
        if (!getcwd(cwd, sizeof cwd) || strlen(cwd) + strlen(output) + 2 > PATH_MAX) {
            cli_error("cannot resolve the output path %s", output);
            return -1;
        }
        size_t n = strlen(cwd);
        memcpy(path, cwd, n);
        path[n] = '/';
        memcpy(path + n + 1, output, strlen(output) + 1);
    }
    return create_output(path, rr->force);
}

/* The recordings this run wrote: path when the first process wrote it
 * (*first_written), then those beside it that were not there before. */
static size_t written_recordings(const char *path, char (*before)[PATH_MAX], size_t before_count,
                                 const char **written, int *first_written)
{
    static char after[PROCESS_TREE_MAX][PATH_MAX];
    size_t count = 0;
    struct stat st;
    *first_written = stat(path, &st) == 0 && st.st_size > 0;
    if (*first_written)
        written[count++] = path;
    size_t after_count = process_tree_list(path, after, PROCESS_TREE_MAX);
    for (size_t i = 0; i < after_count; i++) {
        int old = 0;
        for (size_t k = 0; k < before_count && !old; k++)
            old = !strcmp(before[k], after[i]);
        if (!old)
            written[count++] = after[i];
    }
    return count;
}

/* -p: attaches, records until -d or Ctrl-C, detaches.  created: the
 * recording file as created, which the agent gets open (never its path). */
static int record_attached(struct record_run *rr, const struct attach_target *target,
                           const char *agent, const char *path, int created,
                           const struct report_format *render, const char *report_path)
{
    uint64_t t0 = clock_now_ns();
    /* the agent in that process gets the recording open over the control
     * line: the file record created, or with --push the FIFO's writing end
     * (no path of record's is opened as the process's user) */
    int file = rr->pushing ? rr->rp.hold_fd : created;
    int attached = attach_run(target, &rr->cfg, agent, rr->agent_output, file, rr->duration_ns,
                              rr->quiet) == 0;
    int recorded = 1;
    if (rr->pushing)
        record_push_end(&rr->rp, &recorded); /* its summary says what was not sent */
    if (!rr->keep)
        return attached && recorded ? 0 : EXIT_WORK_FAILED;
    if (!attached) {
        /* nothing written: the file goes, if the path still names it */
        struct stat st, now;
        if (fstat(created, &st) == 0 && st.st_size == 0) {
            if (lstat(path, &now) == 0 && now.st_dev == st.st_dev && now.st_ino == st.st_ino)
                unlink(path);
        } else if (!rr->quiet) {
            summary_print(path, 0, rr->quiet, 0);
        }
        return EXIT_WORK_FAILED;
    }
    double seconds = (double)(clock_now_ns() - t0) / 1e9;
    if (summary_print(path, seconds, rr->quiet, 0) < 0) {
        cli_error("no recording from process %d", (int)rr->attach_pid);
        return EXIT_WORK_FAILED;
    }
    const char *one[1] = {path};
    return report_path ? render_report(one, 1, render, report_path, rr->quiet, 0) : 0;
}

/* Runs the command under the profiler and waits for it; `before`: the
 * recordings beside path from an earlier run. */
static int record_launched(struct record_run *rr, const char *agent, const char *path,
                           char (*before)[PATH_MAX], size_t before_count,
                           const struct report_format *render, const char *report_path)
{
    char err[256];
    uint64_t t0 = clock_now_ns();
    struct session sess;
    if (session_open(&sess, 0, err, sizeof err) < 0) {
        cli_error("%s", err);
        return EXIT_WORK_FAILED;
    }
    snprintf(rr->cfg.control, sizeof rr->cfg.control, "%s", sess.address);
    int exec_errno = 0;
    int status = launch_run(rr->cmd, &rr->cfg, agent, rr->agent_output, &exec_errno, &sess,
                            rr->duration_ns, rr->quiet);
    session_close(&sess);
    int recorded = 1;
    if (rr->pushing)
        record_push_end(&rr->rp, &recorded); /* its summary says what was not sent */
    double seconds = (double)(clock_now_ns() - t0) / 1e9;

    if (status < 0) {
        if (rr->keep)
            unlink(path);
        if (exec_errno) {
            cli_error("cannot run '%s': %s", rr->cmd[0], strerror(exec_errno));
            return exec_errno == ENOENT ? 127 : 126;
        }
        return EXIT_WORK_FAILED;
    }
    int code = launch_exit_status(status);
    /* the program ended because -d did: that is no failure */
    if (sess.ended_by_deadline)
        code = 0;
    if (!rr->keep) {
        if (!recorded) {
            cli_error("no recording: the profiler did not start in '%s' (is it a .NET program? "
                      "a bad CORSCOPE_* setting is reported above)", rr->cmd[0]);
            agent_probe_explain(agent);
        }
        return code ? code : recorded ? 0 : EXIT_WORK_FAILED;
    }
    /* what was written: the output, and a recording beside it for every
     * other process of the tree */
    const char *written[PROCESS_TREE_MAX + 1];
    int first_written;
    size_t count = written_recordings(path, before, before_count, written, &first_written);
    if (!count) {
        unlink(path);
        if (sess.peer_count)
            cli_error("no recording: the profiler declined, for the reason above");
        else {
            cli_error("no recording: the profiler did not start in '%s' (is it a .NET program? "
                      "a bad CORSCOPE_* setting is reported above)", rr->cmd[0]);
            agent_probe_explain(agent);
        }
        return code ? code : EXIT_WORK_FAILED;
    }
    if (!first_written)
        unlink(path); /* the processes that ran wrote beside it only */
    if (count > 1 && !rr->quiet)
        fprintf(stderr, "corscope: %zu processes recorded%s\n", count,
                rr->cfg.children == CONFIG_CHILDREN_APP
                    ? " (not the .NET SDK's own: --all-processes records them too)"
                    : "");
    else if (rr->cfg.children == CONFIG_CHILDREN_APP && !rr->quiet)
        fprintf(stderr, "corscope: the application was recorded, not the .NET SDK's own "
                        "processes (--all-processes records them too)\n");
    /* the command's time is a process's own only when it ran that one
     * alone: not one of several, nor the application a `dotnet test`
     * or `dotnet run` started */
    int own = count > 1 || rr->cfg.children == CONFIG_CHILDREN_APP;
    for (size_t i = 0; i < count; i++)
        summary_print(written[i], own ? -1 : seconds, rr->quiet, count > 1);
    if (report_path)
        return render_report(written, count, render, report_path, rr->quiet, code);
    return code;
}

int cmd_record(int argc, char **argv)
{
    static struct record_run run;
    struct record_run *rr = &run;
    memset(rr, 0, sizeof *rr);
    int rc = parse_args(argc, argv, rr);
    if (rc != GO_ON)
        return rc;
    struct attach_target target;
    if (rr->attach_pid && attach_check(rr->attach_pid, &target) < 0)
        return EXIT_WORK_FAILED;

    const char *diag = getenv("DOTNET_EnableDiagnostics");
    if (!rr->attach_pid && diag && !strcmp(diag, "0")) {
        cli_error("DOTNET_EnableDiagnostics=0 is set, which stops the runtime from loading "
                  "profilers; unset it to record");
        return EXIT_USAGE;
    }

    char agent[PATH_MAX];
    if (launch_find_agent(agent, sizeof agent) < 0) {
        cli_error("cannot find libcorscope.so beside corscope or in ../lib/corscope");
        return EXIT_WORK_FAILED;
    }

    char path[PATH_MAX] = "";
    const struct report_format *render = NULL;
    const char *report_path = NULL;
    /* created: the recording kept (none when --push goes without -o) */
    int created = -1;
    if (rr->keep && (created = output_paths(rr, &target, path, &render, &report_path)) < 0)
        return EXIT_WORK_FAILED;
    /* recordings beside it from an earlier run are not this run's */
    static char before[PROCESS_TREE_MAX][PATH_MAX];
    size_t before_count = rr->keep ? process_tree_list(path, before, PROCESS_TREE_MAX) : 0;
    /* --push: the agent writes into record's FIFO; the recording kept
     * (path) is record's copy of the stream */
    rr->agent_output = path;
    if (rr->pushing) {
        if (record_push_begin(&rr->rp, &rr->push, rr->keep ? path : NULL, created, rr->quiet) < 0) {
            if (rr->keep) {
                unlink(path);
                close(created);
            }
            return EXIT_WORK_FAILED;
        }
        rr->agent_output = rr->rp.fifo;
    }

    if (rr->attach_pid) {
        int attached = record_attached(rr, &target, agent, path, created, render, report_path);
        if (created >= 0)
            close(created);
        return attached;
    }
    if (created >= 0)
        close(created);
    return record_launched(rr, agent, path, before, before_count, render, report_path);
}
