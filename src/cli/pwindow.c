/*
 * pwindow: a window of a stream (pstream.h) made into a recording of its
 * own, with the real writer, so that the ordinary reader, aggregate and
 * reports take it: the recording's INFO and events, then its items, each
 * definition they need written the first time it is used (under the new
 * recording's own ids), and the stream's latest counters as the trailer.
 *
 * A definition the stream forgot (pdefs.h) is written as what it is now:
 * unknown: a stack of the one frame "[forgotten]", a thread of that name,
 * no string; each such reference is counted in defs.forgotten_refs.
 */
#include <stdlib.h>
#include <string.h>

#include "cli/pstream.h"
#include "common/mem.h"
#include "format/writer.h"

#define FORGOTTEN "[forgotten]"

struct builder {
    struct pstream *s;
    struct writer w;
    struct map64 text_id, frame_id, stack_id, thread_done;
    uint32_t forgotten_frame;
    uint32_t frames[FMT_MAX_STACK_DEPTH];
};

static int mem_sink(void *ctx, const void *data, size_t n)
{
    struct buf *b = ctx;
    buf_put(b, data, n);
    return b->failed ? -1 : 0;
}

static uint32_t b_text(struct builder *b, uint32_t text)
{
    uint32_t id, len;
    if (!text)
        return 0;
    if (map64_get(&b->text_id, text, &id))
        return id;
    const char *p = pdefs_text(&b->s->defs, text, &len);
    id = writer_string(&b->w, p, len);
    map64_put(&b->text_id, text, id);
    return id;
}

static uint32_t b_forgotten(struct builder *b)
{
    b->s->defs.forgotten_refs++;
    if (!b->forgotten_frame)
        b->forgotten_frame = writer_frame(&b->w, FMT_FRAME_SYNTHETIC, 0, 0,
                                          writer_string(&b->w, FORGOTTEN, strlen(FORGOTTEN)), 0);
    return b->forgotten_frame;
}

static uint32_t b_frame(struct builder *b, uint64_t frame)
{
    uint32_t id;
    if (!frame)
        return 0;
    if (map64_get(&b->frame_id, frame, &id))
        return id;
    struct pdef *f = pdefs_find(&b->s->defs, &b->s->defs.frames, frame);
    if (!f)
        return b_forgotten(b);
    struct pdef copy = *f; /* the label's subject may grow the table */
    uint64_t extra = copy.kind == FMT_FRAME_LABEL ? b_frame(b, copy.x) : copy.x;
    id = writer_frame(&b->w, copy.kind, b_text(b, copy.a), b_text(b, copy.b), b_text(b, copy.c),
                      extra);
    map64_put(&b->frame_id, frame, id);
    return id;
}

static uint32_t b_stack(struct builder *b, uint64_t stack)
{
    uint32_t id;
    if (!stack)
        return 0;
    if (map64_get(&b->stack_id, stack, &id))
        return id;
    struct pdef *st = pdefs_find(&b->s->defs, &b->s->defs.stacks, stack);
    uint32_t depth = st ? st->b : 1;
    if (!st) {
        b->frames[0] = b_forgotten(b);
    } else {
        uint32_t off = st->a;
        for (uint32_t i = 0; i < depth; i++)
            b->frames[i] = b_frame(b, b->s->defs.pool[off + i]);
    }
    id = writer_stack(&b->w, b->frames, depth);
    map64_put(&b->stack_id, stack, id);
    return id;
}

static void b_thread(struct builder *b, uint64_t thread)
{
    uint32_t done;
    if (!thread || map64_get(&b->thread_done, thread, &done))
        return;
    struct pdef *t = pdefs_find(&b->s->defs, &b->s->defs.threads, thread);
    if (t) {
        uint64_t os_tid = t->x;
        writer_thread(&b->w, (uint32_t)thread, os_tid, b_text(b, t->a));
    } else {
        b->s->defs.forgotten_refs++;
        writer_thread(&b->w, (uint32_t)thread, 0, writer_string(&b->w, FORGOTTEN, strlen(FORGOTTEN)));
    }
    map64_put(&b->thread_done, thread, 1);
}

static void b_item(struct builder *b, const struct pstream_item *x, const uint64_t *data)
{
    const struct pstream_event *e = &b->s->events[x->event];
    b_thread(b, x->thread);
    uint32_t stack = b_stack(b, x->stack);
    if (x->sampled) {
        writer_sample(&b->w, e->id, x->thread, x->time, stack, x->weight);
        return;
    }
    uint64_t fields[FMT_MAX_FIELDS];
    for (uint32_t i = 0; i < e->field_count; i++) {
        uint64_t v = data[e->value_count + i];
        switch (e->field_types[i]) {
        case FMT_FIELD_STRING: {
            struct pdef *str = v ? pdefs_find(&b->s->defs, &b->s->defs.strings, v) : NULL;
            if (v && !str)
                b->s->defs.forgotten_refs++;
            v = str ? b_text(b, str->a) : 0;
            break;
        }
        case FMT_FIELD_FRAME: v = b_frame(b, v); break;
        case FMT_FIELD_STACK: v = b_stack(b, v); break;
        case FMT_FIELD_THREAD: b_thread(b, v); break;
        default: break;
        }
        fields[i] = v;
    }
    writer_record(&b->w, e->id, x->thread, x->time, stack, data, e->value_count, fields,
                  e->field_count);
}

static int by_time(const void *a, const void *b)
{
    const struct pstream_item *x = a, *y = b;
    return x->time < y->time ? -1 : x->time > y->time;
}

static void b_events(struct builder *b)
{
    const struct pstream *s = b->s;
    for (size_t i = 0; i < s->event_count; i++) {
        const struct pstream_event *e = &s->events[i];
        if (!e->recorded) {
            writer_event(&b->w, e->id, e->name, e->unit, e->period);
            continue;
        }
        struct writer_event_def d;
        memset(&d, 0, sizeof d);
        d.id = e->id;
        d.name = e->name;
        d.value_count = e->value_count;
        for (uint32_t k = 0; k < e->value_count; k++) {
            d.value_names[k] = e->value_names[k];
            d.value_units[k] = e->value_units[k];
        }
        d.field_count = e->field_count;
        for (uint32_t k = 0; k < e->field_count; k++) {
            d.field_names[k] = e->field_names[k];
            d.field_types[k] = e->field_types[k];
        }
        writer_event_def(&b->w, &d);
    }
}

int pwindow_build(struct pstream *s, struct pstream_window_data *const *parts, size_t nparts,
                  struct buf *out)
{
    struct builder *b = mem_calloc(1, sizeof *b);
    if (!b)
        return -1;
    b->s = s;
    map64_init(&b->text_id);
    map64_init(&b->frame_id);
    map64_init(&b->stack_id);
    map64_init(&b->thread_done);
    struct writer_sink sink = {mem_sink, out};
    int rc = writer_begin(&b->w, sink);
    for (size_t i = 0; rc == 0 && i < s->info_count; i++)
        writer_info(&b->w, s->info[i].key, s->info[i].value);
    if (rc == 0)
        b_events(b);
    for (size_t p = 0; rc == 0 && p < nparts; p++) {
        struct pstream_window_data *w = parts[p];
        /* samples in time order within a chunk (the writer's deltas) */
        if (w->item_count)
            qsort(w->items, w->item_count, sizeof *w->items, by_time);
        for (size_t i = 0; i < w->item_count; i++)
            b_item(b, &w->items[i], w->data + w->items[i].data);
    }
    const char **keys = mem_calloc(s->stat_count + 1, sizeof *keys);
    uint64_t *values = mem_calloc(s->stat_count + 1, sizeof *values);
    if (!keys || !values)
        rc = -1;
    for (size_t i = 0; rc == 0 && i < s->stat_count; i++) {
        keys[i] = s->stats[i].key;
        values[i] = s->stats[i].value_u64;
    }
    if (rc == 0 && writer_finish(&b->w, keys, values, s->stat_count) < 0)
        rc = -1;
    if (b->w.error || out->failed)
        rc = -1;
    mem_free(keys);
    mem_free(values);
    writer_free(&b->w);
    map64_free(&b->text_id);
    map64_free(&b->frame_id);
    map64_free(&b->stack_id);
    map64_free(&b->thread_done);
    mem_free(b);
    return rc;
}
