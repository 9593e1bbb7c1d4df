/*
 * fixture: a small but complete recording built with the real writer, for
 * the format, reader and report tests.  Two threads, three managed frames,
 * a native and a synthetic frame, cpu samples in a known proportion.
 */
#ifndef CORSCOPE_TEST_FIXTURE_H
#define CORSCOPE_TEST_FIXTURE_H

#include "agent/recorder.h"
#include "agent/signal/mcode.h"
#include "cli/report.h"
#include "common/buf.h"
#include "format/writer.h"

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

/* The recording write() makes, loaded through filter f into profiles; the
 * fixture recording so.  Return 0 or -1. */
int fixture_profiles_of(int (*write)(struct buf *out), struct profiles *ps, struct prof_filter *f);
int fixture_profiles(struct profiles *p, struct prof_filter *f);
/* Runs a report writer into a string (caller frees), or NULL when it
 * failed. */
char *fixture_render(report_writer w, const struct profile *p, const struct report_options *o);
/* The view of one event of profiles, or NULL. */
const struct profile *fixture_view(const struct profiles *ps, const char *event);

/* A recording of memory events (fixture.c says what it holds), and it
 * loaded into profiles. */
int fixture_memory_recording(struct buf *out);
int fixture_memory_profiles(struct profiles *ps, struct prof_filter *f);
/* Its times are in milliseconds. */
#define MS 1000000ull

/* The handler's table entry for len bytes of code at `code`, its shape
 * decoded from them, permanent. */
struct mcode_entry fixture_mcode_entry(const uint8_t *code, size_t len);

/* Sends stderr to /dev/null (the one-line messages of failures a test
 * provokes on purpose) and back: off returns what on takes. */
int fixture_stderr_off(void);
void fixture_stderr_on(int saved);

/* Opens a recorder (default settings) on a new file made from the mkstemp
 * template path.  Returns 0 or -1. */
int fixture_recorder(struct recorder *rec, char *path);

/* A whole file's bytes (malloc'd; free them), or NULL.  Test data is read
 * from the tree's root, where the unit tests run (tests/unit/data/...). */
uint8_t *fixture_read_file(const char *path, size_t *size);

/* A recording as the push tests read it (test_pstream.c, test_pdefs.c,
 * test_pushreq.c): INFO of a program started 0.3 s into a window of the
 * wall clock, the cpu event and an alloc event, two stacks (a: Hot then
 * Cold, b: Cold) on thread 1.  The caller writes samples and records with
 * r->w, then finishes or flushes it. */
#define FIXTURE_EVERY 1000000000ull
#define FIXTURE_START_REAL (1700000000ull * FIXTURE_EVERY + 300000000ull)
#define FIXTURE_START_MONO 5000000000ull
struct fixture_stream {
    struct writer w;
    struct buf out;
    uint32_t stack_a, stack_b, alloc;
};
struct pstream;
struct pstream_window;
void fixture_stream_begin(struct fixture_stream *r);
/* Feeds the recording to the stream in pieces of `piece` bytes. */
int fixture_stream_feed(struct pstream *s, const struct buf *b, size_t piece);
/* The total weight of a window's samples (UINT64_MAX: not a whole
 * recording), their number in *samples. */
uint64_t fixture_window_weight(const struct pstream_window *w, size_t *samples);

#endif
