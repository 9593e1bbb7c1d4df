/*
 * proctree: the agent's place in a tree of processes started under
 * `corscope record` (dotnet build, dotnet test, a script that starts
 * several programs): every .NET process of the tree writes a recording of
 * its own, and none truncates another's.
 *
 * record creates the recording it was asked for (-o), empty.  The first
 * process to claim it writes there: it opens the file without truncating,
 * takes an exclusive lock on it (held while it lives) and finds it empty.
 * Every other process, at the same moment or later, writes beside it under
 * its pid: app.corscope, app-4321.corscope (created exclusively: an
 * existing file, from another run, gets -4321-2 ...).
 *
 * In CONFIG_CHILDREN_APP mode (`dotnet run`, `dotnet test`), the processes
 * of the .NET SDK itself (the dotnet command running run, build or test,
 * MSBuild and its nodes, the compiler) are not recorded: their agent steps
 * aside and leaves the profiler's environment to their children, the
 * application among them.
 */
#ifndef CORSCOPE_PROCTREE_H
#define CORSCOPE_PROCTREE_H

#include <stddef.h>

#include "common/visibility.h"

/* Is this process one of the .NET SDK's own (the CLI's verbs, MSBuild,
 * the compiler: anything run from the SDK's directory)? */
HIDDEN int proctree_is_sdk(void);
/* Opens the recording of this process: `path` itself when it is the
 * first to claim it, else path with "-PID" before its extension.  The
 * name chosen goes to `chosen`.  Returns the fd, or -1 with errno. */
HIDDEN int proctree_claim(const char *path, long pid, char *chosen, size_t size);
/* Opens `path` when this process is the first to claim it (it is missing,
 * or empty and not locked: record made it), taking the lock.  Returns the
 * fd, or -1 with errno (EEXIST: another process has it). */
HIDDEN int proctree_claim_first(const char *path);
/* The name beside `path` for a process: "dir/app-4321.corscope"
 * (attempt > 1: "dir/app-4321-2.corscope").  Pure, for tests. */
HIDDEN int proctree_beside(const char *path, long pid, int attempt, char *out, size_t size);

#endif
