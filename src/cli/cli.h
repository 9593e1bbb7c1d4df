/*
 * cli: what the corscope command's modules share: the subcommand entry
 * points, and the one way to complain (`corscope: ...` on stderr).
 *
 * Exit status convention of every subcommand: 0 success, 1 the work failed
 * (unreadable recording, unwritable output), 2 the command line was wrong.
 * `record` returns the profiled program's status instead (128+signal when
 * it was killed), and `check` uses 3 for a readable but truncated recording.
 */
#ifndef CORSCOPE_CLI_H
#define CORSCOPE_CLI_H

#include <stdio.h>

#include "common/visibility.h"

enum { EXIT_WORK_FAILED = 1, EXIT_USAGE = 2, EXIT_TRUNCATED = 3 };

HIDDEN int cmd_record(int argc, char **argv);
HIDDEN int cmd_report(int argc, char **argv);
HIDDEN int cmd_check(int argc, char **argv);
HIDDEN int cmd_ps(int argc, char **argv);
HIDDEN int cmd_async(int argc, char **argv);
HIDDEN int cmd_cover(int argc, char **argv);
HIDDEN int cmd_watch(int argc, char **argv);

struct option;
/* The option getopt_long just returned (c, and *longindex, which it resets
 * to -1) as the user spelled it ("--output", "-o", or the unknown word),
 * for messages. */
HIDDEN void cli_spelled_option(char *out, size_t size, const struct option *longopts,
                               int *longindex, int c, char **argv);
/* Prints "corscope: <message>\n" on stderr. */
HIDDEN void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Prints "corscope: warning: <message>\n" on stderr. */
HIDDEN void cli_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* For a bad command line: the error plus a pointer to --help; returns 2. */
HIDDEN int cli_usage_error(const char *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
