/*
 * timeline: the selected samples of each thread in time order, for the
 * formats that keep time (speedscope, chrome).  Built from a profile's
 * selection; threads with no selected sample are left out.
 */
#ifndef CORSCOPE_TIMELINE_H
#define CORSCOPE_TIMELINE_H

#include <stddef.h>
#include <stdint.h>

#include "cli/profile.h"
#include "common/visibility.h"

struct timeline_thread {
    uint32_t thread;  /* index into rec.threads */
    size_t first;     /* into timeline.order */
    size_t count;
};

struct timeline {
    struct prof_sample *order; /* grouped by thread, each group in time order */
    struct timeline_thread *threads;
    size_t thread_count;
};

HIDDEN int timeline_build(const struct profile *p, struct timeline *t);
HIDDEN void timeline_free(struct timeline *t);
/* A display name for a thread: its name, or "thread TID". */
HIDDEN void timeline_thread_name(const struct profile *p, uint32_t thread, char *out, size_t size);

#endif
