/*
 * Tests of recorder (agent/recorder.h): the recording's string table stays
 * bounded however many names a long run makes; new names after a write
 * error leave nothing freed twice.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include "agent/codemap.h"
#include "cli/frame_name.h"
#include "fixture.h"
#include "test.h"

/* Item 7: however many distinct names a long run makes, the string table
 * stays within its budget: it is forgotten and strings are written again
 * under new ids, and every frame still reads back with its own name. */
static void test_string_table_is_bounded(void)
{
    char path[] = "/tmp/corscope-unit-strings.XXXXXX";
    struct recorder rec;
    REQUIRE(fixture_recorder(&rec, path) == 0);
    char err[256];
    rec.strings_budget = 4096;
    enum { N = 2000 };
    uint32_t frames[N];
    char name[64];
    for (int i = 0; i < N; i++) {
        snprintf(name, sizeof name, "lambda_method%d", i);
        /* the module and type come back again and again, the method never */
        frames[i] = recorder_frame(&rec, FMT_FRAME_MANAGED, "[dynamic]", "dynamicClass", name, 0);
        CHECK(frames[i] != 0);
        CHECK(rec.strings_bytes <= rec.strings_budget);
    }
    uint64_t resets = rec.counters[FMT_COUNTER_STRING_RESETS];
    CHECK(resets > 10);
    recorder_close(&rec);
    struct recording r;
    REQUIRE(rec_load_file(path, &r, err, sizeof err) == 0);
    CHECK_EQ(r.status, REC_COMPLETE);
    CHECK_EQ(rec_stat(&r, "string_table_resets"), resets);
    for (int i = 0; i < N; i += 37) {
        snprintf(name, sizeof name, "lambda_method%d", i);
        REQUIRE(frames[i] < r.frame_count);
        const struct rec_frame *f = &r.frames[frames[i]];
        CHECK(rec_str_eq(r.strings[f->name], name));
        CHECK(rec_str_eq(r.strings[f->type], "dynamicClass"));
        CHECK(rec_str_eq(r.strings[f->module], "[dynamic]"));
    }
    rec_free(&r);
    unlink(path);
}

/* After a write error (of samples, say) the writer takes no more strings,
 * but the table of their ids may still grow (a thread's name at the end,
 * t_faults): the grown block must be kept, or recorder_close frees the old
 * one a second time (seen as "free(): double free detected" at the
 * program's exit, about one run in twenty of t_faults' write-error case
 * under load). */
static void test_strings_after_write_error(void)
{
    char path[] = "/tmp/corscope-unit-strings-error.XXXXXX";
    struct recorder rec;
    REQUIRE(fixture_recorder(&rec, path) == 0);
    char name[32];
    /* the table of strings as full as the table of their ids: the next
     * new string (id strings.count) grows the latter */
    for (size_t n = 0; rec.strings.count < rec.string_id_cap; n++) {
        snprintf(name, sizeof name, "before-%zu", n);
        REQUIRE(recorder_string(&rec, name, strlen(name)) != 0);
    }
    size_t cap = rec.string_id_cap;
    rec.w.error = ENOSPC; /* a write of something else failed */
    CHECK(recorder_string(&rec, "after", 5) == 0);
    CHECK(rec.string_id_cap > cap);
    recorder_close(&rec); /* frees each block once (ASan and glibc check) */
    unlink(path);
}

void suite_recorder(void)
{
    RUN(test_string_table_is_bounded);
    RUN(test_strings_after_write_error);
}
