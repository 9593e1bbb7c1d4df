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
#include "format/schema.h"

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

/* The schema's events (format/schema.h) as this recording has them,
 * learnt by name whenever an event is added (the reader's EVDF records,
 * merge, live): the first event of the name, if it is a recorded one, and
 * in it each value of the name and each field of the name and type.  Each
 * an index + 1, 0 when absent; read through rec_event_of and the like. */
struct rec_schema {
    uint16_t event[FMT_EV_COUNT];
    uint8_t value[FMT_EV_COUNT][FMT_MAX_VALUES];
    uint8_t field[FMT_EV_COUNT][FMT_MAX_FIELDS];
};

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
    struct rec_schema schema;
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
/* The number an INFO's value starts with (interval_ns, pid), 0 when it is
 * absent or starts with none. */
HIDDEN uint64_t rec_info_u64(const struct recording *r, const char *key);
/* Latest value of a counter (0 when absent), by key or by the format's name. */
HIDDEN uint64_t rec_stat(const struct recording *r, const char *key);
HIDDEN uint64_t rec_counter(const struct recording *r, enum fmt_counter c);
/* Whether the recording has the counter at all (a writer of the format
 * writes every counter it knows, zeros too: absent means older). */
HIDDEN int rec_has_counter(const struct recording *r, enum fmt_counter c);
HIDDEN int rec_str_eq(struct rec_str s, const char *c);
/* What follows the last '/' of a path (the whole string when it has none). */
HIDDEN struct rec_str rec_str_basename(struct rec_str s);
/* Index of the event named `name` (sampled or recorded), or -1: for names
 * from outside (report --event); the CLI's own use goes by the schema. */
HIDDEN long rec_event_index(const struct recording *r, const char *name);

/* The schema's event `ev` in this recording: its index into r->events, or
 * -1 when the recording has none (an older recording, another -e). */
static inline long rec_event_of(const struct recording *r, enum fmt_ev ev)
{
    uint16_t k = r->schema.event[ev];
    return k && k <= r->event_count ? (long)k - 1 : -1;
}
/* Where its value `v` (FMT_NAME_MEMBER) and its field `f` are in the
 * recording's definition of it, or -1 when absent. */
static inline long rec_value_of(const struct recording *r, enum fmt_ev ev, unsigned v)
{
    return rec_event_of(r, ev) < 0 ? -1 : (long)r->schema.value[ev][v] - 1;
}
static inline long rec_field_of(const struct recording *r, enum fmt_ev ev, unsigned f)
{
    return rec_event_of(r, ev) < 0 ? -1 : (long)r->schema.field[ev][f] - 1;
}

/* A record's values and fields, in its event's order. */
static inline const uint64_t *rec_values(const struct recording *r, const struct rec_record *x)
{
    return r->record_data + x->data;
}
static inline const uint64_t *rec_fields(const struct recording *r, const struct rec_record *x)
{
    return r->record_data + x->data + r->events[x->event].value_count;
}
/* A record of event ev: its value `v` or field `f` (FMT_NAME_MEMBER), 0
 * when the recording's event has none (or x is another event's). */
static inline uint64_t rec_value(const struct recording *r, const struct rec_record *x,
                                 enum fmt_ev ev, unsigned v)
{
    long k = (long)x->event == rec_event_of(r, ev) ? rec_value_of(r, ev, v) : -1;
    return k < 0 ? 0 : rec_values(r, x)[k];
}
static inline uint64_t rec_field(const struct recording *r, const struct rec_record *x,
                                 enum fmt_ev ev, unsigned f)
{
    long k = (long)x->event == rec_event_of(r, ev) ? rec_field_of(r, ev, f) : -1;
    return k < 0 ? 0 : rec_fields(r, x)[k];
}

/* ---- building a recording ------------------------------------------------------------
 * The reader, merge, fold and live add to a recording's tables through
 * these, which grow them.  On failure (out of memory, or ids that would
 * not fit) they change nothing. */

/* The "none" entries, id 0, of strings, frames and stacks: a recording
 * starts with them.  Returns 0 or -1. */
HIDDEN int rec_add_none(struct recording *r);
/* Each returns the new id, 0 on failure.  The string's bytes must live as
 * long as the recording (its image, or static text). */
HIDDEN uint32_t rec_add_string(struct recording *r, struct rec_str s);
HIDDEN uint32_t rec_add_frame(struct recording *r, struct rec_frame f);
/* A stack of `depth` frames: returns where its frame ids go (leaf first),
 * for the caller to fill, and its id in *id; NULL on failure. */
HIDDEN uint32_t *rec_add_stack(struct recording *r, uint32_t depth, uint32_t *id);
/* Each returns 0 or -1. */
HIDDEN int rec_add_thread(struct recording *r, struct rec_thread t);
HIDDEN int rec_add_sample(struct recording *r, struct rec_sample s);
HIDDEN int rec_add_info(struct recording *r, struct rec_str key, struct rec_str value);
/* A record with n words of values and fields (x.data is set here):
 * returns where they go, for the caller to fill; NULL on failure. */
HIDDEN uint64_t *rec_add_record(struct recording *r, struct rec_record x, size_t n);
/* An event (at most 255), learnt by the schema's lookup: returns its
 * index, or -1.  Its names must live as long as the recording. */
HIDDEN long rec_add_event(struct recording *r, const struct rec_event *e);
/* The schema's event `ev` as its definition says, recorded, id 0 (an event
 * the CLI makes: live): its index, or -1. */
HIDDEN long rec_add_schema_event(struct recording *r, enum fmt_ev ev);
/* The counter named `key`, made with value 0 when new; NULL on failure. */
HIDDEN struct rec_stat *rec_stat_slot(struct recording *r, struct rec_str key);

#endif
