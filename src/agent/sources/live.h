/*
 * live: which sampled allocations are still alive (-e live), followed
 * through weak GC handles, without changing how the GC works.
 *
 * The allocation callback (cooperative mode, on the allocating thread)
 * asks for a short weak handle on the new object: the runtime clears it
 * when a collection finds the object dead, and updates it when the object
 * moves.  The loop keeps the handles it was given, each under a recording
 * id; after collections (at most every LIVE_SCAN_NS, and once at the end)
 * it looks at every handle and records each object found collected.  Dead
 * handles are given back to the runtime by the next allocation callbacks,
 * in cooperative mode like the program's own GCHandle.Free, never by the
 * loop, which may run while a collection scans the handle table.
 *
 * Every handle costs the GC a little (it scans them), so at most
 * `live_max` are held at once; samples past that are not followed and are
 * counted (live_untracked).  What is recorded:
 *   - the allocation's own record carries its id (field `object`);
 *   - "collected": one record per followed object found dead, with the end
 *     of the last collection before the look (field `by`);
 *   - "live-scan": one record per look: `as_of` (the end of the last
 *     collection before it), `allocated_before` (every allocation taken
 *     before this time had been handed over), and how many are followed.
 * A report's live set at time T is then: the allocations with an id taken
 * before the last look's as_of at or before T (and before its
 * allocated_before), less those collected by then.
 */
#ifndef CORSCOPE_LIVE_H
#define CORSCOPE_LIVE_H

#include <stdint.h>

#include "clr/clr_interfaces.h"
#include "common/visibility.h"

struct agent;

/* Looks are at most this often (and after a collection only). */
#define LIVE_SCAN_NS 50000000ull

/* Initialize: follow at most `max` objects at once. */
HIDDEN int live_init(uint32_t max);
/* Loop start: defines the events. */
HIDDEN void live_start(struct agent *a);

/* The allocation callback (cooperative mode): gives back a few dead
 * handles, then a weak handle on the object at `address`, or NULL (the
 * limit is reached, or the runtime refused; both counted). */
HIDDEN ObjectHandleID live_track(ICorProfilerInfo15 *info, ObjectID address);
/* The allocation callback: a handle live_track gave that will not be
 * followed after all (its sample was dropped) goes back at once. */
HIDDEN void live_untrack(ICorProfilerInfo15 *info, ObjectHandleID handle);
/* GarbageCollectionFinished (the collecting thread). */
HIDDEN void live_gc_finished(void);

/* Loop: an allocation taken at taken_ns was handed over (every one is
 * told, followed or not: what came before it is complete). */
HIDDEN void live_seen(uint64_t taken_ns);
/* Loop: follows `handle` under a new id (returned; 0 when it cannot). */
HIDDEN uint64_t live_add(ObjectHandleID handle, uint64_t taken_ns);
/* Loop, each cycle: looks when a collection ended since the last look
 * and LIVE_SCAN_NS passed (always when `final`). */
HIDDEN void live_cycle(struct agent *a, uint64_t now, int final);
/* Loop, last: counters, and frees the table (the handles are left to the
 * runtime, which is shutting down). */
HIDDEN void live_finish(struct agent *a);

#endif
