/*
 * pushreq: a window as a push.v1.PushRequest: its series, labels, and the
 * pprof in each (sample types, the window's time, no string labels); the
 * default service name.
 */
#include <string.h>
#include <zlib.h>

#include "cli/pstream.h"
#include "cli/pushreq.h"
#include "fixture.h"
#include "format/writer.h"
#include "test.h"

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
    struct fixture_stream r;
    fixture_stream_begin(&r);
    for (int i = 0; i < 10; i++)
        writer_sample(&r.w, FMT_EVENT_CPU, 1, 800000000ull + (uint64_t)i * 10000000ull, r.stack_a, 10);
    uint64_t v[2] = {2048, 2}, f[1] = {0};
    writer_record(&r.w, r.alloc, 1, 900000000ull, r.stack_b, v, 2, f, 1);
    writer_finish(&r.w, NULL, NULL, 0);
    writer_free(&r.w);
    struct pstream s;
    REQUIRE(pstream_init(&s, FIXTURE_EVERY) == 0);
    REQUIRE(fixture_stream_feed(&s, &r.out, 4096) == 0);
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

/* Each event a window may hold goes as Pyroscope's .NET agent names it;
 * the table names events by enum, so these are the schema's and the
 * sampler's own names; the rest is not pushed. */
static void test_pushreq_profile_types(void)
{
    static const char *const pairs[][2] = {
        {"cpu", "process_cpu"}, {"wall", "wall"},     {"alloc", "memory"}, {"live", "memory"},
        {"exceptions", "exception"}, {"lock", "lock"}, {"jit", "jit"},     {"calls", "calls"},
    };
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
        const char *got = pushreq_profile_type(pairs[i][0]);
        CHECK(got && !strcmp(got, pairs[i][1]));
    }
    CHECK(pushreq_profile_type("gc") == NULL);
    CHECK(pushreq_profile_type("loads") == NULL);
    CHECK(pushreq_profile_type("exception") == NULL);
}

void suite_pushreq(void)
{
    RUN(test_pushreq_profile_types);
    RUN(test_pushreq);
    RUN(test_pushreq_service);
}
