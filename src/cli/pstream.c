/*
 * pstream: see pstream.h.  One function per chunk tag decodes a chunk that
 * has arrived whole and checked; a record is validated before anything it
 * says is kept, and the first bad one stops the stream (it came from our
 * agent through a pipe: damage means something else is wrong).
 */
#include "cli/pstream.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/crc32.h"
#include "common/hash.h"
#include "common/mem.h"
#include "format/schema.h"

#define GROW(arr, cap, need) mem_grow_array((void **)&(arr), &(cap), (need), sizeof *(arr))

int pstream_init(struct pstream *s, uint64_t every_ns)
{
    memset(s, 0, sizeof *s);
    s->every_ns = every_ns;
    buf_init(&s->in);
    map64_init(&s->live_by_object);
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
    mem_free(s->frame_ids);
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

/* Decodes a chunk's records one by one; NULL or what is wrong with the
 * first bad one. */
static const char *each(struct pstream *s, struct cur *c, uint64_t *records,
                        const char *(*one)(struct pstream *s, struct cur *c))
{
    while (cur_left(c)) {
        ++*records;
        const char *bad = one(s, c);
        if (bad)
            return bad;
    }
    return NULL;
}

static const char *one_info(struct pstream *s, struct cur *c)
{
    size_t kn, vn;
    const uint8_t *k = cur_bytes(c, &kn);
    const uint8_t *v = cur_bytes(c, &vn);
    if (c->err)
        return c->err;
    char *key = mem_strndup((const char *)k, kn), *value = mem_strndup((const char *)v, vn);
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

static void copy_text(char *out, size_t size, const uint8_t *p, size_t n)
{
    if (n >= size)
        n = size - 1;
    memcpy(out, p, n);
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

static const char *add_event(struct pstream *s, const struct pstream_event *e)
{
    for (size_t i = 0; i < s->event_count; i++)
        if (s->events[i].id == e->id)
            return "event defined twice";
    if (s->event_count >= 255)
        return "too many events";
    if (GROW(s->events, s->event_cap, s->event_count + 1))
        return oom;
    s->events[s->event_count++] = *e;
    find_live_events(s);
    return NULL;
}

static const char *one_event(struct pstream *s, struct cur *c)
{
    struct pstream_event e;
    memset(&e, 0, sizeof e);
    size_t nn, un;
    uint64_t id = cur_varint(c);
    const uint8_t *name = cur_bytes(c, &nn);
    const uint8_t *unit = cur_bytes(c, &un);
    e.period = cur_varint(c);
    if (c->err)
        return c->err;
    if (id == 0 || id > UINT32_MAX || e.period == 0)
        return "bad event definition";
    e.id = (uint32_t)id;
    copy_text(e.name, sizeof e.name, name, nn);
    copy_text(e.unit, sizeof e.unit, unit, un);
    e.value_count = 1;
    return add_event(s, &e);
}

static const char *one_event_def(struct pstream *s, struct cur *c)
{
    struct pstream_event e;
    memset(&e, 0, sizeof e);
    size_t n;
    uint64_t id = cur_varint(c);
    const uint8_t *name = cur_bytes(c, &n);
    copy_text(e.name, sizeof e.name, name, n);
    uint64_t values = cur_varint(c);
    if (c->err || values < 1 || values > FMT_MAX_VALUES)
        return c->err ? c->err : "event has too many or no values";
    e.value_count = (uint32_t)values;
    for (uint32_t i = 0; i < e.value_count; i++) {
        const uint8_t *vn = cur_bytes(c, &n);
        if (vn)
            copy_text(e.value_names[i], sizeof e.value_names[i], vn, n);
        const uint8_t *vu = cur_bytes(c, &n);
        if (vu)
            copy_text(e.value_units[i], sizeof e.value_units[i], vu, n);
    }
    uint64_t fields = cur_varint(c);
    if (c->err || fields > FMT_MAX_FIELDS)
        return c->err ? c->err : "event has too many fields";
    e.field_count = (uint32_t)fields;
    for (uint32_t i = 0; i < e.field_count; i++) {
        const uint8_t *fn = cur_bytes(c, &n);
        if (fn)
            copy_text(e.field_names[i], sizeof e.field_names[i], fn, n);
        e.field_types[i] = cur_u8(c);
        if (!c->err && (e.field_types[i] < 1 || e.field_types[i] > FMT_FIELD_TYPE_MAX))
            return "unknown field type";
    }
    if (c->err)
        return c->err;
    if (id == 0 || id > UINT32_MAX)
        return "event id out of range";
    e.id = (uint32_t)id;
    e.recorded = 1;
    e.period = 1;
    snprintf(e.unit, sizeof e.unit, "%s", e.value_units[0]);
    return add_event(s, &e);
}

static const char *one_string(struct pstream *s, struct cur *c)
{
    uint64_t id = cur_varint(c);
    size_t n;
    const uint8_t *p = cur_bytes(c, &n);
    if (c->err)
        return c->err;
    return pdefs_string(&s->defs, id, p, n);
}

static const char *one_frame(struct pstream *s, struct cur *c)
{
    uint64_t id = cur_varint(c);
    uint8_t kind = cur_u8(c);
    uint64_t module = cur_varint(c), type = cur_varint(c), name = cur_varint(c);
    uint64_t extra = cur_varint(c);
    if (c->err)
        return c->err;
    return pdefs_frame(&s->defs, id, kind, module, type, name, extra);
}

static const char *one_stack(struct pstream *s, struct cur *c)
{
    uint64_t id = cur_varint(c);
    uint64_t depth = cur_varint(c);
    if (c->err)
        return c->err;
    if (depth > FMT_MAX_STACK_DEPTH || depth > cur_left(c))
        return "stack deeper than its chunk or the format allows";
    if (GROW(s->frame_ids, s->frame_id_cap, depth ? depth : 1))
        return oom;
    for (uint64_t i = 0; i < depth; i++) {
        uint64_t f = cur_varint(c);
        if (c->err)
            return c->err;
        if (f > UINT32_MAX)
            return "stack refers to an undefined frame";
        s->frame_ids[i] = (uint32_t)f;
    }
    return pdefs_stack(&s->defs, id, s->frame_ids, (uint32_t)depth);
}

static const char *one_thread(struct pstream *s, struct cur *c)
{
    uint64_t id = cur_varint(c), tid = cur_varint(c), name = cur_varint(c);
    if (c->err)
        return c->err;
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

static const char *one_stat(struct pstream *s, struct cur *c)
{
    size_t kn;
    const uint8_t *k = cur_bytes(c, &kn);
    uint64_t v = cur_varint(c);
    if (c->err)
        return c->err;
    return set_stat(s, k, kn, v);
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

static long event_at(const struct pstream *s, uint64_t id)
{
    for (size_t i = 0; i < s->event_count; i++)
        if (s->events[i].id == id)
            return (long)i;
    return -1;
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

static const char *decode_samples(struct pstream *s, struct cur *c, uint64_t *records)
{
    uint64_t time = cur_varint(c);
    if (c->err)
        return c->err;
    while (cur_left(c)) {
        ++*records;
        uint64_t event = cur_varint(c), thread = cur_varint(c), delta = cur_varint(c);
        uint64_t stack = cur_varint(c), weight = cur_varint(c);
        if (c->err)
            return c->err;
        long ev = event_at(s, event);
        if (ev < 0 || s->events[ev].recorded)
            return "sample of an undefined event";
        if (!refers(s, &s->defs.threads, thread))
            return "sample on an undefined thread";
        if (!refers(s, &s->defs.stacks, stack))
            return "sample refers to an undefined stack";
        if (delta > UINT64_MAX - time)
            return "sample time overflows";
        time += delta;
        struct pstream_item x = {time, (uint32_t)thread, (uint32_t)stack, 0, (uint16_t)ev, 1, weight};
        const char *bad = route(s, &x, NULL, 0);
        if (bad)
            return bad;
    }
    return NULL;
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

static const char *decode_records(struct pstream *s, struct cur *c, uint64_t *records)
{
    uint64_t time = cur_varint(c);
    if (c->err)
        return c->err;
    while (cur_left(c)) {
        ++*records;
        uint64_t event = cur_varint(c), thread = cur_varint(c), delta = cur_varint(c);
        uint64_t stack = cur_varint(c);
        if (c->err)
            return c->err;
        long ev = event_at(s, event);
        if (ev < 0 || !s->events[ev].recorded)
            return "record of an undefined event";
        const struct pstream_event *e = &s->events[ev];
        if (thread && !refers(s, &s->defs.threads, thread))
            return "record on an undefined thread";
        if ((stack && !refers(s, &s->defs.stacks, stack)) || (stack && !thread))
            return "record refers to an undefined stack, or has a stack but no thread";
        uint64_t back = delta & 1, step = (delta >> 1) + back;
        if (back ? step > time : step > UINT64_MAX - time)
            return "record time out of range";
        time = back ? time - step : time + step;
        uint64_t data[FMT_MAX_VALUES + FMT_MAX_FIELDS];
        size_t n = e->value_count + e->field_count;
        for (size_t i = 0; i < n; i++)
            data[i] = cur_varint(c);
        if (c->err)
            return c->err;
        for (uint32_t i = 0; i < e->field_count; i++)
            if (!valid_field(s, e->field_types[i], data[e->value_count + i]))
                return "record field refers to something undefined";
        struct pstream_item x = {time, (uint32_t)thread, (uint32_t)stack, 0, (uint16_t)ev, 0, 0};
        const char *bad = route(s, &x, data, n);
        if (!bad && s->alloc_event >= 0 && s->scan_event >= 0)
            bad = live_note(s, &x, data);
        if (bad)
            return bad;
    }
    return NULL;
}

/* ---- input ---------------------------------------------------------------- */

static int check_header(struct pstream *s, const uint8_t *h)
{
    struct cur c;
    cur_init(&c, h + FMT_MAGIC_LEN, FMT_HEADER_SIZE - FMT_MAGIC_LEN);
    uint16_t major = cur_u16le(&c);
    cur_u16le(&c);
    uint32_t bom = cur_u32le(&c);
    cur_skip(&c, 4);
    uint32_t header_size = cur_u32le(&c);
    cur_u32le(&c);
    uint32_t crc = cur_u32le(&c);
    if (memcmp(h, FMT_MAGIC, FMT_MAGIC_LEN) != 0 || crc32_update(0, h, FMT_HEADER_SIZE - 4) != crc ||
        bom != FMT_BYTE_ORDER_MARK || header_size != FMT_HEADER_SIZE) {
        snprintf(s->problem, sizeof s->problem, "not a corscope recording (bad header)");
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

static int decode_chunk(struct pstream *s, uint32_t tag, uint32_t count, const uint8_t *payload,
                        uint32_t len)
{
    struct cur c;
    cur_init(&c, payload, len);
    uint64_t records = 0;
    const char *bad = NULL;
    switch (tag) {
    case FMT_TAG_INFO: bad = each(s, &c, &records, one_info); break;
    case FMT_TAG_EVENTS: bad = each(s, &c, &records, one_event); break;
    case FMT_TAG_EVENT_DEFS: bad = each(s, &c, &records, one_event_def); break;
    case FMT_TAG_STRINGS: bad = each(s, &c, &records, one_string); break;
    case FMT_TAG_FRAMES: bad = each(s, &c, &records, one_frame); break;
    case FMT_TAG_STACKS: bad = each(s, &c, &records, one_stack); break;
    case FMT_TAG_THREADS: bad = each(s, &c, &records, one_thread); break;
    case FMT_TAG_SAMPLES: bad = decode_samples(s, &c, &records); break;
    case FMT_TAG_RECORDS: bad = decode_records(s, &c, &records); break;
    case FMT_TAG_STATS: bad = each(s, &c, &records, one_stat); break;
    case FMT_TAG_TRAILER:
        cur_varint(&c);
        bad = c.err ? c.err : each(s, &c, &records, one_stat);
        records = count;
        s->ended = 1;
        break;
    default: records = count; break; /* a newer minor version's chunk */
    }
    if (!bad && records != count)
        bad = "record count does not match the chunk header";
    if (bad)
        return fail(s, bad);
    s->chunks++;
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
        if (left < FMT_CHUNK_HEADER_SIZE)
            break;
        struct cur h;
        cur_init(&h, p, FMT_CHUNK_HEADER_SIZE);
        uint32_t tag = cur_u32le(&h), len = cur_u32le(&h), count = cur_u32le(&h);
        uint32_t crc = cur_u32le(&h);
        if (len > FMT_MAX_CHUNK_PAYLOAD)
            return fail(s, "chunk longer than the format allows");
        if (left - FMT_CHUNK_HEADER_SIZE < len)
            break;
        const uint8_t *payload = p + FMT_CHUNK_HEADER_SIZE;
        if (crc32_update(crc32_update(0, p, 12), payload, len) != crc)
            return fail(s, "checksum mismatch");
        if (decode_chunk(s, tag, count, payload, len) < 0)
            return -1;
        s->in_pos += FMT_CHUNK_HEADER_SIZE + len;
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
