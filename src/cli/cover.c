/*
 * cover: `corscope cover [options] -- COMMAND`: code coverage of what the
 * command runs, without building anything differently and without
 * touching a file on disk: the agent rewrites each method of the covered
 * assemblies as the runtime compiles it (agent/sources/cover.c), the
 * counters live in files of a directory made for the run (format/
 * covfile.h), and when the command ends the reports are made from them
 * (covdata.h, one writer per format).
 *
 * The program is started as `record` starts one (its launcher and process
 * tree: `dotnet test` covers every test host and none of the SDK's own
 * processes), with no events recorded: the agent only instruments.
 * `corscope cover report DIR` makes the reports again from counter files
 * kept with --counters.
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/cover_out.h"
#include "cli/covdata.h"
#include "cli/launch.h"
#include "cli/session.h"
#include "common/config.h"


static const char cover_usage[] =
    "usage: corscope cover [options] [--] COMMAND [ARGS...]\n"
    "       corscope cover report DIR [-o FILE]...\n"
    "\n"
    "Runs COMMAND (a .NET program, `dotnet test`, `dotnet App.dll`) and reports\n"
    "which lines and branches of your code it ran.  Each method is rewritten in\n"
    "memory as the runtime compiles it: no build change, nothing on disk touched,\n"
    "and hits survive a process killed mid-run.  Every test host of `dotnet test`\n"
    "is covered, in one report; the .NET SDK's own processes are not.\n"
    "\n"
    "  -o, --output FILE       the report, its format by its extension: .xml\n"
    "                          Cobertura, .info lcov, .html one page, .json;\n"
    "                          several -o for several (default\n"
    "                          coverage.cobertura.xml); an existing file is replaced\n"
    "      --include GLOB      cover only assemblies or types matching GLOB\n"
    "                          ('MyCompany.*', 'MyLib', '*.Services.*'); an assembly\n"
    "                          named by --include is covered even when it would be\n"
    "                          left out (a test assembly, a NuGet package, no PDB:\n"
    "                          then method entries only)\n"
    "      --exclude GLOB      leave out assemblies or types matching GLOB\n"
    "      --counters DIR      keep the counter files in DIR (made if missing) for\n"
    "                          `corscope cover report DIR` (default: a temporary\n"
    "                          directory, removed at the end)\n"
    "  -q, --quiet             no summary table\n"
    "  -h, --help\n"
    "\n"
    "Left out unless --include names them: the .NET framework, NuGet packages,\n"
    "test frameworks and test assemblies (those that reference one), assemblies\n"
    "without a portable PDB (listed).  [ExcludeFromCodeCoverage] is honoured.\n"
    "\n"
    "Exit status: the command's (a failing test run stays a failure), 1 when no\n"
    "report could be made, 2 for a bad command line.\n";

#define MAX_OUTPUTS 8
#define MAX_FILTERS 64

struct cover_run {
    const char *outputs[MAX_OUTPUTS];
    int output_count;
    char include[CONFIG_COVER_FILTER_MAX];
    char exclude[CONFIG_COVER_FILTER_MAX];
    const char *counters;
    int quiet;
};

enum { OPT_INCLUDE = 256, OPT_EXCLUDE, OPT_COUNTERS };

static int add_filter(char *list, const char *glob, const char *opt)
{
    if (!glob[0] || strchr(glob, ',') || strchr(glob, '\n'))
        return cli_usage_error("cover", "%s '%s': not a glob (one per option, no commas)", opt, glob);
    size_t used = strlen(list);
    if (used + strlen(glob) + 2 > CONFIG_COVER_FILTER_MAX)
        return cli_usage_error("cover", "%s: too many filters", opt);
    snprintf(list + used, CONFIG_COVER_FILTER_MAX - used, "%s%s", used ? "," : "", glob);
    return 0;
}

static int parse_args(int argc, char **argv, struct cover_run *run, int commands)
{
    static const struct option longopts[] = {
        {"output", required_argument, NULL, 'o'},     {"include", required_argument, NULL, OPT_INCLUDE},
        {"exclude", required_argument, NULL, OPT_EXCLUDE},
        {"counters", required_argument, NULL, OPT_COUNTERS},
        {"quiet", no_argument, NULL, 'q'},             {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    optind = 1;
    opterr = 0;
    int c, longindex = -1;
    while ((c = getopt_long(argc, argv, commands ? "+:o:qh" : ":o:qh", longopts, &longindex)) != -1) {
        char opt[64];
        cli_spelled_option(opt, sizeof opt, longopts, &longindex, c, argv);
        switch (c) {
        case 'o':
            if (run->output_count == MAX_OUTPUTS)
                return cli_usage_error("cover", "at most %d reports (-o)", MAX_OUTPUTS);
            if (!cover_format_for(optarg))
                return cli_usage_error("cover", "-o %s: unknown report format (formats: %s)", optarg,
                                       cover_format_list());
            run->outputs[run->output_count++] = optarg;
            break;
        case OPT_INCLUDE:
            if (add_filter(run->include, optarg, opt))
                return EXIT_USAGE;
            break;
        case OPT_EXCLUDE:
            if (add_filter(run->exclude, optarg, opt))
                return EXIT_USAGE;
            break;
        case OPT_COUNTERS: run->counters = optarg; break;
        case 'q': run->quiet = 1; break;
        case 'h': fputs(cover_usage, stdout); return -1;
        case ':': return cli_usage_error("cover", "option %s needs a value", opt);
        default: return cli_usage_error("cover", "unknown option '%s'", opt);
        }
    }
    if (!run->output_count)
        run->outputs[run->output_count++] = "coverage.cobertura.xml";
    return 0;
}

/* Every report asked for can be written: made (empty) now, so that a bad
 * path is said before the program runs. */
static int check_outputs(const struct cover_run *run)
{
    for (int i = 0; i < run->output_count; i++) {
        struct stat st;
        if (lstat(run->outputs[i], &st) == 0 && !S_ISREG(st.st_mode)) {
            cli_error("%s is not a regular file", run->outputs[i]);
            return -1;
        }
        FILE *f = fopen(run->outputs[i], "a");
        if (!f) {
            cli_error("cannot write %s: %s", run->outputs[i], strerror(errno));
            return -1;
        }
        fclose(f);
    }
    return 0;
}

static int write_reports(const struct cover_run *run, const char *dir)
{
    struct covdata d;
    char why[512] = "";
    if (covdata_load(&d, dir, run->include, run->exclude, why, sizeof why) < 0) {
        cli_error("no coverage: %s", why);
        return -1;
    }
    int rc = 0;
    for (int i = 0; i < run->output_count; i++) {
        const struct cover_format *fmt = cover_format_for(run->outputs[i]);
        FILE *f = fopen(run->outputs[i], "w");
        if (!f) {
            cli_error("cannot write %s: %s", run->outputs[i], strerror(errno));
            rc = -1;
            continue;
        }
        int w = fmt->write(&d, f);
        if (fclose(f) != 0 || w < 0) {
            cli_error("cannot write %s: %s", run->outputs[i], strerror(errno ? errno : EIO));
            rc = -1;
            continue;
        }
        if (!run->quiet)
            fprintf(stderr, "corscope: %s report -> %s\n", fmt->name, run->outputs[i]);
    }
    if (!run->quiet)
        cover_write_summary(&d, stderr);
    covdata_free(&d);
    return rc;
}

/* The counter directory of a run: --counters DIR (made, and with no
 * counter files of another run), or a fresh temporary one. */
static int make_counters_dir(const struct cover_run *run, char *dir, size_t size)
{
    if (run->counters) {
        if (mkdir(run->counters, 0700) < 0 && errno != EEXIST) {
            cli_error("cannot make %s: %s", run->counters, strerror(errno));
            return -1;
        }
        if (!realpath(run->counters, dir) || strlen(dir) >= size) {
            cli_error("cannot use %s: %s", run->counters, strerror(errno));
            return -1;
        }
        DIR *d = opendir(dir);
        if (!d) {
            cli_error("cannot read %s: %s", dir, strerror(errno));
            return -1;
        }
        struct dirent *e;
        int old = 0;
        while ((e = readdir(d)) != NULL)
            old |= !strncmp(e->d_name, "cover-", 6);
        closedir(d);
        if (old) {
            cli_error("%s holds the counter files of another run (corscope cover report %s "
                      "reports them; empty it to reuse it)", dir, dir);
            return -1;
        }
        return 0;
    }
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, size, "%s/corscope-cover-XXXXXX", tmp && tmp[0] == '/' ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
        cli_error("cannot make a directory for the counters under %s: %s",
                  tmp && tmp[0] == '/' ? tmp : "/tmp", strerror(errno));
        return -1;
    }
    return 0;
}

/* Removes what a run left in a temporary directory, and the directory. */
static void remove_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char path[PATH_MAX + 256];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        unlink(path);
    }
    closedir(d);
    rmdir(dir);
}

static int cover_report(int argc, char **argv)
{
    struct cover_run run;
    memset(&run, 0, sizeof run);
    if (argc < 2)
        return cli_usage_error("cover", "cover report needs the directory of a run's counter files");
    const char *dir = argv[1];
    int rc = parse_args(argc - 1, argv + 1, &run, 0);
    if (rc)
        return rc < 0 ? 0 : rc;
    if (optind < argc - 1)
        return cli_usage_error("cover", "cover report takes one directory ('%s' is one too many)",
                               argv[1 + optind]);
    if (check_outputs(&run) < 0)
        return EXIT_WORK_FAILED;
    return write_reports(&run, dir) < 0 ? EXIT_WORK_FAILED : 0;
}

int cmd_cover(int argc, char **argv)
{
    if (argc >= 2 && !strcmp(argv[1], "report"))
        return cover_report(argc - 1, argv + 1);
    struct cover_run run;
    memset(&run, 0, sizeof run);
    int rc = parse_args(argc, argv, &run, 1);
    if (rc)
        return rc < 0 ? 0 : rc;
    if (optind >= argc)
        return cli_usage_error("cover", "no command to run (usage: corscope cover -- dotnet test)");
    char **cmd = argv + optind;
    const char *diag = getenv("DOTNET_EnableDiagnostics");
    if (diag && !strcmp(diag, "0")) {
        cli_error("DOTNET_EnableDiagnostics=0 is set, which stops the runtime from loading "
                  "profilers; unset it to cover");
        return EXIT_USAGE;
    }
    char agent[PATH_MAX];
    if (launch_find_agent(agent, sizeof agent) < 0) {
        cli_error("cannot find libcorscope.so beside corscope or in ../lib/corscope");
        return EXIT_WORK_FAILED;
    }
    if (check_outputs(&run) < 0)
        return EXIT_WORK_FAILED;
    char dir[PATH_MAX - 64];
    if (make_counters_dir(&run, dir, sizeof dir) < 0)
        return EXIT_WORK_FAILED;

    struct config cfg;
    config_defaults(&cfg);
    char err[256];
    const char *level = getenv("CORSCOPE_LOG");
    if (level && config_set(&cfg, "log", level, err, sizeof err) < 0) {
        if (!run.counters)
            remove_dir(dir);
        return cli_usage_error("cover", "CORSCOPE_LOG=%s: %s", level, err);
    }
    if (config_set(&cfg, "event", "none", err, sizeof err) < 0 ||
        config_set(&cfg, "cover", dir, err, sizeof err) < 0 ||
        config_set(&cfg, "cover_include", run.include, err, sizeof err) < 0 ||
        config_set(&cfg, "cover_exclude", run.exclude, err, sizeof err) < 0) {
        cli_error("%s", err);
        if (!run.counters)
            remove_dir(dir);
        return EXIT_WORK_FAILED;
    }
    /* every process the command starts but the SDK's own (whatever the
     * command: `sh -c "dotnet test ..."` as well as `dotnet test`) */
    cfg.children = CONFIG_CHILDREN_APP;

    struct session sess;
    if (session_open(&sess, 0, err, sizeof err) < 0) {
        cli_error("%s", err);
        if (!run.counters)
            remove_dir(dir);
        return EXIT_WORK_FAILED;
    }
    snprintf(cfg.control, sizeof cfg.control, "%s", sess.address);
    int exec_errno = 0;
    /* the agents' recordings go beside each other in the directory; they
     * hold nothing but the agents' own counts, and are removed with it */
    char first[PATH_MAX];
    snprintf(first, sizeof first, "%s/agent.corscope", dir);
    int status = launch_run(cmd, &cfg, agent, first, &exec_errno, &sess, 0, 1);
    session_close(&sess);
    if (status < 0) {
        if (!run.counters)
            remove_dir(dir);
        if (exec_errno) {
            cli_error("cannot run '%s': %s", cmd[0], strerror(exec_errno));
            return exec_errno == ENOENT ? 127 : 126;
        }
        return EXIT_WORK_FAILED;
    }
    int code = launch_exit_status(status);
    int reported = write_reports(&run, dir);
    if (!run.counters)
        remove_dir(dir);
    if (reported < 0)
        return code ? code : EXIT_WORK_FAILED;
    return code;
}
