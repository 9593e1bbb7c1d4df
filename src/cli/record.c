/*
 * record: `corscope record [options] -- COMMAND [ARGS...]`: runs a program
 * with the profiler loaded and waits for it; `corscope record -p PID`
 * attaches to one that is running (attach.h) and leaves it running.
 * While it records, a status line shows on a terminal, and -d ends the
 * recording on time (session.h).
 *
 * The program gets our standard input, output and error unchanged and the
 * profiler's settings in its environment (CORECLR_* to load the agent,
 * CORSCOPE_* for the agent's configuration, see common/config.h).  Signals
 * sent to corscope (TERM, HUP, USR1, USR2) are passed on to the program;
 * INT and QUIT from the terminal already reach it through its process group,
 * so corscope ignores them while it waits, as system(3) does.  corscope
 * exits with the program's status, or 128+signal when it was killed, and
 * prints one summary line on stderr read from the finished recording.
 *
 * The recording file is created here first, exclusively, without following
 * symlinks, mode 0600 (--force replaces an existing regular file): so a bad
 * path is reported before the program starts, and the agent only ever
 * opens a file that corscope made.
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

#include "cli/attach.h"
#include "cli/cli.h"
#include "cli/report.h"
#include "cli/session.h"
#include "common/config.h"
#include "common/product.h"
#include "common/units.h"
#include "cli/merge.h"
#include "cli/record_push.h"
#include "common/pushcfg.h"
#include "format/recording.h"


static const char record_usage[] =
    "usage: corscope record [options] [--] COMMAND [ARGS...]\n"
    "       corscope record [options] -p PID\n"
    "\n"
    "Runs COMMAND (a .NET program: `dotnet App.dll`, or an app host) with the\n"
    "profiler loaded and writes a recording; or attaches to the running .NET\n"
    "process PID (see `corscope ps`), records, and detaches, leaving it running.\n"
    "\n"
    "  -p, --pid PID           attach to a running process (.NET 5 or later) until\n"
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
    "      --cpu-clock C       the signal sampler's clock in cpu mode: perf (default)\n"
    "                          signals after each interval of a thread's CPU time,\n"
    "                          to the nanosecond; posix is checked at the kernel's\n"
    "                          tick (coarser), and cheaper on virtual machines that\n"
    "                          make timer interrupts dear (docs/performance.md)\n"
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
    "      --trace[=counts]    also count every call, with its times (=counts: none):\n"
    "                          the calls event, report -f calls\n"
    "      --include RE        trace only methods matching RE (Namespace.Type.Method)\n"
    "      --exclude RE        do not trace methods matching RE\n"
    "      --force             overwrite FILE if it exists\n"
    "  -q, --quiet             no summary line, no status line\n"
    "  -h, --help\n"
    "\n"
    "Exit status: the program's, or 128+N when signal N ended it (0 when -d\n"
    "ended it); 2 for a bad command line; 127/126 when COMMAND cannot be run.\n"
    "Attached: 0 when the recording was made, 1 when not.\n";

static volatile sig_atomic_t child_pid;

static void forward_signal(int sig)
{
    pid_t pid = (pid_t)child_pid;
    if (pid > 0)
        kill(pid, sig);
}

static const int forwarded_signals[] = {SIGTERM, SIGHUP, SIGUSR1, SIGUSR2};
static const int ignored_signals[] = {SIGINT, SIGQUIT};

/* Directory of this executable, for finding the agent beside it. */
static int self_dir(char *out, size_t size)
{
    ssize_t n = readlink("/proc/self/exe", out, size - 1);
    if (n <= 0)
        return -1;
    out[n] = '\0';
    char *slash = strrchr(out, '/');
    if (!slash)
        return -1;
    *slash = '\0';
    return 0;
}

/* The agent: beside the executable (the build tree), or in
 * PREFIX/lib/corscope when installed as PREFIX/bin/corscope. */
static int find_agent(char *out, size_t size)
{
    char dir[PATH_MAX];
    if (self_dir(dir, sizeof dir) < 0)
        return -1;
    const char *const candidates[] = {"/libcorscope.so", "/../lib/corscope/libcorscope.so"};
    for (size_t i = 0; i < sizeof candidates / sizeof candidates[0]; i++) {
        char path[PATH_MAX + 64];
        snprintf(path, sizeof path, "%s%s", dir, candidates[i]);
        if (access(path, R_OK) == 0 && realpath(path, out) && strlen(out) < size)
            return 0;
    }
    return -1;
}

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

/* Creates the recording file (see the top of this file).  Returns 0 or -1
 * after printing the reason. */
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
    close(fd);
    return 0;
}

static void set_child_env(const struct config *c, const char *agent, const char *output)
{
    setenv("CORECLR_ENABLE_PROFILING", "1", 1);
    setenv("CORECLR_PROFILER", CORSCOPE_CLSID_STRING, 1);
    setenv("CORECLR_PROFILER_PATH", agent, 1);
    setenv("CORECLR_PROFILER_PATH_64", agent, 1); /* the _64 form wins when set */
    unsetenv("CORECLR_PROFILER_PATH_ARM64");
    char value[PATH_MAX];
#define EXPORT_SETTING(k, env)                        \
    config_value_text(c, #k, value, sizeof value);    \
    setenv(env, value, 1);
    CONFIG_KEYS(EXPORT_SETTING)
#undef EXPORT_SETTING
    /* never the agent's own uploads under record: record pushes, with
     * --push (and no secret reaches the program) */
#define NO_PUSH(k, env) unsetenv(env);
    PUSH_KEYS(NO_PUSH)
#undef NO_PUSH
    unsetenv(PUSH_PASSWORD_ENV);
    unsetenv(PUSH_TOKEN_ENV);
    /* a tree of processes is recorded: no compiler server or MSBuild node
     * may outlive the recording (they would go on profiling into a
     * finished file); the build runs its compiler as a process of its own
     * instead, recorded like the rest */
    if (c->children != CONFIG_CHILDREN_NONE) {
        setenv("MSBUILDDISABLENODEREUSE", "1", 1);
        setenv("UseSharedCompilation", "false", 1);
        setenv("DOTNET_CLI_USE_MSBUILD_SERVER", "0", 1);
    }
    /* the agent expands %p in the path; a literal % travels as %% */
    char escaped[2 * PATH_MAX];
    size_t o = 0;
    for (const char *p = output; *p && o + 2 < sizeof escaped; p++) {
        if (*p == '%')
            escaped[o++] = '%';
        escaped[o++] = *p;
    }
    escaped[o] = '\0';
    setenv("CORSCOPE_OUTPUT", escaped, 1);
}

/* Runs the command; returns its wait status, or -1 when it could not be
 * started (after printing why; *exec_errno set when exec failed). */
static int run_child(char **cmd, const struct config *c, const char *agent, const char *output,
                     int *exec_errno, struct session *sess, uint64_t duration_ns, int quiet)
{
    int pipefd[2];
    if (pipe2(pipefd, O_CLOEXEC) < 0) {
        cli_error("cannot start %s: %s", cmd[0], strerror(errno));
        return -1;
    }
    sigset_t block, old;
    sigemptyset(&block);
    for (size_t i = 0; i < sizeof forwarded_signals / sizeof forwarded_signals[0]; i++)
        sigaddset(&block, forwarded_signals[i]);
    sigprocmask(SIG_BLOCK, &block, &old);

    struct sigaction ign = {0}, saved_ign[2];
    ign.sa_handler = SIG_IGN;
    for (size_t i = 0; i < 2; i++)
        sigaction(ignored_signals[i], &ign, &saved_ign[i]);

    pid_t pid = fork();
    if (pid < 0) {
        cli_error("cannot start %s: %s", cmd[0], strerror(errno));
        sigprocmask(SIG_SETMASK, &old, NULL);
        return -1;
    }
    if (pid == 0) {
        for (size_t i = 0; i < 2; i++)
            sigaction(ignored_signals[i], &saved_ign[i], NULL);
        sigprocmask(SIG_SETMASK, &old, NULL);
        close(pipefd[0]);
        set_child_env(c, agent, output);
        execvp(cmd[0], cmd);
        int e = errno;
        ssize_t w = write(pipefd[1], &e, sizeof e);
        (void)w;
        _exit(127);
    }
    child_pid = pid;
    struct sigaction fwd = {0};
    fwd.sa_handler = forward_signal;
    sigemptyset(&fwd.sa_mask);
    fwd.sa_flags = SA_RESTART;
    for (size_t i = 0; i < sizeof forwarded_signals / sizeof forwarded_signals[0]; i++)
        sigaction(forwarded_signals[i], &fwd, NULL);
    sigprocmask(SIG_SETMASK, &old, NULL);

    close(pipefd[1]);
    int e = 0;
    ssize_t got;
    do
        got = read(pipefd[0], &e, sizeof e);
    while (got < 0 && errno == EINTR);
    close(pipefd[0]);

    int status = 0;
    if (got == (ssize_t)sizeof e) {
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
        }
    } else {
        status = session_wait_child(sess, pid, duration_ns, quiet);
        if (status == -1)
            return -1;
    }
    child_pid = 0;
    for (size_t i = 0; i < 2; i++)
        sigaction(ignored_signals[i], &saved_ign[i], NULL);
    if (got == (ssize_t)sizeof e) {
        *exec_errno = e;
        return -1;
    }
    return status;
}

static int exit_status_of(int status)
{
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    if (WIFSIGNALED(status))
        return 128 + WTERMSIG(status);
    return EXIT_WORK_FAILED;
}

/* Reads the recording back and prints the summary line.  Returns 0 when a
 * recording exists, -1 when the agent never wrote one. */
static int summarize(const char *path, double seconds, int quiet, int many)
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
        int k = snprintf(events + used, sizeof events - used, "%s%.*s %llu %s", used ? ", " : "",
                         (int)r.events[e].name.len, r.events[e].name.p, (unsigned long long)n,
                         r.events[e].recorded ? "records" : "samples");
        if (k > 0)
            used += (size_t)k;
    }
    uint64_t dropped = rec_stat(&r, "dropped_samples") + rec_stat(&r, "dropped_events");
    uint64_t failed = rec_stat(&r, "failed_walks");
    if (!quiet) {
        char extra[160] = "";
        if (failed)
            snprintf(extra, sizeof extra, ", %llu failed walks", (unsigned long long)failed);
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
        if (many && pid > 0)
            snprintf(who, sizeof who, "process %ld (%.*s): ", pid, cmd ? (int)(cmd->len > 100 ? 100 : cmd->len) : 0,
                     cmd ? cmd->p : "");
        if (r.status != REC_COMPLETE && pid > 0 && kill((pid_t)pid, 0) == 0) {
            /* a process that outlived the command: its recording goes on */
            snprintf(state, sizeof state, " (still being written: process %ld is running)", pid);
        }
        fprintf(stderr, "corscope: %s%.2f s, %s, %llu dropped%s -> %s%s\n", who, seconds,
                events[0] ? events : "nothing recorded", (unsigned long long)dropped, extra, path,
                state);
        if (r.status != REC_COMPLETE)
            fprintf(stderr, "corscope: %s: %s\n", path, r.problem);
    }
    rec_free(&r);
    return 0;
}

/* ---- the recordings of a tree of processes ---------------------------------- */

#define MAX_RECORDINGS 256

/* Is `name` (a file name) one the agent gives a process beside `path`:
 * STEM-PID.EXT or STEM-PID-N.EXT (agent/proctree.c)? */
static int is_beside(const char *path, const char *name)
{
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    const char *dot = strrchr(base, '.');
    size_t stem = dot ? (size_t)(dot - base) : strlen(base);
    const char *ext = base + stem;
    if (strncmp(name, base, stem) != 0 || name[stem] != '-')
        return 0;
    const char *p = name + stem + 1;
    int digits = 0;
    while (*p >= '0' && *p <= '9')
        p++, digits++;
    if (!digits)
        return 0;
    if (*p == '-') {
        int more = 0;
        for (p++; *p >= '0' && *p <= '9'; p++)
            more++;
        if (!more)
            return 0;
    }
    return strcmp(p, ext) == 0;
}

/* The files beside `path` now: their names into names[] (sorted). */
static size_t list_beside(const char *path, char (*names)[PATH_MAX], size_t max)
{
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash)
        return 0;
    *slash = '\0';
    DIR *d = opendir(dir[0] ? dir : "/");
    if (!d)
        return 0;
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL && n < max) {
        size_t dl = strlen(dir), nl = strlen(e->d_name);
        if (is_beside(path, e->d_name) && dl + nl + 2 <= PATH_MAX) {
            memcpy(names[n], dir, dl);
            names[n][dl] = '/';
            memcpy(names[n] + dl + 1, e->d_name, nl + 1);
            n++;
        }
    }
    closedir(d);
    qsort(names, n, PATH_MAX, (int (*)(const void *, const void *))strcmp);
    return n;
}

/* `dotnet run`, `dotnet test`: commands whose user means the application
 * they start, not the SDK that builds and starts it. */
static int runs_an_application(char **cmd)
{
    const char *base = strrchr(cmd[0], '/') ? strrchr(cmd[0], '/') + 1 : cmd[0];
    if (strcmp(base, "dotnet") != 0)
        return 0;
    for (char **a = cmd + 1; *a; a++) {
        if ((*a)[0] == '-')
            continue;
        return !strcmp(*a, "run") || !strcmp(*a, "test");
    }
    return 0;
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

int cmd_record(int argc, char **argv)
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
        {"help", no_argument, NULL, 'h'},           PUSH_LONGOPTS,
        {NULL, 0, NULL, 0},
    };
    char err[256];
    /* --push's options, checked as they come and applied after the
     * CORSCOPE_PUSH* variables (read only when there is one) */
    struct push_config pcfg;
    push_config_defaults(&pcfg);
    int push_opts[64];
    const char *push_args[64];
    size_t push_count = 0;
    struct config cfg;
    config_defaults(&cfg);
    /* the agent's log level is the one setting taken from our environment */
    const char *level = getenv("CORSCOPE_LOG");
    if (level && config_set(&cfg, "log", level, err, sizeof err) < 0)
        return cli_usage_error("record", "CORSCOPE_LOG=%s: %s", level, err);
    const char *output = NULL;
    int force = 0, quiet = 0, no_children = 0, all_processes = 0;
    /* options that only some settings use, for the conflict checks */
    const char *signal_opt = NULL, *clock_opt = NULL, *lock_min_opt = NULL, *alloc_opt = NULL,
               *live_opt = NULL, *filter_opt = NULL;
    pid_t attach_pid = 0;
    uint64_t duration_ns = 0;

    optind = 1;
    opterr = 0;
    int c, longindex = -1;
    while ((c = getopt_long(argc, argv, "+:o:e:i:p:d:qh", longopts, &longindex)) != -1) {
        /* the option as the user spelled it, for messages */
        char opt[64];
        if (longindex >= 0)
            snprintf(opt, sizeof opt, "--%s", longopts[longindex].name);
        else if (c == ':' || c == '?')
            snprintf(opt, sizeof opt, "%s", argv[optind - 1]);
        else
            snprintf(opt, sizeof opt, "-%c", c);
        longindex = -1;
        const char *key = NULL;
        switch (c) {
        case 'o': output = optarg; break;
        case 'e': key = "event"; break;
        case 'i': key = "interval"; break;
        case OPT_SAMPLER: key = "sampler"; break;
        case OPT_SIGNAL: key = "signal"; signal_opt = "--signal"; break;
        case OPT_CPU_CLOCK: key = "cpu_clock"; clock_opt = "--cpu-clock"; break;
        case OPT_CPU_PERIOD: key = "cpu_period"; clock_opt = "--cpu-period"; break;
        case OPT_MAX_DEPTH: key = "max_depth"; break;
        case OPT_LOCK_MIN: key = "lock_min"; lock_min_opt = "--lock-min"; break;
        case OPT_FORCE: force = 1; break;
        case OPT_NO_CHILDREN: no_children = 1; break;
        case OPT_ALL_PROCESSES: all_processes = 1; break;
        case OPT_ALLOC: key = "alloc"; alloc_opt = "--alloc"; break;
        case OPT_ALLOC_INTERVAL: key = "alloc_interval"; alloc_opt = "--alloc-interval"; break;
        case OPT_LIVE_MAX: key = "live_max"; live_opt = "--live-max"; break;
        case OPT_TRACE: key = "trace"; optarg = optarg ? optarg : "times"; break;
        case OPT_INCLUDE: key = "trace_include"; filter_opt = "--include"; break;
        case OPT_EXCLUDE: key = "trace_exclude"; filter_opt = "--exclude"; break;
        case 'q': quiet = 1; break;
        case 'p':
            if (attach_parse_pid(optarg, &attach_pid, err, sizeof err) < 0)
                return cli_usage_error("record", "%s %s: %s", opt, optarg, err);
            break;
        case 'd':
            if (parse_duration(optarg, &duration_ns, err, sizeof err) < 0)
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
                if (push_option(&pcfg, c, optarg, err, sizeof err) < 0)
                    return cli_usage_error("record", "%s: %s", opt, err);
                if (push_count == sizeof push_opts / sizeof push_opts[0])
                    return cli_usage_error("record", "too many push options");
                push_opts[push_count] = c;
                push_args[push_count++] = optarg;
                break;
            }
            return cli_usage_error("record", "unknown option '%s'", opt);
        }
        if (key && config_set(&cfg, key, optarg, err, sizeof err) < 0)
            return cli_usage_error("record", "%s %s: %s", opt, optarg, err);
    }
    if (cfg.sampler == CONFIG_SAMPLER_SUSPEND && (signal_opt || clock_opt))
        return cli_usage_error("record", "%s goes with the signal sampler, not --sampler suspend",
                               signal_opt ? signal_opt : clock_opt);
    if (clock_opt && config_sampled(&cfg) != CONFIG_EVENT_CPU)
        return cli_usage_error("record", "%s goes with -e cpu (wall mode signals every thread "
                               "at each tick of the wall clock)", clock_opt);
    if (lock_min_opt && !(cfg.events & CONFIG_EVENT_LOCK))
        return cli_usage_error("record", "--lock-min goes with -e lock");
    if (alloc_opt && !(cfg.events & CONFIG_EVENT_ALLOC))
        return cli_usage_error("record", "%s goes with -e alloc (or live)", alloc_opt);
    if (live_opt && !(cfg.events & CONFIG_EVENT_LIVE))
        return cli_usage_error("record", "%s goes with -e live", live_opt);
    if (cfg.alloc == CONFIG_ALLOC_EXACT && cfg.alloc_interval != CONFIG_ALLOC_INTERVAL_MIN)
        return cli_usage_error("record", "--alloc-interval goes with sampled allocations, not "
                               "--alloc exact (which records every one)");
    if (filter_opt && !cfg.trace)
        return cli_usage_error("record", "%s chooses the methods --trace traces; add --trace",
                               filter_opt);
    if (attach_pid && config_attach_refusal(&cfg))
        return cli_usage_error("record", "-p: %s", config_attach_refusal(&cfg));
    if (attach_pid && optind < argc)
        return cli_usage_error("record", "-p attaches to a running process: no command goes with it");
    if (!attach_pid && optind >= argc)
        return cli_usage_error("record", "no command to run (usage: corscope record -- dotnet App.dll)");
    char **cmd = argv + optind;
    if (push_count) {
        if (push_config_settings_from_env(&pcfg, err, sizeof err) < 0)
            return cli_usage_error("record", "%s", err);
        for (size_t i = 0; i < push_count; i++)
            push_option(&pcfg, push_opts[i], push_args[i], err, sizeof err);
    }
    int pushing = pcfg.url_text[0] != '\0';
    if (!pushing && (pcfg.service[0] || pcfg.label_count))
        return cli_usage_error("record", "--service and --label name what --push sends; add --push URL");
    if (pushing && push_config_check(&pcfg, err, sizeof err) < 0)
        return cli_usage_error("record", "--push: %s", err);
    if (no_children && all_processes)
        return cli_usage_error("record", "--no-children and --all-processes contradict each other");
    if (attach_pid && (no_children || all_processes))
        return cli_usage_error("record", "%s goes with a command that record starts, not -p",
                               no_children ? "--no-children" : "--all-processes");
    /* an attached process's children are its own business */
    cfg.children = no_children || attach_pid                   ? CONFIG_CHILDREN_NONE
                   : runs_an_application(cmd) && !all_processes ? CONFIG_CHILDREN_APP
                                                                : CONFIG_CHILDREN_ALL;
    struct attach_target target;
    if (attach_pid && attach_check(attach_pid, &target) < 0)
        return EXIT_WORK_FAILED;

    const char *diag = getenv("DOTNET_EnableDiagnostics");
    if (!attach_pid && diag && !strcmp(diag, "0")) {
        cli_error("DOTNET_EnableDiagnostics=0 is set, which stops the runtime from loading "
                  "profilers; unset it to record");
        return EXIT_USAGE;
    }

    char agent[PATH_MAX];
    if (find_agent(agent, sizeof agent) < 0) {
        cli_error("cannot find libcorscope.so beside corscope or in ../lib/corscope");
        return EXIT_WORK_FAILED;
    }

    char name[PATH_MAX], path[PATH_MAX];
    int keep = !pushing || output; /* --push without -o keeps no recording */
    if (!output) {
        if (attach_pid)
            attach_default_output(&target, name, sizeof name);
        else
            default_output(cmd, name, sizeof name);
        output = name;
    }
    /* -o app.html (or any report's extension): the recording goes beside
     * it as app.corscope, and the report is written from it at the end */
    const struct report_format *render = report_for_path(output);
    const char *report_path = NULL;
    char recording_name[PATH_MAX];
    if (render) {
        report_path = output;
        const char *ext = strrchr(output, '.');
        size_t stem = (size_t)(ext - output);
        if (strchr(render->extension + 1, '.')) /* .speedscope.json, .pb.gz, .gc.txt ... */
            stem = strlen(output) - strlen(render->extension);
        if (stem + sizeof ".corscope" > sizeof recording_name) {
            cli_error("output path too long: %s", output);
            return EXIT_WORK_FAILED;
        }
        snprintf(recording_name, sizeof recording_name, "%.*s.corscope", (int)stem, output);
        if (!force && access(report_path, F_OK) == 0) {
            cli_error("%s exists; use --force to overwrite it", report_path);
            return EXIT_WORK_FAILED;
        }
        output = recording_name;
    }
    if (output[0] == '/') {
        snprintf(path, sizeof path, "%s", output);
    } else {
        char cwd[PATH_MAX];
        if (!getcwd(cwd, sizeof cwd) || strlen(cwd) + strlen(output) + 2 > sizeof path) {
            cli_error("cannot resolve the output path %s", output);
            return EXIT_WORK_FAILED;
        }
        size_t n = strlen(cwd);
        memcpy(path, cwd, n);
        path[n] = '/';
        memcpy(path + n + 1, output, strlen(output) + 1);
    }
    if (keep && create_output(path, force) < 0)
        return EXIT_WORK_FAILED;
    /* --push: the agent writes into record's FIFO; the recording kept
     * (path) is record's copy of the stream */
    struct record_push rp;
    const char *agent_output = path;
    if (pushing) {
        if (record_push_begin(&rp, &pcfg, keep ? path : NULL, quiet) < 0) {
            if (keep)
                unlink(path);
            return EXIT_WORK_FAILED;
        }
        agent_output = rp.fifo;
    }
    /* recordings beside it from an earlier run are not this run's */
    static char before[MAX_RECORDINGS][PATH_MAX], after[MAX_RECORDINGS][PATH_MAX];
    size_t before_count = list_beside(path, before, MAX_RECORDINGS);

    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (attach_pid) {
        /* the agent in that process (maybe another user's, as root) writes
         * the recording, or record's FIFO */
        int given = !pushing ? attach_prepare_output(&target, path)
                    : geteuid() == 0 && target.proc.uid != 0
                        ? record_push_give(&rp, target.proc.uid, target.gid)
                        : 0;
        int attached = given == 0 &&
                       attach_run(&target, &cfg, agent, agent_output, duration_ns, quiet) == 0;
        int recorded = 1;
        if (pushing)
            record_push_end(&rp, &recorded); /* its summary says what was not sent */
        if (!keep)
            return attached && recorded ? 0 : EXIT_WORK_FAILED;
        if (!attached) {
            struct stat st;
            if (stat(path, &st) == 0 && st.st_size == 0)
                unlink(path);
            else if (!quiet)
                summarize(path, 0, quiet, 0);
            return EXIT_WORK_FAILED;
        }
        clock_gettime(CLOCK_MONOTONIC, &t1);
        double seconds = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
        if (summarize(path, seconds, quiet, 0) < 0) {
            cli_error("no recording from process %d", (int)attach_pid);
            return EXIT_WORK_FAILED;
        }
        const char *one[1] = {path};
        return report_path ? render_report(one, 1, render, report_path, quiet, 0) : 0;
    }
    struct session sess;
    if (session_open(&sess, 0, err, sizeof err) < 0) {
        cli_error("%s", err);
        return EXIT_WORK_FAILED;
    }
    snprintf(cfg.control, sizeof cfg.control, "%s", sess.address);
    int exec_errno = 0;
    int status = run_child(cmd, &cfg, agent, agent_output, &exec_errno, &sess, duration_ns, quiet);
    session_close(&sess);
    int recorded = 1;
    if (pushing)
        record_push_end(&rp, &recorded); /* its summary says what was not sent */
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double seconds = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;

    if (status < 0) {
        if (keep)
            unlink(path);
        if (exec_errno) {
            cli_error("cannot run '%s': %s", cmd[0], strerror(exec_errno));
            return exec_errno == ENOENT ? 127 : 126;
        }
        return EXIT_WORK_FAILED;
    }
    int code = exit_status_of(status);
    /* the program ended because -d did: that is no failure */
    if (sess.ended_by_deadline)
        code = 0;
    if (!keep) {
        if (!recorded)
            cli_error("no recording: the profiler did not start in '%s' (is it a .NET program? "
                      "a bad CORSCOPE_* setting is reported above)", cmd[0]);
        return code ? code : recorded ? 0 : EXIT_WORK_FAILED;
    }
    /* what was written: the output, and a recording beside it for every
     * other process of the tree */
    const char *written[MAX_RECORDINGS + 1];
    size_t count = 0;
    struct stat st;
    int first_written = stat(path, &st) == 0 && st.st_size > 0;
    if (first_written)
        written[count++] = path;
    size_t after_count = list_beside(path, after, MAX_RECORDINGS);
    for (size_t i = 0; i < after_count; i++) {
        int old = 0;
        for (size_t k = 0; k < before_count && !old; k++)
            old = !strcmp(before[k], after[i]);
        if (!old)
            written[count++] = after[i];
    }
    if (!count) {
        unlink(path);
        cli_error("no recording: the profiler did not start in '%s' (is it a .NET program? "
                  "a bad CORSCOPE_* setting is reported above)", cmd[0]);
        return code ? code : EXIT_WORK_FAILED;
    }
    if (!first_written)
        unlink(path); /* the processes that ran wrote beside it only */
    if (count > 1 && !quiet)
        fprintf(stderr, "corscope: %zu processes recorded%s\n", count,
                cfg.children == CONFIG_CHILDREN_APP ? " (not the .NET SDK's own: --all-processes "
                                                      "records them too)" : "");
    else if (cfg.children == CONFIG_CHILDREN_APP && !quiet)
        fprintf(stderr, "corscope: the application was recorded, not the .NET SDK's own "
                        "processes (--all-processes records them too)\n");
    for (size_t i = 0; i < count; i++)
        summarize(written[i], seconds, quiet, count > 1);
    if (report_path)
        return render_report(written, count, render, report_path, quiet, code);
    return code;
}
