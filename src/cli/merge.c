/*
 * merge: see merge.h.  The merged recording owns one image holding every
 * input's image back to back (each input's strings are rebased into it)
 * and, after them, the text merging makes (the process labels, who ended
 * how).
 */
#include "cli/merge.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/mem.h"

long merge_pid_of(const struct recording *r)
{
    const struct rec_str *v = rec_info(r, FMT_INFO_PID);
    if (!v || !v->len || v->len > 20)
        return -1;
    char buf[24];
    memcpy(buf, v->p, v->len);
    buf[v->len] = '\0';
    char *end;
    long pid = strtol(buf, &end, 10);
    return *end || pid <= 0 ? -1 : pid;
}

static uint64_t start_of(const struct recording *r)
{
    const struct rec_str *v = rec_info(r, FMT_INFO_START_REALTIME_NS);
    char buf[32];
    if (!v || !v->len || v->len >= sizeof buf)
        return 0;
    memcpy(buf, v->p, v->len);
    buf[v->len] = '\0';
    return strtoull(buf, NULL, 10);
}

/* ---- the merged image --------------------------------------------------- */

struct image {
    uint8_t *data;
    size_t used, size;
};

static struct rec_str rebase(struct rec_str s, const struct recording *from, const uint8_t *to)
{
    const char *lo = (const char *)from->image;
    if (s.p && s.p >= lo && s.p < lo + from->size)
        s.p = (const char *)to + (s.p - lo);
    return s;
}

/* Text made by the merge, kept in the image's tail. */
static struct rec_str put_text(struct image *im, const char *text)
{
    struct rec_str s = {"", 0};
    size_t n = strlen(text);
    if (im->used + n > im->size)
        n = im->size - im->used;
    memcpy(im->data + im->used, text, n);
    s.p = (const char *)im->data + im->used;
    s.len = (uint32_t)n;
    im->used += n;
    return s;
}

/* ---- one input into the merged recording ---------------------------------- */

struct bases {
    uint32_t string, frame, stack, thread, thread_id;
    uint32_t *event; /* input event index -> merged one */
    uint64_t offset; /* ns from the earliest start to this input's start */
};

static uint32_t map_id(uint32_t id, uint32_t base)
{
    return id ? base + id - 1 : 0;
}

/* The merged index of an input's event, added when new. */
static int map_event(struct recording *m, const struct recording *in, size_t e,
                     const uint8_t *image, uint32_t *out, char *err, size_t err_size)
{
    const struct rec_event *ev = &in->events[e];
    for (size_t k = 0; k < m->event_count; k++) {
        struct rec_event *have = &m->events[k];
        if (have->recorded != ev->recorded || have->name.len != ev->name.len ||
            memcmp(have->name.p, ev->name.p, ev->name.len) != 0)
            continue;
        if (have->period != ev->period || have->value_count != ev->value_count ||
            have->field_count != ev->field_count) {
            snprintf(err, err_size, "event %.*s was recorded differently by two processes "
                     "(period or fields); report them one at a time (--pid)",
                     (int)ev->name.len, ev->name.p);
            return -1;
        }
        *out = (uint32_t)k;
        return 0;
    }
    if (m->event_count >= 255) {
        snprintf(err, err_size, "too many events to merge");
        return -1;
    }
    struct rec_event ne = *ev;
    ne.name = rebase(ev->name, in, image);
    ne.unit = rebase(ev->unit, in, image);
    for (uint32_t i = 0; i < FMT_MAX_VALUES; i++) {
        ne.value_names[i] = rebase(ev->value_names[i], in, image);
        ne.value_units[i] = rebase(ev->value_units[i], in, image);
    }
    for (uint32_t i = 0; i < FMT_MAX_FIELDS; i++)
        ne.field_names[i] = rebase(ev->field_names[i], in, image);
    long k = rec_add_event(m, &ne);
    if (k < 0)
        return -2;
    *out = (uint32_t)k;
    return 0;
}

/* Appends one input.  Returns 0, -1 (err set) or -2 (out of memory). */
static int append(struct recording *m, struct image *im, const struct recording *in,
                  const uint8_t *image, struct bases *b, char *err, size_t err_size)
{
    for (size_t e = 0; e < in->event_count; e++) {
        int rc = map_event(m, in, e, image, &b->event[e], err, err_size);
        if (rc < 0)
            return rc;
    }
    /* strings, then this process's label and command */
    b->string = (uint32_t)m->string_count;
    for (size_t i = 1; i < in->string_count; i++)
        if (!rec_add_string(m, rebase(in->strings[i], in, image)))
            return -2;
    char label[64];
    long pid = merge_pid_of(in);
    snprintf(label, sizeof label, "process %ld", pid);
    const struct rec_str *cmd = rec_info(in, FMT_INFO_COMMAND);
    uint32_t label_id = rec_add_string(m, put_text(im, label)), cmd_id = 0;
    if (!label_id || (cmd && cmd->len && !(cmd_id = rec_add_string(m, rebase(*cmd, in, image)))))
        return -2;
    /* frames, then the root frame of this process */
    b->frame = (uint32_t)m->frame_count;
    for (size_t i = 1; i < in->frame_count; i++) {
        struct rec_frame f = in->frames[i];
        f.module = map_id(f.module, b->string);
        f.type = map_id(f.type, b->string);
        f.name = map_id(f.name, b->string);
        if (f.kind == FMT_FRAME_LABEL && f.extra)
            f.extra = map_id((uint32_t)f.extra, b->frame);
        if (!rec_add_frame(m, f))
            return -2;
    }
    uint32_t root = rec_add_frame(m, (struct rec_frame){FMT_FRAME_LABEL, 0, cmd_id, label_id, 0});
    if (!root)
        return -2;
    /* stacks, each under the root */
    b->stack = (uint32_t)m->stack_count;
    for (size_t i = 1; i < in->stack_count; i++) {
        const struct rec_stack *s = &in->stacks[i];
        uint32_t id;
        uint32_t *frames = rec_add_stack(m, s->depth + 1, &id);
        if (!frames)
            return -2;
        for (uint32_t k = 0; k < s->depth; k++)
            frames[k] = map_id(in->stack_frames[s->offset + k], b->frame);
        frames[s->depth] = root;
    }
    /* threads, with ids of their own */
    b->thread = (uint32_t)m->thread_count;
    uint32_t most_id = 0;
    if (m->thread_count + in->thread_count > REC_MAX_THREADS) {
        snprintf(err, err_size, "too many threads to merge");
        return -1;
    }
    for (size_t i = 0; i < in->thread_count; i++) {
        struct rec_thread th = in->threads[i];
        if (th.id > most_id)
            most_id = th.id;
        th.id += b->thread_id;
        th.name = map_id(th.name, b->string);
        if (rec_add_thread(m, th) < 0)
            return -2;
    }
    /* samples on the common clock */
    for (size_t i = 0; i < in->sample_count; i++) {
        struct rec_sample s = in->samples[i];
        s.time += b->offset;
        s.stack = map_id(s.stack, b->stack);
        s.thread = (uint32_t)(s.thread + b->thread) & 0xffffff;
        s.event = b->event[s.event] & 0xff;
        if (rec_add_sample(m, s) < 0)
            return -2;
    }
    /* records: their ids and times in the fields as well */
    for (size_t i = 0; i < in->record_count; i++) {
        struct rec_record r = in->records[i];
        const struct rec_event *ev = &in->events[r.event];
        size_t n = ev->value_count + ev->field_count;
        r.time += b->offset;
        r.stack = map_id(r.stack, b->stack);
        if (r.thread)
            r.thread = (uint32_t)(r.thread + b->thread) & 0xffffff;
        r.event = b->event[r.event] & 0xff;
        uint64_t *data = rec_add_record(m, r, n);
        if (!data)
            return -2;
        memcpy(data, in->record_data + in->records[i].data, n * sizeof *data);
        uint64_t *fields = data + ev->value_count;
        for (uint32_t f = 0; f < ev->field_count; f++) {
            switch (ev->field_types[f]) {
            case FMT_FIELD_STRING: fields[f] = map_id((uint32_t)fields[f], b->string); break;
            case FMT_FIELD_FRAME: fields[f] = map_id((uint32_t)fields[f], b->frame); break;
            case FMT_FIELD_STACK: fields[f] = map_id((uint32_t)fields[f], b->stack); break;
            case FMT_FIELD_THREAD: fields[f] = fields[f] ? fields[f] + b->thread_id : 0; break;
            case FMT_FIELD_TIME: fields[f] += b->offset; break;
            default: break;
            }
        }
    }
    b->thread_id += most_id;
    /* counters: summed, the largest of the max_ ones */
    for (size_t i = 0; i < in->stat_count; i++) {
        struct rec_str key = rebase(in->stats[i].key, in, image);
        struct rec_stat *sum = rec_stat_slot(m, key);
        if (!sum)
            return -2;
        if (key.len > 4 && !memcmp(key.p, "max_", 4)) {
            if (in->stats[i].value > sum->value)
                sum->value = in->stats[i].value;
        } else {
            sum->value += in->stats[i].value;
        }
    }
    return 0;
}

/* ---- the whole ------------------------------------------------------------- */

static const struct recording *sort_base;

static int by_start(const void *a, const void *b)
{
    uint64_t x = start_of(&sort_base[*(const size_t *)a]), y = start_of(&sort_base[*(const size_t *)b]);
    return x < y ? -1 : x > y;
}

static int worse(enum rec_status a, enum rec_status b)
{
    int rank_a = a == REC_CORRUPT ? 2 : a == REC_TRUNCATED, rank_b = b == REC_CORRUPT ? 2 : b == REC_TRUNCATED;
    return rank_a > rank_b;
}

int merge_recordings(struct recording *in, size_t n, struct recording *out, char *err,
                     size_t err_size)
{
    memset(out, 0, sizeof *out);
    if (n == 1) {
        *out = in[0];
        memset(&in[0], 0, sizeof in[0]);
        return 0;
    }
    size_t *order = mem_alloc(n * sizeof *order);
    size_t total = 0, most_events = 0;
    for (size_t i = 0; i < n; i++) {
        total += in[i].size;
        if (in[i].event_count > most_events)
            most_events = in[i].event_count;
    }
    struct image im = {mem_alloc(total + n * 640 + 64), 0, total + n * 640 + 64};
    uint32_t *event_map = mem_alloc((most_events + 1) * sizeof *event_map);
    int rc = order && im.data && event_map ? 0 : -2;
    if (rc == 0) {
        for (size_t i = 0; i < n; i++)
            order[i] = i;
        sort_base = in;
        qsort(order, n, sizeof *order, by_start);
        uint64_t earliest = start_of(&in[order[0]]);
        struct recording *m = out;
        m->version_major = in[order[0]].version_major;
        m->version_minor = in[order[0]].version_minor;
        m->status = REC_COMPLETE;
        m->has_trailer = 1;
        rc = rec_add_none(m) < 0 ? -2 : 0;
        char ended[2048] = "";
        struct bases b;
        memset(&b, 0, sizeof b);
        b.event = event_map;
        for (size_t k = 0; k < n && rc == 0; k++) {
            const struct recording *r = &in[order[k]];
            uint8_t *image = im.data + im.used;
            memcpy(image, r->image, r->size);
            im.used += r->size;
            uint64_t start = start_of(r);
            b.offset = start > earliest ? start - earliest : 0;
            rc = append(m, &im, r, image, &b, err, err_size);
            if (rc < 0)
                break;
            m->chunks += r->chunks;
            m->has_trailer &= r->has_trailer;
            if (worse(r->status, m->status)) {
                m->status = r->status;
                snprintf(m->problem, sizeof m->problem, "process %ld: %.200s", merge_pid_of(r),
                         r->problem);
            }
            const struct rec_str *e = rec_info(r, FMT_INFO_ENDED_BY);
            if (e && e->len) {
                size_t used = strlen(ended);
                snprintf(ended + used, sizeof ended - used, "%sprocess %ld: %.*s",
                         used ? "; " : "", merge_pid_of(r), (int)e->len, e->p);
            }
        }
        /* the INFO of the first process, and who ended how */
        const struct recording *first = &in[order[0]];
        uint8_t *first_image = im.data; /* it went in first */
        for (size_t i = 0; i < first->info_count && rc == 0; i++) {
            struct rec_kv kv = {rebase(first->info[i].key, first, first_image),
                                rebase(first->info[i].value, first, first_image)};
            if (!rec_str_eq(kv.key, FMT_INFO_ENDED_BY) && rec_add_info(m, kv.key, kv.value) < 0)
                rc = -2;
        }
        if (rc == 0 && ended[0] &&
            rec_add_info(m, put_text(&im, FMT_INFO_ENDED_BY), put_text(&im, ended)) < 0)
            rc = -2;
    }
    if (rc == -2)
        snprintf(err, err_size, "out of memory while merging the recordings");
    if (rc == 0) {
        out->image = im.data;
        out->size = im.used;
    } else {
        rec_free(out);
        mem_free(im.data);
    }
    for (size_t i = 0; i < n; i++)
        rec_free(&in[i]);
    mem_free(order);
    mem_free(event_map);
    return rc == 0 ? 0 : -1;
}
