/*
 * fixture: a small but complete recording built with the real writer, for
 * the format, reader and report tests.  Two threads, three managed frames,
 * a native and a synthetic frame, cpu samples in a known proportion.
 */
#ifndef CORSCOPE_TEST_FIXTURE_H
#define CORSCOPE_TEST_FIXTURE_H

#include "common/buf.h"

/* Fills `out` with a recording; finished (with trailer) when `close` is
 * set.  Returns 0 or -1 when the writer failed. */
int fixture_recording(struct buf *out, int close);
/* A writer sink appending to a struct buf. */
int fixture_sink(void *ctx, const void *p, size_t n);

/* What the fixture holds, for assertions. */
enum {
    FIXTURE_SAMPLES = 10,
    FIXTURE_WEIGHT = 12, /* total weight of the samples */
    FIXTURE_THREADS = 2,
    FIXTURE_STACKS = 3,
};

#endif
