/*
 * writer: encodes records into per-table chunk buffers and writes whole
 * chunks to a sink (docs/format.md).
 *
 * The writer does not deduplicate: the caller (the agent's recorder) decides
 * what is new and asks for an id.  Ids of strings, frames and stacks are
 * handed out sequentially from 1.  Buffers are flushed in dependency order
 * (strings before frames before stacks before samples), one chunk per
 * non-empty table, so a reader never meets a reference to something it has
 * not yet read.  A flush is one write per chunk: if the process dies
 * between chunks, the file ends on a chunk boundary or inside one chunk,
 * which the reader detects by length and CRC.
 *
 * Errors: the first failed write (or allocation) latches `error` (an errno
 * value); from then on every call is a cheap no-op, and the owner reports
 * the error once.  Not thread-safe: one thread owns a writer.
 */
#ifndef CORSCOPE_WRITER_H
#define CORSCOPE_WRITER_H

#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "common/visibility.h"
#include "format/format.h"

struct writer_sink {
    /* Writes all n bytes or returns -1 with errno set. */
    int (*write)(void *ctx, const void *data, size_t n);
    void *ctx;
};

struct writer {
    struct writer_sink sink;
    struct buf chunk[FMT_CHUNK_COUNT];
    uint32_t records[FMT_CHUNK_COUNT];
    uint64_t chunks_written;
    uint64_t bytes_written;
    uint64_t records_made; /* every record appended, flushed or not */
    uint64_t sample_time; /* time of the previous sample in the open SMPL chunk */
    uint64_t record_time; /* the same for the open EVTR chunk */
    uint32_t next_string;
    uint32_t next_frame;
    uint32_t next_stack;
    size_t flush_threshold; /* flush when buffered bytes exceed this */
    int hold;               /* > 0: no write when the buffers grow (the owner holds
                             * a lock that a callback may wait for); the next
                             * record after the hold, or a flush, writes */
    int error;              /* errno of the first failure, 0 while healthy */
    int finished;
};

/* Writes the header.  Returns 0 or -1 (w->error set). */
HIDDEN int writer_begin(struct writer *w, struct writer_sink sink);
HIDDEN void writer_info(struct writer *w, const char *key, const char *value);
HIDDEN void writer_event(struct writer *w, uint32_t id, const char *name, const char *unit,
                       uint64_t period);
/* A recorded event: its values (name, unit) and fields (name, enum
 * fmt_field_type), at most FMT_MAX_VALUES and FMT_MAX_FIELDS. */
struct writer_event_def {
    uint32_t id;
    const char *name;
    uint32_t value_count;
    const char *value_names[FMT_MAX_VALUES];
    const char *value_units[FMT_MAX_VALUES];
    uint32_t field_count;
    const char *field_names[FMT_MAX_FIELDS];
    uint8_t field_types[FMT_MAX_FIELDS];
};
HIDDEN void writer_event_def(struct writer *w, const struct writer_event_def *d);
/* Each returns the new id, or 0 when the writer has failed. */
HIDDEN uint32_t writer_string(struct writer *w, const char *s, size_t len);
HIDDEN uint32_t writer_frame(struct writer *w, enum fmt_frame_kind kind, uint32_t module_sid,
                           uint32_t type_sid, uint32_t name_sid, uint64_t extra);
HIDDEN uint32_t writer_stack(struct writer *w, const uint32_t *frames_leaf_first, uint32_t depth);
/* Defines or redefines (renames) a thread. */
HIDDEN void writer_thread(struct writer *w, uint32_t id, uint64_t os_tid, uint32_t name_sid);
/* time_ns: nanoseconds since the recording started; must not go backwards
 * within a chunk (the writer clamps it). */
HIDDEN void writer_sample(struct writer *w, uint32_t event, uint32_t thread, uint64_t time_ns,
                        uint32_t stack, uint64_t weight);
/* One recorded event: `values` and `fields` as many as its definition has
 * (signed fields already zigzag-encoded); thread and stack 0 = none.
 * time_ns may be earlier than the previous record's (a signed delta). */
HIDDEN void writer_record(struct writer *w, uint32_t event, uint32_t thread, uint64_t time_ns,
                          uint32_t stack, const uint64_t *values, uint32_t value_count,
                          const uint64_t *fields, uint32_t field_count);
HIDDEN void writer_stat(struct writer *w, const char *key, uint64_t value);
/* Bytes waiting in the buffers. */
HIDDEN size_t writer_pending(const struct writer *w);
/* Writes every non-empty buffer as a chunk.  Returns 0 or -1. */
HIDDEN int writer_flush(struct writer *w);
/* Flushes, then writes the trailer: the number of chunks before it and the
 * final counters (key/value pairs).  Returns 0 or -1. */
HIDDEN int writer_finish(struct writer *w, const char *const *keys, const uint64_t *values,
                       size_t count);
/* Frees the buffers (does not close the sink). */
HIDDEN void writer_free(struct writer *w);

#endif
