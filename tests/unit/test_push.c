/*
 * The uploads to Grafana Pyroscope without a server: the settings, the
 * stream cut into windows (tiling, late events, stacks written twice,
 * damage), the push request's protobuf and the pprof in it, the HTTP
 * response parser and proxies, the spool's cap and its taking over of an
 * earlier run's files.
 */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "cli/http.h"
#include "cli/pstream.h"
#include "cli/pushreq.h"
#include "cli/spool.h"
#include "common/pushcfg.h"
#include "fixture.h"
#include "format/recording.h"
#include "format/writer.h"
#include "test.h"

/* ---- settings ------------------------------------------------------------- */

static void test_push_url(void)
{
    struct push_url u;
    char err[200], shown[600];
    REQUIRE(push_url_parse("https://pyro.example:4443/prefix/", &u, err, sizeof err) == 0);
    CHECK(u.https);
    CHECK(!strcmp(u.host, "pyro.example"));
    CHECK_EQ(u.port, 4443);
    CHECK(!strcmp(u.path, "/prefix"));
    REQUIRE(push_url_parse("http://alice:s3cret@[::1]", &u, err, sizeof err) == 0);
    CHECK(!strcmp(u.host, "::1"));
    CHECK_EQ(u.port, 80);
    CHECK(!strcmp(u.user, "alice"));
    CHECK(!strcmp(u.password, "s3cret"));
    push_url_display(&u, shown, sizeof shown);
    CHECK(!strcmp(shown, "http://[::1]:80"));
    CHECK(!strstr(shown, "s3cret") && !strstr(shown, "alice"));
    CHECK(push_url_parse("ftp://x", &u, err, sizeof err) < 0);
    CHECK(push_url_parse("http://x/push?a=b", &u, err, sizeof err) < 0);
    CHECK(push_url_parse("http://:80", &u, err, sizeof err) < 0);
    CHECK(push_url_parse("http://x:99999", &u, err, sizeof err) < 0);
    CHECK(push_url_parse("http://ex ample", &u, err, sizeof err) < 0);
}

static void test_push_settings(void)
{
    struct push_config c;
    char err[300];
    push_config_defaults(&c);
    CHECK_EQ(c.every_ns, 15000000000ull);
    REQUIRE(push_config_set(&c, "labels", "env=prod,region=eu-west", err, sizeof err) == 0);
    REQUIRE(push_config_set(&c, "label", "env=staging", err, sizeof err) == 0);
    CHECK_EQ(c.label_count, 2);
    CHECK(!strcmp(c.label_values[0], "staging")); /* the later one wins */
    CHECK(push_config_set(&c, "label", "__name__=x", err, sizeof err) < 0);
    CHECK(push_config_set(&c, "label", "service_name=x", err, sizeof err) < 0);
    CHECK(push_config_set(&c, "label", "9lives=x", err, sizeof err) < 0);
    CHECK(push_config_set(&c, "label", "a-b=x", err, sizeof err) < 0);
    CHECK(push_config_set(&c, "label", "k8s.pod=x", err, sizeof err) == 0);
    CHECK(push_config_set(&c, "label", "empty=", err, sizeof err) < 0);
    CHECK(push_config_set(&c, "push_every", "500ms", err, sizeof err) < 0);
    CHECK(push_config_set(&c, "push_every", "1s", err, sizeof err) == 0);
    CHECK(push_config_set(&c, "push_spool_max", "1KiB", err, sizeof err) < 0);
    /* a header may not smuggle a second one in, nor replace ours */
    CHECK(push_config_set(&c, "push_header", "X-A: 1\r\nX-B: 2", err, sizeof err) == 0);
    CHECK(!strcmp(c.headers, "X-A: 1\nX-B: 2\n"));
    CHECK(push_config_set(&c, "push_header", "X-C: a\rb", err, sizeof err) < 0);
    CHECK(push_config_set(&c, "push_header", "Content-Length: 0", err, sizeof err) < 0);
    CHECK(push_config_set(&c, "push_header", "Bad Name: 0", err, sizeof err) < 0);
    /* secrets never come back in a message */
    CHECK(push_config_set(&c, "push_header", "Authorization hunter2", err, sizeof err) < 0);
    CHECK(!strstr(err, "hunter2"));
    /* a password needs a user */
    push_config_defaults(&c);
    REQUIRE(push_config_set(&c, "push", "http://h", err, sizeof err) == 0);
    REQUIRE(push_config_set(&c, "push_password_file", "/dev/null", err, sizeof err) == 0);
    CHECK(push_config_check(&c, err, sizeof err) < 0);
    REQUIRE(push_config_set(&c, "push_user", "bob", err, sizeof err) == 0);
    CHECK(push_config_check(&c, err, sizeof err) == 0);
}

static void test_push_settings_env(void)
{
    struct push_config c;
    char err[300];
    unsetenv("CORSCOPE_PUSH");
    REQUIRE(push_config_from_env(&c, err, sizeof err) == 0);
    CHECK(!c.url_text[0]);
    CHECK(!push_config_in_env());
    setenv("CORSCOPE_PUSH", "http://127.0.0.1:4040", 1);
    setenv("CORSCOPE_LABELS", "env=prod,bad name=x", 1);
    CHECK(push_config_from_env(&c, err, sizeof err) < 0);
    CHECK(strstr(err, "CORSCOPE_LABELS") != NULL);
    setenv("CORSCOPE_LABELS", "env=prod", 1);
    setenv("CORSCOPE_PUSH_EVERY", "2s", 1);
    REQUIRE(push_config_from_env(&c, err, sizeof err) == 0);
    CHECK(push_config_in_env());
    CHECK_EQ(c.every_ns, 2000000000ull);
    CHECK_EQ(c.url.port, 4040);
    /* record --push reads the settings, never the URL (a bad one is no
     * business of a record that does not push) */
    setenv("CORSCOPE_PUSH", "ftp://nowhere", 1);
    CHECK(push_config_from_env(&c, err, sizeof err) < 0);
    REQUIRE(push_config_settings_from_env(&c, err, sizeof err) == 0);
    CHECK(!c.url_text[0]);
    CHECK_EQ(c.every_ns, 2000000000ull);
    unsetenv("CORSCOPE_PUSH");
    unsetenv("CORSCOPE_LABELS");
    unsetenv("CORSCOPE_PUSH_EVERY");
}

/* ---- the stream ---------------------------------------------------------------- */

#define EVERY 1000000000ull
#define START_REAL (1700000000ull * EVERY + 300000000ull) /* 0.3 s into a window */
#define START_MONO 5000000000ull

struct rec {
    struct writer w;
    struct buf out;
    uint32_t stack_a, stack_b, alloc;
};

static void rec_begin(struct rec *r)
{
    buf_init(&r->out);
    struct writer_sink sink = {fixture_sink, &r->out};
    writer_begin(&r->w, sink);
    char text[32];
    snprintf(text, sizeof text, "%llu", START_REAL);
    writer_info(&r->w, FMT_INFO_START_REALTIME_NS, text);
    snprintf(text, sizeof text, "%llu", START_MONO);
    writer_info(&r->w, FMT_INFO_START_MONOTONIC_NS, text);
    writer_info(&r->w, FMT_INFO_PID, "4242");
    writer_info(&r->w, FMT_INFO_COMMAND, "dotnet /srv/Checkout.dll --port 80");
    writer_info(&r->w, FMT_INFO_RUNTIME, "10.0.12.0 (10.0.12), ICorProfilerInfo15");
    writer_info(&r->w, FMT_INFO_INTERVAL_NS, "10000000");
    writer_event(&r->w, FMT_EVENT_CPU, "cpu", "ns", 1000);
    struct writer_event_def d = {FMT_EVENT_FIRST_RECORDED, "alloc", 2, {"alloc_space", "alloc_objects"},
                                 {"bytes", "objects"}, 1, {"type"}, {FMT_FIELD_STRING}};
    writer_event_def(&r->w, &d);
    r->alloc = d.id;
    uint32_t mod = writer_string(&r->w, "App.dll", 7), type = writer_string(&r->w, "App.Work", 8);
    uint32_t hot = writer_string(&r->w, "Hot", 3), cold = writer_string(&r->w, "Cold", 4);
    uint32_t fh = writer_frame(&r->w, FMT_FRAME_MANAGED, mod, type, hot, 0);
    uint32_t fc = writer_frame(&r->w, FMT_FRAME_MANAGED, mod, type, cold, 0);
    uint32_t sa[] = {fh, fc}, sb[] = {fc};
    r->stack_a = writer_stack(&r->w, sa, 2);
    r->stack_b = writer_stack(&r->w, sb, 1);
    writer_thread(&r->w, 1, 777, writer_string(&r->w, "main", 4));
}

/* Feeds the recording in pieces of `piece` bytes. */
static int feed(struct pstream *s, const struct buf *b, size_t piece)
{
    for (size_t at = 0; at < b->len; at += piece) {
        size_t n = b->len - at < piece ? b->len - at : piece;
        if (pstream_feed(s, b->data + at, n) < 0)
            return -1;
    }
    return 0;
}

/* Samples of a window's recording, and their total weight. */
static uint64_t window_weight(const struct pstream_window *w, size_t *samples)
{
    struct recording r;
    char err[200];
    *samples = 0;
    if (rec_load_memory(w->recording.data, w->recording.len, &r, err, sizeof err) < 0)
        return UINT64_MAX;
    uint64_t sum = 0;
    if (r.status != REC_COMPLETE)
        sum = UINT64_MAX;
    for (size_t i = 0; i < r.sample_count && sum != UINT64_MAX; i++) {
        sum += r.samples[i].weight;
        ++*samples;
    }
    rec_free(&r);
    return sum;
}

static void test_pstream_windows(void)
{
    struct rec r;
    rec_begin(&r);
    /* 35 samples, one every 100 ms from 0.05 s: windows [0, 0.7), [0.7, 1.7),
     * [1.7, 2.7), [2.7, 3.7) of stream time */
    uint64_t total = 0;
    for (int i = 0; i < 35; i++) {
        writer_sample(&r.w, FMT_EVENT_CPU, 1, 50000000ull + (uint64_t)i * 100000000ull,
                      i % 3 ? r.stack_a : r.stack_b, (uint64_t)i + 1);
        total += (uint64_t)i + 1;
        if (i % 7 == 6)
            writer_flush(&r.w);
    }
    uint64_t v[2] = {4096, 3}, f[1] = {0};
    writer_record(&r.w, r.alloc, 1, 1200000000ull, r.stack_a, v, 2, f, 1);
    writer_finish(&r.w, NULL, NULL, 0);
    writer_free(&r.w);

    struct pstream s;
    REQUIRE(pstream_init(&s, EVERY) == 0);
    REQUIRE(feed(&s, &r.out, 7) == 0); /* pieces that cut chunks anywhere */
    CHECK(s.ended);
    CHECK_EQ(pstream_now(&s, START_MONO + 1234), 1234);
    /* nothing is due before the grace after the first window's end */
    struct pstream_window w;
    CHECK_EQ(pstream_next_window(&s, START_MONO + 700000000ull, 0, &w), 0);
    CHECK_EQ(pstream_next_due(&s), START_MONO + 700000000ull + PSTREAM_GRACE_NS);
    uint64_t expect_start[] = {START_REAL, START_REAL + 700000000ull, START_REAL + 1700000000ull,
                               START_REAL + 2700000000ull};
    uint64_t seen = 0, prev_end = 0;
    size_t samples_seen = 0;
    for (int k = 0; k < 4; k++) {
        REQUIRE(pstream_next_window(&s, UINT64_MAX / 2, k == 3, &w) == 1);
        CHECK_EQ(w.start_ns, expect_start[k]);
        if (k)
            CHECK_EQ(w.start_ns, prev_end); /* no gap */
        CHECK_EQ(w.start_ns % EVERY == 0, k > 0); /* aligned to the wall clock but the first */
        prev_end = w.end_ns;
        size_t n;
        uint64_t weight = window_weight(&w, &n);
        REQUIRE(weight != UINT64_MAX);
        seen += weight;
        samples_seen += n;
        pstream_window_free(&w);
    }
    CHECK_EQ(seen, total + 4096); /* the alloc record's stack counts as a sample */
    CHECK_EQ(samples_seen, 36);
    /* the last window ends with the recording's last sample */
    CHECK_EQ(prev_end, START_REAL + 50000000ull + 34 * 100000000ull + 1);
    CHECK_EQ(pstream_next_window(&s, UINT64_MAX / 2, 1, &w), 0);
    CHECK_EQ(s.late_items, 0);
    pstream_free(&s);
    buf_free(&r.out);
}

static void test_pstream_late(void)
{
    struct rec r;
    rec_begin(&r);
    writer_sample(&r.w, FMT_EVENT_CPU, 1, 100000000ull, r.stack_a, 5);
    writer_flush(&r.w);
    size_t first_part = r.out.len;
    writer_sample(&r.w, FMT_EVENT_CPU, 1, 1500000000ull, r.stack_a, 7);
    writer_flush(&r.w);
    size_t second_part = r.out.len;
    /* a record of the first window, written after it was made */
    uint64_t v[2] = {100, 1}, f[1] = {0};
    writer_record(&r.w, r.alloc, 1, 200000000ull, r.stack_b, v, 2, f, 1);
    writer_flush(&r.w);
    writer_free(&r.w);

    struct pstream s;
    REQUIRE(pstream_init(&s, EVERY) == 0);
    REQUIRE(pstream_feed(&s, r.out.data, second_part) == 0);
    (void)first_part;
    struct pstream_window w;
    /* the first window [0, 0.7) is due at 0.7 + grace */
    REQUIRE(pstream_next_window(&s, START_MONO + 700000000ull + PSTREAM_GRACE_NS, 0, &w) == 1);
    size_t n;
    CHECK_EQ(window_weight(&w, &n), 5);
    pstream_window_free(&w);
    REQUIRE(pstream_feed(&s, r.out.data + second_part, r.out.len - second_part) == 0);
    CHECK_EQ(s.late_items, 1);
    REQUIRE(pstream_next_window(&s, UINT64_MAX / 2, 1, &w) == 1);
    CHECK_EQ(w.start_ns, START_REAL + 700000000ull);
    CHECK_EQ(window_weight(&w, &n), 7 + 100); /* the late one is in the next window */
    CHECK_EQ(n, 2);
    pstream_window_free(&w);
    pstream_free(&s);
    buf_free(&r.out);
}

static void test_pstream_dedupe_and_damage(void)
{
    struct rec r;
    rec_begin(&r);
    /* the agent forgot its stack table and writes the same stack again */
    uint32_t again[2] = {1, 2}; /* stack_a's frames: Hot, Cold */
    uint32_t s3 = writer_stack(&r.w, again, 2);
    writer_sample(&r.w, FMT_EVENT_CPU, 1, 10, s3, 1);
    writer_flush(&r.w);
    writer_free(&r.w);
    struct pstream s;
    REQUIRE(pstream_init(&s, EVERY) == 0);
    REQUIRE(feed(&s, &r.out, r.out.len) == 0);
    CHECK_EQ(s.defs.pool_count, 3); /* stack_a's two frames and stack_b's one, kept once */
    CHECK_EQ(pdefs_find(&s.defs, &s.defs.stacks, s3)->a, pdefs_find(&s.defs, &s.defs.stacks, r.stack_a)->a);
    pstream_free(&s);

    /* a bit flipped in a chunk: the stream stops, saying where */
    r.out.data[r.out.len - 3] ^= 0x40;
    REQUIRE(pstream_init(&s, EVERY) == 0);
    CHECK(feed(&s, &r.out, 100) < 0);
    CHECK(s.failed);
    CHECK(strstr(s.problem, "checksum") != NULL);
    pstream_free(&s);
    /* not a recording at all */
    REQUIRE(pstream_init(&s, EVERY) == 0);
    const char *http = "GET / HTTP/1.1\r\nHost: x\r\nAccept: */*\r\n\r\n";
    CHECK(pstream_feed(&s, http, strlen(http)) < 0);
    pstream_free(&s);
    buf_free(&r.out);
}

/* Does a window's recording name a frame "[forgotten]"? */
static int has_forgotten(const struct pstream_window *w)
{
    struct recording r;
    char err[200];
    if (rec_load_memory(w->recording.data, w->recording.len, &r, err, sizeof err) < 0)
        return -1;
    int found = 0;
    for (size_t i = 1; i < r.frame_count; i++)
        found |= rec_str_eq(r.strings[r.frames[i].name], "[forgotten]");
    rec_free(&r);
    return found;
}

static void test_pstream_forgets(void)
{
    /* a program that names new code for ever: one new method per window,
     * each sampled in its window only; Main is sampled in every window */
    struct rec r;
    rec_begin(&r);
    uint32_t mod = writer_string(&r.w, "Dyn.dll", 7);
    uint32_t main_ = writer_frame(&r.w, FMT_FRAME_MANAGED, mod, 0, writer_string(&r.w, "Main", 4), 0);
    uint32_t main_stack = writer_stack(&r.w, &main_, 1);
    uint32_t first_stack = 0;
    const int windows = 200;
    for (int k = 0; k < windows; k++) {
        char name[64];
        int n = snprintf(name, sizeof name, "lambda_method%d_with_a_long_generated_name", k);
        uint32_t f = writer_frame(&r.w, FMT_FRAME_MANAGED, mod, 0, writer_string(&r.w, name, (size_t)n), 0);
        uint32_t frames[2] = {f, main_};
        uint32_t st = writer_stack(&r.w, frames, 2);
        if (!first_stack)
            first_stack = st;
        uint64_t t = 800000000ull + (uint64_t)k * EVERY;
        writer_sample(&r.w, FMT_EVENT_CPU, 1, t, st, 1);
        writer_sample(&r.w, FMT_EVENT_CPU, 1, t + 1, main_stack, 1);
        writer_flush(&r.w);
    }
    /* at the end, the first method's stack again (the agent cached it) */
    writer_sample(&r.w, FMT_EVENT_CPU, 1, 800000000ull + (uint64_t)windows * EVERY, first_stack, 1);
    writer_flush(&r.w);
    writer_free(&r.w);

    struct pstream s;
    REQUIRE(pstream_init(&s, EVERY) == 0);
    s.defs.budget = s.defs.threshold = 16u << 10; /* 16 KiB */
    size_t at = 0;
    int made = 0, forgotten_shown = 0, main_forgotten = 0;
    uint64_t most = 0;
    while (at < r.out.len) {
        size_t n = r.out.len - at < 512 ? r.out.len - at : 512;
        REQUIRE(pstream_feed(&s, r.out.data + at, n) == 0);
        at += n;
        struct pstream_window w;
        int got;
        while ((got = pstream_next_window(&s, START_MONO + s.last_time, at == r.out.len, &w)) == 1) {
            made++;
            int f = has_forgotten(&w);
            if (f && made < windows)
                main_forgotten = 1; /* a stack in use was forgotten */
            forgotten_shown += f > 0;
            pstream_window_free(&w);
        }
        REQUIRE(got == 0);
        if (pdefs_bytes(&s.defs) > most)
            most = pdefs_bytes(&s.defs);
    }
    CHECK(made >= windows);
    CHECK(s.defs.compactions > 0);
    CHECK(s.defs.forgotten > (uint64_t)windows); /* most methods, their names and stacks */
    CHECK(most < 64u << 10);                      /* bounded by the budget (and its doubling) */
    CHECK(!main_forgotten);
    CHECK_EQ(forgotten_shown, 1); /* the first method's stack, shown as [forgotten] */
    CHECK(s.defs.forgotten_refs >= 1);
    pstream_free(&s);
    buf_free(&r.out);
}

/* ---- the request ---------------------------------------------------------------- */

struct pb {
    const uint8_t *p, *end;
};

static int pb_next(struct pb *b, uint32_t *field, const uint8_t **data, size_t *len, uint64_t *v)
{
    if (b->p >= b->end)
        return 0;
    uint64_t key = 0;
    for (int shift = 0; b->p < b->end; shift += 7) {
        key |= (uint64_t)(*b->p & 0x7f) << shift;
        if (!(*b->p++ & 0x80))
            break;
    }
    *field = (uint32_t)(key >> 3);
    uint64_t n = 0;
    for (int shift = 0; b->p < b->end; shift += 7) {
        n |= (uint64_t)(*b->p & 0x7f) << shift;
        if (!(*b->p++ & 0x80))
            break;
    }
    if ((key & 7) == 0) {
        *v = n;
        *data = NULL;
        *len = 0;
        return 1;
    }
    if ((key & 7) != 2 || n > (uint64_t)(b->end - b->p))
        return -1;
    *data = b->p;
    *len = n;
    b->p += n;
    return 1;
}

static void test_pushreq(void)
{
    struct rec r;
    rec_begin(&r);
    for (int i = 0; i < 10; i++)
        writer_sample(&r.w, FMT_EVENT_CPU, 1, 800000000ull + (uint64_t)i * 10000000ull, r.stack_a, 10);
    uint64_t v[2] = {2048, 2}, f[1] = {0};
    writer_record(&r.w, r.alloc, 1, 900000000ull, r.stack_b, v, 2, f, 1);
    writer_finish(&r.w, NULL, NULL, 0);
    writer_free(&r.w);
    struct pstream s;
    REQUIRE(pstream_init(&s, EVERY) == 0);
    REQUIRE(feed(&s, &r.out, 4096) == 0);
    struct pstream_window w;
    REQUIRE(pstream_next_window(&s, UINT64_MAX / 2, 1, &w) == 1);
    struct push_config c;
    push_config_defaults(&c);
    char err[300];
    REQUIRE(push_config_set(&c, "label", "env=prod", err, sizeof err) == 0);
    struct pushreq_labels labels;
    pushreq_labels(&c, &s, &labels);
    struct buf body;
    buf_init(&body);
    REQUIRE(pushreq_build(&w, &labels, &body, err, sizeof err) == 2);
    /* PushRequest: two series, each with its labels and one raw profile */
    struct pb req = {body.data, body.data + body.len};
    uint32_t field;
    const uint8_t *data;
    size_t len;
    uint64_t num;
    int series = 0, names_ok = 0;
    while (pb_next(&req, &field, &data, &len, &num) == 1) {
        REQUIRE(field == 1);
        series++;
        struct pb sr = {data, data + len};
        char name[64] = "", service[64] = "", pid[16] = "", env[16] = "", version[16] = "";
        const uint8_t *raw = NULL;
        size_t raw_len = 0;
        while (pb_next(&sr, &field, &data, &len, &num) == 1) {
            struct pb inner = {data, data + len};
            char k[64] = "", val[64] = "";
            uint32_t f2;
            const uint8_t *d2;
            size_t l2;
            while (pb_next(&inner, &f2, &d2, &l2, &num) == 1) {
                if (field == 1 && f2 == 1)
                    snprintf(k, sizeof k, "%.*s", (int)l2, (const char *)d2);
                else if (field == 1 && f2 == 2)
                    snprintf(val, sizeof val, "%.*s", (int)l2, (const char *)d2);
                else if (field == 2 && f2 == 1) {
                    raw = d2;
                    raw_len = l2;
                }
            }
            if (!strcmp(k, "__name__"))
                snprintf(name, sizeof name, "%s", val);
            if (!strcmp(k, "service_name"))
                snprintf(service, sizeof service, "%s", val);
            if (!strcmp(k, "pid"))
                snprintf(pid, sizeof pid, "%s", val);
            if (!strcmp(k, "env"))
                snprintf(env, sizeof env, "%s", val);
            if (!strcmp(k, "process.runtime.version"))
                snprintf(version, sizeof version, "%s", val);
        }
        CHECK_STR(service, "Checkout");
        CHECK_STR(pid, "4242");
        CHECK_STR(env, "prod");
        CHECK_STR(version, "10.0.12");
        REQUIRE(raw && raw_len > 18 && raw[0] == 0x1f && raw[1] == 0x8b);
        /* the pprof: its strings and its time */
        uint8_t plain[65536];
        z_stream z;
        memset(&z, 0, sizeof z);
        REQUIRE(inflateInit2(&z, 16 + 15) == Z_OK);
        z.next_in = (Bytef *)raw;
        z.avail_in = (uInt)raw_len;
        z.next_out = plain;
        z.avail_out = sizeof plain;
        REQUIRE(inflate(&z, Z_FINISH) == Z_STREAM_END);
        struct pb prof = {plain, plain + z.total_out};
        inflateEnd(&z);
        int strings_cpu = 0, strings_alloc = 0, labels_are_strings = 0;
        uint64_t time_ns = 0, duration = 0;
        while (pb_next(&prof, &field, &data, &len, &num) == 1) {
            if (field == 6 && len == 11 && !memcmp(data, "cpu_samples", 11))
                strings_cpu = 1;
            if (field == 6 && len == 10 && !memcmp(data, "alloc_size", 10))
                strings_alloc = 1;
            if (field == 6 && len == 6 && !memcmp(data, "thread", 6))
                labels_are_strings = 1;
            if (field == 9)
                time_ns = num;
            if (field == 10)
                duration = num;
        }
        CHECK_EQ(time_ns, w.start_ns);
        CHECK_EQ(duration, w.end_ns - w.start_ns);
        CHECK(!labels_are_strings); /* Pyroscope would make series of them */
        if (!strcmp(name, "process_cpu"))
            names_ok += strings_cpu;
        if (!strcmp(name, "memory"))
            names_ok += strings_alloc;
    }
    CHECK_EQ(series, 2);
    CHECK_EQ(names_ok, 2);
    buf_free(&body);
    pstream_window_free(&w);
    pstream_free(&s);
    buf_free(&r.out);
}

static void test_pushreq_service(void)
{
    char out[64];
    pushreq_default_service("dotnet /srv/app/Checkout.dll --urls http://*:80", out, sizeof out);
    CHECK_STR(out, "Checkout");
    pushreq_default_service("/srv/app/Checkout --x", out, sizeof out);
    CHECK_STR(out, "Checkout");
    pushreq_default_service("dotnet exec /srv/a.dll", out, sizeof out);
    CHECK_STR(out, "exec");
    pushreq_default_service(NULL, out, sizeof out);
    CHECK_STR(out, "unknown_service");
}

/* ---- HTTP ------------------------------------------------------------------------- */

static void test_http_head(void)
{
    struct http_response rs;
    memset(&rs, 0, sizeof rs);
    uint64_t length;
    int chunked;
    const char *ok = "HTTP/1.1 200 OK\r\nContent-Type: application/proto\r\ncontent-length: 0\r\n\r\n";
    REQUIRE(http_parse_head(ok, strlen(ok), &rs, &length, &chunked) == 0);
    CHECK_EQ(rs.status, 200);
    CHECK_EQ(length, 0);
    CHECK(!chunked && rs.keep_alive);
    CHECK_STR(rs.content_type, "application/proto");
    const char *busy = "HTTP/1.1 503 Service Unavailable\r\nRetry-After: 7\r\nConnection: close\r\n"
                       "Transfer-Encoding: chunked\r\n\r\n";
    REQUIRE(http_parse_head(busy, strlen(busy), &rs, &length, &chunked) == 0);
    CHECK_EQ(rs.status, 503);
    CHECK_EQ(rs.retry_after_s, 7);
    CHECK(chunked && !rs.keep_alive && length == UINT64_MAX);
    const char *old = "HTTP/1.0 401 Unauthorized\r\n\r\n";
    REQUIRE(http_parse_head(old, strlen(old), &rs, &length, &chunked) == 0);
    CHECK(!rs.keep_alive);
    CHECK(http_parse_head("SSH-2.0-OpenSSH\r\n\r\n", 19, &rs, &length, &chunked) < 0);
    CHECK(http_parse_head("HTTP/1.1 2x0 OK\r\n\r\n", 19, &rs, &length, &chunked) < 0);
    const char *bad_len = "HTTP/1.1 200 OK\r\nContent-Length: -5\r\n\r\n";
    CHECK(http_parse_head(bad_len, strlen(bad_len), &rs, &length, &chunked) < 0);
}

static void test_http_proxy_env(void)
{
    CHECK(http_no_proxy_match("localhost,.internal, example.com", "pyro.internal"));
    CHECK(http_no_proxy_match("localhost,.internal, example.com", "EXAMPLE.com"));
    CHECK(http_no_proxy_match("localhost,.internal, example.com", "a.example.com"));
    CHECK(!http_no_proxy_match("localhost,.internal, example.com", "badexample.com"));
    CHECK(http_no_proxy_match("*", "anything"));
    CHECK(!http_no_proxy_match("", "anything"));
    struct push_url u;
    char err[200];
    struct http_proxy p;
    REQUIRE(push_url_parse("https://pyro.example", &u, err, sizeof err) == 0);
    unsetenv("no_proxy");
    unsetenv("NO_PROXY");
    unsetenv("all_proxy");
    unsetenv("ALL_PROXY");
    unsetenv("http_proxy");
    setenv("https_proxy", "http://u:pw@proxy.lan:3128", 1);
    REQUIRE(http_proxy_for(&u, &p, err, sizeof err) == 0);
    CHECK(p.set);
    CHECK(!strcmp(p.host, "proxy.lan"));
    CHECK_EQ(p.port, 3128);
    CHECK(!strcmp(p.user, "u"));
    setenv("https_proxy", "proxy.lan", 1);
    REQUIRE(http_proxy_for(&u, &p, err, sizeof err) == 0);
    CHECK_EQ(p.port, 1080); /* curl's default */
    setenv("no_proxy", "ample", 1);
    REQUIRE(http_proxy_for(&u, &p, err, sizeof err) == 0);
    CHECK(p.set); /* "ample" is not a suffix of the name's labels */
    setenv("no_proxy", "pyro.example", 1);
    REQUIRE(http_proxy_for(&u, &p, err, sizeof err) == 0);
    CHECK(!p.set);
    unsetenv("no_proxy");
    setenv("https_proxy", "https://proxy.lan", 1);
    CHECK(http_proxy_for(&u, &p, err, sizeof err) < 0);
    unsetenv("https_proxy");
    /* plain http ignores HTTP_PROXY, as curl does */
    REQUIRE(push_url_parse("http://pyro.example", &u, err, sizeof err) == 0);
    setenv("HTTP_PROXY", "http://proxy.lan:3128", 1);
    REQUIRE(http_proxy_for(&u, &p, err, sizeof err) == 0);
    CHECK(!p.set);
    unsetenv("HTTP_PROXY");
    char b64[64];
    REQUIRE(http_base64("user:pass", 9, b64, sizeof b64) == 0);
    CHECK_STR(b64, "dXNlcjpwYXNz");
    REQUIRE(http_base64("ab", 2, b64, sizeof b64) == 0);
    CHECK_STR(b64, "YWI=");
    CHECK(http_base64("abcdef", 6, b64, 8) < 0);
}

/* ---- the spool ---------------------------------------------------------------------- */

static void rm_tree(const char *path)
{
    DIR *d = opendir(path);
    if (d) {
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
                continue;
            char sub[4096];
            snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
            rm_tree(sub);
        }
        closedir(d);
        rmdir(path);
    } else {
        unlink(path);
    }
}

static void test_spool(void)
{
    char root[] = "/tmp/corscope-spool-test.XXXXXX";
    REQUIRE(mkdtemp(root));
    struct spool s;
    REQUIRE(spool_open(&s, root, "http://h:1\n", 3000) == 0);
    CHECK(!s.note[0]);
    char body[1000];
    for (int i = 0; i < 4; i++) {
        memset(body, 'a' + i, sizeof body);
        REQUIRE(spool_add(&s, 1000 + (uint64_t)i, body, sizeof body) == 0);
    }
    /* the oldest went to stay under 3000 bytes */
    CHECK_EQ(s.dropped, 1);
    CHECK_EQ(spool_waiting(&s), 3);
    struct buf out;
    buf_init(&out);
    uint64_t id = spool_take(&s, &out);
    REQUIRE(id != 0);
    CHECK_EQ(out.len, 1000);
    CHECK_EQ(out.data[0], 'b');
    /* one in flight is never dropped: the next oldest is */
    memset(body, 'e', sizeof body);
    REQUIRE(spool_add(&s, 1004, body, sizeof body) == 0);
    CHECK_EQ(s.dropped, 2);
    spool_release(&s, id);
    id = spool_take(&s, &out);
    CHECK_EQ(out.data[0], 'b');
    spool_done(&s, id);
    CHECK_EQ(spool_waiting(&s), 2);
    CHECK(spool_add(&s, 1005, body, 4000) < 0); /* larger than the cap */
    CHECK_EQ(s.dropped, 3);
    spool_close(&s); /* 'd' and 'e' wait on disk */

    /* the next run takes them over, and sends them first */
    REQUIRE(spool_open(&s, root, "http://h:1\n", 3000) == 0);
    CHECK_EQ(s.adopted, 2);
    memset(body, 'f', sizeof body);
    REQUIRE(spool_add(&s, 2000, body, 10) == 0);
    id = spool_take(&s, &out);
    CHECK_EQ(out.data[0], 'd');
    spool_done(&s, id);
    id = spool_take(&s, &out);
    CHECK_EQ(out.data[0], 'e');
    spool_done(&s, id);
    id = spool_take(&s, &out);
    CHECK_EQ(out.data[0], 'f');
    spool_done(&s, id);
    CHECK_EQ(spool_take(&s, &out), 0);
    /* another server's spool is not ours */
    struct spool other;
    REQUIRE(spool_open(&other, root, "http://other:1\n", 3000) == 0);
    CHECK_EQ(other.adopted, 0);
    spool_close(&other);
    spool_close(&s);
    buf_free(&out);
    rm_tree(root);
}

void suite_push(void)
{
    RUN(test_push_url);
    RUN(test_push_settings);
    RUN(test_push_settings_env);
    RUN(test_pstream_windows);
    RUN(test_pstream_late);
    RUN(test_pstream_dedupe_and_damage);
    RUN(test_pstream_forgets);
    RUN(test_pushreq);
    RUN(test_pushreq_service);
    RUN(test_http_head);
    RUN(test_http_proxy_env);
    RUN(test_spool);
}
