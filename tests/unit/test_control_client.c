/*
 * Tests of the control line end to end: the agent's end (agent/control_client.h)
 * connected to the command's (cli/session.h), counts sent, stop asked.
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

/* The control line end to end: the agent's side connects, says hello and
 * how far it got, hears "stop", and corscope hears it hang up. */
static void test_control_line(void)
{
    struct session s;
    char err[256];
    REQUIRE(session_open(&s, getpid(), err, sizeof err) == 0);
    REQUIRE(control_client_connect(s.address) == 0);
    struct control_counts c = {7, 1, 0, 4096};
    control_client_send_counts(CONTROL_STATUS, &c);
    REQUIRE(session_accept_agent(&s, 2000) == 0);
    CHECK(s.peers[0].hello);
    CHECK_EQ(s.peers[0].pid, getpid());
    CHECK_EQ(s.peers[0].counts.samples, 7);
    CHECK(!control_client_stop_wanted());
    CHECK(send(s.peers[0].fd, "stop", 4, 0) == 4);
    usleep(10000);
    CHECK(control_client_stop_wanted());
    control_client_close();
    CHECK_EQ(session_print_pending(&s, 500), 0);
    CHECK_EQ(s.peers[0].fd, -1); /* it saw the end */
    session_close(&s);

    /* corscope gone: the agent stops */
    REQUIRE(session_open(&s, getpid(), err, sizeof err) == 0);
    REQUIRE(control_client_connect(s.address) == 0);
    session_close(&s);
    CHECK(control_client_stop_wanted());
    control_client_close();

    /* another process may not take the line of an attach */
    REQUIRE(session_open(&s, getpid() + 1, err, sizeof err) == 0);
    REQUIRE(control_client_connect(s.address) == 0);
    CHECK(session_accept_agent(&s, 200) == -1);
    CHECK_EQ(s.peer_count, 0);
    control_client_close();
    session_close(&s);
}

void suite_control_client(void)
{
    RUN(test_control_line);
}
