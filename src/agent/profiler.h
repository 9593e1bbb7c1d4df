/*
 * profiler: the ICorProfilerCallback11 object (see profiler.c).
 */
#ifndef CORSCOPE_PROFILER_H
#define CORSCOPE_PROFILER_H

#include "clr/clr_interfaces.h"
#include "common/visibility.h"

/* A new profiler object with one reference, or NULL when out of memory. */
HIDDEN ICorProfilerCallback11 *profiler_create(void);

#endif
