/*
 * Tests of memory profiling's pieces that need no runtime: the settings
 * (-e alloc,gc,live, --alloc, --alloc-interval, --live-max), sizes, the
 * event queues' time order across threads, and the CLI's side over a
 * recording written here the way the agent writes one: the live view as of
 * a time, the collections table with its pauses, report -f gc, and pprof's
 * sample types for several events.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <zlib.h>

#include "agent/evq.h"
#include "cli/gc_table.h"
#include "cli/profile.h"
#include "cli/report.h"
#include "common/config.h"
#include "common/units.h"
#include "fixture.h"
#include "format/writer.h"
#include "test.h"

static void test_memory_settings(void)
{
    struct config c;
    config_defaults(&c);
    char err[256], text[64];
    CHECK(c.alloc == CONFIG_ALLOC_SAMPLED && c.alloc_interval == 100 * 1024 && c.live_max == 100000);
    CHECK(config_set(&c, "event", "cpu,alloc,gc", err, sizeof err) == 0);
    CHECK_EQ(c.events, CONFIG_EVENT_CPU | CONFIG_EVENT_ALLOC | CONFIG_EVENT_GC);
    /* live objects are sampled allocations: live brings alloc */
    CHECK(config_set(&c, "event", "live", err, sizeof err) == 0);
    CHECK_EQ(c.events, CONFIG_EVENT_ALLOC | CONFIG_EVENT_LIVE);
    config_value_text(&c, "event", text, sizeof text);
    CHECK_STR(text, "alloc,live");
    CHECK(config_set(&c, "alloc", "exact", err, sizeof err) == 0 && c.alloc == CONFIG_ALLOC_EXACT);
    CHECK(config_set(&c, "alloc", "every", err, sizeof err) < 0);
    CHECK_STR(err, "unknown allocation mode (modes: sampled, exact)");
    CHECK(config_set(&c, "alloc_interval", "512KiB", err, sizeof err) == 0 &&
          c.alloc_interval == 512 * 1024);
    CHECK(config_set(&c, "alloc_interval", "99KiB", err, sizeof err) < 0);
    CHECK_STR(err, "out of range (100KiB, the runtime's own mean, to 1GiB)");
    CHECK(config_set(&c, "alloc_interval", "2GiB", err, sizeof err) < 0);
    config_value_text(&c, "alloc_interval", text, sizeof text);
    CHECK_STR(text, "524288"); /* read back the same by the agent */
    CHECK(config_set(&c, "live_max", "0", err, sizeof err) < 0);
    CHECK(config_set(&c, "live_max", "5000", err, sizeof err) == 0 && c.live_max == 5000);
}

static void test_sizes(void)
{
    uint64_t v = 0;
    const char *why = NULL;
    CHECK(units_parse_size("100000", UINT64_MAX, &v, &why) == 0 && v == 100000);
    CHECK(units_parse_size("100KiB", UINT64_MAX, &v, &why) == 0 && v == 102400);
    CHECK(units_parse_size("4MB", UINT64_MAX, &v, &why) == 0 && v == 4u << 20);
    CHECK(units_parse_size("1G", UINT64_MAX, &v, &why) == 0 && v == 1u << 30);
    CHECK(units_parse_size("12B", UINT64_MAX, &v, &why) == 0 && v == 12);
    CHECK(units_parse_size("1.5MiB", UINT64_MAX, &v, &why) < 0);
    CHECK(units_parse_size("KiB", UINT64_MAX, &v, &why) < 0);
    CHECK(units_parse_size("10kb", UINT64_MAX, &v, &why) < 0);
    CHECK_STR(why, "unknown unit (use B, KiB, MiB, GiB)");
    CHECK(units_parse_size("99999999999999999999", UINT64_MAX, &v, &why) < 0);
    CHECK(units_parse_size("20000000000GiB", UINT64_MAX, &v, &why) < 0);
    CHECK(units_parse_size("2GiB", 1u << 30, &v, &why) < 0);
}

/* ---- event queues: one time order across threads ------------------------------------ */

static _Atomic int turn;

static void *push_in_turns(void *arg)
{
    uint64_t me = (uint64_t)(uintptr_t)arg;
    for (uint64_t i = 0; i < 50; i++) {
        while (atomic_load(&turn) % 2 != (int)me)
            ;
        evq_push(1, 1, &me, 1, 0);
        atomic_fetch_add(&turn, 1);
    }
    return NULL;
}

struct order {
    uint64_t n, last, backwards, switches, prev_payload;
};

static void on_ordered(void *ctx, const struct evq_entry *e)
{
    struct order *o = ctx;
    if (o->n && e->time < o->last)
        o->backwards++;
    if (o->n && e->payload[0] != o->prev_payload)
        o->switches++;
    o->prev_payload = e->payload[0];
    o->last = e->time;
    o->n++;
}

/* Two threads push in turns: the drain hands their entries over in the
 * order they were taken, alternating, never going back in time (the
 * records' times are deltas: one out of order would be moved). */
static void test_queue_time_order(void)
{
    evq_open();
    atomic_store(&turn, 0);
    pthread_t a, b;
    REQUIRE(pthread_create(&a, NULL, push_in_turns, (void *)0) == 0);
    REQUIRE(pthread_create(&b, NULL, push_in_turns, (void *)1) == 0);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    struct order o = {0, 0, 0, 0, 0};
    CHECK_EQ(evq_drain(on_ordered, &o, UINT64_MAX), 100);
    CHECK_EQ(o.backwards, 0);
    CHECK_EQ(o.switches, 99);
    evq_shutdown();
}

/* ---- a recording with memory events ------------------------------------------------ */

enum { EV_ALLOC = 16, EV_COLLECTED, EV_SCAN, EV_GC, EV_PAUSE };
#define MS 1000000ull

/* Ten allocations on two stacks, 1 MiB each, object ids 1..10 (0 for the
 * last two: not followed); collections at 100 ms and 200 ms: the first
 * finds 1-3 dead, the second 4-6; looks after each and at the end (300
 * ms, no new collection).  Two collections and three pauses. */
static int memory_recording(struct buf *out)
{
    struct writer w;
    struct writer_sink sink = {fixture_sink, out};
    if (writer_begin(&w, sink) < 0)
        return -1;
    writer_info(&w, "events", "alloc,gc,live");
    writer_info(&w, "alloc", "sampled (test)");
    struct writer_event_def alloc = {EV_ALLOC, "alloc", 2, {"alloc_space", "alloc_objects"},
                                     {"bytes", "objects"}, 4,
                                     {"type", "size", "heap", "object"},
                                     {FMT_FIELD_STRING, FMT_FIELD_UINT, FMT_FIELD_UINT, FMT_FIELD_UINT}};
    struct writer_event_def collected = {EV_COLLECTED, "collected", 1, {"objects"}, {"objects"}, 2,
                                         {"object", "by"}, {FMT_FIELD_UINT, FMT_FIELD_TIME}};
    struct writer_event_def scan = {EV_SCAN, "live-scan", 1, {"followed"}, {"objects"}, 3,
                                    {"as_of", "allocated_before", "collections"},
                                    {FMT_FIELD_TIME, FMT_FIELD_TIME, FMT_FIELD_UINT}};
    struct writer_event_def gc = {EV_GC, "gc", 1, {"duration"}, {"ns"}, 13,
                                  {"number", "generation", "reason", "kind", "compacting", "start",
                                   "gen0", "gen1", "gen2", "loh", "poh", "promoted", "pinned_objects"},
                                  {FMT_FIELD_UINT, FMT_FIELD_UINT, FMT_FIELD_UINT, FMT_FIELD_UINT,
                                   FMT_FIELD_UINT, FMT_FIELD_TIME, FMT_FIELD_UINT, FMT_FIELD_UINT,
                                   FMT_FIELD_UINT, FMT_FIELD_UINT, FMT_FIELD_UINT, FMT_FIELD_UINT,
                                   FMT_FIELD_UINT}};
    struct writer_event_def pause = {EV_PAUSE, "gc-pause", 1, {"pause"}, {"ns"}, 3,
                                     {"start", "reason", "gc"},
                                     {FMT_FIELD_TIME, FMT_FIELD_UINT, FMT_FIELD_UINT}};
    writer_event_def(&w, &alloc);
    writer_event_def(&w, &collected);
    writer_event_def(&w, &scan);
    writer_event_def(&w, &gc);
    writer_event_def(&w, &pause);
    uint32_t mod = writer_string(&w, "App.dll", 7);
    uint32_t type = writer_string(&w, "App.Work", 8);
    uint32_t keep = writer_string(&w, "Keep", 4), drop = writer_string(&w, "Drop", 4);
    uint32_t bytes = writer_string(&w, "System.Byte[]", 13);
    uint32_t label = writer_string(&w, "alloc", 5);
    uint32_t f_keep = writer_frame(&w, FMT_FRAME_MANAGED, mod, type, keep, 0);
    uint32_t f_drop = writer_frame(&w, FMT_FRAME_MANAGED, mod, type, drop, 0);
    uint32_t f_label = writer_frame(&w, FMT_FRAME_LABEL, 0, bytes, label, 0);
    uint32_t sk[] = {f_label, f_keep}, sd[] = {f_label, f_drop};
    uint32_t s_keep = writer_stack(&w, sk, 2), s_drop = writer_stack(&w, sd, 2);
    writer_thread(&w, 1, 100, 0);
    /* 1-6: Drop (collected later), 7-10: Keep; the last two not followed */
    for (uint64_t i = 1; i <= 10; i++) {
        uint64_t v[2] = {1 << 20, 4}, f[4] = {bytes, 1000, 0, i <= 8 ? i : 0};
        writer_record(&w, EV_ALLOC, 1, i * 15 * MS, i <= 6 ? s_drop : s_keep, v, 2, f, 4);
        if (i == 6) {
            /* collection 1 at 90-100 ms: 1-3 found dead at the look */
            uint64_t d = 10 * MS, gf[13] = {1, 0, 0, 0, 1, 90 * MS, 1, 2, 3, 4, 5, 6, 7};
            writer_record(&w, EV_GC, 0, 100 * MS, 0, &d, 1, gf, 13);
            uint64_t p = 11 * MS, pf[3] = {89 * MS, 1, 1};
            writer_record(&w, EV_PAUSE, 0, 100 * MS, 0, &p, 1, pf, 3);
            for (uint64_t k = 1; k <= 3; k++) {
                uint64_t one = 1, cf[2] = {k, 100 * MS};
                writer_record(&w, EV_COLLECTED, 0, 100 * MS, 0, &one, 1, cf, 2);
            }
            uint64_t n = 5, sf[3] = {100 * MS, 90 * MS, 1};
            writer_record(&w, EV_SCAN, 0, 100 * MS, 0, &n, 1, sf, 3);
        }
    }
    /* collection 2 (gen2, background) at 180-200 ms with two pauses: 4-6 die */
    uint64_t d = 20 * MS, gf[13] = {2, 2, 0, 1, 0, 180 * MS, 0, 0, 8, 0, 0, 9, 0};
    writer_record(&w, EV_GC, 0, 200 * MS, 0, &d, 1, gf, 13);
    uint64_t p1 = 1 * MS, p1f[3] = {181 * MS, 6, 2}, p2 = 2 * MS, p2f[3] = {195 * MS, 6, 2};
    writer_record(&w, EV_PAUSE, 0, 200 * MS, 0, &p1, 1, p1f, 3);
    writer_record(&w, EV_PAUSE, 0, 200 * MS, 0, &p2, 1, p2f, 3);
    for (uint64_t k = 4; k <= 6; k++) {
        uint64_t one = 1, cf[2] = {k, 200 * MS};
        writer_record(&w, EV_COLLECTED, 0, 200 * MS, 0, &one, 1, cf, 2);
    }
    uint64_t n = 2, sf[3] = {200 * MS, 150 * MS, 2};
    writer_record(&w, EV_SCAN, 0, 200 * MS, 0, &n, 1, sf, 3);
    uint64_t n2 = 2, sf2[3] = {200 * MS, 300 * MS, 2}; /* the last look, at the end */
    writer_record(&w, EV_SCAN, 0, 300 * MS, 0, &n2, 1, sf2, 3);
    writer_stat(&w, "live_untracked", 2);
    const char *keys[] = {"live_untracked"};
    uint64_t values[] = {2};
    int rc = writer_finish(&w, keys, values, 1);
    writer_free(&w);
    return rc < 0 || w.error ? -1 : 0;
}

static int load_memory(struct profiles *ps, struct prof_filter *f)
{
    struct buf b;
    buf_init(&b);
    if (memory_recording(&b) < 0)
        return -1;
    struct recording r;
    char err[256];
    int rc = rec_load_memory(b.data, b.len, &r, err, sizeof err);
    buf_free(&b);
    if (rc < 0)
        return -1;
    return prof_build(ps, &r, f, err, sizeof err);
}

static char *render(report_writer w, const struct profile *p, const struct report_options *o)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f)
        return NULL;
    int rc = w(p, o, f);
    fclose(f);
    if (rc < 0) {
        free(text);
        return NULL;
    }
    return text;
}

static const struct profile *view_of(const struct profiles *ps, const char *event)
{
    for (size_t i = 0; i < ps->count; i++)
        if (!strcmp(prof_event_name(&ps->views[i]), event))
            return &ps->views[i];
    return NULL;
}

/* The live heap: at the end, 7 and 8 (Keep; 9 and 10 were not followed);
 * as of the first collection, 4-6 were still alive and 7 not judged yet
 * (allocated after the last handed-over allocation at that look). */
static void test_live_view(void)
{
    struct profiles ps;
    struct prof_filter f = {0};
    REQUIRE(load_memory(&ps, &f) == 0);
    const struct profile *live = view_of(&ps, "live");
    REQUIRE(live);
    CHECK_EQ(live->selected_samples, 2);
    CHECK_EQ(live->total_weight, 2u << 20);
    CHECK_EQ(live->total_count, 8);
    CHECK(strstr(ps.shared.live_note, "2 sampled allocations still alive at the collection that "
                                      "ended at 0.200 s") != NULL);
    const struct profile *alloc = view_of(&ps, "alloc");
    REQUIRE(alloc);
    CHECK_EQ(alloc->total_weight, 10u << 20);
    /* top shows objects beside bytes */
    struct report_options o = {0, 0, NULL, NULL, 0, 0};
    char *text = render(report_top, live, &o);
    CHECK(text && strstr(text, "self objects") && strstr(text, "App.Work.Keep"));
    CHECK(text && strstr(text, "# live: 2 sampled allocations") != NULL);
    free(text);
    prof_free(&ps);

    f.has_at = 1;
    f.at_ns = 150 * MS; /* the look after the first collection */
    REQUIRE(load_memory(&ps, &f) == 0);
    live = view_of(&ps, "live");
    REQUIRE(live);
    CHECK_EQ(live->selected_samples, 3); /* 4, 5, 6: allocated before 90 ms, alive at 100 */
    CHECK(strstr(ps.shared.live_note, "at the collection that ended at 0.100 s") != NULL);
    prof_free(&ps);

    f.at_ns = 50 * MS; /* before any look */
    REQUIRE(load_memory(&ps, &f) == 0);
    live = view_of(&ps, "live");
    CHECK(!live || live->selected_samples == 0);
    CHECK(strstr(ps.shared.live_note, "no look at the heap before that time") != NULL);
    prof_free(&ps);
}

static void test_gc_table_and_report(void)
{
    struct profiles ps;
    struct prof_filter f = {0};
    REQUIRE(load_memory(&ps, &f) == 0);
    struct gc_table t;
    REQUIRE(gc_table_load(&ps.shared.rec, 0, 0, &t) == 1);
    REQUIRE(t.count == 2 && t.pause_count == 3);
    CHECK_EQ(t.rows[0].pause, 11 * MS);
    CHECK_EQ(t.rows[1].pause, 3 * MS); /* both of the background collection's pauses */
    CHECK_EQ(t.rows[1].pauses, 2);
    CHECK_EQ(t.rows[1].size[GC_GEN2], 8);
    CHECK_EQ(t.pauses[0].start, 89 * MS);
    CHECK_STR(gc_reason_name(1), "Induced");
    CHECK_STR(gc_kind_name(1), "background");
    gc_table_free(&t);
    /* a window keeps the collections that start in it */
    REQUIRE(gc_table_load(&ps.shared.rec, 100 * MS, 0, &t) == 1);
    CHECK_EQ(t.count, 1);
    gc_table_free(&t);

    struct report_options o = {0, 0, NULL, NULL, 0, 0};
    char *text = render(report_gc, prof_current(&ps), &o);
    REQUIRE(text);
    CHECK(strstr(text, "# gc: 2 collections over 0.30 s: gen0 1, gen1 0, gen2 1; 1 background, 1 "
                       "compacting") != NULL);
    /* pauses 1, 2 and 11 ms: 14 ms of 300 */
    CHECK(strstr(text, "# pauses: 3, 14.00 ms in all, 4.67% of the run; p50 2.00 ms, p90 11.00 ms, "
                       "p99 11.00 ms, max 11.00 ms") != NULL);
    CHECK(strstr(text, "background AllocSmall") != NULL);
    CHECK(strstr(text, "# lost: 2 sampled allocations not followed (--live-max reached)") != NULL);
    free(text);
    prof_free(&ps);

    /* a recording without collections: one clear error */
    REQUIRE(load_memory(&ps, &f) == 0);
    struct buf b;
    buf_init(&b);
    REQUIRE(fixture_recording(&b, 1) == 0);
    struct recording r;
    char err[256];
    REQUIRE(rec_load_memory(b.data, b.len, &r, err, sizeof err) == 0);
    buf_free(&b);
    struct profiles plain;
    REQUIRE(prof_build(&plain, &r, &f, err, sizeof err) == 0);
    CHECK(render(report_gc, prof_current(&plain), &o) == NULL);
    prof_free(&plain);
    prof_free(&ps);
}

/* pprof: two sample types per event, named as go tool pprof knows them. */
static void test_pprof_types(void)
{
    struct profiles ps;
    struct prof_filter f = {0};
    f.event = "alloc";
    REQUIRE(load_memory(&ps, &f) == 0);
    struct report_options o = {0, 0, NULL, NULL, 0, 0};
    char *gz = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&gz, &len);
    REQUIRE(out);
    CHECK(report_pprof(prof_current(&ps), &o, out) == 0);
    fclose(out);
    unsigned char raw[65536];
    z_stream z;
    memset(&z, 0, sizeof z);
    REQUIRE(inflateInit2(&z, 15 + 16) == Z_OK);
    z.next_in = (unsigned char *)gz;
    z.avail_in = (uInt)len;
    z.next_out = raw;
    z.avail_out = sizeof raw;
    CHECK(inflate(&z, Z_FINISH) == Z_STREAM_END);
    size_t n = sizeof raw - z.avail_out;
    inflateEnd(&z);
    free(gz);
    const char *want[] = {"alloc_objects", "alloc_space", "inuse_objects", "inuse_space", "bytes",
                          "count"};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        CHECK(memmem(raw, n, want[i], strlen(want[i])) != NULL);
    prof_free(&ps);
}

void suite_memory(void)
{
    RUN(test_memory_settings);
    RUN(test_sizes);
    RUN(test_queue_time_order);
    RUN(test_live_view);
    RUN(test_gc_table_and_report);
    RUN(test_pprof_types);
}
