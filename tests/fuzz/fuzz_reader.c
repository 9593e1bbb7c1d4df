/*
 * fuzz_reader: the recording reader and every report over arbitrary bytes.
 *
 * One entry point, LLVMFuzzerTestOneInput, used two ways:
 *   - by libFuzzer (`make fuzz`: clang -fsanitize=fuzzer,address,undefined),
 *     which mutates the corpus in tests/fuzz/corpus looking for crashes,
 *     hangs and out-of-bounds reads;
 *   - by replay.c, built with gcc plain and under ASan+UBSan, which runs
 *     every file of the corpus through it in the normal test run.
 * A damaged recording must give an error or a partial recording, and every
 * report of what was read must be writable: no crash, no sanitizer report.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cli/profile.h"
#include "cli/report.h"
#include "format/recording.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct recording r;
    char err[256];
    if (rec_load_memory(data, size, &r, err, sizeof err) < 0)
        return 0;
    struct prof_filter f = {0};
    struct profiles ps;
    if (prof_build(&ps, &r, &f, err, sizeof err) < 0)
        return 0;
    const struct profile *p = prof_current(&ps);
    FILE *out = fopen("/dev/null", "w");
    if (out) {
        size_t n;
        const struct report_format *formats = report_formats(&n);
        struct report_options o = {.min_percent = 0.5, .limit = 50};
        for (size_t i = 0; i < n; i++)
            formats[i].write(p, &o, out);
        /* and the options that read more of it: by count, by path */
        o.by_count = 1;
        o.paths = 1;
        for (size_t i = 0; i < n; i++)
            formats[i].write(p, &o, out);
        fclose(out);
    }
    prof_free(&ps);
    return 0;
}
