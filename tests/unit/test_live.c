/*
 * Tests of the live heap view (cli/live.h), over a recording with memory
 * events written the way the agent writes one (fixture.c): the heap as of a
 * time and at the end.
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
#include "fixture.h"
#include "test.h"

/* The live heap: at the end, 7 and 8 (Keep; 9 and 10 were not followed);
 * as of the first collection, 4-6 were still alive and 7 not judged yet
 * (allocated after the last handed-over allocation at that look). */
static void test_live_view(void)
{
    struct profiles ps;
    struct prof_filter f = {0};
    REQUIRE(fixture_memory_profiles(&ps, &f) == 0);
    const struct profile *live = fixture_view(&ps, "live");
    REQUIRE(live);
    CHECK_EQ(live->selected_samples, 2);
    CHECK_EQ(live->total_weight, 2u << 20);
    CHECK_EQ(live->total_count, 8);
    CHECK(strstr(ps.shared.live_note, "2 sampled allocations still alive at the collection that "
                                      "ended at 0.200 s") != NULL);
    const struct profile *alloc = fixture_view(&ps, "alloc");
    REQUIRE(alloc);
    CHECK_EQ(alloc->total_weight, 10u << 20);
    /* top shows objects beside bytes */
    struct report_options o = {0, 0, NULL, NULL, 0, 0};
    char *text = fixture_render(report_top, live, &o);
    CHECK(text && strstr(text, "self objects") && strstr(text, "App.Work.Keep"));
    CHECK(text && strstr(text, "# live: 2 sampled allocations") != NULL);
    free(text);
    prof_free(&ps);

    f.has_at = 1;
    f.at_ns = 150 * MS; /* the look after the first collection */
    REQUIRE(fixture_memory_profiles(&ps, &f) == 0);
    live = fixture_view(&ps, "live");
    REQUIRE(live);
    CHECK_EQ(live->selected_samples, 3); /* 4, 5, 6: allocated before 90 ms, alive at 100 */
    CHECK(strstr(ps.shared.live_note, "at the collection that ended at 0.100 s") != NULL);
    prof_free(&ps);

    f.at_ns = 50 * MS; /* before any look */
    REQUIRE(fixture_memory_profiles(&ps, &f) == 0);
    live = fixture_view(&ps, "live");
    CHECK(!live || live->selected_samples == 0);
    CHECK(strstr(ps.shared.live_note, "no look at the heap before that time") != NULL);
    prof_free(&ps);
}

void suite_live(void)
{
    RUN(test_live_view);
}
