/*
 * flame_timeline: see flame_timeline.h.  Keys are found by sorting the
 * selected samples by (leaf, thread), time order by sorting them by time:
 * two arrays of a word per sample, nothing the size of the tree.
 */
#include "cli/flame_timeline.h"

#include <stdlib.h>
#include <string.h>

#include "cli/event_table.h"
#include "cli/gc_table.h"
#include "cli/json.h"
#include "common/mem.h"

static int by_leaf_thread(const void *a, const void *b, void *ctx)
{
    const struct profile *p = ctx;
    const struct prof_sample *x = &p->selected[*(const uint32_t *)a];
    const struct prof_sample *y = &p->selected[*(const uint32_t *)b];
    uint32_t lx = p->path_leaf[x->path], ly = p->path_leaf[y->path];
    if (lx != ly)
        return lx < ly ? -1 : 1;
    uint32_t tx = p->rec->samples[x->sample].thread, ty = p->rec->samples[y->sample].thread;
    return tx < ty ? -1 : tx > ty;
}

/* Selected samples are in file order: by time, then by their place in
 * the file, which keeps the order of equal times. */
static int by_time(const void *a, const void *b, void *ctx)
{
    const struct profile *p = ctx;
    const struct prof_sample *x = &p->selected[*(const uint32_t *)a];
    const struct prof_sample *y = &p->selected[*(const uint32_t *)b];
    uint64_t tx = p->rec->samples[x->sample].time, ty = p->rec->samples[y->sample].time;
    if (tx != ty)
        return tx < ty ? -1 : 1;
    return x->sample < y->sample ? -1 : x->sample > y->sample;
}

int flame_timeline_samples(FILE *out, const struct profile *p, const uint32_t *thread_map)
{
    size_t n = p->selected_samples;
    const struct recording *r = p->rec;
    uint32_t *order = mem_alloc((n ? n : 1) * sizeof *order);
    uint32_t *key = mem_alloc((n ? n : 1) * sizeof *key);
    if (!order || !key) {
        mem_free(order);
        mem_free(key);
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        order[i] = (uint32_t)i;
    qsort_r(order, n, sizeof *order, by_leaf_thread, (void *)p);
    /* the keys' count first, then their leaves (ascending: as the
     * difference from the one before) and, as a second string, threads */
    uint32_t keys = 0;
    for (size_t i = 0; i < n; i++) {
        if (i == 0 || by_leaf_thread(&order[i - 1], &order[i], (void *)p) != 0)
            keys++;
        key[order[i]] = keys - 1;
    }
    fputs("\"kl\":\"", out);
    json_pack(out, keys);
    uint32_t last_leaf = 0;
    for (size_t i = 0; i < n; i++)
        if (i == 0 || key[order[i]] != key[order[i - 1]]) {
            uint32_t leaf = p->path_leaf[p->selected[order[i]].path];
            json_pack(out, leaf - last_leaf);
            last_leaf = leaf;
        }
    fputs("\",\"kt\":\"", out);
    json_pack(out, keys);
    for (size_t i = 0; i < n; i++)
        if (i == 0 || key[order[i]] != key[order[i - 1]]) {
            uint32_t thread = r->samples[p->selected[order[i]].sample].thread;
            json_pack(out, thread_map ? thread_map[thread] : thread);
        }
    fputc('"', out);

    for (size_t i = 0; i < n; i++)
        order[i] = (uint32_t)i;
    qsort_r(order, n, sizeof *order, by_time, (void *)p);
    int same_weight = 1, all_one = 1;
    uint64_t weight0 = n ? r->samples[p->selected[0].sample].weight : 1;
    for (size_t i = 0; i < n; i++) {
        const struct rec_sample *s = &r->samples[p->selected[i].sample];
        same_weight &= s->weight == weight0;
        all_one &= s->count == 1;
    }
    fputs(",\"tt\":\"", out);
    json_pack(out, n);
    uint64_t last = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t us = r->samples[p->selected[order[i]].sample].time / 1000;
        json_pack(out, us - last);
        last = us;
    }
    fputs("\",\"tk\":\"", out);
    json_pack(out, n);
    for (size_t i = 0; i < n; i++)
        json_pack(out, key[order[i]]);
    fputc('"', out);
    uint64_t period = p->event >= 0 ? r->events[p->event].period : 1;
    fprintf(out, ",\"period\":%llu", (unsigned long long)period);
    if (same_weight) {
        fprintf(out, ",\"w\":%llu", (unsigned long long)weight0);
    } else {
        fputs(",\"tw\":\"", out);
        json_pack(out, n);
        for (size_t i = 0; i < n; i++)
            json_pack(out, r->samples[p->selected[order[i]].sample].weight);
        fputc('"', out);
    }
    if (!all_one) {
        fputs(",\"tc\":\"", out);
        json_pack(out, n);
        for (size_t i = 0; i < n; i++)
            json_pack(out, r->samples[p->selected[order[i]].sample].count);
        fputc('"', out);
    }
    mem_free(order);
    mem_free(key);
    return 0;
}

/* ---- marks ------------------------------------------------------------------------------ */

struct span {
    uint64_t start, end; /* ns */
};

struct spans {
    struct span *v;
    size_t n, cap;
    int failed;
};

static void add(struct spans *s, uint64_t start, uint64_t end)
{
    struct span *grown = mem_grow(s->v, &s->cap, s->n + 1, sizeof *grown);
    if (!grown) {
        s->failed = 1;
        return;
    }
    s->v = grown;
    s->v[s->n].start = start;
    s->v[s->n].end = end > start ? end : start;
    s->n++;
}

static int by_start(const void *a, const void *b)
{
    const struct span *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

/* The spans of one recorded event: a record's time is its end, its value
 * `duration` its duration (an instant when duration < 0).  A lock record
 * that counts short waits (below_min) is not a wait and is skipped. */
static int event_spans(const struct profile *p, enum fmt_ev ev, int duration, struct spans *s)
{
    struct event_table e;
    if (event_table_open(&e, p, NULL, ev) < 0)
        return -1;
    if (e.event >= 0) {
        for (const struct rec_record *x = event_table_next(&e, NULL); x; x = event_table_next(&e, x)) {
            if (ev == FMT_EV_LOCK && event_table_get(&e, x, FMT_LOCK_BELOW_MIN))
                continue;
            uint64_t ns = duration < 0 ? 0 : event_table_value(&e, x, (unsigned)duration);
            add(s, ns < x->time ? x->time - ns : 0, x->time);
        }
    }
    event_table_close(&e);
    return s->failed ? -1 : 0;
}

/* One kind's entry, its spans merged where closer than `quantum` ns. */
static void write_kind(FILE *out, const char *kind, const char *name, struct spans *s,
                       uint64_t quantum, int *first)
{
    if (!s->n)
        return;
    qsort(s->v, s->n, sizeof *s->v, by_start);
    fprintf(out, "%s{\"kind\":\"%s\",\"name\":\"%s\",\"spans\":[", *first ? "" : ",", kind, name);
    *first = 0;
    int first_number = 1;
    for (size_t i = 0; i < s->n;) {
        uint64_t start = s->v[i].start, end = s->v[i].end, busy = 0, count = 0;
        for (; i < s->n && s->v[i].start <= end + quantum; i++) {
            if (s->v[i].end > end)
                end = s->v[i].end;
            busy += s->v[i].end - s->v[i].start;
            count++;
        }
        json_uint(out, start / 1000, first_number);
        json_uint(out, end / 1000, 0);
        json_uint(out, count, 0);
        json_uint(out, busy / 1000, 0);
        first_number = 0;
    }
    fputs("]}", out);
}

int flame_timeline_marks(FILE *out, const struct profile *p)
{
    uint64_t span = event_table_duration(p->rec);
    uint64_t quantum = span / 4000;
    fprintf(out, "\"span\":%llu,\"marks\":[", (unsigned long long)(span / 1000 + 1));
    int first = 1, rc = 0;
    struct gc_table gc;
    int have_gc = gc_table_load(p->rec, 0, 0, &gc);
    if (have_gc < 0)
        return -1;
    if (have_gc > 0) {
        struct spans s = {NULL, 0, 0, 0};
        for (size_t i = 0; i < gc.pause_count; i++)
            add(&s, gc.pauses[i].start, gc.pauses[i].start + gc.pauses[i].duration);
        if (!s.failed)
            write_kind(out, "gc", "GC pauses", &s, quantum, &first);
        rc = s.failed ? -1 : 0;
        mem_free(s.v);
        gc_table_free(&gc);
    }
    static const struct {
        enum fmt_ev ev;
        const char *kind, *name;
        int duration;
    } kinds[] = {
        {FMT_EV_JIT, "jit", "compilations", FMT_JIT_COMPILE},
        {FMT_EV_LOCK, "lock", "lock waits", FMT_LOCK_WAIT},
        {FMT_EV_EXCEPTIONS, "exception", "throws", -1},
    };
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0] && rc == 0; k++) {
        struct spans s = {NULL, 0, 0, 0};
        rc = event_spans(p, kinds[k].ev, kinds[k].duration, &s);
        if (rc == 0)
            write_kind(out, kinds[k].kind, kinds[k].name, &s, quantum, &first);
        mem_free(s.v);
    }
    fputc(']', out);
    return rc;
}
