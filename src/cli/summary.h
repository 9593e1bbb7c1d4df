/*
 * summary: the line `corscope record` prints on stderr when a recording is
 * done, read back from the finished file: how long, what each event holds,
 * what was dropped, and how the recording ended ("truncated; ended by
 * SIGKILL", "still being written" when its process outlived the command),
 * and what the profiler's presence changed in the program (report.h).
 */
#ifndef CORSCOPE_SUMMARY_H
#define CORSCOPE_SUMMARY_H

#include "common/visibility.h"

/* Prints the summary of the recording at path.  seconds: how long the
 * command ran, or < 0 for the process's own time, from its recording (the
 * command's is not its own when the command ran other processes too);
 * many: one of several recordings, each named by its process.  Returns 0
 * when a recording exists, -1 when the agent never wrote one. */
HIDDEN int summary_print(const char *path, double seconds, int quiet, int many);

#endif
