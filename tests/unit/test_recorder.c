/*
 * Tests of recorder (agent/recorder.h): the recording's string table stays
 * bounded however many names a long run makes.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>
#include <zlib.h>

#include "agent/clrdesc.h"
#include "agent/codemap.h"
#include "agent/control_client.h"
#include "agent/evq.h"
#include "agent/names.h"
#include "agent/proctree.h"
#include "agent/recorder.h"
#include "agent/signal/cfi.h"
#include "agent/signal/handler.h"
#include "agent/signal/hijack.h"
#include "agent/signal/mcode.h"
#include "agent/signal/mshape.h"
#include "agent/signal/nativeunwind.h"
#include "agent/signal/ring.h"
#include "agent/signal/stack_bounds.h"
#include "agent/signal/thread_rings.h"
#include "agent/signal/walk.h"
#include "agent/sources/exflow.h"
#include "agent/thread_registry.h"
#include "cli/frame_name.h"
#include "cli/gc_table.h"
#include "cli/ipc.h"
#include "cli/json.h"
#include "cli/profile.h"
#include "cli/report.h"
#include "cli/session.h"
#include "cli/status.h"
#include "common/buf.h"
#include "common/clock.h"
#include "common/config.h"
#include "common/control.h"
#include "common/crc32.h"
#include "common/mem.h"
#include "common/units.h"
#include "common/utf.h"
#include "format/recording.h"
#include "format/writer.h"
#include "test.h"

/* Item 7: however many distinct names a long run makes, the string table
 * stays within its budget: it is forgotten and strings are written again
 * under new ids, and every frame still reads back with its own name. */
static void test_string_table_is_bounded(void)
{
    char path[] = "/tmp/corscope-unit-strings.XXXXXX";
    int fd = mkstemp(path);
    REQUIRE(fd >= 0);
    close(fd);
    struct config cfg;
    config_defaults(&cfg);
    struct recorder rec;
    char err[256];
    REQUIRE(recorder_open(&rec, &cfg, path, err, sizeof err) == 0);
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

void suite_recorder(void)
{
    RUN(test_string_table_is_bounded);
}
