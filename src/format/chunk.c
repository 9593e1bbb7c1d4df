/*
 * chunk: see chunk.h.  One function per chunk tag; each record is read
 * whole through the cursor, then checked, then given to the sink.
 */
#include "format/chunk.h"

#include <stdio.h>
#include <string.h>

#include "common/buf.h"
#include "common/crc32.h"
#include "common/mem.h"

int chunk_header(const uint8_t *h, size_t size, uint16_t *major, uint16_t *minor, char *why,
                 size_t why_size)
{
    if (size < FMT_HEADER_SIZE) {
        snprintf(why, why_size, "not a corscope recording (%zu bytes, shorter than a header)",
                 size);
        return -1;
    }
    if (memcmp(h, FMT_MAGIC, FMT_MAGIC_LEN) != 0) {
        if (memcmp(h + 1, "CSC", 3) == 0)
            snprintf(why, why_size,
                     "damaged header (line endings translated? the file must be copied as binary)");
        else
            snprintf(why, why_size, "not a corscope recording (bad magic)");
        return -1;
    }
    struct cur c;
    cur_init(&c, h + FMT_MAGIC_LEN, FMT_HEADER_SIZE - FMT_MAGIC_LEN);
    *major = cur_u16le(&c);
    *minor = cur_u16le(&c);
    uint32_t bom = cur_u32le(&c);
    uint8_t ptr_size = cur_u8(&c);
    cur_skip(&c, 3);
    uint32_t header_size = cur_u32le(&c);
    cur_u32le(&c); /* flags */
    uint32_t crc = cur_u32le(&c);
    if (crc32_update(0, h, FMT_HEADER_SIZE - 4) != crc) {
        snprintf(why, why_size, "damaged header (checksum mismatch)");
        return -1;
    }
    if (bom != FMT_BYTE_ORDER_MARK) {
        snprintf(why, why_size, "unsupported byte order");
        return -1;
    }
    /* 1.x is 2.0 without recorded events and label frames */
    if (*major != FMT_VERSION_MAJOR && *major != 1) {
        snprintf(why, why_size,
                 "format version %u.%u is not supported (this corscope reads 1.x and %u.x)",
                 *major, *minor, FMT_VERSION_MAJOR);
        return -1;
    }
    if (header_size != FMT_HEADER_SIZE || (ptr_size != 4 && ptr_size != 8)) {
        snprintf(why, why_size, "damaged header (bad sizes)");
        return -1;
    }
    return 0;
}

const char *chunk_tag_name(uint32_t tag, char out[5])
{
    for (int i = 0; i < 4; i++) {
        char ch = (char)(tag >> (8 * i));
        out[i] = (ch >= 32 && ch < 127) ? ch : '?';
    }
    out[4] = '\0';
    return out;
}

enum chunk_status chunk_frame(const uint8_t *p, size_t left, uint64_t index, struct chunk *out,
                              char *why, size_t why_size)
{
    if (left < FMT_CHUNK_HEADER_SIZE) {
        snprintf(why, why_size, "the file ends inside a chunk header");
        return CHUNK_PARTIAL;
    }
    struct cur h;
    cur_init(&h, p, FMT_CHUNK_HEADER_SIZE);
    out->tag = cur_u32le(&h);
    out->len = cur_u32le(&h);
    out->records = cur_u32le(&h);
    uint32_t crc = cur_u32le(&h);
    out->payload = p + FMT_CHUNK_HEADER_SIZE;
    char tn[5];
    if (out->len > FMT_MAX_CHUNK_PAYLOAD) {
        snprintf(why, why_size, "chunk '%s' claims %u bytes, more than allowed",
                 chunk_tag_name(out->tag, tn), out->len);
        return CHUNK_BAD;
    }
    if (out->len > left - FMT_CHUNK_HEADER_SIZE) {
        snprintf(why, why_size, "the file ends inside chunk %llu ('%s')",
                 (unsigned long long)index + 1, chunk_tag_name(out->tag, tn));
        return CHUNK_PARTIAL;
    }
    if (crc32_update(crc32_update(0, p, 12), out->payload, out->len) != crc) {
        snprintf(why, why_size, "chunk %llu ('%s') fails its checksum",
                 (unsigned long long)index + 1, chunk_tag_name(out->tag, tn));
        return CHUNK_BAD;
    }
    return CHUNK_WHOLE;
}

void chunk_reader_init(struct chunk_reader *rd, const struct chunk_sink *sink, void *ctx)
{
    memset(rd, 0, sizeof *rd);
    rd->sink = sink;
    rd->ctx = ctx;
}

void chunk_reader_free(struct chunk_reader *rd)
{
    mem_free(rd->frames);
    rd->frames = NULL;
    rd->frame_cap = 0;
}

static const char *oom = "out of memory";

static struct rec_str str_of(const uint8_t *p, size_t n)
{
    struct rec_str s = {(const char *)p, (uint32_t)n};
    return s;
}

static const char *read_info(struct chunk_reader *rd, struct cur *c)
{
    size_t kn, vn;
    const uint8_t *k = cur_bytes(c, &kn);
    const uint8_t *v = cur_bytes(c, &vn);
    if (c->err)
        return c->err;
    return rd->sink->info(rd->ctx, str_of(k, kn), str_of(v, vn));
}

/* What both kinds of event definition must be. */
static const char *add_event(struct chunk_reader *rd, uint64_t id, struct rec_event *e)
{
    uint32_t values, fields;
    int recorded;
    if (id == 0 || id > UINT32_MAX)
        return "event id out of range";
    if (rd->sink->event_find(rd->ctx, id, &values, &fields, &recorded) >= 0)
        return "event defined twice";
    if (rd->sink->event_count(rd->ctx) >= 255)
        return "too many events";
    e->id = (uint32_t)id;
    return rd->sink->event(rd->ctx, e);
}

static const char *read_event(struct chunk_reader *rd, struct cur *c)
{
    struct rec_event e;
    memset(&e, 0, sizeof e);
    size_t nn, un;
    uint64_t id = cur_varint(c);
    const uint8_t *name = cur_bytes(c, &nn);
    const uint8_t *unit = cur_bytes(c, &un);
    e.period = cur_varint(c);
    if (c->err)
        return c->err;
    if (id == 0 || id > UINT32_MAX)
        return "event id out of range";
    if (e.period == 0)
        return "event period is zero";
    e.name = str_of(name, nn);
    e.unit = str_of(unit, un);
    e.value_count = 1;
    e.value_names[0] = e.name;
    e.value_units[0] = e.unit;
    return add_event(rd, id, &e);
}

static const char *read_event_def(struct chunk_reader *rd, struct cur *c)
{
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
    e.unit = e.value_units[0];
    e.period = 1;
    e.recorded = 1;
    return add_event(rd, id, &e);
}

static const char *read_string(struct chunk_reader *rd, struct cur *c)
{
    uint64_t id = cur_varint(c);
    size_t n;
    const uint8_t *s = cur_bytes(c, &n);
    if (c->err)
        return c->err;
    return rd->sink->string(rd->ctx, id, str_of(s, n));
}

static const char *read_frame(struct chunk_reader *rd, struct cur *c)
{
    uint64_t id = cur_varint(c);
    uint8_t kind = cur_u8(c);
    uint64_t module = cur_varint(c), type = cur_varint(c), name = cur_varint(c);
    uint64_t extra = cur_varint(c);
    if (c->err)
        return c->err;
    if (kind < 1 || kind > FMT_FRAME_KIND_MAX)
        return "unknown frame kind";
    return rd->sink->frame(rd->ctx, id, kind, module, type, name, extra);
}

static const char *read_stack(struct chunk_reader *rd, struct cur *c)
{
    uint64_t id = cur_varint(c);
    uint64_t depth = cur_varint(c);
    if (c->err)
        return c->err;
    if (depth > FMT_MAX_STACK_DEPTH)
        return "stack deeper than the format allows";
    if (depth > cur_left(c))
        return "stack longer than its chunk";
    if (mem_grow_array((void **)&rd->frames, &rd->frame_cap, depth ? depth : 1,
                       sizeof *rd->frames))
        return oom;
    for (uint64_t i = 0; i < depth; i++) {
        uint64_t f = cur_varint(c);
        if (c->err)
            return c->err;
        if (f == 0 || f > UINT32_MAX)
            return "stack refers to an undefined frame";
        rd->frames[i] = (uint32_t)f;
    }
    return rd->sink->stack(rd->ctx, id, rd->frames, (uint32_t)depth);
}

static const char *read_thread(struct chunk_reader *rd, struct cur *c)
{
    uint64_t id = cur_varint(c);
    uint64_t tid = cur_varint(c);
    uint64_t name = cur_varint(c);
    if (c->err)
        return c->err;
    if (id == 0 || id > UINT32_MAX)
        return "thread id out of range";
    return rd->sink->thread(rd->ctx, (uint32_t)id, tid, name);
}

static const char *read_stat(struct chunk_reader *rd, struct cur *c)
{
    size_t kn;
    const uint8_t *k = cur_bytes(c, &kn);
    uint64_t v = cur_varint(c);
    if (c->err)
        return c->err;
    return rd->sink->stat(rd->ctx, str_of(k, kn), v);
}

/* Each record of a chunk of one kind; NULL or what is wrong with the first
 * bad one. */
static const char *each(struct chunk_reader *rd, struct cur *c, uint64_t *records,
                        const char *(*one)(struct chunk_reader *rd, struct cur *c))
{
    while (cur_left(c)) {
        ++*records;
        const char *bad = one(rd, c);
        if (bad)
            return bad;
    }
    return NULL;
}

/* A record of SMPL or EVTR: its event, thread, time and stack, then a
 * sample's weight or a record's values and fields. */
static const char *read_timed(struct chunk_reader *rd, struct cur *c, uint64_t *time,
                              int recorded)
{
    uint64_t event = cur_varint(c), thread = cur_varint(c), delta = cur_varint(c);
    uint64_t stack = cur_varint(c), weight = recorded ? 0 : cur_varint(c);
    if (c->err)
        return c->err;
    uint32_t values, fields;
    int is_recorded;
    long ev = rd->sink->event_find(rd->ctx, event, &values, &fields, &is_recorded);
    if (!recorded) {
        if (ev < 0 || is_recorded)
            return "sample of an undefined event";
        if (delta > UINT64_MAX - *time)
            return "sample time overflows";
        *time += delta;
        struct chunk_sample s = {*time, thread, stack, weight, (uint32_t)ev};
        return rd->sink->sample(rd->ctx, &s);
    }
    if (ev < 0 || !is_recorded)
        return "record of an undefined event";
    if (stack && !thread)
        return "record with a stack but no thread";
    /* a signed (zigzag) delta: records of many threads interleave */
    uint64_t back = delta & 1, step = (delta >> 1) + back;
    if (back ? step > *time : step > UINT64_MAX - *time)
        return "record time out of range";
    *time = back ? *time - step : *time + step;
    uint64_t data[FMT_MAX_VALUES + FMT_MAX_FIELDS];
    size_t n = (size_t)values + fields;
    for (size_t i = 0; i < n; i++)
        data[i] = cur_varint(c);
    if (c->err)
        return c->err;
    struct chunk_record x = {*time, thread, stack, (uint32_t)ev};
    return rd->sink->record(rd->ctx, &x, data, n);
}

/* SMPL and EVTR: a base time, then records whose times are deltas. */
static const char *read_times(struct chunk_reader *rd, struct cur *c, uint64_t *records,
                              int recorded)
{
    uint64_t time = cur_varint(c);
    if (c->err)
        return c->err;
    while (cur_left(c)) {
        ++*records;
        const char *bad = read_timed(rd, c, &time, recorded);
        if (bad)
            return bad;
    }
    return NULL;
}

static const char *read_trailer(struct chunk_reader *rd, struct cur *c, uint64_t *records)
{
    uint64_t chunks = cur_varint(c);
    if (c->err)
        return c->err;
    const char *bad = rd->sink->trailer(rd->ctx, chunks);
    return bad ? bad : each(rd, c, records, read_stat);
}

const char *chunk_decode(struct chunk_reader *rd, const struct chunk *ch)
{
    struct cur c;
    cur_init(&c, ch->payload, ch->len);
    uint64_t records = 0;
    const char *bad = NULL;
    switch (ch->tag) {
    case FMT_TAG_INFO: bad = each(rd, &c, &records, read_info); break;
    case FMT_TAG_EVENTS: bad = each(rd, &c, &records, read_event); break;
    case FMT_TAG_EVENT_DEFS: bad = each(rd, &c, &records, read_event_def); break;
    case FMT_TAG_STRINGS: bad = each(rd, &c, &records, read_string); break;
    case FMT_TAG_FRAMES: bad = each(rd, &c, &records, read_frame); break;
    case FMT_TAG_STACKS: bad = each(rd, &c, &records, read_stack); break;
    case FMT_TAG_THREADS: bad = each(rd, &c, &records, read_thread); break;
    case FMT_TAG_SAMPLES: bad = read_times(rd, &c, &records, 0); break;
    case FMT_TAG_RECORDS: bad = read_times(rd, &c, &records, 1); break;
    case FMT_TAG_STATS: bad = each(rd, &c, &records, read_stat); break;
    case FMT_TAG_TRAILER:
        bad = read_trailer(rd, &c, &records);
        records = ch->records; /* its stats are not counted */
        break;
    default: return NULL; /* a newer minor version's chunk: skipped */
    }
    if (!bad && records != ch->records)
        bad = "record count does not match the chunk header";
    return bad;
}
