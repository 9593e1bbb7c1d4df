/*
 * merge: several recordings, one per process of a tree recorded together
 * (`corscope record -- dotnet build`, a script that starts two programs),
 * read as one, so that every report draws them side by side.
 *
 * Each process becomes a root frame of its own, "[process 4321] dotnet
 * App.dll", above all of its stacks; its threads, strings, frames and
 * stacks are renumbered after the ones before it; its samples are placed on
 * one clock (each recording's start_realtime_ns); counters are summed (the
 * max_ ones take the largest); the status is the worst of them, and the
 * merged INFO says which process ended how.  Events are matched by name;
 * two recordings whose same event has a different period cannot be merged.
 */
#ifndef CORSCOPE_MERGE_H
#define CORSCOPE_MERGE_H

#include <stddef.h>

#include "common/visibility.h"
#include "format/recording.h"

/* Merges n recordings (n >= 1) into *out and frees them (all of them, on
 * success and on failure).  One recording is moved as it is.  Returns 0,
 * or -1 with a one-line reason in err. */
HIDDEN int merge_recordings(struct recording *in, size_t n, struct recording *out, char *err,
                            size_t err_size);

/* The pid a recording's INFO gives, or -1. */
HIDDEN long merge_pid_of(const struct recording *r);

#endif
