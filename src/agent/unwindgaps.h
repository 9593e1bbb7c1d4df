/*
 * unwindgaps: the native unwinder's gaps, per library, as the recording's
 * unwind_gaps INFO (docs/format.md).
 */
#ifndef CORSCOPE_UNWINDGAPS_H
#define CORSCOPE_UNWINDGAPS_H

#include "agent/recorder.h"
#include "common/visibility.h"

/* Agent thread, at the end of the recording. */
HIDDEN void unwindgaps_record(struct recorder *out);

#endif
