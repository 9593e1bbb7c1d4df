/*
 * async: `corscope async -p PID`: the async operations a running process
 * has pending, as a forest of who awaits whom, at which await, and for how
 * long, like SOS dumpasync but live and without a dump.
 *
 * It is `record -p PID --async=snapshots -d DURATION` (the agent attaches,
 * snapshots the heap's pending operations every 500 ms, detaches; the
 * process runs on) followed by `report -f async` of that recording, kept
 * with -o.  Heap snapshots need .NET 9 or later (ICorProfilerInfo15).
 */
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/report.h"

static const char async_usage[] =
    "usage: corscope async -p PID [options]\n"
    "\n"
    "The async operations a running .NET process (9 or later) has pending: which\n"
    "method is stopped at which await, which operation awaits it, and for how\n"
    "long, from snapshots of its heap (the program pauses for each, as for a\n"
    "collection).  Operations with the same chain are counted on one line.\n"
    "\n"
    "options:\n"
    "  -p, --pid PID          the process\n"
    "  -d, --duration TIME    snapshots over this long, one every 500 ms (default\n"
    "                         2s): how long an operation has waited is known to\n"
    "                         that precision, up to this long\n"
    "  -o, --output FILE      also keep the recording (report -f async FILE)\n"
    "      --limit N          chains shown (default 50; 0: all)\n"
    "  -h, --help\n";

int cmd_async(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"pid", required_argument, NULL, 'p'},    {"duration", required_argument, NULL, 'd'},
        {"output", required_argument, NULL, 'o'}, {"limit", required_argument, NULL, 'l'},
        {"help", no_argument, NULL, 'h'},         {NULL, 0, NULL, 0},
    };
    const char *pid = NULL, *duration = "2s", *output = NULL, *limit = NULL;
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":p:d:o:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'p': pid = optarg; break;
        case 'd': duration = optarg; break;
        case 'o': output = optarg; break;
        case 'l': limit = optarg; break;
        case 'h': fputs(async_usage, stdout); return 0;
        case ':': return cli_usage_error("async", "option %s needs a value", argv[optind - 1]);
        default: return cli_usage_error("async", "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (!pid)
        return cli_usage_error("async", "-p PID names the process");
    if (optind < argc)
        return cli_usage_error("async", "unexpected argument '%s'", argv[optind]);
    char *end = NULL;
    long rows = limit ? strtol(limit, &end, 10) : 50;
    if (limit && (!*limit || *end || rows < 0))
        return cli_usage_error("async", "--limit %s: not a count", limit);

    char dir[PATH_MAX] = "", path[PATH_MAX];
    if (output) {
        snprintf(path, sizeof path, "%s", output);
    } else {
        const char *tmp = getenv("TMPDIR");
        snprintf(dir, sizeof dir, "%s/corscope-async.XXXXXX", tmp && *tmp ? tmp : "/tmp");
        if (!mkdtemp(dir)) {
            cli_error("cannot make a temporary directory in %s", tmp && *tmp ? tmp : "/tmp");
            return EXIT_WORK_FAILED;
        }
        chmod(dir, 0711); /* the process (perhaps another user's) creates nothing here,
                           * but opens the file record made for it */
        snprintf(path, sizeof path, "%s/async.corscope", dir);
    }
    char *rec_argv[] = {"record", "-q", "--force", "--async=snapshots", "-p", (char *)pid,
                        "-d", (char *)duration, "-o", path, NULL};
    int status = cmd_record((int)(sizeof rec_argv / sizeof rec_argv[0]) - 1, rec_argv);
    if (status == 0) {
        const char *recordings[1] = {path};
        status = report_render_limit(recordings, 1, report_find("async"), NULL, rows);
    }
    if (!output) {
        unlink(path);
        rmdir(dir);
    }
    return status;
}
