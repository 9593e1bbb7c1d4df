/*
 * fixture: see fixture.h.  Stacks (leaf first):
 *   s1 = Demo.Work.Hot, Demo.Program.Main          x6 samples, weight 1 each
 *   s2 = Demo.Work.Cold, Demo.Program.Main         x3 samples, weight 1 each, on thread 2
 *   s3 = libc.so.6!memcpy, [native]... see below   x1 sample,  weight 3
 */
#include "fixture.h"

#include <string.h>

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
