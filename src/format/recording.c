/*
 * recording: see recording.h.  Decoding is one loop over the file's chunks;
 * format/chunk.c reads each record (the syntax, shared with the push
 * stream's reader) and hands it to this file's sink, which checks what it
 * refers to and adds it; a bad record leaves the tables as they were after
 * the last good chunk.
 */
#include "format/recording.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/hash.h"
#include "common/mem.h"
#include "format/chunk.h"

/* Grows r->ARR (its count and cap named PRE_count, PRE_cap) to hold n more
 * entries; evaluates to 0 or -1. */
#define GROW(r, arr, pre, n)                                                                   \
    mem_grow_array((void **)&(r)->arr, &(r)->pre##_cap, (r)->pre##_count + (n), sizeof *(r)->arr)

struct loader {
    struct recording *r;
    size_t offset;    /* of the chunk being decoded */
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


/* ---- the sink: what each record adds to the tables (format/chunk.h) ---- */
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

static long sink_event_find(void *ctx, uint64_t id, uint32_t *values, uint32_t *fields,
                            int *recorded)
{
    const struct recording *r = ((struct loader *)ctx)->r;
    long i = event_index(r, id);
    if (i >= 0) {
        *values = r->events[i].value_count;
        *fields = r->events[i].field_count;
        *recorded = r->events[i].recorded;
    }
    return i;
}

static size_t sink_event_count(void *ctx)
{
    return ((struct loader *)ctx)->r->event_count;
}

static const char *sink_info(void *ctx, struct rec_str key, struct rec_str value)
{
    return rec_add_info(((struct loader *)ctx)->r, key, value) < 0 ? oom : NULL;
}

static const char *sink_event(void *ctx, const struct rec_event *e)
{
    return rec_add_event(((struct loader *)ctx)->r, e) < 0 ? oom : NULL;
}

static const char *sink_string(void *ctx, uint64_t id, struct rec_str s)
{
    struct recording *r = ((struct loader *)ctx)->r;
    if (id != r->string_count)
        return "string ids out of sequence";
    return rec_add_string(r, s) ? NULL : oom;
}

static int valid_string(const struct recording *r, uint64_t sid)
{
    return sid < r->string_count;
}

static const char *sink_frame(void *ctx, uint64_t id, uint8_t kind, uint64_t module,
                              uint64_t type, uint64_t name, uint64_t extra)
{
    struct recording *r = ((struct loader *)ctx)->r;
    if (id != r->frame_count)
        return "frame ids out of sequence";
    if (!valid_string(r, module) || !valid_string(r, type) || !valid_string(r, name))
        return "frame refers to an undefined string";
    if (kind == FMT_FRAME_LABEL && extra >= r->frame_count)
        return "label frame refers to an undefined frame";
    struct rec_frame f = {kind, (uint32_t)module, (uint32_t)type, (uint32_t)name, extra};
    return rec_add_frame(r, f) ? NULL : oom;
}

static const char *sink_stack(void *ctx, uint64_t id, const uint32_t *frames, uint32_t depth)
{
    struct recording *r = ((struct loader *)ctx)->r;
    if (id != r->stack_count)
        return "stack ids out of sequence";
    for (uint32_t i = 0; i < depth; i++)
        if (frames[i] >= r->frame_count)
            return "stack refers to an undefined frame";
    uint32_t added;
    uint32_t *to = rec_add_stack(r, depth, &added);
    if (!to)
        return oom;
    memcpy(to, frames, (size_t)depth * sizeof *frames);
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

static const char *sink_thread(void *ctx, uint32_t id, uint64_t tid, uint64_t name)
{
    struct loader *l = ctx;
    struct recording *r = l->r;
    if (!valid_string(r, name))
        return "thread refers to an undefined string";
    struct rec_thread t = {id, tid, (uint32_t)name};
    long at = thread_lookup(l, id);
    if (at >= 0) {
        r->threads[at] = t; /* renamed */
        return NULL;
    }
    if (r->thread_count >= REC_MAX_THREADS)
        return "too many threads";
    if (rec_add_thread(r, t) < 0 || thread_insert(l, id, (uint32_t)r->thread_count - 1) < 0)
        return oom;
    return NULL;
}

static const char *sink_sample(void *ctx, const struct chunk_sample *x)
{
    struct loader *l = ctx;
    struct recording *r = l->r;
    long th = x->thread <= UINT32_MAX ? thread_lookup(l, (uint32_t)x->thread) : -1;
    if (th < 0)
        return "sample on an undefined thread";
    if (x->stack == 0 || x->stack >= r->stack_count)
        return "sample refers to an undefined stack";
    struct rec_sample s = {x->time, x->weight, 1, (uint32_t)x->stack, (uint32_t)th, x->event};
    return rec_add_sample(r, s) < 0 ? oom : NULL;
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

static const char *sink_record(void *ctx, const struct chunk_record *x, const uint64_t *values,
                               size_t n)
{
    struct loader *l = ctx;
    struct recording *r = l->r;
    const struct rec_event *e = &r->events[x->event];
    long th = -1;
    if (x->thread) {
        th = x->thread <= UINT32_MAX ? thread_lookup(l, (uint32_t)x->thread) : -1;
        if (th < 0)
            return "record on an undefined thread";
    }
    if (x->stack >= r->stack_count)
        return "record refers to an undefined stack";
    for (uint32_t i = 0; i < e->field_count; i++)
        if (!valid_field(l, e->field_types[i], values[e->value_count + i]))
            return "record field refers to something undefined";
    if (r->record_data_count + n > UINT32_MAX)
        return "too many records";
    struct rec_record rec = {x->time, 0, (uint32_t)x->stack, (uint32_t)(th + 1), x->event};
    uint64_t *data = rec_add_record(r, rec, n);
    if (!data)
        return oom;
    memcpy(data, values, n * sizeof *data);
    struct rec_sample s = {x->time, data[0], e->value_count > 1 ? data[1] : 1,
                           (uint32_t)x->stack, (uint32_t)th, x->event};
    if (x->stack && rec_add_sample(r, s) < 0)
        return oom;
    return NULL;
}

static const char *sink_stat(void *ctx, struct rec_str key, uint64_t value)
{
    struct rec_stat *slot = rec_stat_slot(((struct loader *)ctx)->r, key);
    if (!slot)
        return oom;
    slot->value = value;
    return NULL;
}

static const char *sink_trailer(void *ctx, uint64_t chunks)
{
    ((struct loader *)ctx)->r->trailer_chunks = chunks;
    return NULL;
}

static const struct chunk_sink tables = {
    sink_event_find, sink_event_count, sink_info, sink_event, sink_string, sink_frame,
    sink_stack, sink_thread, sink_sample, sink_record, sink_stat, sink_trailer,
};

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

static void decode_chunks(struct loader *l)
{
    struct recording *r = l->r;
    struct chunk_reader rd;
    chunk_reader_init(&rd, &tables, l);
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
            break;
        }
        if (left == 0) {
            set_problem(r, REC_TRUNCATED, off,
                        "no trailer: the recording was not closed (the process ended before the "
                        "profiler finished)");
            break;
        }
        struct chunk ch;
        char why[sizeof r->problem];
        enum chunk_status st = chunk_frame(r->image + off, left, r->chunks, &ch, why, sizeof why);
        if (st != CHUNK_WHOLE) {
            set_problem(r, st == CHUNK_PARTIAL ? REC_TRUNCATED : REC_CORRUPT, off, "%s", why);
            break;
        }
        struct counts saved = save_counts(r);
        l->offset = off;
        const char *bad = chunk_decode(&rd, &ch);
        if (bad) {
            char tn[5];
            restore_counts(l, saved);
            set_problem(r, REC_CORRUPT, off, "chunk %llu ('%s'): %s",
                        (unsigned long long)r->chunks + 1, chunk_tag_name(ch.tag, tn), bad);
            break;
        }
        if (ch.tag == FMT_TAG_SAMPLES || ch.tag == FMT_TAG_STACKS)
            release_pages(ch.payload, ch.len);
        if (ch.tag == FMT_TAG_TRAILER)
            r->has_trailer = 1;
        else
            r->chunks++;
        off += FMT_CHUNK_HEADER_SIZE + ch.len;
    }
    chunk_reader_free(&rd);
}

static int check_header(struct recording *r, char *err, size_t err_size)
{
    return chunk_header(r->image, r->size, &r->version_major, &r->version_minor, err, err_size);
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

    struct loader l = {r, 0, NULL, NULL, 0};
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

uint64_t rec_info_u64(const struct recording *r, const char *key)
{
    const struct rec_str *v = rec_info(r, key);
    char text[32] = "";
    if (v)
        snprintf(text, sizeof text, "%.*s", (int)v->len, v->p);
    return strtoull(text, NULL, 10);
}

/* The counter's slot, or NULL when the recording has none. */
static const struct rec_stat *stat_of(const struct recording *r, const char *key)
{
    for (size_t i = 0; i < r->stat_count; i++)
        if (rec_str_eq(r->stats[i].key, key))
            return &r->stats[i];
    return NULL;
}

uint64_t rec_stat(const struct recording *r, const char *key)
{
    const struct rec_stat *s = stat_of(r, key);
    return s ? s->value : 0;
}

uint64_t rec_counter(const struct recording *r, enum fmt_counter c)
{
    return rec_stat(r, schema_counter_key(c));
}

int rec_has_counter(const struct recording *r, enum fmt_counter c)
{
    return stat_of(r, schema_counter_key(c)) != NULL;
}
