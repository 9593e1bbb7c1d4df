/*
 * live: the live heap of a recording made with -e live, as a view like any
 * other event's ("live": the sampled allocations still alive, weighed by
 * the bytes and objects they stand for, on their allocating stacks).
 *
 * The agent followed sampled allocations through weak handles and looked
 * at them after collections (src/agent/sources/live.h): each look is a
 * "live-scan" record (as_of: the end of the last collection before it;
 * allocated_before: every allocation taken before this had been handed
 * over), each object found gone a "collected" record.  The live set at
 * time T is taken at the last look whose as_of is at or before T (the end
 * of the run when no T is given): the allocations that carry an object id,
 * taken before both its as_of and its allocated_before, that no
 * "collected" record up to that collection names.  Objects allocated after
 * the last collection are left out, as go tool pprof's inuse_* are: that a
 * young object is still referenced says nothing until a collection has
 * looked.  With no collection at all in the run, every followed allocation
 * counts as live (nothing was ever found dead), and the note says so.
 */
#ifndef CORSCOPE_CLI_LIVE_H
#define CORSCOPE_CLI_LIVE_H

#include <stddef.h>
#include <stdint.h>

#include "common/visibility.h"
#include "format/recording.h"

/* Adds the "live" event and its samples (one per live sampled allocation,
 * at its allocation time) to the recording, as of `at_ns` (ns since the
 * start; UINT64_MAX for the end).  Writes a one-line description of what
 * the view holds into note ("" when the recording has no live data).
 * Returns 0 (also when there is nothing to add), -1 when out of memory. */
HIDDEN int live_derive(struct recording *r, uint64_t at_ns, char *note, size_t note_size);

#endif
