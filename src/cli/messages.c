/*
 * messages: the one way the corscope command complains.  Every error is a
 * single line on stderr starting with "corscope: ", so scripts and people
 * can tell our messages from the profiled program's.
 */
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>

#include "cli/cli.h"

void cli_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("corscope: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

void cli_warn(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("corscope: warning: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("corscope: ", stderr);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, " (see 'corscope %s --help')\n", cmd);
    va_end(ap);
    return EXIT_USAGE;
}

void cli_spelled_option(char *out, size_t size, const struct option *longopts, int *longindex,
                        int c, char **argv)
{
    if (*longindex >= 0)
        snprintf(out, size, "--%s", longopts[*longindex].name);
    else if (c == ':' || c == '?')
        snprintf(out, size, "%s", argv[optind - 1]);
    else
        snprintf(out, size, "-%c", c);
    *longindex = -1;
}
