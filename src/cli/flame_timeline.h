/*
 * flame_timeline: time on the flame graph page.  The page draws a timeline
 * above the graph and redraws the graph from any range of it, so it gets
 * each selected sample rather than sums: per view, the distinct (leaf
 * node, thread) pairs ("keys") and, in time order, each sample's key, time
 * and weight; and, for the whole recording, the runtime's events as marks
 * on the timeline (GC pauses, lock waits, compilations, throws).
 *
 * Times are whole microseconds since the start of the recording (the
 * sample's nanoseconds divided by 1000, rounded down).  A range whose ends
 * are whole microseconds then keeps, in the page, exactly the samples
 * `report --from A --to B` keeps (A <= time < B): floor(t / 1000) >= A
 * exactly when t >= 1000 A, and likewise for B.
 */
#ifndef CORSCOPE_FLAME_TIMELINE_H
#define CORSCOPE_FLAME_TIMELINE_H

#include <stdint.h>
#include <stdio.h>

#include "cli/profile.h"
#include "common/visibility.h"

/* Writes a view's samples as members of the object being written:
 *   "kl":"...","kt":"..."      the distinct (leaf node, thread) pairs, "keys",
 *                              by leaf: each leaf as the difference from the
 *                              one before, and each thread
 *   "tt":"..."                 each sample's time, as the difference from
 *                              the one before (microseconds), in time order
 *   "tk":"..."                 each sample's key
 *   "period":P                 a weight's value in the view's unit
 *   "tw":"..." or "w":W        each sample's weight, or the one weight of all
 *   "tc":"..."                 each sample's count (calls, objects), when
 *                              not 1 for every sample
 * the strings being packed arrays (json_pack), their length first.
 * thread_map maps the recording's thread index to the page's (NULL: the
 * same).  Returns 0, or -1 when out of memory (nothing written then). */
HIDDEN int flame_timeline_samples(FILE *out, const struct profile *p, const uint32_t *thread_map);

/* Writes "span":US,"marks":[...]: the recording's length, and one entry
 * per kind of runtime event it holds, {"kind":..., "name":..., "spans":
 * [start, end, count, busy, ...]} (microseconds; busy is the time the
 * events of a span took), neighbours closer than a 4000th of the
 * recording merged into one span so the list stays short.  Returns 0, or
 * -1 when out of memory. */
HIDDEN int flame_timeline_marks(FILE *out, const struct profile *p);

#endif
