/*
 * Tests of out_top: the flat table of the fixture recording.
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

static void test_top(void)
{
    struct profiles ps;
    const struct profile *p = NULL;
    struct prof_filter f = {0};
    REQUIRE(fixture_profiles(&ps, &f) == 0);
    p = prof_current(&ps);
    struct report_options o = {0, 0, NULL, NULL, 0, 0};
    char *text = fixture_render(report_top, p, &o);
    REQUIRE(text);
    /* Hot: self 6 of 12, total 9 of 12; Main total 100% */
    CHECK(strstr(text, "  50.00%   75.00%") != NULL);
    CHECK(strstr(text, "   0.00%  100.00%") != NULL);
    CHECK(strstr(text, "# lost: 2 samples dropped (a buffer was full)") != NULL);
    char *hot = strstr(text, "Demo.Work.Hot"), *cold = strstr(text, "Demo.Work.Cold");
    CHECK(hot && cold && hot < cold); /* sorted by self */
    free(text);
    o.limit = 1;
    text = fixture_render(report_top, p, &o);
    CHECK(text && strstr(text, "Demo.Work.Hot") && !strstr(text, "Demo.Work.Cold"));
    free(text);
    prof_free(&ps);
}

void suite_out_top(void)
{
    RUN(test_top);
}
