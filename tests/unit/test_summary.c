/*
 * Tests of summary (cli/summary.h): the line `record` prints for each
 * recording it wrote, read back from the file; its nouns agree with their
 * counts ("1 failed walk", not "1 failed walks"); a recording whose program
 * lost multicore JIT to the profiler gets a warning line, others none.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/summary.h"
#include "common/buf.h"
#include "fixture.h"
#include "format/format.h"
#include "format/writer.h"
#include "test.h"

/* A complete recording of `samples` cpu samples and `failed` failed walks
 * at path, its multicore_jit_off counter `mcjit`; 0 when written. */
static int write_recording(const char *path, int samples, uint64_t failed, uint64_t mcjit)
{
    struct buf out;
    buf_init(&out);
    struct writer w;
    struct writer_sink sink = {fixture_sink, &out};
    if (writer_begin(&w, sink) < 0)
        return -1;
    writer_info(&w, "event", "cpu");
    writer_info(&w, "pid", "4242");
    writer_event(&w, FMT_EVENT_CPU, "cpu", "ns", 10000000);
    uint32_t name = writer_string(&w, "Main", 4);
    uint32_t frame = writer_frame(&w, FMT_FRAME_MANAGED, 0, 0, name, 0);
    uint32_t stack = writer_stack(&w, &frame, 1);
    writer_thread(&w, 1, 100, 0);
    for (int i = 0; i < samples; i++)
        writer_sample(&w, FMT_EVENT_CPU, 1, 1000 + (uint64_t)i * 10000000, stack, 1);
    const char *keys[] = {"samples", "failed_walks", "multicore_jit_off"};
    uint64_t values[] = {(uint64_t)samples, failed, mcjit};
    int rc = writer_finish(&w, keys, values, 3);
    writer_free(&w);
    FILE *f = rc < 0 || w.error ? NULL : fopen(path, "wb");
    rc = f && fwrite(out.data, 1, out.len, f) == out.len ? 0 : -1;
    if (f && fclose(f) != 0)
        rc = -1;
    buf_free(&out);
    return rc;
}

/* What summary_print said on standard error about the recording at path:
 * its first line in line, all of it in all (when not NULL). */
static void summary_of(const char *path, char *line, size_t size, char *all, size_t all_size)
{
    char where[] = "/tmp/corscope-unit-summary-err.XXXXXX";
    int fd = mkstemp(where);
    line[0] = '\0';
    if (fd < 0)
        return;
    fflush(stderr);
    int saved = dup(2);
    dup2(fd, 2);
    summary_print(path, 1.5, 0, 0);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    FILE *f = fdopen(fd, "r");
    if (f) {
        rewind(f);
        if (!fgets(line, (int)size, f))
            line[0] = '\0';
        if (all) {
            rewind(f);
            size_t n = fread(all, 1, all_size - 1, f);
            all[n] = '\0';
        }
        fclose(f);
    }
    unlink(where);
}

static void test_summary_nouns(void)
{
    char path[] = "/tmp/corscope-unit-summary.XXXXXX";
    int fd = mkstemp(path);
    REQUIRE(fd >= 0);
    close(fd);
    char line[512];

    REQUIRE(write_recording(path, 1, 1, 0) == 0);
    summary_of(path, line, sizeof line, NULL, 0);
    CHECK(strstr(line, "1.50 s, cpu 1 sample, 0 dropped, 1 failed walk -> ") != NULL);

    REQUIRE(write_recording(path, 2, 3, 0) == 0);
    summary_of(path, line, sizeof line, NULL, 0);
    CHECK(strstr(line, "cpu 2 samples, 0 dropped, 3 failed walks -> ") != NULL);

    REQUIRE(write_recording(path, 0, 0, 0) == 0);
    summary_of(path, line, sizeof line, NULL, 0);
    CHECK(strstr(line, "cpu 0 samples, 0 dropped -> ") != NULL);
    unlink(path);
}

static void test_summary_multicore_jit(void)
{
    char path[] = "/tmp/corscope-unit-summary.XXXXXX";
    int fd = mkstemp(path);
    REQUIRE(fd >= 0);
    close(fd);
    char line[512], all[2048];

    REQUIRE(write_recording(path, 2, 0, 1) == 0);
    summary_of(path, line, sizeof line, all, sizeof all);
    CHECK(strstr(line, "cpu 2 samples, 0 dropped -> ") != NULL);
    CHECK(strstr(all, "\ncorscope: warning: the program asked for multicore JIT "
                      "(ProfileOptimization.SetProfileRoot)") != NULL);

    REQUIRE(write_recording(path, 2, 0, 0) == 0);
    summary_of(path, line, sizeof line, all, sizeof all);
    CHECK(strstr(all, "multicore JIT") == NULL);
    unlink(path);
}

void suite_summary(void)
{
    RUN(test_summary_nouns);
    RUN(test_summary_multicore_jit);
}
