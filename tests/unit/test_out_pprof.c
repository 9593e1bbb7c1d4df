/*
 * Tests of out_pprof: the sample types of several events in one profile.
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

/* pprof: two sample types per event, named as go tool pprof knows them. */
static void test_pprof_types(void)
{
    struct profiles ps;
    struct prof_filter f = {0};
    f.event = "alloc";
    REQUIRE(fixture_memory_profiles(&ps, &f) == 0);
    struct report_options o = {0, 0, NULL, NULL, 0, 0};
    char *gz = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&gz, &len);
    REQUIRE(out);
    CHECK(report_pprof(prof_current(&ps), &o, out) == 0);
    fclose(out);
    unsigned char raw[65536];
    z_stream z;
    memset(&z, 0, sizeof z);
    REQUIRE(inflateInit2(&z, 15 + 16) == Z_OK);
    z.next_in = (unsigned char *)gz;
    z.avail_in = (uInt)len;
    z.next_out = raw;
    z.avail_out = sizeof raw;
    CHECK(inflate(&z, Z_FINISH) == Z_STREAM_END);
    size_t n = sizeof raw - z.avail_out;
    inflateEnd(&z);
    free(gz);
    const char *want[] = {"alloc_objects", "alloc_space", "inuse_objects", "inuse_space", "bytes",
                          "count"};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        CHECK(memmem(raw, n, want[i], strlen(want[i])) != NULL);
    prof_free(&ps);
}

void suite_out_pprof(void)
{
    RUN(test_pprof_types);
}
