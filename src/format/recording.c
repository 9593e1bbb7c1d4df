/*
 * recording: see recording.h.  Decoding is one loop over chunks and one function
 * per chunk tag; each record is decoded through a bounded cursor and
 * validated before it is added, so a bad record leaves the tables as they
 * were after the last good chunk.
 */
#include "format/recording.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/crc32.h"
#include "common/hash.h"
#include "common/mem.h"

/* Grows r->ARR (its count and cap named PRE_count, PRE_cap) to hold n more
 * entries; evaluates to 0 or -1. */
#define GROW(r, arr, pre, n)                                                                   \
    mem_grow_array((void **)&(r)->arr, &(r)->pre##_cap, (r)->pre##_count + (n), sizeof *(r)->arr)

struct loader {
    struct recording *r;
    size_t offset;    /* of the chunk being decoded */
    uint64_t records; /* decoded in the current chunk */
    /* thread id -> index + 1, open addressing */
    uint32_t *thread_keys;
    uint32_t *thread_slots;
    size_t thread_table_size;
};

static void set_problem(struct recording *r, enum rec_status status, size_t offset,
                        const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static void set_problem(struct recording *r, enum rec_status status, size_t offset,
                        const char *fmt, ...)
{
    r->status = status;
    r->problem_offset = offset;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->problem, sizeof r->problem, fmt, ap);
    va_end(ap);
}

static struct rec_str str_of(const uint8_t *p, size_t n)
{
    struct rec_str s = {(const char *)p, (uint32_t)n};
    return s;
}

long rec_event_index(const struct recording *r, const char *name)
{
    for (size_t i = 0; i < r->event_count; i++)
        if (rec_str_eq(r->events[i].name, name))
            return (long)i;
    return -1;
}

int rec_str_eq(struct rec_str s, const char *c)
{
    size_t n = strlen(c);
    return s.len == n && memcmp(s.p, c, n) == 0;
}

struct rec_str rec_str_basename(struct rec_str s)
{
    for (uint32_t i = s.len; i > 0; i--) {
        if (s.p[i - 1] == '/') {
            struct rec_str b = {s.p + i, s.len - i};
            return b;
        }
    }
    return s;
}

/* ---- the schema's lookup ----------------------------------------------- */

/* The name is a sampled event's: the schema's event is absent. */
#define SCHEMA_TAKEN UINT16_MAX

/* Learns event k, if it is the first of a schema event's name. */
static void learn_event(struct recording *r, size_t k)
{
    const struct rec_event *e = &r->events[k];
    for (int ev = 0; ev < FMT_EV_COUNT; ev++) {
        const struct schema_event *s = &schema_events[ev];
        if (r->schema.event[ev] || !rec_str_eq(e->name, s->name))
            continue;
        r->schema.event[ev] = e->recorded ? (uint16_t)(k + 1) : SCHEMA_TAKEN;
        for (uint32_t v = 0; v < s->value_count && e->recorded; v++) {
            for (uint32_t i = 0; i < e->value_count; i++) {
                if (rec_str_eq(e->value_names[i], s->values[v].name)) {
                    r->schema.value[ev][v] = (uint8_t)(i + 1);
                    break;
                }
            }
        }
        for (uint32_t f = 0; f < s->field_count && e->recorded; f++) {
            for (uint32_t i = 0; i < e->field_count; i++) {
                if (e->field_types[i] == s->fields[f].type &&
                    rec_str_eq(e->field_names[i], s->fields[f].name)) {
                    r->schema.field[ev][f] = (uint8_t)(i + 1);
                    break;
                }
            }
        }
    }
}

static void learn_events(struct recording *r)
{
    memset(&r->schema, 0, sizeof r->schema);
    for (size_t k = 0; k < r->event_count; k++)
        learn_event(r, k);
}

/* ---- building ------------------------------------------------------------ */

int rec_add_none(struct recording *r)
{
    if (GROW(r, strings, string, 1) || GROW(r, frames, frame, 1) || GROW(r, stacks, stack, 1))
        return -1;
    r->strings[r->string_count++] = str_of((const uint8_t *)"", 0);
    memset(&r->frames[r->frame_count++], 0, sizeof *r->frames);
    memset(&r->stacks[r->stack_count++], 0, sizeof *r->stacks);
    return 0;
}

uint32_t rec_add_string(struct recording *r, struct rec_str s)
{
    if (r->string_count >= UINT32_MAX || GROW(r, strings, string, 1))
        return 0;
    r->strings[r->string_count] = s;
    return (uint32_t)r->string_count++;
}

uint32_t rec_add_frame(struct recording *r, struct rec_frame f)
{
    if (r->frame_count >= UINT32_MAX - 1 || GROW(r, frames, frame, 1))
        return 0;
    r->frames[r->frame_count] = f;
    return (uint32_t)r->frame_count++;
}

uint32_t *rec_add_stack(struct recording *r, uint32_t depth, uint32_t *id)
{
    if (r->stack_count >= UINT32_MAX - 1 || r->stack_frame_count + depth >= UINT32_MAX ||
        GROW(r, stack_frames, stack_frame, depth) || GROW(r, stacks, stack, 1))
        return NULL;
    uint32_t *frames = r->stack_frames + r->stack_frame_count;
    r->stacks[r->stack_count] = (struct rec_stack){(uint32_t)r->stack_frame_count, depth};
    r->stack_frame_count += depth;
    *id = (uint32_t)r->stack_count++;
    return frames;
}

int rec_add_thread(struct recording *r, struct rec_thread t)
{
    if (r->thread_count >= REC_MAX_THREADS || GROW(r, threads, thread, 1))
        return -1;
    r->threads[r->thread_count++] = t;
    return 0;
}

int rec_add_sample(struct recording *r, struct rec_sample s)
{
    if (GROW(r, samples, sample, 1))
        return -1;
    r->samples[r->sample_count++] = s;
    return 0;
}

int rec_add_info(struct recording *r, struct rec_str key, struct rec_str value)
{
    if (GROW(r, info, info, 1))
        return -1;
    r->info[r->info_count++] = (struct rec_kv){key, value};
    return 0;
}

uint64_t *rec_add_record(struct recording *r, struct rec_record x, size_t n)
{
    if (r->record_data_count + n > UINT32_MAX || GROW(r, record_data, record_data, n) ||
        GROW(r, records, record, 1))
        return NULL;
    x.data = (uint32_t)r->record_data_count;
    r->records[r->record_count++] = x;
    r->record_data_count += n;
    return r->record_data + x.data;
}

long rec_add_event(struct recording *r, const struct rec_event *e)
{
    if (r->event_count >= 255 || GROW(r, events, event, 1))
        return -1;
    r->events[r->event_count] = *e;
    learn_event(r, r->event_count);
    return (long)r->event_count++;
}

static struct rec_str str_of_text(const char *text)
{
    return str_of((const uint8_t *)text, strlen(text));
}

long rec_add_schema_event(struct recording *r, enum fmt_ev ev)
{
    const struct schema_event *s = &schema_events[ev];
    struct rec_event e;
    memset(&e, 0, sizeof e);
    e.name = str_of_text(s->name);
    e.period = 1;
    e.recorded = 1;
    e.value_count = s->value_count;
    for (uint32_t i = 0; i < s->value_count; i++) {
        e.value_names[i] = str_of_text(s->values[i].name);
        e.value_units[i] = str_of_text(s->values[i].unit);
    }
    e.unit = e.value_units[0];
    e.field_count = s->field_count;
    for (uint32_t i = 0; i < s->field_count; i++) {
        e.field_names[i] = str_of_text(s->fields[i].name);
        e.field_types[i] = s->fields[i].type;
    }
    return rec_add_event(r, &e);
}

struct rec_stat *rec_stat_slot(struct recording *r, struct rec_str key)
{
    for (size_t i = 0; i < r->stat_count; i++)
        if (r->stats[i].key.len == key.len && memcmp(r->stats[i].key.p, key.p, key.len) == 0)
            return &r->stats[i];
    if (GROW(r, stats, stat, 1))
        return NULL;
    r->stats[r->stat_count] = (struct rec_stat){key, 0};
    return &r->stats[r->stat_count++];
}

/* ---- thread id map ---------------------------------------------------- */

static long thread_lookup(const struct loader *l, uint32_t id)
{
    if (!l->thread_table_size)
        return -1;
    size_t mask = l->thread_table_size - 1;
    for (size_t i = hash_u64(id) & mask;; i = (i + 1) & mask) {
        if (l->thread_slots[i] == 0)
            return -1;
        if (l->thread_keys[i] == id)
            return (long)l->thread_slots[i] - 1;
    }
}

static int thread_insert(struct loader *l, uint32_t id, uint32_t index)
{
    if ((l->r->thread_count + 1) * 2 > l->thread_table_size) {
        size_t n = l->thread_table_size ? l->thread_table_size * 2 : 64;
        uint32_t *keys = mem_calloc(n, sizeof *keys);
        uint32_t *slots = mem_calloc(n, sizeof *slots);
        if (!keys || !slots) {
            mem_free(keys);
            mem_free(slots);
            return -1;
        }
        for (size_t i = 0; i < l->thread_table_size; i++) {
            if (!l->thread_slots[i])
                continue;
            size_t j = hash_u64(l->thread_keys[i]) & (n - 1);
            while (slots[j])
                j = (j + 1) & (n - 1);
            keys[j] = l->thread_keys[i];
            slots[j] = l->thread_slots[i];
        }
        mem_free(l->thread_keys);
        mem_free(l->thread_slots);
        l->thread_keys = keys;
        l->thread_slots = slots;
        l->thread_table_size = n;
    }
    size_t mask = l->thread_table_size - 1;
    size_t i = hash_u64(id) & mask;
    while (l->thread_slots[i])
        i = (i + 1) & mask;
    l->thread_keys[i] = id;
    l->thread_slots[i] = index + 1;
    return 0;
}


/* ---- chunk decoders --------------------------------------------------- */
/* Each returns NULL on success or a description of the first bad record.
 * They add entries as they go; on failure the caller rolls the counts back
 * to the values saved before the chunk. */

static const char *oom = "out of memory";

/* The index of the event whose id is `id`, or -1 (ids are unique: a
 * second definition is refused). */
static long event_index(const struct recording *r, uint64_t id)
{
    for (size_t i = 0; i < r->event_count; i++)
        if (r->events[i].id == id)
            return (long)i;
    return -1;
}

static const char *decode_info(struct loader *l, struct cur *c)
{
    struct recording *r = l->r;
    while (cur_left(c)) {
        l->records++;
        size_t kn, vn;
        const uint8_t *k = cur_bytes(c, &kn);
        const uint8_t *v = cur_bytes(c, &vn);
        if (c->err)
            return c->err;
        if (rec_add_info(r, str_of(k, kn), str_of(v, vn)) < 0)
            return oom;
    }
    return NULL;
}

static const char *decode_events(struct loader *l, struct cur *c)
{
    struct recording *r = l->r;
    while (cur_left(c)) {
        l->records++;
        struct rec_event e;
        size_t nn, un;
        uint64_t id = cur_varint(c);
        const uint8_t *name = cur_bytes(c, &nn);
        const uint8_t *unit = cur_bytes(c, &un);
        e.period = cur_varint(c);
        if (c->err)
            return c->err;
        if (id == 0 || id > UINT32_MAX)
            return "event id out of range";
        if (event_index(r, id) >= 0)
            return "event defined twice";
        if (e.period == 0)
            return "event period is zero";
        memset(&e.recorded, 0, sizeof e - offsetof(struct rec_event, recorded));
        e.id = (uint32_t)id;
        e.name = str_of(name, nn);
        e.unit = str_of(unit, un);
        e.value_count = 1;
        e.value_names[0] = e.name;
        e.value_units[0] = e.unit;
        if (r->event_count >= 255)
            return "too many events";
        if (rec_add_event(r, &e) < 0)
            return oom;
    }
    return NULL;
}

static const char *decode_event_defs(struct loader *l, struct cur *c)
{
    struct recording *r = l->r;
    while (cur_left(c)) {
        l->records++;
        struct rec_event e;
        memset(&e, 0, sizeof e);
        size_t n;
        uint64_t id = cur_varint(c);
        const uint8_t *name = cur_bytes(c, &n);
        e.name = str_of(name, n);
        uint64_t values = cur_varint(c);
        if (c->err)
            return c->err;
        if (values < 1 || values > FMT_MAX_VALUES)
            return "event has too many or no values";
        e.value_count = (uint32_t)values;
        for (uint32_t i = 0; i < e.value_count; i++) {
            const uint8_t *vn = cur_bytes(c, &n);
            e.value_names[i] = str_of(vn, n);
            const uint8_t *vu = cur_bytes(c, &n);
            e.value_units[i] = str_of(vu, n);
        }
        uint64_t fields = cur_varint(c);
        if (c->err)
            return c->err;
        if (fields > FMT_MAX_FIELDS)
            return "event has too many fields";
        e.field_count = (uint32_t)fields;
        for (uint32_t i = 0; i < e.field_count; i++) {
            const uint8_t *fn = cur_bytes(c, &n);
            e.field_names[i] = str_of(fn, n);
            e.field_types[i] = cur_u8(c);
            if (!c->err && (e.field_types[i] < 1 || e.field_types[i] > FMT_FIELD_TYPE_MAX))
                return "unknown field type";
        }
        if (c->err)
            return c->err;
        if (id == 0 || id > UINT32_MAX)
            return "event id out of range";
        if (event_index(r, id) >= 0)
            return "event defined twice";
        if (r->event_count >= 255)
            return "too many events";
        e.id = (uint32_t)id;
        e.unit = e.value_units[0];
        e.period = 1;
        e.recorded = 1;
        if (rec_add_event(r, &e) < 0)
            return oom;
    }
    return NULL;
}

static const char *decode_strings(struct loader *l, struct cur *c)
{
    struct recording *r = l->r;
    while (cur_left(c)) {
        l->records++;
        uint64_t id = cur_varint(c);
        size_t n;
        const uint8_t *s = cur_bytes(c, &n);
        if (c->err)
            return c->err;
        if (id != r->string_count)
            return "string ids out of sequence";
        if (!rec_add_string(r, str_of(s, n)))
            return oom;
    }
    return NULL;
}

static int valid_string(const struct recording *r, uint64_t sid)
{
    return sid < r->string_count;
}

static const char *decode_frames(struct loader *l, struct cur *c)
{
    struct recording *r = l->r;
    while (cur_left(c)) {
        l->records++;
        uint64_t id = cur_varint(c);
        struct rec_frame f;
        f.kind = cur_u8(c);
        uint64_t module = cur_varint(c), type = cur_varint(c), name = cur_varint(c);
        f.extra = cur_varint(c);
        if (c->err)
            return c->err;
        if (id != r->frame_count)
            return "frame ids out of sequence";
        if (f.kind < 1 || f.kind > FMT_FRAME_KIND_MAX)
            return "unknown frame kind";
        if (!valid_string(r, module) || !valid_string(r, type) || !valid_string(r, name))
            return "frame refers to an undefined string";
        if (f.kind == FMT_FRAME_LABEL && f.extra >= r->frame_count)
            return "label frame refers to an undefined frame";
        f.module = (uint32_t)module;
        f.type = (uint32_t)type;
        f.name = (uint32_t)name;
        if (!rec_add_frame(r, f))
            return oom;
    }
    return NULL;
}

/* Samples and stacks are copied out of their chunks as they are decoded,
 * and nothing points into those chunks afterwards: the whole pages inside
 * one are given back to the system (they read as zeros), so that a big
 * recording is not held twice, as its file image and as its arrays (a
 * tenth of the report's peak memory on a million samples).  Strings and
 * everything else stay in the image. */
static void release_pages(const uint8_t *p, size_t len)
{
    static uintptr_t page;
    if (!page) {
        long size = sysconf(_SC_PAGESIZE);
        page = size > 0 ? (uintptr_t)size : 4096;
    }
    uintptr_t start = ((uintptr_t)p + page - 1) & ~(page - 1);
    uintptr_t end = ((uintptr_t)p + len) & ~(page - 1);
    if (end > start)
        (void)madvise((void *)start, end - start, MADV_DONTNEED);
}

static const char *decode_stacks(struct loader *l, struct cur *c)
{
    struct recording *r = l->r;
    while (cur_left(c)) {
        l->records++;
        uint64_t id = cur_varint(c);
        uint64_t depth = cur_varint(c);
        if (c->err)
            return c->err;
        if (id != r->stack_count)
            return "stack ids out of sequence";
        if (depth > FMT_MAX_STACK_DEPTH)
            return "stack deeper than the format allows";
        if (depth > cur_left(c))
            return "stack longer than its chunk";
        uint32_t added;
        uint32_t *frames = rec_add_stack(r, (uint32_t)depth, &added);
        if (!frames)
            return oom;
        for (uint64_t i = 0; i < depth; i++) {
            uint64_t f = cur_varint(c);
            if (c->err)
                return c->err;
            if (f == 0 || f >= r->frame_count)
                return "stack refers to an undefined frame";
            frames[i] = (uint32_t)f;
        }
    }
    return NULL;
}

static const char *decode_threads(struct loader *l, struct cur *c)
{
    struct recording *r = l->r;
    while (cur_left(c)) {
        l->records++;
        uint64_t id = cur_varint(c);
        uint64_t tid = cur_varint(c);
        uint64_t name = cur_varint(c);
        if (c->err)
            return c->err;
        if (id == 0 || id > UINT32_MAX)
            return "thread id out of range";
        if (!valid_string(r, name))
            return "thread refers to an undefined string";
        struct rec_thread t = {(uint32_t)id, tid, (uint32_t)name};
        long at = thread_lookup(l, (uint32_t)id);
        if (at >= 0) {
            r->threads[at] = t; /* renamed */
            continue;
        }
        if (r->thread_count >= REC_MAX_THREADS)
            return "too many threads";
        if (rec_add_thread(r, t) < 0 ||
            thread_insert(l, (uint32_t)id, (uint32_t)r->thread_count - 1) < 0)
            return oom;
    }
    return NULL;
}

static const char *decode_samples(struct loader *l, struct cur *c)
{
    struct recording *r = l->r;
    uint64_t time = cur_varint(c);
    if (c->err)
        return c->err;
    while (cur_left(c)) {
        l->records++;
        uint64_t event = cur_varint(c);
        uint64_t thread = cur_varint(c);
        uint64_t delta = cur_varint(c);
        uint64_t stack = cur_varint(c);
        uint64_t weight = cur_varint(c);
        if (c->err)
            return c->err;
        long ev = event_index(r, event);
        if (ev < 0)
            return "sample of an undefined event";
        long th = thread <= UINT32_MAX ? thread_lookup(l, (uint32_t)thread) : -1;
        if (ev > 255)
            return "too many events";
        if (th < 0)
            return "sample on an undefined thread";
        if (stack == 0 || stack >= r->stack_count)
            return "sample refers to an undefined stack";
        if (delta > UINT64_MAX - time)
            return "sample time overflows";
        time += delta;
        struct rec_sample s = {time, weight, 1, (uint32_t)stack, (uint32_t)th, (uint32_t)ev};
        if (rec_add_sample(r, s) < 0)
            return oom;
    }
    return NULL;
}

/* Is a field's value a valid reference of its type? */
static int valid_field(const struct loader *l, uint8_t type, uint64_t v)
{
    const struct recording *r = l->r;
    switch (type) {
    case FMT_FIELD_STRING: return v < r->string_count;
    case FMT_FIELD_FRAME: return v < r->frame_count;
    case FMT_FIELD_STACK: return v < r->stack_count;
    case FMT_FIELD_THREAD: return v == 0 || (v <= UINT32_MAX && thread_lookup(l, (uint32_t)v) >= 0);
    default: return 1;
    }
}

static const char *decode_records(struct loader *l, struct cur *c)
{
    struct recording *r = l->r;
    uint64_t time = cur_varint(c);
    if (c->err)
        return c->err;
    while (cur_left(c)) {
        l->records++;
        uint64_t event = cur_varint(c);
        uint64_t thread = cur_varint(c);
        uint64_t delta = cur_varint(c);
        uint64_t stack = cur_varint(c);
        if (c->err)
            return c->err;
        long ev = event_index(r, event);
        if (ev < 0 || !r->events[ev].recorded)
            return "record of an undefined event";
        const struct rec_event *e = &r->events[ev];
        long th = -1;
        if (thread) {
            th = thread <= UINT32_MAX ? thread_lookup(l, (uint32_t)thread) : -1;
            if (th < 0)
                return "record on an undefined thread";
        }
        if (stack >= r->stack_count)
            return "record refers to an undefined stack";
        if (stack && th < 0)
            return "record with a stack but no thread";
        /* a signed (zigzag) delta: records of many threads interleave */
        uint64_t back = delta & 1, step = (delta >> 1) + back;
        if (back ? step > time : step > UINT64_MAX - time)
            return "record time out of range";
        time = back ? time - step : time + step;
        size_t n = e->value_count + e->field_count;
        if (r->record_data_count + n > UINT32_MAX)
            return "too many records";
        struct rec_record x = {time, 0, (uint32_t)stack, (uint32_t)(th + 1), (uint32_t)ev};
        uint64_t *data = rec_add_record(r, x, n);
        if (!data)
            return oom;
        for (size_t i = 0; i < n; i++)
            data[i] = cur_varint(c);
        if (c->err)
            return c->err;
        for (uint32_t i = 0; i < e->field_count; i++)
            if (!valid_field(l, e->field_types[i], data[e->value_count + i]))
                return "record field refers to something undefined";
        struct rec_sample s = {time, data[0], e->value_count > 1 ? data[1] : 1, (uint32_t)stack,
                               (uint32_t)th, (uint32_t)ev};
        if (stack && rec_add_sample(r, s) < 0)
            return oom;
    }
    return NULL;
}

static const char *decode_stats(struct loader *l, struct cur *c)
{
    while (cur_left(c)) {
        l->records++;
        size_t kn;
        const uint8_t *k = cur_bytes(c, &kn);
        uint64_t v = cur_varint(c);
        if (c->err)
            return c->err;
        struct rec_stat *slot = rec_stat_slot(l->r, str_of(k, kn));
        if (!slot)
            return oom;
        slot->value = v;
    }
    return NULL;
}

static const char *decode_trailer(struct loader *l, struct cur *c)
{
    l->r->trailer_chunks = cur_varint(c);
    if (c->err)
        return c->err;
    return decode_stats(l, c);
}

/* ---- top level --------------------------------------------------------- */

struct counts {
    size_t info, events, strings, frames, stacks, stack_frames, threads, samples, records,
        record_data, stats;
};

static struct counts save_counts(const struct recording *r)
{
    struct counts k = {r->info_count,   r->event_count,  r->string_count,
                       r->frame_count,  r->stack_count,  r->stack_frame_count,
                       r->thread_count, r->sample_count, r->record_count,
                       r->record_data_count, r->stat_count};
    return k;
}

/* Undoes a partly decoded chunk.  Threads renamed by the bad chunk keep
 * their new names; that is harmless and documented. */
static void restore_counts(struct loader *l, struct counts k)
{
    struct recording *r = l->r;
    int events_changed = r->event_count != k.events;
    r->info_count = k.info;
    r->event_count = k.events;
    if (events_changed)
        learn_events(r);
    r->string_count = k.strings;
    r->frame_count = k.frames;
    r->stack_count = k.stacks;
    r->stack_frame_count = k.stack_frames;
    r->sample_count = k.samples;
    r->record_count = k.records;
    r->record_data_count = k.record_data;
    r->stat_count = k.stats;
    if (r->thread_count != k.threads) {
        r->thread_count = k.threads;
        if (!l->thread_table_size)
            return; /* its first thread's map could not be made */
        /* rebuild the id map without the threads the bad chunk added */
        memset(l->thread_slots, 0, l->thread_table_size * sizeof *l->thread_slots);
        size_t mask = l->thread_table_size - 1;
        for (size_t t = 0; t < r->thread_count; t++) {
            size_t i = hash_u64(r->threads[t].id) & mask;
            while (l->thread_slots[i])
                i = (i + 1) & mask;
            l->thread_keys[i] = r->threads[t].id;
            l->thread_slots[i] = (uint32_t)t + 1;
        }
    }
}

static const char *tag_name(uint32_t tag, char out[5])
{
    for (int i = 0; i < 4; i++) {
        char ch = (char)(tag >> (8 * i));
        out[i] = (ch >= 32 && ch < 127) ? ch : '?';
    }
    out[4] = '\0';
    return out;
}

static void decode_chunks(struct loader *l)
{
    struct recording *r = l->r;
    size_t off = FMT_HEADER_SIZE;
    for (;;) {
        size_t left = r->size - off;
        if (r->has_trailer) {
            if (left)
                set_problem(r, REC_CORRUPT, off, "%zu bytes after the trailer", left);
            else if (r->trailer_chunks != r->chunks)
                set_problem(r, REC_CORRUPT, off,
                            "the trailer counts %llu chunks but the file holds %llu",
                            (unsigned long long)r->trailer_chunks, (unsigned long long)r->chunks);
            return;
        }
        if (left == 0) {
            set_problem(r, REC_TRUNCATED, off,
                        "no trailer: the recording was not closed (the process ended before the "
                        "profiler finished)");
            return;
        }
        if (left < FMT_CHUNK_HEADER_SIZE) {
            set_problem(r, REC_TRUNCATED, off, "the file ends inside a chunk header");
            return;
        }
        struct cur h;
        cur_init(&h, r->image + off, FMT_CHUNK_HEADER_SIZE);
        uint32_t tag = cur_u32le(&h), len = cur_u32le(&h);
        uint32_t records = cur_u32le(&h), crc = cur_u32le(&h);
        char tn[5];
        if (len > FMT_MAX_CHUNK_PAYLOAD) {
            set_problem(r, REC_CORRUPT, off, "chunk '%s' claims %u bytes, more than allowed",
                        tag_name(tag, tn), len);
            return;
        }
        if (len > left - FMT_CHUNK_HEADER_SIZE) {
            set_problem(r, REC_TRUNCATED, off, "the file ends inside chunk %llu ('%s')",
                        (unsigned long long)r->chunks + 1, tag_name(tag, tn));
            return;
        }
        const uint8_t *payload = r->image + off + FMT_CHUNK_HEADER_SIZE;
        if (crc32_update(crc32_update(0, r->image + off, 12), payload, len) != crc) {
            set_problem(r, REC_CORRUPT, off, "chunk %llu ('%s') fails its checksum",
                        (unsigned long long)r->chunks + 1, tag_name(tag, tn));
            return;
        }
        struct cur c;
        cur_init(&c, payload, len);
        struct counts saved = save_counts(r);
        l->records = 0;
        const char *bad = NULL;
        l->offset = off;
        switch (tag) {
        case FMT_TAG_INFO: bad = decode_info(l, &c); break;
        case FMT_TAG_EVENTS: bad = decode_events(l, &c); break;
        case FMT_TAG_EVENT_DEFS: bad = decode_event_defs(l, &c); break;
        case FMT_TAG_RECORDS: bad = decode_records(l, &c); break;
        case FMT_TAG_STRINGS: bad = decode_strings(l, &c); break;
        case FMT_TAG_FRAMES: bad = decode_frames(l, &c); break;
        case FMT_TAG_STACKS: bad = decode_stacks(l, &c); break;
        case FMT_TAG_THREADS: bad = decode_threads(l, &c); break;
        case FMT_TAG_SAMPLES: bad = decode_samples(l, &c); break;
        case FMT_TAG_STATS: bad = decode_stats(l, &c); break;
        case FMT_TAG_TRAILER:
            bad = decode_trailer(l, &c);
            if (!bad)
                r->has_trailer = 1;
            break;
        default: break; /* a newer minor version's chunk: skip it */
        }
        if (!bad && tag != FMT_TAG_TRAILER && records != l->records)
            bad = "record count does not match the chunk header";
        if (bad) {
            restore_counts(l, saved);
            set_problem(r, REC_CORRUPT, off, "chunk %llu ('%s'): %s",
                        (unsigned long long)r->chunks + 1, tag_name(tag, tn), bad);
            return;
        }
        if (tag == FMT_TAG_SAMPLES || tag == FMT_TAG_STACKS)
            release_pages(payload, len);
        if (tag != FMT_TAG_TRAILER)
            r->chunks++;
        off += FMT_CHUNK_HEADER_SIZE + len;
    }
}

static int check_header(struct recording *r, char *err, size_t err_size)
{
    if (r->size < FMT_HEADER_SIZE) {
        snprintf(err, err_size, "not a corscope recording (%zu bytes, shorter than a header)",
                 r->size);
        return -1;
    }
    if (memcmp(r->image, FMT_MAGIC, FMT_MAGIC_LEN) != 0) {
        if (memcmp(r->image + 1, "CSC", 3) == 0)
            snprintf(err, err_size,
                     "damaged header (line endings translated? the file must be copied as binary)");
        else
            snprintf(err, err_size, "not a corscope recording (bad magic)");
        return -1;
    }
    struct cur c;
    cur_init(&c, r->image + FMT_MAGIC_LEN, FMT_HEADER_SIZE - FMT_MAGIC_LEN);
    r->version_major = cur_u16le(&c);
    r->version_minor = cur_u16le(&c);
    uint32_t bom = cur_u32le(&c);
    uint8_t ptr_size = cur_u8(&c);
    cur_skip(&c, 3);
    uint32_t header_size = cur_u32le(&c);
    cur_u32le(&c); /* flags */
    uint32_t crc = cur_u32le(&c);
    if (crc32_update(0, r->image, FMT_HEADER_SIZE - 4) != crc) {
        snprintf(err, err_size, "damaged header (checksum mismatch)");
        return -1;
    }
    if (bom != FMT_BYTE_ORDER_MARK) {
        snprintf(err, err_size, "unsupported byte order");
        return -1;
    }
    /* 1.x is 2.0 without recorded events and label frames */
    if (r->version_major != FMT_VERSION_MAJOR && r->version_major != 1) {
        snprintf(err, err_size,
                 "format version %u.%u is not supported (this corscope reads 1.x and %u.x)",
                 r->version_major, r->version_minor, FMT_VERSION_MAJOR);
        return -1;
    }
    if (header_size != FMT_HEADER_SIZE || (ptr_size != 4 && ptr_size != 8)) {
        snprintf(err, err_size, "damaged header (bad sizes)");
        return -1;
    }
    return 0;
}

/* Takes ownership of image. */
static int load_image(uint8_t *image, size_t size, struct recording *r, char *err,
                      size_t err_size)
{
    memset(r, 0, sizeof *r);
    r->image = image;
    r->size = size;
    if (check_header(r, err, err_size) < 0) {
        rec_free(r);
        return -1;
    }
    if (rec_add_none(r) < 0) {
        snprintf(err, err_size, "out of memory");
        rec_free(r);
        return -1;
    }

    struct loader l = {r, 0, 0, NULL, NULL, 0};
    r->status = REC_COMPLETE;
    decode_chunks(&l);
    mem_free(l.thread_keys);
    mem_free(l.thread_slots);
    return 0;
}

int rec_load_memory(const void *data, size_t size, struct recording *r, char *err,
                    size_t err_size)
{
    memset(r, 0, sizeof *r);
    uint8_t *image = mem_alloc(size);
    if (!image) {
        snprintf(err, err_size, "out of memory");
        return -1;
    }
    memcpy(image, data, size);
    return load_image(image, size, r, err, err_size);
}

int rec_load_file(const char *path, struct recording *r, char *err, size_t err_size)
{
    memset(r, 0, sizeof *r);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, err_size, "cannot open: %s", strerror(errno));
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) < 0) {
        snprintf(err, err_size, "cannot stat: %s", strerror(errno));
        close(fd);
        return -1;
    }
    if (!S_ISREG(st.st_mode)) {
        snprintf(err, err_size, "%s", S_ISDIR(st.st_mode) ? "is a directory" : "not a regular file");
        close(fd);
        return -1;
    }
    size_t size = (size_t)st.st_size;
    uint8_t *data = mem_alloc(size);
    if (!data) {
        snprintf(err, err_size, "out of memory (file of %zu bytes)", size);
        close(fd);
        return -1;
    }
    size_t got = 0;
    while (got < size) {
        ssize_t n = read(fd, data + got, size - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    int read_errno = errno;
    close(fd);
    if (got < size) {
        snprintf(err, err_size, "read failed: %s", got ? "file shrank" : strerror(read_errno));
        mem_free(data);
        return -1;
    }
    return load_image(data, size, r, err, err_size);
}

void rec_free(struct recording *r)
{
    mem_free(r->image);
    mem_free(r->info);
    mem_free(r->events);
    mem_free(r->strings);
    mem_free(r->frames);
    mem_free(r->stacks);
    mem_free(r->stack_frames);
    mem_free(r->threads);
    mem_free(r->samples);
    mem_free(r->records);
    mem_free(r->record_data);
    mem_free(r->stats);
    memset(r, 0, sizeof *r);
}

const char *rec_status_name(enum rec_status s)
{
    switch (s) {
    case REC_COMPLETE: return "complete";
    case REC_TRUNCATED: return "truncated";
    case REC_CORRUPT: return "corrupt";
    }
    return "?";
}

const struct rec_str *rec_info(const struct recording *r, const char *key)
{
    const struct rec_str *found = NULL;
    for (size_t i = 0; i < r->info_count; i++)
        if (rec_str_eq(r->info[i].key, key))
            found = &r->info[i].value;
    return found;
}

uint64_t rec_stat(const struct recording *r, const char *key)
{
    for (size_t i = 0; i < r->stat_count; i++)
        if (rec_str_eq(r->stats[i].key, key))
            return r->stats[i].value;
    return 0;
}

uint64_t rec_counter(const struct recording *r, enum fmt_counter c)
{
    return rec_stat(r, schema_counter_key(c));
}
