/*
 * runtime_share: how much of a recording's time the runtime spent in its own
 * code, and how much of that the agent could name by what the runtime was
 * doing (a label frame: [JIT] Type.Method, [load type] T, [GC gen0],
 * [prepare] M ...).  A sample is the runtime's when, below its innermost
 * managed frame (or anywhere, when it has none), there is a frame of the
 * runtime's libraries or a label.  `check` prints it; the tests and
 * docs/performance.md measure naming with it.
 */
#ifndef CORSCOPE_RUNTIME_SHARE_H
#define CORSCOPE_RUNTIME_SHARE_H

#include <stdint.h>

#include "common/visibility.h"
#include "format/recording.h"

struct runtime_share {
    uint64_t samples; /* weight of the event's samples */
    uint64_t runtime; /* of those, in the runtime */
    uint64_t named;   /* of those, with a label */
};

/* Counts the samples of event index `event` (as recorded, unfolded).
 * Returns 0, or -1 when out of memory. */
HIDDEN int runtime_share_count(const struct recording *r, size_t event, struct runtime_share *out);

#endif
