/*
 * watch: `corscope watch`, live probes.  Starts a program with the agent
 * (launch), or attaches to a running one (-p), with the method pattern in
 * the settings (the `watch` key); the agent rewrites the methods named
 * (agent/sources/watch.c) and sends one "call" message per call, which is
 * printed as it comes:
 *
 *     12:04:31.207 [4242] Pricing.Quote(sku="sku-1", qty=4) = 9.00  0.8 us
 *
 * or, for a call that threw out of the method, `... !! ExceptionType`;
 * and, at the end (-d, --count calls shown, Ctrl-C, the program's end),
 * a summary per method on stderr: calls, p50, p99, max, how many threw,
 * and what was not shown (calls past --count or the rate, a full queue,
 * calls whose end never came).  Attached, the end reverts the methods
 * and detaches the agent.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/attach.h"
#include "cli/cli.h"
#include "cli/launch.h"
#include "cli/session.h"
#include "common/clock.h"
#include "common/mem.h"
#include "common/units.h"
#include "common/watch_where.h"
#include "cli/watch_call.h"

static const char watch_usage[] =
    "usage: corscope watch [options] -p PID PATTERN\n"
    "       corscope watch [options] -- COMMAND... PATTERN\n"
    "       corscope watch [options] PATTERN -- COMMAND...\n"
    "\n"
    "Shows each call of the methods PATTERN names, as it happens: time, thread,\n"
    "arguments, return value and duration; a summary per method at the end.\n"
    "PATTERN is Namespace.Type.Method (leading namespaces may be left out; '*'\n"
    "matches any text: 'MyApp.Orders.*'); every overload is watched, or the one\n"
    "its parameters' types name: 'Pricing.Quote(string,int)' (C# names or full\n"
    "names: System.String, MyApp.Order, int[], ref int).\n"
    "\n"
    "options:\n"
    "  -p, --pid PID         attach to a running process; at the end the methods\n"
    "                        get their original code back and the agent detaches\n"
    "  -d, --duration TIME   stop after TIME (e.g. 30s); default: Ctrl-C or the end\n"
    "      --count N         stop after N calls shown\n"
    "      --max-methods N   rewrite at most N methods (default 20; up to 1000)\n"
    "      --rate N          show at most N calls a second (default 1000; the rest\n"
    "                        are counted)\n"
    "      --stack           each call's callers, under its line ('    at Type.Method')\n"
    "      --where 'EXPR'    show only the calls whose argument (by name) or\n"
    "                        result matches: 'qty > 10', 'sku == \"a\"',\n"
    "                        'sku contains \"ku\"', 'note != null', 'c == Blue'\n"
    "                        (== != < <= > >= contains); the rest are counted\n"
    "  -o, --output FILE     also write each call as a JSON object, one a line\n"
    "                        (time, thread, method, args, result, duration_ns,\n"
    "                        threw)\n"
    "      --fields          objects' and structs' own fields (numbers, bool, char,\n"
    "                        enums, strings cut, null), one level, read in place:\n"
    "                        'this=Cart{items=2, owner=\"ann\"}'\n"
    "  -q, --quiet           no lines but the calls and the summary\n";

enum { OPT_COUNT = 256, OPT_MAX_METHODS, OPT_RATE, OPT_WHERE, OPT_STACK, OPT_FIELDS };

/* --stack: frames the probe walks (itself and the watched method among
 * them), so about this many callers shown */
#define STACK_DEPTH 24

struct method_stats {
    char name[160];
    uint64_t *durations;
    size_t count, cap;
};

struct watch_run {
    pid_t pid;
    uint64_t duration_ns, count, max_methods, rate;
    int quiet, stack, fields;
    int last_shown; /* the last call line was printed: its frames are too */
    const char *pattern;
    const char *where;
    const char *output;            /* -o: JSON lines */
    FILE *json;
    int json_failed;
    uint64_t unreadable;           /* call messages not understood */
    char **command;
    /* what came */
    uint64_t shown, threw;
    struct method_stats *methods;
    size_t method_count;
    int got_end, none, nosig, too_many, failed, heard; /* heard: the agent said anything of watch's */
    char pattern_text[CONFIG_WATCH_MAX]; /* the pattern, spaces in its parameter list taken out */
    int bad_where;
    uint64_t where_skipped;        /* methods --where cannot be said of: not watched */
    char where_skipped_text[512];  /* the last one's reason */
    uint64_t end[9];
    char none_text[1024];
    uint64_t mono_to_real; /* realtime - monotonic, ns */
    struct session *session;
};

static struct method_stats *stats_for(struct watch_run *w, const char *text)
{
    size_t n = strcspn(text, "(");
    if (n >= sizeof w->methods[0].name)
        n = sizeof w->methods[0].name - 1;
    for (size_t i = 0; i < w->method_count; i++)
        if (!strncmp(w->methods[i].name, text, n) && !w->methods[i].name[n])
            return &w->methods[i];
    struct method_stats *grown = mem_realloc(w->methods, (w->method_count + 1) * sizeof *grown);
    if (!grown)
        return NULL;
    w->methods = grown;
    struct method_stats *m = &w->methods[w->method_count++];
    memset(m, 0, sizeof *m);
    memcpy(m->name, text, n);
    m->name[n] = '\0';
    return m;
}

static void format_duration(uint64_t ns, char *out, size_t size)
{
    if (ns < 1000000)
        snprintf(out, size, "%.1f us", (double)ns / 1e3);
    else if (ns < 1000000000)
        snprintf(out, size, "%.2f ms", (double)ns / 1e6);
    else
        snprintf(out, size, "%.2f s", (double)ns / 1e9);
}

static void on_call(struct watch_run *w, const char *args)
{
    w->last_shown = 0;
    if (w->count && w->shown >= w->count)
        return;
    int tid;
    unsigned long long start, duration;
    int used = 0;
    if (sscanf(args, "%d %llu %llu %n", &tid, &start, &duration, &used) != 3 || !used)
        return;
    char records[CONTROL_MESSAGE_MAX];
    snprintf(records, sizeof records, "%s", args + used);
    struct watch_call call;
    if (watch_call_parse(records, &call) < 0) {
        w->unreadable++;
        return;
    }
    char text[2048];
    watch_call_line(&call, text, sizeof text);
    uint64_t real = start + w->mono_to_real;
    if (w->json) {
        watch_call_json(&call, real, tid, duration, w->json);
        if (ferror(w->json) && !w->json_failed) {
            w->json_failed = 1;
            cli_error("cannot write %s: %s; the calls are still shown", w->output, strerror(errno));
        }
    }
    time_t secs = (time_t)(real / 1000000000ull);
    struct tm tm;
    localtime_r(&secs, &tm);
    char stamp[32], dur[32];
    strftime(stamp, sizeof stamp, "%H:%M:%S", &tm);
    format_duration(duration, dur, sizeof dur);
    printf("%s.%03u [%d] %s  %s\n", stamp, (unsigned)(real / 1000000ull % 1000), tid, text, dur);
    fflush(stdout);
    w->shown++;
    w->last_shown = 1;
    if (call.throw_type)
        w->threw++;
    struct method_stats *m = stats_for(w, text);
    if (m) {
        if (m->count == m->cap) {
            size_t cap = m->cap ? m->cap * 2 : 64;
            uint64_t *grown = mem_realloc(m->durations, cap * sizeof *grown);
            if (grown) {
                m->durations = grown;
                m->cap = cap;
            }
        }
        if (m->count < m->cap)
            m->durations[m->count++] = duration;
    }
    if (w->count && w->shown >= w->count && w->session)
        w->session->stop_wanted = 1;
}

static void on_watch(void *ctx, enum control_kind kind, const char *text)
{
    struct watch_run *w = ctx;
    w->heard = 1;
    if (kind == CONTROL_CALL) {
        on_call(w, text);
        return;
    }
    unsigned long long a = 0, b = 0;
    if (!strncmp(text, "frame ", 6)) {
        if (w->last_shown) {
            printf("    at %s\n", text + 6);
            fflush(stdout);
        }
    } else if (!strncmp(text, "nosig ", 6)) {
        w->nosig = 1;
        snprintf(w->none_text, sizeof w->none_text, "%s", text + 6);
        if (w->session)
            w->session->stop_wanted = 1;
    } else if (sscanf(text, "overloads %llu", &a) == 1) {
        /* "overloads N Type.Method Method(int), Method(decimal)" */
        const char *name = strchr(text + 10, ' ');
        const char *sigs = name ? strchr(name + 1, ' ') : NULL;
        if (!w->quiet && sigs)
            fprintf(stderr, "corscope: %.*s: %llu overloads, all watched: %s (one alone: its "
                    "parameters' types after the name, as 'Type.Method(int)')\n",
                    (int)(sigs - name - 1), name + 1, a, sigs + 1);
    } else if (!strncmp(text, "none ", 5)) {
        w->none = 1;
        snprintf(w->none_text, sizeof w->none_text, "%s", text + 5);
        if (w->session)
            w->session->stop_wanted = 1;
    } else if (sscanf(text, "too-many %llu %llu", &a, &b) == 2) {
        w->too_many = 1;
        cli_error("'%s' matches %llu methods, more than --max-methods %llu: name fewer (a type, "
                  "a method) or raise --max-methods; nothing was rewritten", w->pattern, a, b);
        if (w->session)
            w->session->stop_wanted = 1;
    } else if (!strncmp(text, "bad-where ", 10)) {
        w->bad_where = 1;
        cli_error("--where '%s': %s; nothing was rewritten", w->where ? w->where : "", text + 10);
        if (w->session)
            w->session->stop_wanted = 1;
    } else if (!strncmp(text, "failed ", 7)) {
        w->failed = 1;
        cli_error("the runtime refused to rewrite the methods (%s)", text + 7);
        if (w->session)
            w->session->stop_wanted = 1;
    } else if (sscanf(text, "methods %llu", &a) == 1) {
        if (!w->quiet)
            fprintf(stderr, "corscope: watching %llu method%s matching '%s'\n", a, a == 1 ? "" : "s",
                    w->pattern);
    } else if (!strncmp(text, "note ", 5) && strstr(text, ": not watched (--where)")) {
        /* said once, in the summary, unless no method was watched */
        w->where_skipped++;
        snprintf(w->where_skipped_text, sizeof w->where_skipped_text, "%.*s",
                 (int)(strstr(text, ": not watched (--where)") - (text + 5)), text + 5);
    } else if (!strncmp(text, "note ", 5)) {
        if (!w->quiet)
            fprintf(stderr, "corscope: %s\n", text + 5);
    } else if (!strncmp(text, "end ", 4)) {
        /* the ninth count (filtered by --where) is newer than the others */
        w->got_end = sscanf(text + 4, "%llu %llu %llu %llu %llu %llu %llu %llu %llu",
                            (unsigned long long *)&w->end[0], (unsigned long long *)&w->end[1],
                            (unsigned long long *)&w->end[2], (unsigned long long *)&w->end[3],
                            (unsigned long long *)&w->end[4], (unsigned long long *)&w->end[5],
                            (unsigned long long *)&w->end[6], (unsigned long long *)&w->end[7],
                            (unsigned long long *)&w->end[8]) >= 8;
    }
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static void summary(struct watch_run *w)
{
    if (w->nosig) {
        size_t n = strcspn(w->pattern, "(");
        cli_error("no overload of '%.*s' has the parameters %s; it has: %s", (int)n, w->pattern,
                  w->pattern + n, w->none_text);
        return;
    }
    if (w->none) {
        if (strcmp(w->none_text, "-"))
            cli_error("no method matches '%s'; nearest: %s", w->pattern, w->none_text);
        else
            cli_error("no method matches '%s' (no method of the program's assemblies is near it)",
                      w->pattern);
        return;
    }
    if (w->too_many || w->failed || w->bad_where)
        return;
    if (w->where_skipped)
        cli_error("%llu method%s not watched: --where '%s' cannot be said of %s (%s)",
                  (unsigned long long)w->where_skipped, w->where_skipped == 1 ? "" : "s",
                  w->where, w->where_skipped == 1 ? "it" : "them; the last", w->where_skipped_text);
    fprintf(stderr, "\n%-40s %8s %10s %10s %10s\n", "method", "calls", "p50", "p99", "max");
    for (size_t i = 0; i < w->method_count; i++) {
        struct method_stats *m = &w->methods[i];
        qsort(m->durations, m->count, sizeof *m->durations, cmp_u64);
        char p50[32] = "-", p99[32] = "-", max[32] = "-";
        if (m->count) {
            format_duration(m->durations[(m->count - 1) / 2], p50, sizeof p50);
            format_duration(m->durations[(m->count * 99 + 99) / 100 - 1], p99, sizeof p99);
            format_duration(m->durations[m->count - 1], max, sizeof max);
        }
        fprintf(stderr, "%-40s %8zu %10s %10s %10s\n", m->name, m->count, p50, p99, max);
    }
    if (!w->method_count)
        fprintf(stderr, "(no call seen)\n");
    if (w->got_end) {
        uint64_t unfinished = w->end[1], over_count = w->end[2], over_rate = w->end[3],
                 full = w->end[4], left = w->end[6];
        fprintf(stderr, "%llu calls shown", (unsigned long long)w->shown);
        if (w->threw)
            fprintf(stderr, " (%llu threw)", (unsigned long long)w->threw);
        if (unfinished)
            fprintf(stderr, "; %llu entered and did not end (still running, or the end was dropped)",
                    (unsigned long long)unfinished);
        if (w->end[8])
            fprintf(stderr, "; %llu left out by --where", (unsigned long long)w->end[8]);
        if (over_count)
            fprintf(stderr, "; %llu past --count not taken", (unsigned long long)over_count);
        if (over_rate)
            fprintf(stderr, "; %llu past --rate not taken", (unsigned long long)over_rate);
        if (full)
            fprintf(stderr, "; %llu dropped (the agent's queue was full)", (unsigned long long)full);
        if (left)
            fprintf(stderr, "; %llu methods could not be rewritten (said above)",
                    (unsigned long long)left);
        if (w->end[7])
            fprintf(stderr, "; %llu not sent (corscope did not read them in time)",
                    (unsigned long long)w->end[7]);
        if (w->unreadable)
            fprintf(stderr, "; %llu not understood (an agent of another version?)",
                    (unsigned long long)w->unreadable);
        fprintf(stderr, "\n");
    } else {
        fprintf(stderr, "%llu calls shown (the agent's final counts did not arrive)\n",
                (unsigned long long)w->shown);
    }
}

static void setup(struct session *s, void *ctx)
{
    struct watch_run *w = ctx;
    w->session = s;
    s->on_watch = on_watch;
    s->watch_ctx = w;
}

static int parse_args(int argc, char **argv, struct watch_run *w)
{
    static const struct option longopts[] = {
        {"pid", required_argument, NULL, 'p'},          {"duration", required_argument, NULL, 'd'},
        {"count", required_argument, NULL, OPT_COUNT},  {"max-methods", required_argument, NULL, OPT_MAX_METHODS},
        {"rate", required_argument, NULL, OPT_RATE},    {"quiet", no_argument, NULL, 'q'},
        {"stack", no_argument, NULL, OPT_STACK},        {"fields", no_argument, NULL, OPT_FIELDS},
        {"where", required_argument, NULL, OPT_WHERE},  {"output", required_argument, NULL, 'o'},
        {"help", no_argument, NULL, 'h'},               {NULL, 0, NULL, 0},
    };
    optind = 1;
    opterr = 0;
    int c, longindex = -1;
    const char *why;
    char err[128];
    while ((c = getopt_long(argc, argv, "+:p:d:o:qh", longopts, &longindex)) != -1) {
        char opt[64];
        cli_spelled_option(opt, sizeof opt, longopts, &longindex, c, argv);
        switch (c) {
        case 'p':
            if (attach_parse_pid(optarg, &w->pid, err, sizeof err) < 0)
                return cli_usage_error("watch", "-p %s: %s", optarg, err);
            break;
        case 'd':
            if (units_parse_duration(optarg, 0, &w->duration_ns, &why) < 0 || !w->duration_ns)
                return cli_usage_error("watch", "%s %s: not a duration (e.g. 30s, 500ms)", opt, optarg);
            break;
        case OPT_COUNT:
            if (units_parse_count(optarg, UINT64_MAX, &w->count, &why) < 0 || !w->count)
                return cli_usage_error("watch", "%s %s: not a positive count", opt, optarg);
            break;
        case OPT_MAX_METHODS:
            if (units_parse_count(optarg, 1000, &w->max_methods, &why) < 0 || !w->max_methods)
                return cli_usage_error("watch", "%s %s: a count from 1 to 1000", opt, optarg);
            break;
        case OPT_RATE:
            if (units_parse_count(optarg, 1000000, &w->rate, &why) < 0 || !w->rate)
                return cli_usage_error("watch", "%s %s: calls a second, 1 to 1000000", opt, optarg);
            break;
        case OPT_STACK: w->stack = 1; break;
        case OPT_FIELDS: w->fields = 1; break;
        case OPT_WHERE: {
            struct watch_where_expr expr;
            char werr[160];
            if (strlen(optarg) >= CONFIG_WATCH_WHERE_MAX)
                return cli_usage_error("watch", "%s: the expression is too long", opt);
            if (watch_where_parse(optarg, &expr, werr, sizeof werr) < 0)
                return cli_usage_error("watch", "%s '%s': %s", opt, optarg, werr);
            w->where = optarg;
            break;
        }
        case 'o':
            if (!optarg[0])
                return cli_usage_error("watch", "%s: an empty file name", opt);
            w->output = optarg;
            break;
        case 'q': w->quiet = 1; break;
        case 'h': fputs(watch_usage, stdout); return -1;
        case ':': return cli_usage_error("watch", "option %s needs a value", opt);
        default: return cli_usage_error("watch", "unknown option '%s'", opt);
        }
    }
    int dashes = optind > 0 && !strcmp(argv[optind - 1], "--");
    if (!dashes && optind < argc) {
        /* PATTERN [-- COMMAND...] */
        w->pattern = argv[optind++];
        if (optind < argc) {
            if (strcmp(argv[optind], "--"))
                return cli_usage_error("watch", "one pattern at a time ('%s' after '%s'); a command "
                                       "goes after --", argv[optind], w->pattern);
            w->command = argv + optind + 1;
            if (!w->command[0])
                return cli_usage_error("watch", "no command after --");
        }
    } else if (dashes) {
        /* -- COMMAND... PATTERN */
        if (argc - optind < 2)
            return cli_usage_error("watch", "-- COMMAND... PATTERN: a command and a pattern");
        w->pattern = argv[argc - 1];
        argv[argc - 1] = NULL;
        w->command = argv + optind;
    }
    if (!w->pattern || !w->pattern[0])
        return cli_usage_error("watch", "no method pattern (usage: corscope watch -p PID "
                               "'Namespace.Type.Method')");
    if (w->pid && w->command)
        return cli_usage_error("watch", "-p and a command: attach to a process or start one, not both");
    if (!w->pid && !w->command)
        return cli_usage_error("watch", "no process: -p PID, or -- COMMAND...");
    /* 'Pricing.Quote(string, int)': the spaces of the parameter list go */
    const char *open = strchr(w->pattern, '(');
    size_t o = 0;
    for (const char *ch = w->pattern; *ch && o + 1 < sizeof w->pattern_text; ch++)
        if (!(open && ch > open && (*ch == ' ' || *ch == '\t')))
            w->pattern_text[o++] = *ch;
    w->pattern_text[o] = '\0';
    const char *close = open ? strchr(open, ')') : NULL;
    if (strlen(w->pattern) >= CONFIG_WATCH_MAX || strpbrk(w->pattern_text, " \n\r\t") ||
        (open && (!close || close[1] || strchr(open + 1, '('))) || (!open && strchr(w->pattern, ')')))
        return cli_usage_error("watch", "'%s': not a method pattern (Namespace.Type.Method, or "
                               "with its parameters' types: 'Type.Method(string,int)')", w->pattern);
    w->pattern = w->pattern_text;
    return 0;
}

static int make_config(const struct watch_run *w, struct config *cfg)
{
    config_defaults(cfg);
    char err[256], num[32];
    const char *level = getenv("CORSCOPE_LOG");
    if (level && config_set(cfg, "log", level, err, sizeof err) < 0)
        return cli_usage_error("watch", "CORSCOPE_LOG=%s: %s", level, err);
    if (config_set(cfg, "event", "none", err, sizeof err) < 0 ||
        config_set(cfg, "watch", w->pattern, err, sizeof err) < 0) {
        cli_error("%s", err);
        return EXIT_WORK_FAILED;
    }
    if (w->where && config_set(cfg, "watch_where", w->where, err, sizeof err) < 0)
        return cli_usage_error("watch", "--where '%s': %s", w->where, err);
    cfg->watch_count = w->count;
    if (w->max_methods)
        cfg->watch_methods = (uint32_t)w->max_methods;
    if (w->rate)
        cfg->watch_rate = (uint32_t)w->rate;
    if (w->stack)
        cfg->watch_stack = STACK_DEPTH;
    cfg->watch_fields = (uint32_t)w->fields;
    (void)num;
    return 0;
}

static int temp_dir(char *dir, size_t size)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, size, "%s/corscope-watch-XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
        cli_error("cannot make a temporary directory in %s: %s", tmp && tmp[0] ? tmp : "/tmp",
                  strerror(errno));
        return -1;
    }
    return 0;
}

static void remove_temp(const char *dir, const char *file)
{
    unlink(file);
    rmdir(dir);
}

static int watch_attached(struct watch_run *w, const struct config *cfg, const char *agent)
{
    struct attach_target t;
    if (attach_check(w->pid, &t) < 0)
        return EXIT_WORK_FAILED;
    char dir[PATH_MAX - 64], file[PATH_MAX];
    if (temp_dir(dir, sizeof dir) < 0)
        return EXIT_WORK_FAILED;
    snprintf(file, sizeof file, "%s/agent.corscope", dir);
    /* the agent's (empty) recording, made here; the agent gets it open over
     * the control line, as record -p's */
    int fd = open(file, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) {
        cli_error("cannot create %s: %s", file, strerror(errno));
        remove_temp(dir, file);
        return EXIT_WORK_FAILED;
    }
    if (!w->quiet && t.dormant)
        fprintf(stderr, "corscope: process %d has corscope's agent loaded since an earlier watch; "
                "it takes this one to watch '%s'%s\n", (int)w->pid, w->pattern,
                w->duration_ns ? "" : "; Ctrl-C to stop");
    else if (!w->quiet)
        fprintf(stderr, "corscope: attaching to process %d to watch '%s'%s\n", (int)w->pid,
                w->pattern, w->duration_ns ? "" : "; Ctrl-C to stop");
    int rc = attach_run_with(&t, cfg, agent, file, fd, w->duration_ns, 1, setup, w);
    close(fd);
    remove_temp(dir, file);
    if (rc && !w->heard)
        return rc; /* the attach failed (said): nothing to sum up */
    if (rc == 0 && !w->quiet && !w->none && !w->nosig && !w->too_many && !w->failed && !w->bad_where)
        fprintf(stderr, "corscope: the watched methods of process %d have their original code "
                "back (RequestRevert)\n", (int)w->pid);
    summary(w);
    return rc ? rc : (w->none || w->nosig || w->too_many || w->failed || w->bad_where) ? EXIT_WORK_FAILED : 0;
}

static int watch_launched(struct watch_run *w, const struct config *cfg, const char *agent)
{
    char dir[PATH_MAX - 64], file[PATH_MAX];
    if (temp_dir(dir, sizeof dir) < 0)
        return EXIT_WORK_FAILED;
    snprintf(file, sizeof file, "%s/agent.corscope", dir);
    struct session sess;
    char err[256];
    if (session_open(&sess, 0, err, sizeof err) < 0) {
        cli_error("%s", err);
        remove_temp(dir, file);
        return EXIT_WORK_FAILED;
    }
    setup(&sess, w);
    w->session = NULL; /* launched: --count stops the lines, not the program */
    struct config c = *cfg;
    snprintf(c.control, sizeof c.control, "%s", sess.address);
    int exec_errno = 0;
    int status = launch_run(w->command, &c, agent, file, &exec_errno, &sess, w->duration_ns, 1);
    session_close(&sess);
    remove_temp(dir, file);
    if (status < 0) {
        if (exec_errno) {
            cli_error("cannot run '%s': %s", w->command[0], strerror(exec_errno));
            return exec_errno == ENOENT ? 127 : 126;
        }
        return EXIT_WORK_FAILED;
    }
    summary(w);
    int code = launch_exit_status(status);
    if (!code && (w->none || w->nosig || w->too_many || w->failed || w->bad_where))
        return EXIT_WORK_FAILED;
    return code;
}

int cmd_watch(int argc, char **argv)
{
    struct watch_run w;
    memset(&w, 0, sizeof w);
    int rc = parse_args(argc, argv, &w);
    if (rc)
        return rc < 0 ? 0 : rc;
    const char *diag = getenv("DOTNET_EnableDiagnostics");
    if (!w.pid && diag && !strcmp(diag, "0")) {
        cli_error("DOTNET_EnableDiagnostics=0 is set, which stops the runtime from loading "
                  "profilers; unset it to watch");
        return EXIT_USAGE;
    }
    char agent[PATH_MAX];
    if (launch_find_agent(agent, sizeof agent) < 0) {
        cli_error("cannot find libcorscope.so beside corscope or in ../lib/corscope");
        return EXIT_WORK_FAILED;
    }
    struct config cfg;
    if ((rc = make_config(&w, &cfg)) != 0)
        return rc;
    if (w.output) {
        w.json = fopen(w.output, "w");
        if (!w.json) {
            cli_error("cannot write %s: %s", w.output, strerror(errno));
            return EXIT_WORK_FAILED;
        }
    }
    w.mono_to_real = clock_ns(CLOCK_REALTIME) - clock_now_ns();
    rc = w.pid ? watch_attached(&w, &cfg, agent) : watch_launched(&w, &cfg, agent);
    if (w.json && fclose(w.json) != 0 && !w.json_failed) {
        cli_error("cannot write %s: %s", w.output, strerror(errno));
        if (!rc)
            rc = EXIT_WORK_FAILED;
    }
    for (size_t i = 0; i < w.method_count; i++)
        mem_free(w.methods[i].durations);
    mem_free(w.methods);
    return rc;
}
