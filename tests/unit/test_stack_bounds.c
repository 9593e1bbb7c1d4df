/*
 * Tests of stack_bounds (agent/signal/stack_bounds.h): a thread is looked up
 * only in a snapshot of /proc/self/maps read after it was added.
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

/* The stale-snapshot bug: a thread added after a snapshot of the mappings
 * was read must not take its stack bounds from it (an older snapshot may
 * hold a mapping since unmapped where the new stack now is, with other
 * bounds); it needs a snapshot read after it. */
static void test_stack_bounds_need_a_recent_snapshot(void)
{
    REQUIRE(thread_rings_init() == 0);
    REQUIRE(stack_bounds_refresh() == 0);
    uint64_t g = stack_bounds_generation();
    int local = 0;
    uintptr_t at = (uintptr_t)&local, lo = 0, hi = 0;
    CHECK(stack_bounds_find(at, &lo, &hi, g) == 1 && lo <= at && at < hi);
    lo = hi = 0;
    CHECK(stack_bounds_find(at, &lo, &hi, g + 1) == 0); /* a thread added since */
    CHECK(lo == 0 && hi == 0);
    CHECK(stack_bounds_wanted());                       /* and a refresh is asked for */
    REQUIRE(stack_bounds_refresh() == 0);
    CHECK_EQ(stack_bounds_generation(), g + 1);
    CHECK(!stack_bounds_wanted());
    CHECK(stack_bounds_find(at, &lo, &hi, g + 1) == 1 && lo <= at && at < hi);
    stack_bounds_shutdown();
    thread_rings_shutdown();
}

void suite_stack_bounds(void)
{
    RUN(test_stack_bounds_need_a_recent_snapshot);
}
