/*
 * pstream: see pstream.h.  format/chunk.c frames the chunks as they
 * arrive and reads each record (the syntax, shared with the whole-file
 * reader, format/recording.c); this file's sink checks what a record
 * refers to before anything it says is kept, and the first bad one stops
 * the stream (it came from our agent through a pipe: damage means
 * something else is wrong).
 */
#include "cli/pstream.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/hash.h"
#include "common/mem.h"
#include "format/schema.h"

#define GROW(arr, cap, need) mem_grow_array((void **)&(arr), &(cap), (need), sizeof *(arr))

static const struct chunk_sink sink; /* this file's callbacks, at the end of the records part */

int pstream_init(struct pstream *s, uint64_t every_ns)
{
    memset(s, 0, sizeof *s);
    s->every_ns = every_ns;
    buf_init(&s->in);
    map64_init(&s->live_by_object);
    chunk_reader_init(&s->reader, &sink, s);
    s->alloc_event = s->scan_event = s->collected_event = -1;
    if (pdefs_init(&s->defs, PDEFS_BUDGET_DEFAULT) < 0) {
        pstream_free(s);
        return -1;
    }
    return 0;
}

static void window_data_free(struct pstream_window_data *w)
{
    mem_free(w->items);
    mem_free(w->data);
    memset(w, 0, sizeof *w);
}

void pstream_free(struct pstream *s)
{
    buf_free(&s->in);
    for (size_t i = 0; i < s->info_count; i++) {
        mem_free(s->info[i].key);
        mem_free(s->info[i].value);
    }
    mem_free(s->info);
    mem_free(s->events);
    pdefs_free(&s->defs);
    for (size_t i = 0; i < s->stat_count; i++)
        mem_free(s->stats[i].key);
    mem_free(s->stats);
    chunk_reader_free(&s->reader);
    for (size_t i = 0; i < s->open_count; i++)
        window_data_free(&s->open[i]);
    window_data_free(&s->live);
    window_data_free(&s->pending);
    window_data_free(&s->last_scan);
    map64_free(&s->live_by_object);
    memset(s, 0, sizeof *s);
}

static int fail(struct pstream *s, const char *why)
{
    if (!s->failed)
        snprintf(s->problem, sizeof s->problem, "chunk %llu: %s",
                 (unsigned long long)s->chunks + 1, why);
    s->failed = 1;
    return -1;
}

static const char *oom = "out of memory";

/* ---- definitions -------------------------------------------------------- */

const char *pstream_info(const struct pstream *s, const char *key)
{
    for (size_t i = s->info_count; i-- > 0;)
        if (!strcmp(s->info[i].key, key))
            return s->info[i].value;
    return NULL;
}

uint64_t pstream_stat(const struct pstream *s, const char *key)
{
    for (size_t i = 0; i < s->stat_count; i++)
        if (!strcmp(s->stats[i].key, key))
            return s->stats[i].value_u64;
    return 0;
}

static const char *sink_info(void *ctx, struct rec_str k, struct rec_str v)
{
    struct pstream *s = ctx;
    char *key = mem_strndup(k.p, k.len), *value = mem_strndup(v.p, v.len);
    if (!key || !value || GROW(s->info, s->info_cap, s->info_count + 1)) {
        mem_free(key);
        mem_free(value);
        return oom;
    }
    struct pstream_kv kv = {key, value, 0};
    s->info[s->info_count++] = kv;
    if (!strcmp(key, FMT_INFO_START_REALTIME_NS)) {
        s->start_realtime_ns = strtoull(value, NULL, 10);
        s->have_start = 1;
    } else if (!strcmp(key, FMT_INFO_START_MONOTONIC_NS)) {
        s->start_mono_ns = strtoull(value, NULL, 10);
    }
    return NULL;
}

static void copy_text(char *out, size_t size, struct rec_str t)
{
    size_t n = t.len < size ? t.len : size - 1;
    if (n)
        memcpy(out, t.p, n);
    out[n] = '\0';
}

/* Where the stream's definition e has field `member` of schema event ev
 * (by name and type, as the reader resolves them: recording.h), or -1. */
static long field_of(const struct pstream_event *e, enum fmt_ev ev, int member)
{
    const struct schema_member *f = &schema_events[ev].fields[member];
    for (uint32_t i = 0; i < e->field_count; i++)
        if (!strcmp(e->field_names[i], f->name) && e->field_types[i] == f->type)
            return i;
    return -1;
}

/* Are the live heap's three events known?  (-e live: alloc with object
 * ids, live-scan, collected; cli/live.h) */
static void find_live_events(struct pstream *s)
{
    for (size_t i = 0; i < s->event_count; i++) {
        const struct pstream_event *e = &s->events[i];
        if (!e->recorded)
            continue;
        if (!strcmp(e->name, schema_event_name(FMT_EV_ALLOC)) &&
            e->value_count >= FMT_ALLOC_VALUE_COUNT &&
            field_of(e, FMT_EV_ALLOC, FMT_ALLOC_OBJECT) >= 0) {
            s->alloc_event = (long)i;
            s->alloc_object_field = field_of(e, FMT_EV_ALLOC, FMT_ALLOC_OBJECT);
        } else if (!strcmp(e->name, schema_event_name(FMT_EV_LIVE_SCAN)) &&
                   field_of(e, FMT_EV_LIVE_SCAN, FMT_LIVE_SCAN_AS_OF) >= 0) {
            s->scan_event = (long)i;
            s->scan_as_of_field = field_of(e, FMT_EV_LIVE_SCAN, FMT_LIVE_SCAN_AS_OF);
        } else if (!strcmp(e->name, schema_event_name(FMT_EV_COLLECTED)) &&
                   field_of(e, FMT_EV_COLLECTED, FMT_COLLECTED_OBJECT) >= 0 &&
                   field_of(e, FMT_EV_COLLECTED, FMT_COLLECTED_BY) >= 0) {
            s->collected_event = (long)i;
            s->collected_object_field = field_of(e, FMT_EV_COLLECTED, FMT_COLLECTED_OBJECT);
            s->collected_by_field = field_of(e, FMT_EV_COLLECTED, FMT_COLLECTED_BY);
        }
    }
}

static const char *sink_event(void *ctx, const struct rec_event *d)
{
    struct pstream *s = ctx;
    struct pstream_event e;
    memset(&e, 0, sizeof e);
    e.id = d->id;
    e.recorded = d->recorded;
    e.period = d->period;
    copy_text(e.name, sizeof e.name, d->name);
    copy_text(e.unit, sizeof e.unit, d->unit);
    e.value_count = d->value_count;
    for (uint32_t i = 0; i < d->value_count; i++) {
        copy_text(e.value_names[i], sizeof e.value_names[i], d->value_names[i]);
        copy_text(e.value_units[i], sizeof e.value_units[i], d->value_units[i]);
    }
    e.field_count = d->field_count;
    for (uint32_t i = 0; i < d->field_count; i++) {
        copy_text(e.field_names[i], sizeof e.field_names[i], d->field_names[i]);
        e.field_types[i] = d->field_types[i];
    }
    if (GROW(s->events, s->event_cap, s->event_count + 1))
        return oom;
    s->events[s->event_count++] = e;
    find_live_events(s);
    return NULL;
}

static const char *sink_string(void *ctx, uint64_t id, struct rec_str t)
{
    struct pstream *s = ctx;
    return pdefs_string(&s->defs, id, (const uint8_t *)t.p, t.len);
}

static const char *sink_frame(void *ctx, uint64_t id, uint8_t kind, uint64_t module,
                              uint64_t type, uint64_t name, uint64_t extra)
{
    struct pstream *s = ctx;
    return pdefs_frame(&s->defs, id, kind, module, type, name, extra);
}

static const char *sink_stack(void *ctx, uint64_t id, const uint32_t *frames, uint32_t depth)
{
    struct pstream *s = ctx;
    return pdefs_stack(&s->defs, id, frames, depth);
}

static const char *sink_thread(void *ctx, uint32_t id, uint64_t tid, uint64_t name)
{
    struct pstream *s = ctx;
    return pdefs_thread(&s->defs, id, tid, name);
}

static const char *set_stat(struct pstream *s, const uint8_t *k, size_t kn, uint64_t v)
{
    for (size_t i = 0; i < s->stat_count; i++) {
        if (strlen(s->stats[i].key) == kn && !memcmp(s->stats[i].key, k, kn)) {
            s->stats[i].value_u64 = v;
            return NULL;
        }
    }
    char *key = mem_strndup((const char *)k, kn);
    if (!key || GROW(s->stats, s->stat_cap, s->stat_count + 1)) {
        mem_free(key);
        return oom;
    }
    struct pstream_kv kv = {key, NULL, v};
    s->stats[s->stat_count++] = kv;
    return NULL;
}

static const char *sink_stat(void *ctx, struct rec_str key, uint64_t value)
{
    return set_stat(ctx, (const uint8_t *)key.p, key.len, value);
}

static const char *sink_trailer(void *ctx, uint64_t chunks)
{
    (void)ctx;
    (void)chunks; /* the stream's end: the chunks were counted as they came */
    return NULL;
}

/* ---- windows ------------------------------------------------------------- */

/* The aligned window of stream time t: [*start, *end). */
static void window_of(const struct pstream *s, uint64_t t, uint64_t *start, uint64_t *end)
{
    uint64_t real = s->start_realtime_ns + t;
    uint64_t k = real / s->every_ns;
    uint64_t ws = k * s->every_ns, we = ws + s->every_ns;
    *start = ws > s->start_realtime_ns ? ws - s->start_realtime_ns : 0;
    *end = we - s->start_realtime_ns;
}

/* The open window an item of time t goes to (made when needed), or NULL
 * when out of memory.  An item older than the windows already made goes
 * to the oldest open one, counted. */
static struct pstream_window_data *window_for(struct pstream *s, uint64_t t)
{
    if (t < s->next_start && s->windows_made) {
        s->late_items++;
        t = s->open_count ? s->open[0].start : s->next_start;
    }
    uint64_t ws, we;
    window_of(s, t, &ws, &we);
    if (ws < s->next_start)
        ws = s->next_start; /* the first window after those made starts where they ended */
    size_t at = 0;
    while (at < s->open_count && s->open[at].start < ws)
        at++;
    if (at < s->open_count && s->open[at].start == ws)
        return &s->open[at];
    if (s->open_count == PSTREAM_OPEN_MAX)
        return NULL; /* the caller makes windows as they come due */
    memmove(&s->open[at + 1], &s->open[at], (s->open_count - at) * sizeof s->open[0]);
    memset(&s->open[at], 0, sizeof s->open[at]);
    s->open[at].start = ws;
    s->open[at].end = we;
    s->open_count++;
    return &s->open[at];
}

static struct pstream_item *add_item(struct pstream_window_data *w, const struct pstream_item *x,
                                     const uint64_t *data, size_t n)
{
    if (GROW(w->items, w->item_cap, w->item_count + 1) ||
        (n && GROW(w->data, w->data_cap, w->data_count + n)))
        return NULL;
    struct pstream_item *it = &w->items[w->item_count++];
    *it = *x;
    it->data = (uint32_t)w->data_count;
    if (n)
        memcpy(w->data + w->data_count, data, n * sizeof *data);
    w->data_count += n;
    return it;
}

static const char *route(struct pstream *s, const struct pstream_item *x, const uint64_t *data,
                         size_t n)
{
    struct pstream_window_data *w = window_for(s, x->time);
    if (!w)
        return "too many windows open (a window was not made in time)";
    if (!add_item(w, x, data, n))
        return oom;
    s->items++;
    s->events[x->event].taken++;
    if (x->time > s->last_time)
        s->last_time = x->time;
    return NULL;
}

/* ---- the live heap ------------------------------------------------------ */

static void live_forget(struct pstream *s, uint64_t object)
{
    uint32_t at;
    if (!map64_get(&s->live_by_object, object, &at))
        return;
    map64_remove(&s->live_by_object, object);
    struct pstream_window_data *w = &s->live;
    size_t last = w->item_count - 1;
    if (at != last) {
        /* the last allocation takes the slot (its data stays where it is) */
        w->items[at] = w->items[last];
        uint64_t moved = w->data[w->items[at].data + s->events[s->alloc_event].value_count +
                                 (size_t)s->alloc_object_field];
        map64_put(&s->live_by_object, moved, at); /* replaces: cannot fail */
    }
    w->item_count--;
}

/* The followed allocations' data is compacted when it is mostly dead. */
static const char *live_compact(struct pstream *s)
{
    struct pstream_window_data *w = &s->live;
    size_t n = s->events[s->alloc_event].value_count + s->events[s->alloc_event].field_count;
    if (w->data_count < 4096 || w->data_count < 4 * n * w->item_count)
        return NULL;
    uint64_t *data = mem_alloc((w->item_count ? w->item_count : 1) * n * sizeof *data);
    if (!data)
        return oom;
    for (size_t i = 0; i < w->item_count; i++) {
        memcpy(data + i * n, w->data + w->items[i].data, n * sizeof *data);
        w->items[i].data = (uint32_t)(i * n);
    }
    mem_free(w->data);
    w->data = data;
    w->data_count = w->data_cap = w->item_count * n;
    return NULL;
}

/* What a recorded event changes in the live heap. */
static const char *live_note(struct pstream *s, const struct pstream_item *x, const uint64_t *data)
{
    long ev = x->event;
    const struct pstream_event *e = &s->events[ev];
    const uint64_t *fields = data + e->value_count;
    if (ev == s->alloc_event && x->stack && x->thread && fields[s->alloc_object_field]) {
        uint64_t object = fields[s->alloc_object_field];
        live_forget(s, object);
        if (!add_item(&s->live, x, data, e->value_count + e->field_count) ||
            map64_put(&s->live_by_object, object, (uint32_t)(s->live.item_count - 1)) < 0)
            return oom;
        return live_compact(s);
    }
    if (ev == s->collected_event) {
        if (fields[s->collected_by_field] <= s->last_as_of) {
            live_forget(s, fields[s->collected_object_field]);
            return NULL;
        }
        return add_item(&s->pending, x, data, e->value_count + e->field_count) ? NULL : oom;
    }
    if (ev == s->scan_event) {
        uint64_t as_of = fields[s->scan_as_of_field];
        window_data_free(&s->last_scan);
        if (!add_item(&s->last_scan, x, data, e->value_count + e->field_count))
            return oom;
        if (as_of > s->last_as_of)
            s->last_as_of = as_of;
        /* collections this look has passed are final now */
        struct pstream_window_data kept;
        memset(&kept, 0, sizeof kept);
        const struct pstream_event *ce = &s->events[s->collected_event >= 0 ? s->collected_event : 0];
        for (size_t i = 0; s->collected_event >= 0 && i < s->pending.item_count; i++) {
            const struct pstream_item *p = &s->pending.items[i];
            const uint64_t *pf = s->pending.data + p->data + ce->value_count;
            if (pf[s->collected_by_field] <= s->last_as_of)
                live_forget(s, pf[s->collected_object_field]);
            else if (!add_item(&kept, p, s->pending.data + p->data,
                               ce->value_count + ce->field_count)) {
                window_data_free(&kept);
                return oom;
            }
        }
        window_data_free(&s->pending);
        s->pending = kept;
    }
    return NULL;
}

/* ---- samples and recorded events ---------------------------------------- */

static long sink_event_find(void *ctx, uint64_t id, uint32_t *values, uint32_t *fields,
                            int *recorded)
{
    const struct pstream *s = ctx;
    for (size_t i = 0; i < s->event_count; i++) {
        if (s->events[i].id == id) {
            *values = s->events[i].value_count;
            *fields = s->events[i].field_count;
            *recorded = s->events[i].recorded;
            return (long)i;
        }
    }
    return -1;
}

static size_t sink_event_count(void *ctx)
{
    return ((const struct pstream *)ctx)->event_count;
}

/* Is a reference defined (it may have been forgotten since: that is no
 * error)?  The definition it names is needed now. */
static int refers(struct pstream *s, struct ptable *t, uint64_t id)
{
    if (!pdefs_defined(t, id))
        return 0;
    pdefs_find(&s->defs, t, id);
    return 1;
}

static const char *sink_sample(void *ctx, const struct chunk_sample *x)
{
    struct pstream *s = ctx;
    if (!refers(s, &s->defs.threads, x->thread))
        return "sample on an undefined thread";
    if (!refers(s, &s->defs.stacks, x->stack))
        return "sample refers to an undefined stack";
    struct pstream_item item = {x->time,   (uint32_t)x->thread, (uint32_t)x->stack, 0,
                                (uint16_t)x->event, 1, x->weight};
    return route(s, &item, NULL, 0);
}

static int valid_field(struct pstream *s, uint8_t type, uint64_t v)
{
    switch (type) {
    case FMT_FIELD_STRING: return !v || refers(s, &s->defs.strings, v);
    case FMT_FIELD_FRAME: return !v || refers(s, &s->defs.frames, v);
    case FMT_FIELD_STACK: return !v || refers(s, &s->defs.stacks, v);
    case FMT_FIELD_THREAD: return !v || refers(s, &s->defs.threads, v);
    default: return 1;
    }
}

static const char *sink_record(void *ctx, const struct chunk_record *x, const uint64_t *data,
                               size_t n)
{
    struct pstream *s = ctx;
    const struct pstream_event *e = &s->events[x->event];
    if (x->thread && !refers(s, &s->defs.threads, x->thread))
        return "record on an undefined thread";
    if (x->stack && !refers(s, &s->defs.stacks, x->stack))
        return "record refers to an undefined stack";
    for (uint32_t i = 0; i < e->field_count; i++)
        if (!valid_field(s, e->field_types[i], data[e->value_count + i]))
            return "record field refers to something undefined";
    struct pstream_item item = {x->time, (uint32_t)x->thread, (uint32_t)x->stack, 0,
                                (uint16_t)x->event, 0, 0};
    const char *bad = route(s, &item, data, n);
    if (!bad && s->alloc_event >= 0 && s->scan_event >= 0)
        bad = live_note(s, &item, data);
    return bad;
}

static const struct chunk_sink sink = {
    sink_event_find, sink_event_count, sink_info, sink_event, sink_string, sink_frame,
    sink_stack, sink_thread, sink_sample, sink_record, sink_stat, sink_trailer,
};

/* ---- input ---------------------------------------------------------------- */

static int check_header(struct pstream *s, const uint8_t *h)
{
    uint16_t major, minor;
    if (chunk_header(h, FMT_HEADER_SIZE, &major, &minor, s->problem, sizeof s->problem) < 0) {
        s->failed = 1;
        return -1;
    }
    if (major != FMT_VERSION_MAJOR) {
        snprintf(s->problem, sizeof s->problem, "recording format %u is not this corscope's (%u)",
                 major, FMT_VERSION_MAJOR);
        s->failed = 1;
        return -1;
    }
    return 0;
}

int pstream_feed(struct pstream *s, const void *data, size_t n)
{
    if (s->failed)
        return -1;
    if (s->ended) {
        if (n)
            return fail(s, "data after the trailer");
        return 0;
    }
    buf_put(&s->in, data, n);
    if (s->in.failed)
        return fail(s, oom);
    s->bytes += n;
    for (;;) {
        size_t left = s->in.len - s->in_pos;
        const uint8_t *p = s->in.data + s->in_pos;
        if (!s->header_seen) {
            if (left < FMT_HEADER_SIZE)
                break;
            if (check_header(s, p) < 0)
                return -1;
            s->header_seen = 1;
            s->in_pos += FMT_HEADER_SIZE;
            continue;
        }
        struct chunk ch;
        char why[sizeof s->problem];
        enum chunk_status st = chunk_frame(p, left, s->chunks, &ch, why, sizeof why);
        if (st == CHUNK_PARTIAL)
            break; /* the rest is on its way */
        if (st == CHUNK_BAD) {
            snprintf(s->problem, sizeof s->problem, "%s", why);
            s->failed = 1;
            return -1;
        }
        s->reader.ctx = s;
        const char *bad = chunk_decode(&s->reader, &ch);
        if (bad)
            return fail(s, bad);
        s->chunks++;
        s->ended = ch.tag == FMT_TAG_TRAILER;
        s->in_pos += FMT_CHUNK_HEADER_SIZE + ch.len;
        if (s->ended && s->in_pos != s->in.len)
            return fail(s, "data after the trailer");
    }
    /* what is consumed goes: the buffer holds at most a chunk and a piece */
    if (s->in_pos && (s->in_pos == s->in.len || s->in_pos > (1u << 20))) {
        memmove(s->in.data, s->in.data + s->in_pos, s->in.len - s->in_pos);
        s->in.len -= s->in_pos;
        s->in_pos = 0;
    }
    return 0;
}

/* ---- windows made into recordings ---------------------------------------- */

uint64_t pstream_now(const struct pstream *s, uint64_t now_mono_ns)
{
    if (!s->have_start || now_mono_ns < s->start_mono_ns)
        return 0;
    return now_mono_ns - s->start_mono_ns;
}

uint64_t pstream_next_due(const struct pstream *s)
{
    if (!s->open_count)
        return UINT64_MAX;
    return s->start_mono_ns + s->open[0].end + PSTREAM_GRACE_NS;
}

/* Marks what the items still waiting refer to as needed now. */
static void touch_items(struct pstream *s, const struct pstream_window_data *w)
{
    struct pdefs *d = &s->defs;
    for (size_t i = 0; i < w->item_count; i++) {
        const struct pstream_item *x = &w->items[i];
        pdefs_find(d, &d->threads, x->thread);
        pdefs_find(d, &d->stacks, x->stack);
        if (x->sampled)
            continue;
        const struct pstream_event *e = &s->events[x->event];
        const uint64_t *fields = w->data + x->data + e->value_count;
        for (uint32_t k = 0; k < e->field_count; k++) {
            uint8_t type = e->field_types[k];
            struct ptable *t = type == FMT_FIELD_STRING  ? &d->strings
                               : type == FMT_FIELD_FRAME ? &d->frames
                               : type == FMT_FIELD_STACK ? &d->stacks
                               : type == FMT_FIELD_THREAD ? &d->threads
                                                          : NULL;
            if (t)
                pdefs_find(d, t, fields[k]);
        }
    }
}

/* Over the budget: what no window needed lately is forgotten, but what the
 * windows still open and the live heap refer to. */
static int forget_unused(struct pstream *s)
{
    for (size_t i = 0; i < s->open_count; i++)
        touch_items(s, &s->open[i]);
    touch_items(s, &s->live);
    touch_items(s, &s->pending);
    touch_items(s, &s->last_scan);
    uint32_t now = s->defs.now;
    return pdefs_compact(&s->defs, now > PDEFS_KEEP_WINDOWS ? now - PDEFS_KEEP_WINDOWS : 0);
}

void pstream_window_free(struct pstream_window *w)
{
    buf_free(&w->recording);
    buf_free(&w->live);
    memset(w, 0, sizeof *w);
}

int pstream_next_window(struct pstream *s, uint64_t now_mono_ns, int at_end,
                        struct pstream_window *w)
{
    memset(w, 0, sizeof *w);
    buf_init(&w->recording);
    buf_init(&w->live);
    if (!s->open_count)
        return 0;
    struct pstream_window_data *d = &s->open[0];
    uint64_t now = pstream_now(s, now_mono_ns);
    if (!at_end && (!s->have_start || now < d->end + PSTREAM_GRACE_NS))
        return 0;
    uint64_t end = d->end;
    if (s->open_count == 1 && at_end) {
        /* the recording ended inside it */
        uint64_t last = s->last_time + 1;
        end = now >= d->start && now < d->end ? now : last < d->end ? last : d->end;
        if (end <= d->start)
            end = d->start + 1;
    }
    w->start_ns = s->start_realtime_ns + d->start;
    w->end_ns = s->start_realtime_ns + end;
    w->items = d->item_count;
    struct pstream_window_data *parts[1] = {d};
    int rc = pwindow_build(s, parts, 1, &w->recording);
    if (rc == 0 && s->scan_event >= 0 && s->last_scan.item_count) {
        struct pstream_window_data *live[3] = {&s->live, &s->pending, &s->last_scan};
        rc = pwindow_build(s, live, 3, &w->live);
        /* build sorted the followed allocations: their index moved */
        for (size_t i = 0; rc == 0 && i < s->live.item_count; i++) {
            const uint64_t *f = s->live.data + s->live.items[i].data +
                                s->events[s->alloc_event].value_count;
            if (map64_put(&s->live_by_object, f[s->alloc_object_field], (uint32_t)i) < 0)
                rc = -1;
        }
    }
    s->next_start = end > d->end ? end : d->end;
    s->windows_made++;
    window_data_free(d);
    memmove(&s->open[0], &s->open[1], (s->open_count - 1) * sizeof s->open[0]);
    s->open_count--;
    memset(&s->open[s->open_count], 0, sizeof s->open[0]);
    s->defs.now = (uint32_t)s->windows_made;
    if (rc == 0 && pdefs_bytes(&s->defs) > s->defs.threshold)
        rc = forget_unused(s);
    if (rc < 0) {
        pstream_window_free(w);
        return -1;
    }
    return 1;
}
