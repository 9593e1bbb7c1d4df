/*
 * process_tree: the recordings of a tree of processes, from the command's
 * side.  `corscope record` records every .NET process the command starts
 * (unless --no-children): the first writes the output FILE, each other
 * one a recording beside it, STEM-PID.EXT or STEM-PID-N.EXT (the agent's
 * naming, agent/proctree.h).  After the run the command lists them to
 * summarize and report them, leaving out what an earlier run left there.
 */
#ifndef CORSCOPE_PROCESS_TREE_H
#define CORSCOPE_PROCESS_TREE_H

#include <limits.h>
#include <stddef.h>

#include "common/visibility.h"

/* The most recordings of one tree the command lists. */
#define PROCESS_TREE_MAX 256

/* The recordings beside `path` now: their paths into names[] (sorted, at
 * most max).  Returns how many. */
HIDDEN size_t process_tree_list(const char *path, char (*names)[PATH_MAX], size_t max);
/* `dotnet run`, `dotnet test`: commands whose user means the application
 * they start, not the SDK that builds and starts it. */
HIDDEN int process_tree_runs_an_application(char **cmd);

#endif
