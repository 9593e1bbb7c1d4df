/*
 * Tests of the event schema (src/format/schema.c): docs/events.md's tables
 * are the schema's, the definitions the agent writes from it, and how the
 * reader finds the schema's events and fields in a recording (by name and
 * type, in any order, absent when missing, forgotten with a bad chunk).
 *
 * `CORSCOPE_WRITE_EVENTS_DOC=1 build/unit-tests schema_docs` (make
 * events-doc) rewrites the tables of docs/events.md from the schema.
 */
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/mem.h"
#include "fixture.h"
#include "format/recording.h"
#include "format/schema.h"
#include "format/writer.h"
#include "test.h"

#define EVENTS_DOC "docs/events.md"
#define OPEN_MARK "<!-- schema: "
#define CLOSE_MARK "<!-- /schema -->\n"

/* The tables of one event as docs/events.md has them, between the marks. */
static void render(struct buf *b, enum fmt_ev ev)
{
    const struct schema_event *e = &schema_events[ev];
    char line[1024];
    snprintf(line, sizeof line, "**`%s`**: %s.\n\n| value | unit | |\n|---|---|---|\n", e->name,
             e->doc);
    buf_put(b, line, strlen(line));
    for (uint32_t i = 0; i < e->value_count; i++) {
        snprintf(line, sizeof line, "| `%s` | %s | %s |\n", e->values[i].name, e->values[i].unit,
                 e->values[i].doc);
        buf_put(b, line, strlen(line));
    }
    if (e->field_count) {
        snprintf(line, sizeof line, "\n| field | type | |\n|---|---|---|\n");
        buf_put(b, line, strlen(line));
    }
    for (uint32_t i = 0; i < e->field_count; i++) {
        snprintf(line, sizeof line, "| `%s` | %s | %s |\n", e->fields[i].name,
                 schema_type_name(e->fields[i].type), e->fields[i].doc);
        buf_put(b, line, strlen(line));
    }
}

static char *read_text(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    struct buf b;
    buf_init(&b);
    char chunk[4096];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
        buf_put(&b, chunk, n);
    fclose(f);
    buf_put(&b, "", 1);
    *len = b.len - 1;
    return (char *)b.data;
}

/* The event a mark names: "<!-- schema: NAME -->\n" at p. */
static long marked_event(const char *p)
{
    p += strlen(OPEN_MARK);
    const char *end = strstr(p, " -->\n");
    for (int ev = 0; end && ev < FMT_EV_COUNT; ev++) {
        size_t n = strlen(schema_events[ev].name);
        if ((size_t)(end - p) == n && memcmp(p, schema_events[ev].name, n) == 0)
            return ev;
    }
    return -1;
}

/* The next mark at the start of a line, from `at` on. */
static const char *next_mark(const char *doc, const char *at)
{
    for (const char *p = at; (p = strstr(p, OPEN_MARK)) != NULL; p++)
        if (p == doc || p[-1] == '\n')
            return p;
    return NULL;
}

static void test_schema_docs(void)
{
    size_t len;
    char *doc = read_text(EVENTS_DOC, &len);
    REQUIRE(doc != NULL); /* run from the top of the tree, as make does */
    struct buf out;
    buf_init(&out);
    const char *write = getenv("CORSCOPE_WRITE_EVENTS_DOC");
    int seen[FMT_EV_COUNT] = {0}, stale = 0, writing = write && *write;
    const char *at = doc;
    for (const char *mark; (mark = next_mark(doc, at)) != NULL;) {
        long ev = marked_event(mark);
        const char *body = strchr(mark, '\n');
        const char *close = body ? strstr(body, CLOSE_MARK) : NULL;
        if (ev < 0 || !close) {
            fprintf(stderr, "  " EVENTS_DOC ": %.40s...: not an event of the schema, or no "
                            "closing mark\n", mark);
            CHECK(ev >= 0 && close);
            break;
        }
        seen[ev]++;
        body++;
        struct buf want;
        buf_init(&want);
        render(&want, (enum fmt_ev)ev);
        if (want.len != (size_t)(close - body) || memcmp(want.data, body, want.len) != 0) {
            stale++;
            if (!writing)
                fprintf(stderr, "  " EVENTS_DOC ": the tables of %s are not the schema's "
                                "(make events-doc); they would be:\n%.*s",
                        schema_events[ev].name, (int)want.len, (const char *)want.data);
        }
        buf_put(&out, at, (size_t)(body - at));
        buf_put(&out, want.data, want.len);
        buf_free(&want);
        at = close;
    }
    buf_put(&out, at, strlen(at));
    for (int ev = 0; ev < FMT_EV_COUNT; ev++) {
        if (seen[ev] != 1)
            fprintf(stderr, "  " EVENTS_DOC ": %d tables of %s (one wanted: a line '" OPEN_MARK
                            "%s -->' and a line '<!-- /schema -->' where they belong)\n",
                    seen[ev], schema_events[ev].name, schema_events[ev].name);
        CHECK_EQ(seen[ev], 1);
    }
    if (stale && writing) {
        FILE *f = fopen(EVENTS_DOC, "wb");
        CHECK(f && fwrite(out.data, 1, out.len, f) == out.len);
        if (f)
            fclose(f);
        fprintf(stderr, "  " EVENTS_DOC ": %d events' tables rewritten\n", stale);
        stale = 0;
    }
    CHECK_EQ(stale, 0);
    buf_free(&out);
    mem_free(doc);
}

static void test_schema_event_def(void)
{
    struct writer_event_def d;
    schema_event_def(&d, FMT_EV_LOCK);
    CHECK_STR(d.name, "lock");
    CHECK_EQ(d.value_count, FMT_LOCK_VALUE_COUNT);
    CHECK_STR(d.value_names[FMT_LOCK_WAITS], "waits");
    CHECK_STR(d.value_units[FMT_LOCK_WAIT], "ns");
    CHECK_EQ(d.field_count, FMT_LOCK_FIELD_COUNT);
    CHECK_STR(d.field_names[FMT_LOCK_OWNER], "owner");
    CHECK_EQ(d.field_types[FMT_LOCK_OWNER], FMT_FIELD_THREAD);
    CHECK_STR(d.field_names[FMT_LOCK_BELOW_MIN], "below_min");
    /* a lesser form: the calls of --trace=counts */
    schema_event_def_part(&d, FMT_EV_CALLS, 1u << FMT_CALLS_CALLS, 0);
    CHECK_STR(d.name, "calls");
    CHECK_EQ(d.value_count, 1);
    CHECK_STR(d.value_names[0], "calls");
    CHECK_STR(d.value_units[0], "count");
    CHECK_EQ(d.field_count, 0);
    /* every event: within the format's limits, names unique within it */
    for (int ev = 0; ev < FMT_EV_COUNT; ev++) {
        const struct schema_event *e = &schema_events[ev];
        CHECK(e->value_count >= 1 && e->value_count <= FMT_MAX_VALUES);
        CHECK(e->field_count <= FMT_MAX_FIELDS);
        for (int other = 0; other < ev; other++)
            CHECK(strcmp(e->name, schema_events[other].name) != 0);
        for (uint32_t i = 0; i < e->field_count; i++) {
            CHECK(strcmp(schema_type_name(e->fields[i].type), "?") != 0);
            for (uint32_t k = 0; k < i; k++)
                CHECK(strcmp(e->fields[i].name, e->fields[k].name) != 0);
        }
    }
}

/* Recordings whose definitions are not the schema's own: an older or a
 * foreign writer.  Event 16 "lock" with its fields in another order, one
 * missing and one of another type; 17 a second "lock"; 18 an event the
 * schema does not know; 19 "gc" in a chunk that turns out bad. */
static int foreign_recording(struct buf *out)
{
    struct writer w;
    struct writer_sink sink = {fixture_sink, out};
    if (writer_begin(&w, sink) < 0)
        return -1;
    struct writer_event_def lock = {16, "lock", 2, {"waits", "wait"}, {"count", "ns"}, 3,
                                    {"below_min", "lock", "owner"},
                                    {FMT_FIELD_UINT, FMT_FIELD_UINT, FMT_FIELD_UINT}};
    struct writer_event_def again = {17, "lock", 1, {"wait"}, {"ns"}, 0, {NULL}, {0}};
    struct writer_event_def probe = {18, "probe", 1, {"hits"}, {"count"}, 1, {"line"},
                                     {FMT_FIELD_UINT}};
    writer_event_def(&w, &lock);
    writer_event_def(&w, &again);
    writer_event_def(&w, &probe);
    writer_thread(&w, 1, 100, 0);
    uint64_t v[2] = {3, 5000}, f[3] = {0, 42, 7};
    writer_record(&w, 16, 1, 1000, 0, v, 2, f, 3);
    uint64_t hits = 9, line = 12;
    writer_record(&w, 18, 1, 2000, 0, &hits, 1, &line, 1);
    writer_flush(&w);
    /* a chunk with gc and a definition the reader refuses (type 99) */
    struct writer_event_def gc;
    schema_event_def(&gc, FMT_EV_GC);
    gc.id = 19;
    struct writer_event_def bad = {20, "bad", 1, {"x"}, {"count"}, 1, {"y"}, {99}};
    writer_event_def(&w, &gc);
    writer_event_def(&w, &bad);
    int rc = writer_flush(&w);
    writer_free(&w);
    return rc;
}

static void test_schema_lookup(void)
{
    struct buf b;
    buf_init(&b);
    REQUIRE(foreign_recording(&b) == 0);
    struct recording r;
    char err[256];
    REQUIRE(rec_load_memory(b.data, b.len, &r, err, sizeof err) == 0);
    buf_free(&b);
    CHECK_EQ(r.status, REC_CORRUPT); /* the last chunk */
    CHECK_EQ(r.event_count, 3);
    /* the first "lock", its members found by name */
    CHECK_EQ(rec_event_of(&r, FMT_EV_LOCK), 0);
    CHECK_EQ(rec_value_of(&r, FMT_EV_LOCK, FMT_LOCK_WAIT), 1);
    CHECK_EQ(rec_value_of(&r, FMT_EV_LOCK, FMT_LOCK_WAITS), 0);
    CHECK_EQ(rec_field_of(&r, FMT_EV_LOCK, FMT_LOCK_LOCK), 1);
    CHECK_EQ(rec_field_of(&r, FMT_EV_LOCK, FMT_LOCK_BELOW_MIN), 0);
    CHECK_EQ(rec_field_of(&r, FMT_EV_LOCK, FMT_LOCK_NATIVE), -1); /* missing */
    CHECK_EQ(rec_field_of(&r, FMT_EV_LOCK, FMT_LOCK_OWNER), -1);  /* uint, not thread */
    REQUIRE(r.record_count == 2);
    const struct rec_record *x = &r.records[0];
    CHECK_EQ(rec_value(&r, x, FMT_EV_LOCK, FMT_LOCK_WAIT), 5000);
    CHECK_EQ(rec_value(&r, x, FMT_EV_LOCK, FMT_LOCK_WAITS), 3);
    CHECK_EQ(rec_field(&r, x, FMT_EV_LOCK, FMT_LOCK_LOCK), 42);
    CHECK_EQ(rec_field(&r, x, FMT_EV_LOCK, FMT_LOCK_OWNER), 0);
    /* a record of another event reads as nothing of this one */
    CHECK_EQ(rec_field(&r, &r.records[1], FMT_EV_LOCK, FMT_LOCK_LOCK), 0);
    /* the event the schema does not know is there all the same */
    long probe = rec_event_index(&r, "probe");
    CHECK_EQ(probe, 2);
    CHECK_EQ(r.records[1].event, probe);
    CHECK_EQ(rec_fields(&r, &r.records[1])[0], 12);
    /* gc came in the chunk that was refused: forgotten with it */
    CHECK_EQ(rec_event_of(&r, FMT_EV_GC), -1);
    CHECK_EQ(rec_field_of(&r, FMT_EV_GC, FMT_GC_START), -1);
    /* an event made by the CLI is learnt as it is added */
    CHECK_EQ(rec_event_of(&r, FMT_EV_LIVE), -1);
    long live = rec_add_schema_event(&r, FMT_EV_LIVE);
    CHECK_EQ(live, 3);
    CHECK_EQ(rec_event_of(&r, FMT_EV_LIVE), live);
    CHECK_EQ(rec_value_of(&r, FMT_EV_LIVE, FMT_LIVE_INUSE_OBJECTS), 1);
    CHECK(rec_str_eq(r.events[live].unit, "bytes"));
    rec_free(&r);
}

/* A sampled event of a schema event's name takes the name: the schema's is
 * absent (the first event of a name is the one). */
static void test_schema_sampled_name(void)
{
    struct buf b;
    buf_init(&b);
    struct writer w;
    struct writer_sink sink = {fixture_sink, &b};
    REQUIRE(writer_begin(&w, sink) == 0);
    writer_event(&w, FMT_EVENT_CPU, "jit", "ns", 1000);
    struct writer_event_def jit;
    schema_event_def(&jit, FMT_EV_JIT);
    jit.id = FMT_EVENT_FIRST_RECORDED;
    writer_event_def(&w, &jit);
    REQUIRE(writer_finish(&w, NULL, NULL, 0) == 0);
    writer_free(&w);
    struct recording r;
    char err[256];
    REQUIRE(rec_load_memory(b.data, b.len, &r, err, sizeof err) == 0);
    buf_free(&b);
    CHECK_EQ(r.event_count, 2);
    CHECK_EQ(rec_event_of(&r, FMT_EV_JIT), -1);
    CHECK_EQ(rec_field_of(&r, FMT_EV_JIT, FMT_JIT_METHOD), -1);
    rec_free(&r);
}

void suite_schema(void)
{
    RUN(test_schema_docs);
    RUN(test_schema_event_def);
    RUN(test_schema_lookup);
    RUN(test_schema_sampled_name);
}
