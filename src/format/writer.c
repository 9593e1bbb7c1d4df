/*
 * writer: see writer.h and docs/format.md for the byte layout.
 */
#include "format/writer.h"

#include <errno.h>
#include <string.h>

#include "common/crc32.h"

static const uint32_t chunk_tags[FMT_CHUNK_COUNT] = {
    [FMT_CHUNK_INFO] = FMT_TAG_INFO,       [FMT_CHUNK_EVENTS] = FMT_TAG_EVENTS,
    [FMT_CHUNK_EVENT_DEFS] = FMT_TAG_EVENT_DEFS, [FMT_CHUNK_RECORDS] = FMT_TAG_RECORDS,
    [FMT_CHUNK_STRINGS] = FMT_TAG_STRINGS, [FMT_CHUNK_FRAMES] = FMT_TAG_FRAMES,
    [FMT_CHUNK_STACKS] = FMT_TAG_STACKS,   [FMT_CHUNK_THREADS] = FMT_TAG_THREADS,
    [FMT_CHUNK_SAMPLES] = FMT_TAG_SAMPLES, [FMT_CHUNK_STATS] = FMT_TAG_STATS,
};

#define DEFAULT_FLUSH_THRESHOLD (256u << 10)

static void after_record(struct writer *w, struct buf *b);
static struct buf *record(struct writer *w, enum fmt_chunk c);

static int sink_write(struct writer *w, const void *p, size_t n)
{
    if (w->error)
        return -1;
    if (w->sink.write(w->sink.ctx, p, n) < 0) {
        w->error = errno ? errno : EIO;
        return -1;
    }
    w->bytes_written += n;
    return 0;
}

int writer_begin(struct writer *w, struct writer_sink sink)
{
    memset(w, 0, sizeof *w);
    w->sink = sink;
    w->next_string = w->next_frame = w->next_stack = 1;
    w->flush_threshold = DEFAULT_FLUSH_THRESHOLD;
    for (int i = 0; i < FMT_CHUNK_COUNT; i++)
        buf_init(&w->chunk[i]);

    struct buf h;
    buf_init(&h);
    buf_put(&h, FMT_MAGIC, FMT_MAGIC_LEN);
    buf_put_u16le(&h, FMT_VERSION_MAJOR);
    buf_put_u16le(&h, FMT_VERSION_MINOR);
    buf_put_u32le(&h, FMT_BYTE_ORDER_MARK);
    buf_put_u8(&h, (uint8_t)sizeof(void *));
    buf_put_u8(&h, 0);
    buf_put_u16le(&h, 0);
    buf_put_u32le(&h, FMT_HEADER_SIZE);
    buf_put_u32le(&h, 0); /* flags */
    if (h.failed) {
        buf_free(&h);
        w->error = ENOMEM;
        return -1;
    }
    buf_put_u32le(&h, crc32_update(0, h.data, h.len));
    int rc = h.failed ? -1 : sink_write(w, h.data, h.len);
    if (h.failed)
        w->error = ENOMEM;
    buf_free(&h);
    return rc;
}

void writer_event_def(struct writer *w, const struct writer_event_def *d)
{
    struct buf *b = record(w, FMT_CHUNK_EVENT_DEFS);
    if (!b)
        return;
    buf_put_varint(b, d->id);
    buf_put_str(b, d->name);
    buf_put_varint(b, d->value_count);
    for (uint32_t i = 0; i < d->value_count; i++) {
        buf_put_str(b, d->value_names[i]);
        buf_put_str(b, d->value_units[i]);
    }
    buf_put_varint(b, d->field_count);
    for (uint32_t i = 0; i < d->field_count; i++) {
        buf_put_str(b, d->field_names[i]);
        buf_put_u8(b, d->field_types[i]);
    }
    after_record(w, b);
}

/* Returns the chunk buffer to append a record to, or NULL when failed. */
static struct buf *record(struct writer *w, enum fmt_chunk c)
{
    if (w->error || w->finished)
        return NULL;
    w->records[c]++;
    w->records_made++;
    return &w->chunk[c];
}

/* Called after every record: latches allocation failures and flushes when
 * the buffers have grown past the threshold. */
static void after_record(struct writer *w, struct buf *b)
{
    if (b->failed) {
        w->error = ENOMEM;
        return;
    }
    if (!w->hold && writer_pending(w) > w->flush_threshold)
        writer_flush(w);
}

void writer_info(struct writer *w, const char *key, const char *value)
{
    struct buf *b = record(w, FMT_CHUNK_INFO);
    if (!b)
        return;
    buf_put_str(b, key);
    buf_put_str(b, value);
    after_record(w, b);
}

void writer_event(struct writer *w, uint32_t id, const char *name, const char *unit, uint64_t period)
{
    struct buf *b = record(w, FMT_CHUNK_EVENTS);
    if (!b)
        return;
    buf_put_varint(b, id);
    buf_put_str(b, name);
    buf_put_str(b, unit);
    buf_put_varint(b, period);
    after_record(w, b);
}

uint32_t writer_string(struct writer *w, const char *s, size_t len)
{
    struct buf *b = record(w, FMT_CHUNK_STRINGS);
    if (!b)
        return 0;
    uint32_t id = w->next_string++;
    buf_put_varint(b, id);
    buf_put_bytes(b, s, len);
    after_record(w, b);
    return w->error ? 0 : id;
}

uint32_t writer_frame(struct writer *w, enum fmt_frame_kind kind, uint32_t module_sid,
                    uint32_t type_sid, uint32_t name_sid, uint64_t extra)
{
    struct buf *b = record(w, FMT_CHUNK_FRAMES);
    if (!b)
        return 0;
    uint32_t id = w->next_frame++;
    buf_put_varint(b, id);
    buf_put_u8(b, (uint8_t)kind);
    buf_put_varint(b, module_sid);
    buf_put_varint(b, type_sid);
    buf_put_varint(b, name_sid);
    buf_put_varint(b, extra);
    after_record(w, b);
    return w->error ? 0 : id;
}

uint32_t writer_stack(struct writer *w, const uint32_t *frames, uint32_t depth)
{
    struct buf *b = record(w, FMT_CHUNK_STACKS);
    if (!b)
        return 0;
    uint32_t id = w->next_stack++;
    buf_put_varint(b, id);
    buf_put_varint(b, depth);
    for (uint32_t i = 0; i < depth; i++)
        buf_put_varint(b, frames[i]);
    after_record(w, b);
    return w->error ? 0 : id;
}

void writer_thread(struct writer *w, uint32_t id, uint64_t os_tid, uint32_t name_sid)
{
    struct buf *b = record(w, FMT_CHUNK_THREADS);
    if (!b)
        return;
    buf_put_varint(b, id);
    buf_put_varint(b, os_tid);
    buf_put_varint(b, name_sid);
    after_record(w, b);
}

void writer_sample(struct writer *w, uint32_t event, uint32_t thread, uint64_t time_ns,
                 uint32_t stack, uint64_t weight)
{
    struct buf *b = record(w, FMT_CHUNK_SAMPLES);
    if (!b)
        return;
    if (b->len == 0) {
        /* a SMPL payload opens with the base time its deltas count from */
        buf_put_varint(b, time_ns);
        w->sample_time = time_ns;
    }
    if (time_ns < w->sample_time)
        time_ns = w->sample_time;
    buf_put_varint(b, event);
    buf_put_varint(b, thread);
    buf_put_varint(b, time_ns - w->sample_time);
    buf_put_varint(b, stack);
    buf_put_varint(b, weight);
    w->sample_time = time_ns;
    after_record(w, b);
}

void writer_record(struct writer *w, uint32_t event, uint32_t thread, uint64_t time_ns,
                   uint32_t stack, const uint64_t *values, uint32_t value_count,
                   const uint64_t *fields, uint32_t field_count)
{
    struct buf *b = record(w, FMT_CHUNK_RECORDS);
    if (!b)
        return;
    if (b->len == 0) {
        buf_put_varint(b, time_ns); /* the base time of the chunk's deltas */
        w->record_time = time_ns;
    }
    /* records come from many threads' queues, drained one after the other:
     * a record may be older than the one before it (a signed delta) */
    int64_t delta = (int64_t)(time_ns - w->record_time);
    buf_put_varint(b, event);
    buf_put_varint(b, thread);
    buf_put_varint(b, (uint64_t)delta << 1 ^ (uint64_t)(delta >> 63));
    buf_put_varint(b, stack);
    for (uint32_t i = 0; i < value_count; i++)
        buf_put_varint(b, values[i]);
    for (uint32_t i = 0; i < field_count; i++)
        buf_put_varint(b, fields[i]);
    w->record_time = time_ns;
    after_record(w, b);
}

void writer_stat(struct writer *w, const char *key, uint64_t value)
{
    struct buf *b = record(w, FMT_CHUNK_STATS);
    if (!b)
        return;
    buf_put_str(b, key);
    buf_put_varint(b, value);
    after_record(w, b);
}

size_t writer_pending(const struct writer *w)
{
    size_t n = 0;
    for (int i = 0; i < FMT_CHUNK_COUNT; i++)
        n += w->chunk[i].len;
    return n;
}

static int write_chunk(struct writer *w, uint32_t tag, uint32_t records, const struct buf *payload)
{
    uint8_t head[FMT_CHUNK_HEADER_SIZE];
    uint32_t fields[3] = {tag, (uint32_t)payload->len, records};
    for (int f = 0; f < 3; f++)
        for (int i = 0; i < 4; i++)
            head[f * 4 + i] = (uint8_t)(fields[f] >> (8 * i));
    /* the checksum covers the header's first 12 bytes and the payload */
    uint32_t crc = crc32_update(crc32_update(0, head, 12), payload->data, payload->len);
    for (int i = 0; i < 4; i++)
        head[12 + i] = (uint8_t)(crc >> (8 * i));
    /* Header and payload go out in one write where possible, so a killed
     * process most often leaves whole chunks. */
    struct buf whole;
    buf_init(&whole);
    buf_put(&whole, head, sizeof head);
    buf_put(&whole, payload->data, payload->len);
    int rc;
    if (whole.failed) {
        rc = sink_write(w, head, sizeof head);
        if (rc == 0 && payload->len)
            rc = sink_write(w, payload->data, payload->len);
    } else {
        rc = sink_write(w, whole.data, whole.len);
    }
    buf_free(&whole);
    if (rc == 0)
        w->chunks_written++;
    return rc;
}

int writer_flush(struct writer *w)
{
    if (w->error)
        return -1;
    for (int c = 0; c < FMT_CHUNK_COUNT; c++) {
        if (w->chunk[c].len == 0)
            continue;
        if (write_chunk(w, chunk_tags[c], w->records[c], &w->chunk[c]) < 0)
            return -1;
        buf_reset(&w->chunk[c]);
        w->records[c] = 0;
    }
    return 0;
}

int writer_finish(struct writer *w, const char *const *keys, const uint64_t *values, size_t count)
{
    if (w->finished)
        return w->error ? -1 : 0;
    if (writer_flush(w) < 0)
        return -1;
    struct buf t;
    buf_init(&t);
    buf_put_varint(&t, w->chunks_written);
    for (size_t i = 0; i < count; i++) {
        buf_put_str(&t, keys[i]);
        buf_put_varint(&t, values[i]);
    }
    int rc;
    if (t.failed) {
        w->error = ENOMEM;
        rc = -1;
    } else {
        rc = write_chunk(w, FMT_TAG_TRAILER, (uint32_t)count, &t);
    }
    buf_free(&t);
    w->finished = 1;
    return rc;
}

void writer_free(struct writer *w)
{
    for (int i = 0; i < FMT_CHUNK_COUNT; i++)
        buf_free(&w->chunk[i]);
}
