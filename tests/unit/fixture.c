/*
 * fixture: see fixture.h.  Stacks (leaf first):
 *   s1 = Demo.Work.Hot, Demo.Program.Main          x6 samples, weight 1 each
 *   s2 = Demo.Work.Cold, Demo.Program.Main         x3 samples, weight 1 each, on thread 2
 *   s3 = libc.so.6!memcpy, [native]... see below   x1 sample,  weight 3
 */
#include "fixture.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>

#include "agent/recorder.h"
#include "agent/signal/mshape.h"
#include "format/recording.h"
#include "format/writer.h"

int fixture_sink(void *ctx, const void *p, size_t n)
{
    buf_put(ctx, p, n);
    return ((struct buf *)ctx)->failed ? -1 : 0;
}

int fixture_recording(struct buf *out, int close)
{
    struct writer w;
    struct writer_sink sink = {fixture_sink, out};
    if (writer_begin(&w, sink) < 0)
        return -1;
    writer_info(&w, "event", "cpu");
    writer_info(&w, "interval_ns", "10000000");
    writer_info(&w, "pid", "4242");
    writer_event(&w, FMT_EVENT_CPU, "cpu", "ns", 10000000);

    uint32_t mod = writer_string(&w, "Demo.dll", 8);
    uint32_t program = writer_string(&w, "Demo.Program", 12);
    uint32_t work = writer_string(&w, "Demo.Work", 9);
    uint32_t main_ = writer_string(&w, "Main", 4);
    uint32_t hot = writer_string(&w, "Hot", 3);
    uint32_t cold = writer_string(&w, "Cold", 4);
    uint32_t libc = writer_string(&w, "libc.so.6", 9);
    uint32_t memcpy_ = writer_string(&w, "memcpy", 6);
    uint32_t t1name = writer_string(&w, "main", 4);
    uint32_t t2name = writer_string(&w, "worker", 6);

    uint32_t f_main = writer_frame(&w, FMT_FRAME_MANAGED, mod, program, main_, 0);
    uint32_t f_hot = writer_frame(&w, FMT_FRAME_MANAGED, mod, work, hot, 0);
    uint32_t f_cold = writer_frame(&w, FMT_FRAME_MANAGED, mod, work, cold, 1);
    uint32_t f_memcpy = writer_frame(&w, FMT_FRAME_NATIVE, libc, 0, memcpy_, 0);

    uint32_t s1f[] = {f_hot, f_main}, s2f[] = {f_cold, f_main}, s3f[] = {f_memcpy, f_hot, f_main};
    uint32_t s1 = writer_stack(&w, s1f, 2);
    uint32_t s2 = writer_stack(&w, s2f, 2);
    writer_thread(&w, 1, 100, t1name);
    writer_thread(&w, 2, 101, t2name);
    uint64_t t = 1000;
    for (int i = 0; i < 6; i++)
        writer_sample(&w, FMT_EVENT_CPU, 1, t += 10000000, s1, 1);
    writer_stat(&w, "samples", 6);
    writer_flush(&w); /* a second round of chunks, as a long recording has */
    uint32_t s3 = writer_stack(&w, s3f, 3);
    for (int i = 0; i < 3; i++)
        writer_sample(&w, FMT_EVENT_CPU, 2, t += 10000000, s2, 1);
    writer_sample(&w, FMT_EVENT_CPU, 1, t += 10000000, s3, 3);
    writer_stat(&w, "samples", 10);
    writer_stat(&w, "dropped_samples", 2);
    int rc;
    if (close) {
        const char *keys[] = {"samples", "dropped_samples"};
        uint64_t values[] = {10, 2};
        rc = writer_finish(&w, keys, values, 2);
    } else {
        rc = writer_flush(&w);
    }
    writer_free(&w);
    return rc < 0 || w.error ? -1 : 0;
}

int fixture_profiles_of(int (*write)(struct buf *out), struct profiles *ps, struct prof_filter *f)
{
    struct buf b;
    buf_init(&b);
    if (write(&b) < 0) {
        buf_free(&b);
        return -1;
    }
    struct recording r;
    char err[256];
    int rc = rec_load_memory(b.data, b.len, &r, err, sizeof err);
    buf_free(&b);
    if (rc < 0)
        return -1;
    return prof_build(ps, &r, f, err, sizeof err);
}

static int closed_recording(struct buf *out)
{
    return fixture_recording(out, 1);
}

int fixture_profiles(struct profiles *p, struct prof_filter *f)
{
    return fixture_profiles_of(closed_recording, p, f);
}

/* ---- a recording with memory events ------------------------------------------------ */

enum { EV_ALLOC = 16, EV_COLLECTED, EV_SCAN, EV_GC, EV_PAUSE };

/* gc's fields in the schema's order (number, generation, reason, kind,
 * compacting, start, gen0, gen1, gen2, loh, poh, promoted, pinned_objects) */
static void gc_record(struct writer *w, uint64_t at, uint64_t duration, const uint64_t *fields)
{
    uint64_t v[FMT_GC_VALUE_COUNT] = {[FMT_GC_DURATION] = duration};
    writer_record(w, EV_GC, 0, at, 0, v, FMT_GC_VALUE_COUNT, fields, FMT_GC_FIELD_COUNT);
}

static void pause_record(struct writer *w, uint64_t at, uint64_t pause, uint64_t start,
                         uint64_t reason, uint64_t gc)
{
    uint64_t v[FMT_GC_PAUSE_VALUE_COUNT] = {[FMT_GC_PAUSE_PAUSE] = pause};
    uint64_t f[FMT_GC_PAUSE_FIELD_COUNT] = {
        [FMT_GC_PAUSE_START] = start, [FMT_GC_PAUSE_REASON] = reason, [FMT_GC_PAUSE_GC] = gc};
    writer_record(w, EV_PAUSE, 0, at, 0, v, FMT_GC_PAUSE_VALUE_COUNT, f, FMT_GC_PAUSE_FIELD_COUNT);
}

static void collected_record(struct writer *w, uint64_t at, uint64_t object, uint64_t by)
{
    uint64_t v[FMT_COLLECTED_VALUE_COUNT] = {[FMT_COLLECTED_OBJECTS] = 1};
    uint64_t f[FMT_COLLECTED_FIELD_COUNT] = {[FMT_COLLECTED_OBJECT] = object,
                                             [FMT_COLLECTED_BY] = by};
    writer_record(w, EV_COLLECTED, 0, at, 0, v, FMT_COLLECTED_VALUE_COUNT, f,
                  FMT_COLLECTED_FIELD_COUNT);
}

static void scan_record(struct writer *w, uint64_t at, uint64_t followed, uint64_t as_of,
                        uint64_t allocated_before, uint64_t collections)
{
    uint64_t v[FMT_LIVE_SCAN_VALUE_COUNT] = {[FMT_LIVE_SCAN_FOLLOWED] = followed};
    uint64_t f[FMT_LIVE_SCAN_FIELD_COUNT] = {[FMT_LIVE_SCAN_AS_OF] = as_of,
                                             [FMT_LIVE_SCAN_ALLOCATED_BEFORE] = allocated_before,
                                             [FMT_LIVE_SCAN_COLLECTIONS] = collections};
    writer_record(w, EV_SCAN, 0, at, 0, v, FMT_LIVE_SCAN_VALUE_COUNT, f,
                  FMT_LIVE_SCAN_FIELD_COUNT);
}

/* Ten allocations on two stacks, 1 MiB each, object ids 1..10 (0 for the
 * last two: not followed); collections at 100 ms and 200 ms: the first
 * finds 1-3 dead, the second 4-6; looks after each and at the end (300
 * ms, no new collection).  Two collections and three pauses. */
int fixture_memory_recording(struct buf *out)
{
    struct writer w;
    struct writer_sink sink = {fixture_sink, out};
    if (writer_begin(&w, sink) < 0)
        return -1;
    writer_info(&w, "events", "alloc,gc,live");
    writer_info(&w, "alloc", "sampled (test)");
    static const struct {
        uint32_t id;
        enum fmt_ev ev;
    } defs[] = {{EV_ALLOC, FMT_EV_ALLOC},
                {EV_COLLECTED, FMT_EV_COLLECTED},
                {EV_SCAN, FMT_EV_LIVE_SCAN},
                {EV_GC, FMT_EV_GC},
                {EV_PAUSE, FMT_EV_GC_PAUSE}};
    for (size_t i = 0; i < sizeof defs / sizeof defs[0]; i++) {
        struct writer_event_def d;
        schema_event_def(&d, defs[i].ev);
        d.id = defs[i].id;
        writer_event_def(&w, &d);
    }
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
        uint64_t v[FMT_ALLOC_VALUE_COUNT] = {[FMT_ALLOC_SPACE] = 1 << 20, [FMT_ALLOC_OBJECTS] = 4};
        uint64_t f[FMT_ALLOC_FIELD_COUNT] = {[FMT_ALLOC_TYPE] = bytes, [FMT_ALLOC_SIZE] = 1000,
                                             [FMT_ALLOC_OBJECT] = i <= 8 ? i : 0};
        writer_record(&w, EV_ALLOC, 1, i * 15 * MS, i <= 6 ? s_drop : s_keep, v,
                      FMT_ALLOC_VALUE_COUNT, f, FMT_ALLOC_FIELD_COUNT);
        if (i == 6) {
            /* collection 1 at 90-100 ms: 1-3 found dead at the look */
            uint64_t gf[FMT_GC_FIELD_COUNT] = {1, 0, 0, 0, 1, 90 * MS, 1, 2, 3, 4, 5, 6, 7};
            gc_record(&w, 100 * MS, 10 * MS, gf);
            pause_record(&w, 100 * MS, 11 * MS, 89 * MS, 1, 1);
            for (uint64_t k = 1; k <= 3; k++)
                collected_record(&w, 100 * MS, k, 100 * MS);
            scan_record(&w, 100 * MS, 5, 100 * MS, 90 * MS, 1);
        }
    }
    /* collection 2 (gen2, background) at 180-200 ms with two pauses: 4-6 die */
    uint64_t gf[FMT_GC_FIELD_COUNT] = {2, 2, 0, 1, 0, 180 * MS, 0, 0, 8, 0, 0, 9, 0};
    gc_record(&w, 200 * MS, 20 * MS, gf);
    pause_record(&w, 200 * MS, 1 * MS, 181 * MS, 6, 2);
    pause_record(&w, 200 * MS, 2 * MS, 195 * MS, 6, 2);
    for (uint64_t k = 4; k <= 6; k++)
        collected_record(&w, 200 * MS, k, 200 * MS);
    scan_record(&w, 200 * MS, 2, 200 * MS, 150 * MS, 2);
    scan_record(&w, 300 * MS, 2, 200 * MS, 300 * MS, 2); /* the last look, at the end */
    writer_stat(&w, "live_untracked", 2);
    const char *keys[] = {"live_untracked"};
    uint64_t values[] = {2};
    int rc = writer_finish(&w, keys, values, 1);
    writer_free(&w);
    return rc < 0 || w.error ? -1 : 0;
}

int fixture_memory_profiles(struct profiles *ps, struct prof_filter *f)
{
    return fixture_profiles_of(fixture_memory_recording, ps, f);
}

char *fixture_render(report_writer w, const struct profile *p, const struct report_options *o)
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

const struct profile *fixture_view(const struct profiles *ps, const char *event)
{
    for (size_t i = 0; i < ps->count; i++)
        if (!strcmp(prof_event_name(&ps->views[i]), event))
            return &ps->views[i];
    return NULL;
}

/* ---- managed code for the handler's table ------------------------------------- */

struct mcode_entry fixture_mcode_entry(const uint8_t *code, size_t len)
{
    struct mcode_entry e;
    memset(&e, 0, sizeof e);
    e.start = (uintptr_t)code;
    e.fn_start = (uintptr_t)code;
    e.len = (uint32_t)len;
    e.known = mshape_from_code(code, len, &e.shape) == 0;
    e.permanent = 1;
    return e;
}

/* ---- quiet failures ------------------------------------------------------------ */

int fixture_stderr_off(void)
{
    fflush(stderr);
    int saved = dup(2), null = open("/dev/null", O_WRONLY);
    if (saved >= 0 && null >= 0)
        dup2(null, 2);
    if (null >= 0)
        close(null);
    return saved;
}

void fixture_stderr_on(int saved)
{
    fflush(stderr);
    if (saved >= 0) {
        dup2(saved, 2);
        close(saved);
    }
}

/* ---- a recording file for the agent's parts ----------------------------------- */

int fixture_recorder(struct recorder *rec, char *path)
{
    int fd = mkstemp(path);
    if (fd < 0)
        return -1;
    close(fd);
    struct config cfg;
    config_defaults(&cfg);
    char err[256];
    return recorder_open(rec, &cfg, path, err, sizeof err);
}

uint8_t *fixture_read_file(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *p = malloc(n > 0 ? (size_t)n : 1);
    if (p && fread(p, 1, (size_t)n, f) != (size_t)n) {
        free(p);
        p = NULL;
    }
    fclose(f);
    *size = (size_t)n;
    return p;
}
