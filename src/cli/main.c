/*
 * main: the corscope command.  Dispatches to a subcommand (record, report,
 * check, ps) and answers --help and --version.  Each subcommand parses its own
 * options; see cli.h for the exit status convention.
 */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/push.h"

static const char usage[] =
    "usage: corscope <command> [options]\n"
    "\n"
    "commands:\n"
    "  record   run a .NET program under the profiler and write a recording\n"
    "  report   turn a recording into a report (collapsed stacks, top methods)\n"
    "  check    validate a recording and say what is wrong with it\n"
    "  ps       list the running .NET processes you can attach to (record -p)\n"
    "  async    the pending async operations of a running process, who awaits whom\n"
    "  push     send a recording to Grafana Pyroscope (record --push does it live)\n"
    "  cover    run a .NET program or `dotnet test` and report its code coverage\n"
    "  watch    show each call of named methods (arguments, result, time), live\n"
    "\n"
    "  corscope <command> --help    options of one command\n"
    "  corscope --version           version of corscope and its file format\n"
    "\n"
    "example:\n"
    "  corscope record -o app.corscope -- dotnet App.dll\n"
    "  corscope record -p 4242 -d 30s -o svc.html\n"
    "  corscope report -f top app.corscope\n"
    "  corscope cover -o coverage.html -- dotnet test\n"
    "  corscope watch -p 4242 -d 30s 'MyApp.Pricing.Quote'\n";

int main(int argc, char **argv)
{
    if (argc < 2) {
        fputs(usage, stderr);
        return EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
        fputs(usage, stdout);
        return 0;
    }
    if (!strcmp(cmd, "--version") || !strcmp(cmd, "-V")) {
        printf("corscope %s (recording format 1.0)\n", CORSCOPE_VERSION);
        return 0;
    }
    if (!strcmp(cmd, "record"))
        return cmd_record(argc - 1, argv + 1);
    if (!strcmp(cmd, "report"))
        return cmd_report(argc - 1, argv + 1);
    if (!strcmp(cmd, "check"))
        return cmd_check(argc - 1, argv + 1);
    if (!strcmp(cmd, "ps"))
        return cmd_ps(argc - 1, argv + 1);
    if (!strcmp(cmd, "async"))
        return cmd_async(argc - 1, argv + 1);
    if (!strcmp(cmd, "push"))
        return cmd_push(argc - 1, argv + 1);
    if (!strcmp(cmd, "cover"))
        return cmd_cover(argc - 1, argv + 1);
    if (!strcmp(cmd, "watch"))
        return cmd_watch(argc - 1, argv + 1);
    cli_error("unknown command '%s' (commands: record, report, check, ps, async, push, cover, "
              "watch; see 'corscope --help')", cmd);
    return EXIT_USAGE;
}
