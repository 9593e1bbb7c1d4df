/*
 * pprof: the one encoder of profile.proto (github.com/google/pprof) that
 * `report -f pprof` and the uploads to Grafana Pyroscope (push.h) share.
 *
 * By default it draws every view of a profile, each as two sample types
 * named as go tool pprof users know them (samples/count and cpu/nanoseconds,
 * alloc_objects/count and alloc_space/bytes ...), with thread labels; the
 * options narrow it to one view with sample types of the caller's choosing
 * (a Pyroscope profile type: cpu/nanoseconds then cpu_samples/count), the
 * window's own start and length, and no string labels (Pyroscope turns
 * every string label of a sample into a series of its own).
 */
#ifndef CORSCOPE_CLI_PPROF_H
#define CORSCOPE_CLI_PPROF_H

#include <stdint.h>

#include "cli/profile.h"
#include "common/buf.h"
#include "common/visibility.h"

/* What a sample type's values are: the count a path stands for (samples,
 * objects, throws, waits) or its value in the event's unit. */
enum pprof_source { PPROF_COUNT, PPROF_VALUE };

struct pprof_column {
    const char *type, *unit;
    enum pprof_source source;
};

struct pprof_options {
    const struct profile *only;         /* one view (of p->views); NULL = every view */
    const struct pprof_column *columns; /* only's sample types; NULL = count, value */
    size_t column_count;
    const char *period_type, *period_unit; /* NULL = the default sample type's */
    uint64_t period;                       /* 0 = the event's */
    uint64_t time_ns, duration_ns;         /* Unix ns; 0 = the selected samples' span */
    int thread_names;                      /* string labels with the thread's name */
};

/* The options of `report -f pprof`. */
HIDDEN void pprof_defaults(struct pprof_options *o);
/* Appends the encoded (not compressed) profile to out.  Returns 0, or -1
 * when out of memory. */
HIDDEN int pprof_encode(const struct profile *p, const struct pprof_options *o, struct buf *out);
/* Appends in, gzip-compressed, to out.  Returns 0 or -1. */
HIDDEN int pprof_gzip(const void *in, size_t len, struct buf *out);

#endif
