/*
 * fixture: see fixture.h.  Stacks (leaf first):
 *   s1 = Demo.Work.Hot, Demo.Program.Main          x6 samples, weight 1 each
 *   s2 = Demo.Work.Cold, Demo.Program.Main         x3 samples, weight 1 each, on thread 2
 *   s3 = libc.so.6!memcpy, [native]... see below   x1 sample,  weight 3
 */
#include "fixture.h"

#include <string.h>

#include "format/writer.h"

static int mem_sink_write(void *ctx, const void *p, size_t n)
{
    buf_put(ctx, p, n);
    return ((struct buf *)ctx)->failed ? -1 : 0;
}

int fixture_recording(struct buf *out, int close)
{
    struct fmtw w;
    struct fmtw_sink sink = {mem_sink_write, out};
    if (fmtw_begin(&w, sink) < 0)
        return -1;
    fmtw_info(&w, "event", "cpu");
    fmtw_info(&w, "interval_ns", "10000000");
    fmtw_info(&w, "pid", "4242");
    fmtw_event(&w, FMT_EVENT_CPU, "cpu", "ns", 10000000);

    uint32_t mod = fmtw_string(&w, "Demo.dll", 8);
    uint32_t program = fmtw_string(&w, "Demo.Program", 12);
    uint32_t work = fmtw_string(&w, "Demo.Work", 9);
    uint32_t main_ = fmtw_string(&w, "Main", 4);
    uint32_t hot = fmtw_string(&w, "Hot", 3);
    uint32_t cold = fmtw_string(&w, "Cold", 4);
    uint32_t libc = fmtw_string(&w, "libc.so.6", 9);
    uint32_t memcpy_ = fmtw_string(&w, "memcpy", 6);
    uint32_t t1name = fmtw_string(&w, "main", 4);
    uint32_t t2name = fmtw_string(&w, "worker", 6);

    uint32_t f_main = fmtw_frame(&w, FMT_FRAME_MANAGED, mod, program, main_, 0);
    uint32_t f_hot = fmtw_frame(&w, FMT_FRAME_MANAGED, mod, work, hot, 0);
    uint32_t f_cold = fmtw_frame(&w, FMT_FRAME_MANAGED, mod, work, cold, 1);
    uint32_t f_memcpy = fmtw_frame(&w, FMT_FRAME_NATIVE, libc, 0, memcpy_, 0);

    uint32_t s1f[] = {f_hot, f_main}, s2f[] = {f_cold, f_main}, s3f[] = {f_memcpy, f_hot, f_main};
    uint32_t s1 = fmtw_stack(&w, s1f, 2);
    uint32_t s2 = fmtw_stack(&w, s2f, 2);
    fmtw_thread(&w, 1, 100, t1name);
    fmtw_thread(&w, 2, 101, t2name);
    uint64_t t = 1000;
    for (int i = 0; i < 6; i++)
        fmtw_sample(&w, FMT_EVENT_CPU, 1, t += 10000000, s1, 1);
    fmtw_stat(&w, "samples", 6);
    fmtw_flush(&w); /* a second round of chunks, as a long recording has */
    uint32_t s3 = fmtw_stack(&w, s3f, 3);
    for (int i = 0; i < 3; i++)
        fmtw_sample(&w, FMT_EVENT_CPU, 2, t += 10000000, s2, 1);
    fmtw_sample(&w, FMT_EVENT_CPU, 1, t += 10000000, s3, 3);
    fmtw_stat(&w, "samples", 10);
    fmtw_stat(&w, "dropped_samples", 2);
    int rc;
    if (close) {
        const char *keys[] = {"samples", "dropped_samples"};
        uint64_t values[] = {10, 2};
        rc = fmtw_finish(&w, keys, values, 2);
    } else {
        rc = fmtw_flush(&w);
    }
    fmtw_free(&w);
    return rc < 0 || w.error ? -1 : 0;
}
