/*
 * Tests of cli/container.c without a second namespace: /proc/PID/root
 * paths and any root directory resolved inside that root, and a process's
 * own namespaces.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/container.h"
#include "test.h"

static void test_paths_stay_in_their_root(void)
{
    /* a directory standing for a container's root, /proc/self/root being
     * ours: a symbolic link inside it that points to an absolute path is
     * resolved in that root, not in corscope's */
    char dir[] = "/tmp/corscope-unit-root-XXXXXX";
    REQUIRE(mkdtemp(dir));
    char sub[PATH_MAX], link[PATH_MAX], target[PATH_MAX];
    snprintf(sub, sizeof sub, "%s/etc", dir);
    snprintf(link, sizeof link, "%s/escape", dir);
    snprintf(target, sizeof target, "%s/etc/marker", dir);
    REQUIRE(mkdir(sub, 0700) == 0);
    int m = open(target, O_WRONLY | O_CREAT | O_EXCL, 0600);
    REQUIRE(m >= 0);
    close(m);
    REQUIRE(symlink("/etc", link) == 0);

    /* resolved in that root: the link leads to its own etc/marker; the
     * same path from ours leads to our /etc, which has no marker */
    int fd = container_open_in(dir, "escape/marker", O_RDONLY);
    CHECK(fd >= 0);
    if (fd >= 0)
        close(fd);
    char ours[PATH_MAX + 16];
    snprintf(ours, sizeof ours, "%s/marker", link);
    CHECK(open(ours, O_RDONLY) < 0 && errno == ENOENT);
    /* .. cannot climb out of it either */
    fd = container_open_in(dir, "../../../etc/marker", O_RDONLY);
    CHECK(fd >= 0);
    if (fd >= 0)
        close(fd);
    /* /proc/PID/root/... goes through the same resolution */
    char through[PATH_MAX + 64];
    snprintf(through, sizeof through, "/proc/self/root%s", target);
    fd = container_open(through, O_RDONLY);
    CHECK(fd >= 0);
    if (fd >= 0)
        close(fd);
    CHECK(container_open("/proc/999999999/root/etc", O_PATH) < 0);
    /* ordinary paths are opened as they are */
    fd = container_open(target, O_RDONLY);
    CHECK(fd >= 0);
    if (fd >= 0)
        close(fd);

    unlink(link);
    unlink(target);
    rmdir(sub);
    rmdir(dir);
}

static void test_own_namespaces(void)
{
    char root[64] = "x";
    container_root(getpid(), root, sizeof root);
    CHECK_STR(root, "");
    CHECK_EQ(container_inner_pid(getpid()), getpid());
    CHECK(!container_other(getpid(), "net"));
    CHECK(!container_other(getpid(), "mnt"));
    /* a pid that is gone answers like our own */
    CHECK_EQ(container_inner_pid(999999999), 999999999);
}

void suite_container(void)
{
    RUN(test_paths_stay_in_their_root);
    RUN(test_own_namespaces);
}
