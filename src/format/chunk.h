/*
 * chunk: the recording's syntax (docs/format.md), read in one place for
 * every reader: the file header, a chunk's framing and checksum, and the
 * records of each chunk tag, decoded through a bounded cursor and handed to
 * the reader's sink one by one.
 *
 * Two readers stand on it: format/recording.c, which loads a whole file
 * into tables (reports), and cli/pstream.c, which reads a recording as it
 * arrives through a pipe and forgets what it no longer needs (push).  What
 * a record says is checked here as far as the syntax goes (ids in range,
 * counts within the format's limits, times that do not overflow, record
 * counts that match the chunk header); whether what it refers to exists is
 * the sink's to say, since only the sink knows what it kept.  So a change
 * of the format is made here, once.
 *
 * Incremental by construction: chunk_frame looks at the bytes there are
 * and says whether a whole chunk is among them; a reader at the end of its
 * input calls the partial one truncated, a reader of a pipe waits for more.
 */
#ifndef CORSCOPE_CHUNK_H
#define CORSCOPE_CHUNK_H

#include <stddef.h>
#include <stdint.h>

#include "common/visibility.h"
#include "format/recording.h"

/* The file header: 0 with its version, or -1 with why. */
HIDDEN int chunk_header(const uint8_t *h, size_t size, uint16_t *major, uint16_t *minor,
                        char *why, size_t why_size);

struct chunk {
    uint32_t tag, len, records;
    const uint8_t *payload;
};

enum chunk_status {
    CHUNK_WHOLE,   /* a whole chunk, its checksum right */
    CHUNK_PARTIAL, /* the bytes end inside it: why says where (truncated, if no more come) */
    CHUNK_BAD,     /* too long, or a wrong checksum: why */
};

/* Frames the chunk at p[0..left); index: how many came before it (for the
 * messages, which count from 1). */
HIDDEN enum chunk_status chunk_frame(const uint8_t *p, size_t left, uint64_t index,
                                     struct chunk *out, char *why, size_t why_size);

/* Its tag as text ('?' for what is not printable). */
HIDDEN const char *chunk_tag_name(uint32_t tag, char out[5]);

/* A sample, as read (time accumulated; ids unchecked but the event's). */
struct chunk_sample {
    uint64_t time, thread, stack, weight;
    uint32_t event; /* the index event_find gave */
};

/* A record's head; its values then fields follow as data[]. */
struct chunk_record {
    uint64_t time, thread, stack;
    uint32_t event; /* the index event_find gave */
};

/* What a reader does with each record: NULL, or why it is refused (the
 * chunk then stops there).  Every callback must be set. */
struct chunk_sink {
    /* The index of event id and its shape, or -1 when it is not defined. */
    long (*event_find)(void *ctx, uint64_t id, uint32_t *values, uint32_t *fields,
                       int *recorded);
    /* Before an event is added: how many the reader has. */
    size_t (*event_count)(void *ctx);
    const char *(*info)(void *ctx, struct rec_str key, struct rec_str value);
    /* EVNT (period, one value named as the event) and EVDF (recorded,
     * period 1, the unit of its first value) alike; the id is new. */
    const char *(*event)(void *ctx, const struct rec_event *e);
    const char *(*string)(void *ctx, uint64_t id, struct rec_str s);
    const char *(*frame)(void *ctx, uint64_t id, uint8_t kind, uint64_t module, uint64_t type,
                         uint64_t name, uint64_t extra);
    const char *(*stack)(void *ctx, uint64_t id, const uint32_t *frames, uint32_t depth);
    const char *(*thread)(void *ctx, uint32_t id, uint64_t tid, uint64_t name);
    const char *(*sample)(void *ctx, const struct chunk_sample *s);
    const char *(*record)(void *ctx, const struct chunk_record *x, const uint64_t *data,
                          size_t n);
    const char *(*stat)(void *ctx, struct rec_str key, uint64_t value);
    const char *(*trailer)(void *ctx, uint64_t chunks);
};

struct chunk_reader {
    const struct chunk_sink *sink;
    void *ctx;
    uint32_t *frames; /* a stack's, as read */
    size_t frame_cap;
};

HIDDEN void chunk_reader_init(struct chunk_reader *rd, const struct chunk_sink *sink, void *ctx);
HIDDEN void chunk_reader_free(struct chunk_reader *rd);

/* Decodes a whole chunk's records into the sink: NULL, or why the first bad
 * one is bad (or the count in the header is not the count found).  A chunk
 * of an unknown tag (a newer minor version's) is skipped. */
HIDDEN const char *chunk_decode(struct chunk_reader *rd, const struct chunk *ch);

#endif
