/*
 * ps: `corscope ps`, the .NET processes this user can profile, and the
 * look at one process that `record -p` makes before it attaches.
 *
 * A process is .NET when the runtime is mapped in it (libcoreclr.so, or a
 * single-file app host that links it in) or when it has a diagnostics
 * socket (ipc.h).  What is known about it:
 *   - its runtime's version: ProcessInfo2 over the socket (.NET 6 on),
 *     else the version directory libcoreclr.so was loaded from;
 *   - whether a profiler is loaded: there is no way to ask the runtime
 *     without loading one, so this is read from the outside: the startup
 *     variables in /proc/PID/environ (CORECLR_ENABLE_PROFILING=1 and the
 *     library's path, when that library is mapped: one the runtime could
 *     not load is none), a known profiler library in /proc/PID/maps, or
 *     corscope's own thread (named "corscope") for an attached corscope.
 *     corscope's library mapped with no such thread (it stays mapped after
 *     a detach) does not count.  A profiler this does not
 *     know is found only when the runtime refuses the attach.
 */
#ifndef CORSCOPE_PS_H
#define CORSCOPE_PS_H

#include <limits.h>
#include <sys/types.h>

#include "common/visibility.h"

struct dotnet_process {
    pid_t pid;
    uid_t uid;
    int runtime_mapped;       /* libcoreclr in its maps */
    char socket[PATH_MAX];    /* its diagnostics socket, "" when none */
    char version[64];         /* "" when unknown */
    char command[1024];       /* /proc/PID/cmdline, spaces between the words */
    char profiler[128];       /* "" when none is seen, else what is loaded */
    int profiler_is_corscope; /* ... and it is ours, recording now */
    int other_namespace;      /* in another pid or mount namespace (a container) */
    pid_t inner_pid;          /* the pid it knows itself by (container.h) */
};

/* Looks at one process.  Returns 1 when it is .NET (filled in), 0 when it
 * is not, -1 when it cannot be read (gone, or another user's). */
HIDDEN int ps_inspect(pid_t pid, struct dotnet_process *out, int ask_runtime);
/* Major version of a version string ("10.0.12" -> 10), 0 when unknown. */
HIDDEN int ps_major_version(const char *version);


#endif
