/*
 * Tests of where the agent's long-lived descriptors go (agent/fds.c) and
 * of the clocks that start low while the table grows (cpu_clock_settle):
 * the growing thread grows the table, says who it is and is joined; a
 * copy up high leaves the original open; a clock opened low moves high,
 * its signals keep their number, and the low number is closed only when
 * no tick of the handler can still be using it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agent/fds.h"
#include "agent/sources/cpu_clock.h"
#include "test.h"

/* The kernel's size of this process's descriptor table (FDSize), or -1. */
static long table_size(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    if (!f)
        return -1;
    char line[256];
    long size = -1;
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, "FDSize:", 7))
            size = strtol(line + 7, NULL, 10);
    fclose(f);
    return size;
}

static int is_open(int fd)
{
    return fcntl(fd, F_GETFD) >= 0;
}

/* In a child of its own (a fresh, small table: the suite's process may
 * have grown its own): each failed step sets a bit of the exit status. */
static int grow_in_child(void)
{
    struct rlimit lim;
    if (getrlimit(RLIMIT_NOFILE, &lim) < 0 || lim.rlim_max < 4096)
        return 0; /* a hard limit this low: the high numbers are elsewhere */
    lim.rlim_cur = 4096;
    if (setrlimit(RLIMIT_NOFILE, &lim) < 0)
        return 1;
    int failed = 0;
    if (table_size() > 1024)
        failed |= 2; /* the test would show nothing */
    if (!fds_high_ready())
        failed |= 4; /* no grower: ready at once */
    fds_grow_start();
    pid_t tid = fds_grower();
    if (tid <= 0 || tid == getpid())
        failed |= 8;
    fds_grow_join();
    if (!fds_high_ready() || fds_grower() != 0)
        failed |= 16;
    if (table_size() < 2048) /* room for 1024 and up: the kernel doubles it */
        failed |= 32;
    fds_grow_start(); /* grown once: no second thread */
    if (fds_grower() != 0)
        failed |= 64;
    return failed;
}

static void test_grower_grows_the_table(void)
{
    pid_t child = fork();
    REQUIRE(child >= 0);
    if (child == 0)
        _exit(grow_in_child());
    int status = 0;
    REQUIRE(waitpid(child, &status, 0) == child);
    CHECK(WIFEXITED(status));
    CHECK_EQ(WEXITSTATUS(status), 0);
}

static void test_copy_high_keeps_the_original(void)
{
    int fd = eventfd(0, EFD_CLOEXEC);
    REQUIRE(fd >= 0);
    CHECK(fds_is_low(fd));
    int copy = fds_copy_high(fd);
    CHECK(copy != fd);
    CHECK(!fds_is_low(copy));
    CHECK(is_open(fd));
    CHECK(fcntl(copy, F_GETFD) & FD_CLOEXEC);
    CHECK_EQ(fds_copy_high(copy), copy); /* high already */
    close(copy);
    close(fd);
}

/* A clock opened low (the table had not grown): settled while the
 * thread's handler is inside a tick, then after it. */
/* A thread whose clock was opened low, as start_perf leaves it when the
 * table has not grown (an eventfd stands for the perf_event), and the
 * clock state that counts it; NULL when it cannot be made. */
static struct sthread *low_clock(struct cpu_clock *c)
{
    struct sthread *t = calloc(1, sizeof *t);
    int low = eventfd(0, EFD_CLOEXEC);
    if (!t || low < 0) {
        free(t);
        return NULL;
    }
    atomic_store(&t->perf_fd, low);
    t->perf_sig_fd = low;
    t->perf_low = 1;
    t->perf_old_fd = -1;
    memset(c, 0, sizeof *c);
    c->perf_open = 1;
    c->unsettled = 1;
    return t;
}

static void test_settle_waits_for_the_tick(void)
{
    struct cpu_clock c;
    struct sthread *t = low_clock(&c);
    REQUIRE(t != NULL);
    int low = t->perf_sig_fd;

    atomic_store(&t->perf_ticking, 1); /* a tick read the low number */
    cpu_clock_settle(&c, t);
    int high = atomic_load(&t->perf_fd);
    CHECK(!fds_is_low(high));
    CHECK_EQ(t->perf_sig_fd, low); /* the signals still carry it */
    CHECK_EQ(t->perf_old_fd, low);
    CHECK(is_open(low));            /* the tick may still use it */
    CHECK_EQ(c.unsettled, 1);

    cpu_clock_settle(&c, t); /* still ticking: nothing changes */
    CHECK(is_open(low));
    CHECK_EQ(atomic_load(&t->perf_fd), high);

    atomic_store(&t->perf_ticking, 0);
    cpu_clock_settle(&c, t);
    CHECK_EQ(t->perf_old_fd, -1);
    CHECK_EQ(c.unsettled, 0);
    CHECK(!is_open(low) || low == high); /* closed (or taken by nothing else) */

    cpu_clock_release(&c, t);
    CHECK_EQ(atomic_load(&t->perf_fd), -1);
    CHECK(!is_open(high));
    CHECK_EQ(c.perf_open, 0);
    free(t);
}

/* A thread that ends before its clock was settled: nothing is left open,
 * and the count of clocks to settle comes down. */
static void test_release_before_settling(void)
{
    struct cpu_clock c;
    struct sthread *t = low_clock(&c);
    REQUIRE(t != NULL);
    int low = t->perf_sig_fd;
    cpu_clock_release(&c, t);
    CHECK(!is_open(low));
    CHECK_EQ(c.unsettled, 0);
    CHECK_EQ(c.perf_open, 0);
    CHECK(!t->perf_low);
    free(t);
}

void suite_fds(void)
{
    RUN(test_grower_grows_the_table);
    RUN(test_copy_high_keeps_the_original);
    RUN(test_settle_waits_for_the_tick);
    RUN(test_release_before_settling);
}
