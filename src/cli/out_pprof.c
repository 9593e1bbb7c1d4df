/*
 * out_pprof: the pprof format (github.com/google/pprof, proto/profile.proto),
 * gzip-compressed, as `go tool pprof`, Grafana Pyroscope and the pprof
 * libraries read it.
 *
 * Two sample types per event of the recording, a count and a value, named
 * as go tool pprof users know them: samples/count and cpu/nanoseconds
 * (or wall), alloc_objects/count and alloc_space/bytes, inuse_objects/count
 * and inuse_space/bytes (the live heap); any other recorded event by its
 * own value names.  Each sample has its event's two values and zeros for
 * the others; the current event (--event) is the default sample type, so
 * `go tool pprof` opens on it and -sample_index picks another (Grafana
 * Pyroscope shows each type as a profile of its own).  One function and one location per
 * display name (so every report agrees on what a frame is), one mapping
 * per module the frames came from, and one sample per (thread, call path)
 * labelled with the thread's name and id.  The protobuf encoding is written
 * by hand: a handful of field kinds, all over one growable buffer.
 */
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "cli/cli.h"
#include "cli/report.h"
#include "cli/timeline.h"
#include "common/buf.h"
#include "common/map.h"
#include "common/mem.h"
#include "common/strtab.h"

enum { WIRE_VARINT = 0, WIRE_BYTES = 2 };

static void pb_varint(struct buf *b, uint32_t field, uint64_t v)
{
    buf_put_varint(b, (uint64_t)field << 3 | WIRE_VARINT);
    buf_put_varint(b, v);
}

static void pb_message(struct buf *b, uint32_t field, const struct buf *m)
{
    buf_put_varint(b, (uint64_t)field << 3 | WIRE_BYTES);
    buf_put_bytes(b, m->data, m->len);
}

static void pb_packed(struct buf *b, uint32_t field, const uint64_t *v, size_t n, struct buf *tmp)
{
    buf_reset(tmp);
    for (size_t i = 0; i < n; i++)
        buf_put_varint(tmp, v[i]);
    pb_message(b, field, tmp);
}

/* strtab ids are the pprof string table's indexes: 0 is "" in both. */
static uint64_t str(struct strtab *t, const char *s)
{
    int is_new;
    uint32_t id = strtab_intern(t, s, strlen(s), &is_new);
    return id == UINT32_MAX ? 0 : id;
}

static void value_type(struct buf *b, uint32_t field, struct strtab *t, const char *type,
                       const char *unit, struct buf *tmp)
{
    buf_reset(tmp);
    pb_varint(tmp, 1, str(t, type));
    pb_varint(tmp, 2, str(t, unit));
    pb_message(b, field, tmp);
}

/* Compresses `in` as gzip into out. */
static int gzip_write(const struct buf *in, FILE *out)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        return -1;
    uint8_t chunk[65536];
    z.next_in = in->data;
    z.avail_in = (uInt)in->len;
    int rc;
    do {
        z.next_out = chunk;
        z.avail_out = sizeof chunk;
        rc = deflate(&z, Z_FINISH);
        if (rc == Z_STREAM_ERROR)
            break;
        fwrite(chunk, 1, sizeof chunk - z.avail_out, out);
    } while (rc != Z_STREAM_END);
    deflateEnd(&z);
    return rc == Z_STREAM_END ? 0 : -1;
}

struct agg {
    uint32_t view, thread, path;
    uint64_t samples, count, weight;
};

static const char *pprof_unit(const char *unit)
{
    if (!strcmp(unit, "ns"))
        return "nanoseconds";
    if (!strcmp(unit, "objects") || !strcmp(unit, "samples"))
        return "count";
    return unit;
}

/* The two sample types of a view: its count, then its value. */
static void view_types(const struct profile *v, char *count, char *count_unit, char *value,
                       char *value_unit, size_t size)
{
    const struct recording *r = v->rec;
    const struct rec_event *e = v->event >= 0 ? &r->events[v->event] : NULL;
    if (!e || !e->recorded) {
        snprintf(count, size, "samples");
        snprintf(count_unit, size, "count");
        snprintf(value, size, "%s", prof_event_name(v));
        snprintf(value_unit, size, "%s", pprof_unit(prof_unit(v)));
        return;
    }
    char unit[64];
    snprintf(value, size, "%.*s", (int)e->value_names[0].len, e->value_names[0].p);
    snprintf(unit, sizeof unit, "%.*s", (int)e->value_units[0].len, e->value_units[0].p);
    snprintf(value_unit, size, "%s", pprof_unit(unit));
    if (e->value_count > 1) {
        snprintf(count, size, "%.*s", (int)e->value_names[1].len, e->value_names[1].p);
        snprintf(unit, sizeof unit, "%.*s", (int)e->value_units[1].len, e->value_units[1].p);
        snprintf(count_unit, size, "%s", pprof_unit(unit));
    } else {
        snprintf(count, size, "%.*s_count", (int)e->name.len, e->name.p);
        snprintf(count_unit, size, "count");
    }
}

int report_pprof(const struct profile *p, const struct report_options *o, FILE *out)
{
    (void)o;
    const struct recording *r = p->rec;
    struct buf b, m, tmp;
    buf_init(&b);
    buf_init(&m);
    buf_init(&tmp);
    struct strtab strings;
    memset(&strings, 0, sizeof strings);
    struct map64 index;
    map64_init(&index);
    struct agg *aggs = NULL;
    size_t agg_count = 0, agg_cap = 0;
    uint32_t *names = NULL, *module_of = NULL, *mapping_of_module = NULL;
    uint64_t *ids = NULL, *values = NULL;
    size_t names_cap = 0, ids_cap = 0;
    int rc = -1;
    size_t nviews = p->view_count ? p->view_count : 1;
    const struct profile *views = p->view_count ? p->views : p;
    if (strtab_init(&strings) < 0)
        goto out;
    values = mem_calloc(2 * nviews, sizeof *values);
    if (!values)
        goto out;

    /* (view, thread, path) aggregates */
    uint64_t first = UINT64_MAX, last = 0;
    for (size_t vi = 0; vi < nviews; vi++) {
        const struct profile *v = &views[vi];
        map64_clear(&index);
        if (v->selected_samples) {
            if (v->first_time < first)
                first = v->first_time;
            if (v->last_time > last)
                last = v->last_time;
        }
        for (size_t i = 0; i < v->selected_samples; i++) {
            const struct prof_sample *s = &v->selected[i];
            const struct rec_sample *rs = &r->samples[s->sample];
            uint64_t key = (uint64_t)rs->thread << 32 | s->path;
            uint32_t at;
            if (!map64_get(&index, key, &at)) {
                struct agg *grown = mem_grow(aggs, &agg_cap, agg_count + 1, sizeof *aggs);
                if (!grown || map64_put(&index, key, (uint32_t)agg_count) < 0)
                    goto out;
                aggs = grown;
                at = (uint32_t)agg_count++;
                aggs[at] = (struct agg){(uint32_t)vi, rs->thread, s->path, 0, 0, 0};
            }
            aggs[at].samples++;
            aggs[at].count += rs->count;
            aggs[at].weight += rs->weight;
        }
    }
    if (first == UINT64_MAX)
        first = last = 0;

    /* the module of each display name (first frame that has one) */
    module_of = mem_calloc(p->names->count ? p->names->count : 1, sizeof *module_of);
    mapping_of_module = mem_calloc(r->string_count ? r->string_count : 1, sizeof *mapping_of_module);
    if (!module_of || !mapping_of_module)
        goto out;
    for (size_t f = 1; f < r->frame_count; f++)
        if (!module_of[p->frame_name[f]])
            module_of[p->frame_name[f]] = r->frames[f].module;

    char count_type[64], count_unit[64], value_type_name[64], value_unit[64];
    char main_type[64] = "", main_unit[64] = "";
    for (size_t vi = 0; vi < nviews; vi++) {
        view_types(&views[vi], count_type, count_unit, value_type_name, value_unit,
                   sizeof count_type);
        value_type(&b, 1, &strings, count_type, count_unit, &tmp);
        value_type(&b, 1, &strings, value_type_name, value_unit, &tmp);
        if (&views[vi] == p || nviews == 1) {
            snprintf(main_type, sizeof main_type, "%s", value_type_name);
            snprintf(main_unit, sizeof main_unit, "%s", value_unit);
        }
    }

    for (size_t i = 0; i < agg_count; i++) {
        const struct profile *v = &views[aggs[i].view];
        size_t depth = prof_node_path(v, v->path_leaf[aggs[i].path], &names, &names_cap);
        uint64_t *grown = depth == SIZE_MAX ? NULL : mem_grow(ids, &ids_cap, depth + 1, sizeof *ids);
        if (!grown)
            goto out;
        ids = grown;
        for (size_t d = 0; d < depth; d++)
            ids[d] = names[depth - 1 - d]; /* leaf first; location id = name id */
        buf_reset(&m);
        pb_packed(&m, 1, ids, depth, &tmp);
        memset(values, 0, 2 * nviews * sizeof *values);
        int recorded = v->event >= 0 && r->events[v->event].recorded;
        values[2 * aggs[i].view] = recorded ? aggs[i].count : aggs[i].samples;
        values[2 * aggs[i].view + 1] = (uint64_t)prof_value(v, aggs[i].weight);
        pb_packed(&m, 2, values, 2 * nviews, &tmp);
        const struct rec_thread *th = &r->threads[aggs[i].thread];
        char label[160];
        timeline_thread_name(p, aggs[i].thread, label, sizeof label);
        struct buf l;
        buf_init(&l);
        pb_varint(&l, 1, str(&strings, "thread"));
        pb_varint(&l, 2, str(&strings, label));
        pb_message(&m, 3, &l);
        buf_reset(&l);
        pb_varint(&l, 1, str(&strings, "thread_id"));
        pb_varint(&l, 3, th->os_tid);
        pb_message(&m, 3, &l);
        buf_free(&l);
        pb_message(&b, 2, &m);
    }

    /* mappings: one per module */
    uint32_t mappings = 0;
    for (size_t n = 1; n < p->names->count; n++) {
        uint32_t mod = module_of[n];
        if (!mod || mapping_of_module[mod])
            continue;
        mapping_of_module[mod] = ++mappings;
        char file[512];
        snprintf(file, sizeof file, "%.*s", (int)r->strings[mod].len, r->strings[mod].p);
        buf_reset(&m);
        pb_varint(&m, 1, mappings);
        pb_varint(&m, 5, str(&strings, file));
        pb_varint(&m, 7, 1); /* has_functions */
        pb_message(&b, 3, &m);
    }
    /* locations and functions: one per display name */
    for (size_t n = 1; n < p->names->count; n++) {
        buf_reset(&m);
        pb_varint(&m, 1, n);
        if (module_of[n])
            pb_varint(&m, 2, mapping_of_module[module_of[n]]);
        buf_reset(&tmp);
        pb_varint(&tmp, 1, n);
        pb_message(&m, 4, &tmp);
        pb_message(&b, 4, &m);
    }
    for (size_t n = 1; n < p->names->count; n++) {
        buf_reset(&m);
        pb_varint(&m, 1, n);
        uint64_t name = str(&strings, prof_name(p, (uint32_t)n));
        pb_varint(&m, 2, name);
        pb_varint(&m, 3, name);
        if (module_of[n]) {
            char file[512];
            snprintf(file, sizeof file, "%.*s", (int)r->strings[module_of[n]].len,
                     r->strings[module_of[n]].p);
            pb_varint(&m, 4, str(&strings, file));
        }
        pb_message(&b, 5, &m);
    }
    const struct rec_str *start = rec_info(r, FMT_INFO_START_REALTIME_NS);
    char start_text[32] = "0";
    if (start)
        snprintf(start_text, sizeof start_text, "%.*s", (int)start->len, start->p);
    uint64_t start_ns = strtoull(start_text, NULL, 10);
    pb_varint(&b, 9, start_ns + first);
    pb_varint(&b, 10, last - first);
    value_type(&b, 11, &strings, main_type, main_unit, &tmp);
    pb_varint(&b, 12, p->event >= 0 ? r->events[p->event].period : 1);
    pb_varint(&b, 14, str(&strings, main_type));
    /* the string table last: every string is interned by now */
    for (size_t i = 0; i < strings.count; i++) {
        buf_put_varint(&b, 6u << 3 | WIRE_BYTES);
        buf_put_bytes(&b, strings.strs[i] ? strings.strs[i] : "", strings.strs[i] ? strings.lens[i] : 0);
    }
    if (b.failed || m.failed || tmp.failed)
        goto out;
    rc = gzip_write(&b, out);
out:
    if (rc < 0)
        cli_error("out of memory while writing pprof");
    buf_free(&b);
    buf_free(&m);
    buf_free(&tmp);
    strtab_free(&strings);
    map64_free(&index);
    mem_free(aggs);
    mem_free(names);
    mem_free(ids);
    mem_free(values);
    mem_free(module_of);
    mem_free(mapping_of_module);
    return rc;
}
