/*
 * Tests of vma_query (agent/signal/vma_query.h): on a kernel that answers
 * PROCMAP_QUERY (Linux 6.11; this project's test machine runs 6.18), the
 * mapping holding an address is the one /proc/self/maps lists for it, with
 * its permissions and name; an unmapped address is in none; errno is kept.
 * On an older kernel (or qemu-user) the start says no, and every query
 * says "not asked"; a start refused for test does the same.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "agent/signal/thread_rings.h"
#include "agent/signal/vma_query.h"
#include "common/procmaps.h"
#include "test.h"

/* Linux 6.11 or later (the ioctl's first release). */
static int kernel_answers(void)
{
    struct utsname u;
    int major = 0, minor = 0;
    if (uname(&u) != 0 || sscanf(u.release, "%d.%d", &major, &minor) != 2)
        return 0;
    return major > 6 || (major == 6 && minor >= 11);
}

struct wanted {
    uintptr_t addr;
    struct procmaps_line found;
    char path[320];
};

static int find_line(void *ctx, const struct procmaps_line *line)
{
    struct wanted *w = ctx;
    if (w->addr < line->start || w->addr >= line->end)
        return 0;
    w->found = *line;
    size_t n = line->path_len < sizeof w->path - 1 ? line->path_len : sizeof w->path - 1;
    memcpy(w->path, line->path, n);
    w->path[n] = 0;
    return 1;
}

static int start(void)
{
    return vma_query_start(open("/proc/self/maps", O_RDONLY | O_CLOEXEC));
}

static void test_answers_as_the_file(void)
{
    REQUIRE(thread_rings_init() == 0);
    int started = start();
    /* on this kernel or later the ioctl must work; before it, it must not
     * claim to */
    CHECK_EQ(started, kernel_answers());
    if (!started) {
        struct vma_query_mapping m;
        CHECK_EQ(vma_query_find((uintptr_t)&m, &m, NULL, 0), -1);
        thread_rings_shutdown();
        return;
    }
    long page = sysconf(_SC_PAGESIZE);
    uint8_t *code = mmap(NULL, (size_t)page * 3, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    REQUIRE(code != MAP_FAILED);
    REQUIRE(munmap(code + page, (size_t)page) == 0); /* a hole after the first page */
    int local = 0;
    uintptr_t probes[] = {(uintptr_t)&local, (uintptr_t)code + 5, (uintptr_t)&memcpy,
                          (uintptr_t)&kernel_answers};
    for (size_t i = 0; i < sizeof probes / sizeof probes[0]; i++) {
        struct wanted w = {.addr = probes[i]};
        REQUIRE(procmaps_read_self(find_line, &w) == 1);
        struct vma_query_mapping m;
        char name[320];
        errno = EDOM;
        CHECK_EQ(vma_query_find(probes[i], &m, name, sizeof name), 1);
        CHECK_EQ(errno, EDOM);
        CHECK_EQ(m.start, w.found.start);
        CHECK_EQ(m.end, w.found.end);
        CHECK_EQ(!!(m.perms & VMA_QUERY_READ), w.found.perms[0] == 'r');
        CHECK_EQ(!!(m.perms & VMA_QUERY_WRITE), w.found.perms[1] == 'w');
        CHECK_EQ(!!(m.perms & VMA_QUERY_EXEC), w.found.perms[2] == 'x');
        CHECK(strcmp(name, w.path) == 0);
    }
    struct vma_query_mapping m;
    char name[8];
    CHECK_EQ(vma_query_find((uintptr_t)code + page + 7, &m, NULL, 0), 0); /* the hole */
    /* a path longer than the buffer: a file all the same */
    CHECK_EQ(vma_query_find((uintptr_t)&memcpy, &m, name, sizeof name), 1);
    CHECK_STR(name, "/");
    CHECK_EQ(vma_query_find((uintptr_t)code, &m, name, sizeof name), 1);
    CHECK_STR(name, ""); /* anonymous */
    vma_query_test_refuse(1);
    CHECK(!vma_query_available());
    CHECK_EQ(vma_query_find((uintptr_t)code, &m, NULL, 0), -1);
    vma_query_test_refuse(0);
    CHECK(vma_query_available());
    munmap(code, (size_t)page);
    munmap(code + 2 * page, (size_t)page);
    vma_query_stop();
    CHECK(!vma_query_available());
    CHECK_EQ(vma_query_find((uintptr_t)&local, &m, NULL, 0), -1);
    thread_rings_shutdown();
}

/* A descriptor that is not /proc/self/maps answers no query: refused and
 * closed.  An agent that declines closes its descriptor at once. */
static void test_refuses_another_file(void)
{
    int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    CHECK_EQ(vma_query_start(fd), 0);
    CHECK(fcntl(fd, F_GETFD) < 0); /* closed */
    CHECK_EQ(vma_query_start(-1), 0);
    CHECK(!vma_query_available());
    fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
    if (vma_query_start(fd)) {
        vma_query_stop_unused();
        CHECK(!vma_query_available());
        CHECK(fcntl(fd, F_GETFD) < 0);
    }
}

void suite_vma_query(void)
{
    RUN(test_answers_as_the_file);
    RUN(test_refuses_another_file);
}
