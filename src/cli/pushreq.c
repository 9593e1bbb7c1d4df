/*
 * pushreq: see pushreq.h.  A window's recording goes through the same
 * reader, aggregate and pprof encoder as `report -f pprof`, one event at a
 * time, so what Grafana shows is what the reports show.
 */
#include "cli/pushreq.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/pprof.h"
#include "cli/profile.h"
#include "common/config.h"
#include "common/hash.h"
#include "format/recording.h"

/* Pyroscope's profile types for corscope's events (the table of pushreq.h).
 * Each names its event by enum, never by a string typed again here: one of
 * the schema's recorded events (FMT_EV_*), or a sampled one (its config
 * bit), or the live heap, which the reports make from other events. */
enum ptype_source { PT_SCHEMA, PT_SAMPLED };

struct ptype {
    enum ptype_source source;
    uint32_t id; /* enum fmt_ev, or a CONFIG_EVENT_* bit */
    const char *name;
    struct pprof_column columns[2];
    size_t column_count;
    int memory; /* period type space/bytes, else cpu/nanoseconds */
};

static const struct ptype ptypes[] = {
    {PT_SAMPLED, CONFIG_EVENT_CPU, "process_cpu",
     {{"cpu", "nanoseconds", PPROF_VALUE}, {"cpu_samples", "count", PPROF_COUNT}}, 2, 0},
    {PT_SAMPLED, CONFIG_EVENT_WALL, "wall", {{"wall", "nanoseconds", PPROF_VALUE}}, 1, 0},
    {PT_SCHEMA, FMT_EV_ALLOC, "memory",
     {{"alloc_samples", "count", PPROF_COUNT}, {"alloc_size", "bytes", PPROF_VALUE}}, 2, 1},
    {PT_SCHEMA, FMT_EV_LIVE, "memory",
     {{"inuse_objects", "count", PPROF_COUNT}, {"inuse_space", "bytes", PPROF_VALUE}}, 2, 1},
    {PT_SCHEMA, FMT_EV_EXCEPTIONS, "exception", {{"exception", "count", PPROF_VALUE}}, 1, 0},
    {PT_SCHEMA, FMT_EV_LOCK, "lock",
     {{"lock_count", "count", PPROF_COUNT}, {"lock_time", "nanoseconds", PPROF_VALUE}}, 2, 0},
    {PT_SCHEMA, FMT_EV_JIT, "jit",
     {{"jit_count", "count", PPROF_COUNT}, {"jit_time", "nanoseconds", PPROF_VALUE}}, 2, 0},
    {PT_SCHEMA, FMT_EV_CALLS, "calls",
     {{"calls", "count", PPROF_COUNT}, {"self", "nanoseconds", PPROF_VALUE}}, 2, 0},
};

static const char *ptype_event(const struct ptype *t)
{
    return t->source == PT_SAMPLED ? config_event_name(t->id) : schema_events[t->id].name;
}

static const struct ptype *ptype_of(const char *event)
{
    for (size_t i = 0; i < sizeof ptypes / sizeof ptypes[0]; i++)
        if (!strcmp(ptype_event(&ptypes[i]), event))
            return &ptypes[i];
    return NULL;
}

const char *pushreq_profile_type(const char *event)
{
    const struct ptype *t = ptype_of(event);
    return t ? t->name : NULL;
}

void pushreq_default_service(const char *command, char *out, size_t size)
{
    char first[512] = "", second[512] = "";
    if (command)
        sscanf(command, "%511s %511s", first, second);
    const char *base = strrchr(first, '/') ? strrchr(first, '/') + 1 : first;
    const char *name = base;
    if (!strcmp(base, "dotnet") && second[0] && second[0] != '-')
        name = strrchr(second, '/') ? strrchr(second, '/') + 1 : second;
    snprintf(out, size, "%s", name[0] ? name : "unknown_service");
    char *dot = strrchr(out, '.');
    if (dot && dot != out && (!strcmp(dot, ".dll") || !strcmp(dot, ".exe")))
        *dot = '\0';
}

static void add(struct pushreq_labels *l, const char *name, const char *value)
{
    size_t at = l->count;
    for (size_t i = 0; i < l->count; i++)
        if (!strcmp(l->names[i], name))
            at = i;
    if (at == sizeof l->names / sizeof l->names[0])
        return;
    snprintf(l->names[at], sizeof l->names[at], "%s", name);
    snprintf(l->values[at], sizeof l->values[at], "%s", value);
    if (at == l->count)
        l->count++;
}

void pushreq_labels(const struct push_config *c, const struct pstream *s,
                    struct pushreq_labels *out)
{
    memset(out, 0, sizeof *out);
    char text[PUSH_LABEL_VALUE_MAX];
    if (c->service[0])
        snprintf(text, sizeof text, "%s", c->service);
    else
        pushreq_default_service(pstream_info(s, FMT_INFO_COMMAND), text, sizeof text);
    add(out, "service_name", text);
    add(out, "spy_name", "dotnetspy");
    add(out, "otel.scope.name", "corscope");
    add(out, "otel.scope.version", CORSCOPE_VERSION);
    add(out, "process.runtime.name", ".NET");
    /* "10.0.1.0 (10.0.1), ICorProfilerInfo15": the version in parentheses */
    const char *runtime = pstream_info(s, FMT_INFO_RUNTIME);
    if (runtime) {
        const char *open = strchr(runtime, '('), *close = open ? strchr(open, ')') : NULL;
        if (open && close && close > open + 1)
            snprintf(text, sizeof text, "%.*s", (int)(close - open - 1), open + 1);
        else
            snprintf(text, sizeof text, "%.*s", (int)strcspn(runtime, " ,"), runtime);
        add(out, "process.runtime.version", text);
    }
    char host[256] = "";
    if (gethostname(host, sizeof host - 1) == 0 && host[0])
        add(out, "hostname", host);
    const char *pid = pstream_info(s, FMT_INFO_PID);
    if (pid)
        add(out, "pid", pid);
    for (size_t i = 0; i < c->label_count; i++)
        add(out, c->label_names[i], c->label_values[i]);
}

/* ---- protobuf -------------------------------------------------------------- */

static void pb_bytes(struct buf *b, uint32_t field, const void *p, size_t n)
{
    buf_put_varint(b, (uint64_t)field << 3 | 2);
    buf_put_varint(b, n);
    buf_put(b, p, n);
}

static void pb_string(struct buf *b, uint32_t field, const char *s)
{
    pb_bytes(b, field, s, strlen(s));
}

/* One RawProfileSeries: the labels, __name__ first, and the profile. */
static void series(struct buf *body, const struct pushreq_labels *l, const char *name,
                   const struct buf *gz, uint64_t id_seed)
{
    struct buf s, m;
    buf_init(&s);
    buf_init(&m);
    pb_string(&m, 1, "__name__");
    pb_string(&m, 2, name);
    pb_bytes(&s, 1, m.data, m.len);
    for (size_t i = 0; i < l->count; i++) {
        buf_reset(&m);
        pb_string(&m, 1, l->names[i]);
        pb_string(&m, 2, l->values[i]);
        pb_bytes(&s, 1, m.data, m.len);
    }
    /* RawSample: the profile and an ID that a retry repeats */
    uint64_t h1 = hash_u64(id_seed), h2 = hash_u64(h1 ^ gz->len);
    char id[40];
    snprintf(id, sizeof id, "%08x-%04x-4%03x-%04x-%012llx", (unsigned)(h1 >> 32),
             (unsigned)(h1 >> 16) & 0xffff, (unsigned)h1 & 0xfff,
             0x8000u | ((unsigned)(h2 >> 48) & 0x3fff), (unsigned long long)h2 & 0xffffffffffffull);
    buf_reset(&m);
    pb_bytes(&m, 1, gz->data, gz->len);
    pb_string(&m, 2, id);
    pb_bytes(&s, 2, m.data, m.len);
    pb_bytes(body, 1, s.data, s.len);
    if (s.failed || m.failed)
        body->failed = 1;
    buf_free(&s);
    buf_free(&m);
}

/* The series of every view of a window's recording (or of its live
 * view only).  Returns the number added, or -1. */
static int add_views(const struct buf *recording, int live, const struct pstream_window *w,
                     const struct pushreq_labels *labels, struct buf *body, char *err,
                     size_t err_size)
{
    struct recording rec;
    if (rec_load_memory(recording->data, recording->len, &rec, err, err_size) < 0)
        return -1;
    if (rec.status != REC_COMPLETE) {
        snprintf(err, err_size, "a window's recording is %s: %s", rec_status_name(rec.status),
                 rec.problem);
        rec_free(&rec);
        return -1;
    }
    uint64_t interval = rec_info_u64(&rec, FMT_INFO_INTERVAL_NS);
    uint64_t pid = rec_info_u64(&rec, FMT_INFO_PID);
    struct prof_filter f;
    memset(&f, 0, sizeof f);
    struct profiles ps;
    if (prof_build(&ps, &rec, &f, err, err_size) < 0)
        return -1;
    int added = 0;
    struct buf raw, gz;
    buf_init(&raw);
    buf_init(&gz);
    for (size_t i = 0; i < ps.count && added >= 0; i++) {
        const struct profile *v = &ps.views[i];
        const char *event = prof_event_name(v);
        /* the live heap comes from its own recording, as of the window's end */
        if (v->event < 0 || !v->selected_samples || (!strcmp(event, schema_events[FMT_EV_LIVE].name) != !!live))
            continue;
        const struct ptype *t = ptype_of(event);
        if (!t)
            continue;
        struct pprof_options o;
        pprof_defaults(&o);
        o.only = v;
        o.columns = t->columns;
        o.column_count = t->column_count;
        const struct rec_event *e = &ps.shared.rec.events[v->event];
        char one_type[64], one_unit[64];
        struct pprof_column one = {one_type, one_unit, PPROF_VALUE};
        if (t->column_count == 2 && e->recorded && e->value_count < 2) {
            /* one value (calls counted without times): that value alone */
            snprintf(one_type, sizeof one_type, "%.*s", (int)e->value_names[0].len,
                     e->value_names[0].p);
            snprintf(one_unit, sizeof one_unit, "%s",
                     rec_str_eq(e->value_units[0], "ns") ? "nanoseconds" : "count");
            o.columns = &one;
            o.column_count = 1;
        }
        o.period_type = t->memory ? "space" : "cpu";
        o.period_unit = t->memory ? "bytes" : "nanoseconds";
        o.period = !e->recorded && interval ? interval : 1;
        o.time_ns = w->start_ns;
        o.duration_ns = w->end_ns - w->start_ns;
        o.thread_names = 0;
        buf_reset(&raw);
        buf_reset(&gz);
        if (pprof_encode(prof_current(&ps), &o, &raw) < 0 ||
            pprof_gzip(raw.data, raw.len, &gz) < 0) {
            snprintf(err, err_size, "out of memory while encoding a profile");
            added = -1;
            break;
        }
        series(body, labels, t->name, &gz, w->start_ns ^ (pid << 20) ^ hash_bytes(event, strlen(event), 1));
        added++;
    }
    buf_free(&raw);
    buf_free(&gz);
    prof_free(&ps);
    if (added >= 0 && body->failed) {
        snprintf(err, err_size, "out of memory while building a push");
        added = -1;
    }
    return added;
}

int pushreq_build(const struct pstream_window *w, const struct pushreq_labels *labels,
                  struct buf *body, char *err, size_t err_size)
{
    int n = add_views(&w->recording, 0, w, labels, body, err, err_size);
    if (n < 0)
        return -1;
    if (w->live.len) {
        int m = add_views(&w->live, 1, w, labels, body, err, err_size);
        if (m < 0)
            return -1;
        n += m;
    }
    return n;
}
