/*
 * reader: loads a recording into memory and validates it (docs/format.md).
 *
 * The reader trusts nothing in the file.  It checks the header, then each
 * chunk's length and CRC, then every record: ids must be sequential and
 * every reference must point to something already defined.  It stops at the
 * first chunk that fails and keeps everything before it, so a recording cut
 * short by a dying process is reported as "truncated" with its readable
 * part, and a damaged one as "corrupt" with the offset of the damage.  It
 * never reads outside the buffer, never allocates more than a bounded
 * multiple of the file size, and never aborts.
 *
 * Strings point into the loaded file image, which the recording owns.
 */
#ifndef CORSCOPE_READER_H
#define CORSCOPE_READER_H

#include <stddef.h>
#include <stdint.h>

#include "common/visibility.h"
#include "format/format.h"

enum rec_status {
    REC_COMPLETE,  /* trailer present, counts agree */
    REC_TRUNCATED, /* no trailer: file ends at or inside the last chunk */
    REC_CORRUPT,   /* a damaged chunk or record; data before it is kept */
};

struct rec_str {
    const char *p; /* not NUL-terminated */
    uint32_t len;
};

struct rec_kv {
    struct rec_str key;
    struct rec_str value;
};

struct rec_stat {
    struct rec_str key;
    uint64_t value;
};

/* An event: a sampled one (EVNT: one value, weight x period in `unit`) or
 * a recorded one (EVDF: up to FMT_MAX_VALUES named values, the first in
 * `unit`, and typed fields). */
struct rec_event {
    uint32_t id;
    struct rec_str name;
    struct rec_str unit;   /* of the first value */
    uint64_t period;       /* 1 for recorded events */
    int recorded;          /* defined by EVDF: records carry values and fields */
    uint32_t value_count;
    struct rec_str value_names[FMT_MAX_VALUES];
    struct rec_str value_units[FMT_MAX_VALUES];
    uint32_t field_count;
    struct rec_str field_names[FMT_MAX_FIELDS];
    uint8_t field_types[FMT_MAX_FIELDS];
};

struct rec_frame {
    uint8_t kind;
    uint32_t module; /* string ids; 0 = none */
    uint32_t type;
    uint32_t name;
    uint64_t extra; /* managed: generic arity of the method; native: offset */
};

struct rec_stack {
    uint32_t offset; /* into recording.stack_frames */
    uint32_t depth;
};

struct rec_thread {
    uint32_t id;
    uint64_t os_tid;
    uint32_t name; /* string id of the latest name */
};

/* A stack weighed by an event: every SMPL record, and every EVTR record
 * that has a stack.  32 bytes: a recording of a million samples stays well
 * under its budget of ten times the file size in memory. */
struct rec_sample {
    uint64_t time;   /* ns since the start of the recording */
    uint64_t weight; /* SMPL: periods of its event; EVTR: its first value */
    uint64_t count;  /* SMPL: 1; EVTR: its second value, or 1 when it has one */
    uint32_t stack;
    uint32_t thread : 24; /* index into recording.threads */
    uint32_t event : 8;   /* index into recording.events */
};

/* An EVTR record: values then fields, back to back in record_data. */
struct rec_record {
    uint64_t time;
    uint32_t data;        /* index into recording.record_data */
    uint32_t stack;       /* 0 = none */
    uint32_t thread : 24; /* index into recording.threads + 1, 0 = none */
    uint32_t event : 8;   /* index into recording.events */
};

#define REC_MAX_THREADS (1u << 24)

struct recording {
    uint8_t *image; /* the whole file */
    size_t size;
    uint16_t version_major, version_minor;

    enum rec_status status;
    char problem[256];    /* what is wrong, for humans; empty when complete */
    size_t problem_offset; /* where the reader stopped */
    uint64_t chunks;
    uint64_t trailer_chunks; /* chunk count the trailer claims */

    struct rec_kv *info;
    size_t info_count, info_cap;
    struct rec_event *events;
    size_t event_count, event_cap;
    struct rec_str *strings; /* index = id; [0] is the empty string */
    size_t string_count, string_cap;
    struct rec_frame *frames; /* index = id; [0] unused */
    size_t frame_count, frame_cap;
    struct rec_stack *stacks; /* index = id; [0] unused */
    size_t stack_count, stack_cap;
    uint32_t *stack_frames; /* frame ids, leaf first */
    size_t stack_frame_count, stack_frame_cap;
    struct rec_thread *threads;
    size_t thread_count, thread_cap;
    struct rec_sample *samples;
    size_t sample_count, sample_cap;
    struct rec_record *records;
    size_t record_count, record_cap;
    uint64_t *record_data;
    size_t record_data_count, record_data_cap;
    struct rec_stat *stats; /* latest value of each counter */
    size_t stat_count, stat_cap;
    int has_trailer;
};

/* Loads and validates.  Returns 0 when at least the header was readable
 * (check r->status for the rest), or -1 with a one-line reason in err when
 * the file cannot be read at all or is not a recording. */
HIDDEN int rec_load_file(const char *path, struct recording *r, char *err, size_t err_size);
/* Same over bytes in memory; the recording copies them. */
HIDDEN int rec_load_memory(const void *data, size_t size, struct recording *r, char *err,
                           size_t err_size);
HIDDEN void rec_free(struct recording *r);

HIDDEN const char *rec_status_name(enum rec_status s);
/* Value of an INFO key, or NULL. */
HIDDEN const struct rec_str *rec_info(const struct recording *r, const char *key);
/* Latest value of a counter (0 when absent). */
HIDDEN uint64_t rec_stat(const struct recording *r, const char *key);
/* Index of the thread with this id, or -1. */
HIDDEN int rec_str_eq(struct rec_str s, const char *c);
/* What follows the last '/' of a path (the whole string when it has none). */
HIDDEN struct rec_str rec_str_basename(struct rec_str s);
/* Index of the event named `name`, or -1. */
HIDDEN long rec_event_index(const struct recording *r, const char *name);
/* Index of a recorded event's field or value named `name`, or -1. */
HIDDEN long rec_field_index(const struct rec_event *e, const char *name);
HIDDEN long rec_value_index(const struct rec_event *e, const char *name);
/* A record's values and fields. */
static inline const uint64_t *rec_values(const struct recording *r, const struct rec_record *x)
{
    return r->record_data + x->data;
}
static inline const uint64_t *rec_fields(const struct recording *r, const struct rec_record *x)
{
    return r->record_data + x->data + r->events[x->event].value_count;
}

#endif
