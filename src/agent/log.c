/*
 * log: see log.h.
 */
#include "agent/log.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

#include "agent/control_client.h"

static enum config_log current = CONFIG_LOG_WARN;
static int to_remote;

void log_set_remote(int on)
{
    to_remote = on;
}

void log_set_level(enum config_log level)
{
    current = level;
}

int log_enabled(enum config_log level)
{
    return level <= current;
}

void log_msg(enum config_log level, const char *fmt, ...)
{
    if (level > current)
        return;
    int saved = errno;
    char line[1024];
    int n = snprintf(line, sizeof line, "corscope: ");
    va_list ap;
    va_start(ap, fmt);
    int m = vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, ap);
    va_end(ap);
    size_t len = (size_t)n + (m < 0 ? 0 : (size_t)m);
    if (len > sizeof line - 2)
        len = sizeof line - 2;
    if (to_remote) {
        /* attached: never on the service's stderr; corscope prints it */
        line[len] = '\0';
        control_client_send("log %s", line + n);
        errno = saved;
        return;
    }
    line[len++] = '\n';
    ssize_t w = write(STDERR_FILENO, line, len);
    (void)w;
    errno = saved;
}
