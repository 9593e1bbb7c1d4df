/*
 * log: the agent's messages on the profiled program's stderr, each one line
 * starting with "corscope: ", written with a single write(2) so lines from
 * several threads never interleave.  The level comes from CORSCOPE_LOG
 * (default warn).  Never used from a signal handler.  An attached agent's
 * lines go to the corscope command instead (control_client.h), and are dropped
 * when it is gone: a service's output is never changed by us.
 */
#ifndef CORSCOPE_AGENT_LOG_H
#define CORSCOPE_AGENT_LOG_H

#include "common/config.h"
#include "common/visibility.h"

HIDDEN void log_set_level(enum config_log level);
HIDDEN int log_enabled(enum config_log level);
/* Lines to the corscope command (control_client.h) rather than to stderr. */
HIDDEN void log_set_remote(int on);
HIDDEN void log_msg(enum config_log level, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#define log_error(...) log_msg(CONFIG_LOG_ERROR, __VA_ARGS__)
#define log_warn(...) log_msg(CONFIG_LOG_WARN, __VA_ARGS__)
#define log_info(...) log_msg(CONFIG_LOG_INFO, __VA_ARGS__)
#define log_debug(...) log_msg(CONFIG_LOG_DEBUG, __VA_ARGS__)

#endif
