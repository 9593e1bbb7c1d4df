/*
 * container: see container.h.
 */
#include "cli/container.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/crc32.h"

#ifndef SYS_openat2
#define SYS_openat2 437
#endif

int container_other(pid_t pid, const char *ns)
{
    char a[64], b[64], la[128], lb[128];
    snprintf(a, sizeof a, "/proc/%d/ns/%s", (int)pid, ns);
    snprintf(b, sizeof b, "/proc/self/ns/%s", ns);
    ssize_t na = readlink(a, la, sizeof la - 1), nb = readlink(b, lb, sizeof lb - 1);
    if (na <= 0 || nb <= 0)
        return 0;
    la[na] = lb[nb] = '\0';
    return strcmp(la, lb) != 0;
}

void container_root(pid_t pid, char *out, size_t size)
{
    char root[64];
    snprintf(root, sizeof root, "/proc/%d/root", (int)pid);
    struct stat theirs, ours;
    int same_root = stat(root, &theirs) == 0 && stat("/", &ours) == 0 &&
                    theirs.st_dev == ours.st_dev && theirs.st_ino == ours.st_ino;
    /* a private /tmp is a mount of its own under the same root */
    if (same_root && !container_other(pid, "mnt"))
        snprintf(out, size, "%s", "");
    else
        snprintf(out, size, "%s", root);
}

pid_t container_inner_pid(pid_t pid)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "re");
    if (!f)
        return pid;
    pid_t inner = pid;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "NSpid:", 6) != 0)
            continue;
        /* NSpid: host pid ... the innermost namespace's pid */
        for (char *p = line + 6, *end; *p && *p != '\n'; p = end) {
            long v = strtol(p, &end, 10);
            if (end == p)
                break;
            if (v > 0)
                inner = (pid_t)v;
        }
        break;
    }
    fclose(f);
    return inner;
}

/* "/proc/N/root" and what follows, or NULL when path is not of that form. */
static const char *under_root(const char *path, char *root, size_t size)
{
    if (strncmp(path, "/proc/", 6) != 0)
        return NULL;
    const char *p = path + 6;
    while (*p >= '0' && *p <= '9')
        p++;
    if (p == path + 6 || strncmp(p, "/root", 5) != 0 || (p[5] != '/' && p[5] != '\0'))
        return NULL;
    snprintf(root, size, "%.*s", (int)(p + 5 - path), path);
    return *(p + 5) ? p + 6 : ".";
}

int container_open_in(const char *root, const char *rest, int flags)
{
    int dir = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (dir < 0)
        return -1;
    struct open_how how;
    memset(&how, 0, sizeof how);
    how.flags = (unsigned long long)(flags | O_CLOEXEC);
    how.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS;
    int fd = (int)syscall(SYS_openat2, dir, rest, &how, sizeof how);
    int saved = errno;
    close(dir);
    errno = saved;
    return fd;
}

int container_open(const char *path, int flags)
{
    char root[64];
    const char *rest = under_root(path, root, sizeof root);
    return rest ? container_open_in(root, rest, flags) : open(path, flags | O_CLOEXEC);
}

int container_connect(int sock, const char *path)
{
    struct sockaddr_un sa;
    memset(&sa, 0, sizeof sa);
    sa.sun_family = AF_UNIX;
    char root[64];
    if (!under_root(path, root, sizeof root) && strlen(path) < sizeof sa.sun_path) {
        memcpy(sa.sun_path, path, strlen(path) + 1);
        return connect(sock, (struct sockaddr *)&sa, sizeof sa);
    }
    /* through a descriptor of the socket file: the path is resolved once,
     * safely, and its length does not matter */
    int fd = container_open(path, O_PATH);
    if (fd < 0)
        return -1;
    snprintf(sa.sun_path, sizeof sa.sun_path, "/proc/self/fd/%d", fd);
    int r = connect(sock, (struct sockaddr *)&sa, sizeof sa);
    int saved = errno;
    close(fd);
    errno = saved;
    return r;
}

int container_mapped(pid_t pid, const char *base, char *path, size_t size, int *deleted)
{
    char maps[64], line[PATH_MAX + 128];
    snprintf(maps, sizeof maps, "/proc/%d/maps", (int)pid);
    FILE *f = fopen(maps, "re");
    if (!f)
        return 0;
    int found = 0;
    while (!found && fgets(line, sizeof line, f)) {
        char *file = strchr(line, '/');
        if (!file)
            continue;
        file[strcspn(file, "\n")] = '\0';
        static const char gone[] = " (deleted)";
        size_t n = strlen(file);
        int was_deleted = n > sizeof gone - 1 && !strcmp(file + n - (sizeof gone - 1), gone);
        if (was_deleted)
            file[n - (sizeof gone - 1)] = '\0';
        if (strcmp(strrchr(file, '/') + 1, base) != 0)
            continue;
        found = 1;
        if (path)
            snprintf(path, size, "%s", file);
        if (deleted)
            *deleted = was_deleted;
    }
    fclose(f);
    return found;
}

/* Are the two files the same bytes (the first reached with
 * container_open)? */
static int same_content(const char *theirs, const char *ours)
{
    int a = container_open(theirs, O_RDONLY | O_NOFOLLOW), b = open(ours, O_RDONLY | O_CLOEXEC);
    struct stat sa, sb;
    int same = a >= 0 && b >= 0 && fstat(a, &sa) == 0 && fstat(b, &sb) == 0 &&
               S_ISREG(sa.st_mode) && sa.st_size == sb.st_size;
    static char ba[1 << 16], bb[1 << 16];
    while (same) {
        ssize_t na = read(a, ba, sizeof ba), nb = read(b, bb, sizeof bb);
        if (na != nb || na < 0 || memcmp(ba, bb, (size_t)na) != 0)
            same = 0;
        if (na <= 0)
            break;
    }
    if (a >= 0)
        close(a);
    if (b >= 0)
        close(b);
    return same;
}

static int copy_file(int from, int to)
{
    static char buf[1 << 16];
    for (;;) {
        ssize_t n = read(from, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return (int)n;
        for (ssize_t done = 0; done < n;) {
            ssize_t w = write(to, buf + done, (size_t)(n - done));
            if (w < 0 && errno == EINTR)
                continue;
            if (w <= 0)
                return -1;
            done += w;
        }
    }
}

/* A name for this build's copy: "corscope-" and its bytes' CRC-32. */
static int copy_name(const char *agent, char *out, size_t size)
{
    int fd = open(agent, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    static char buf[1 << 16];
    uint32_t crc = 0;
    ssize_t n;
    while ((n = read(fd, buf, sizeof buf)) > 0)
        crc = crc32_update(crc, buf, (size_t)n);
    close(fd);
    snprintf(out, size, "corscope-%08x", (unsigned)crc);
    return n < 0 ? -1 : 0;
}

/* An earlier copy at dir/name that corscope's user made and nobody else
 * can have changed: the directory and the library ours and written by us
 * alone, the library the same bytes as the agent. */
static int trusted_copy(int dir, const char *dir_path, const char *name, const char *agent)
{
    struct stat st;
    if (fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode) ||
        st.st_uid != geteuid() || (st.st_mode & 022))
        return 0;
    char lib[PATH_MAX + 128];
    snprintf(lib, sizeof lib, "%s/libcorscope.so", name);
    if (fstatat(dir, lib, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode) ||
        st.st_uid != geteuid() || (st.st_mode & 022))
        return 0;
    char whole[2 * PATH_MAX + 192];
    snprintf(whole, sizeof whole, "%s%s", dir_path, lib);
    return same_content(whole, agent);
}

/* Copies the agent to dir/name/libcorscope.so (a directory made for it).
 * Returns 0, or -1 with errno (EEXIST when the name is taken). */
static int make_copy(int dir, const char *name, const char *agent)
{
    if (mkdirat(dir, name, 0700) < 0)
        return -1;
    int sub = openat(dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    int from = open(agent, O_RDONLY | O_CLOEXEC);
    int to = sub < 0 ? -1 : openat(sub, "libcorscope.so",
                                   O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    /* readable by the process's user, whoever made the copy; made readable
     * only once whole */
    int ok = from >= 0 && to >= 0 && copy_file(from, to) == 0 && fchmod(to, 0644) == 0 &&
             fchmod(sub, 0755) == 0;
    int saved = errno;
    if (from >= 0)
        close(from);
    if (to >= 0)
        close(to);
    if (!ok && sub >= 0)
        unlinkat(sub, "libcorscope.so", 0);
    if (sub >= 0)
        close(sub);
    if (!ok) {
        unlinkat(dir, name, AT_REMOVEDIR);
        errno = saved == EEXIST ? EIO : saved;
        return -1;
    }
    return 0;
}

int container_agent(pid_t pid, const char *agent, const char *tmpdir, char *out, size_t size,
                    char *err, size_t err_size)
{
    char root[64];
    container_root(pid, root, sizeof root);
    /* the runtime cannot load a second copy of the agent (its initial-exec
     * TLS takes the static TLS block glibc keeps for dlopen): an earlier
     * attach's agent must be loaded again by its own path */
    char loaded[PATH_MAX], there[PATH_MAX + 64];
    int deleted = 0;
    if (container_mapped(pid, "libcorscope.so", loaded, sizeof loaded, &deleted)) {
        snprintf(there, sizeof there, "%s%s", root, loaded);
        if (!deleted && same_content(there, agent)) {
            snprintf(out, size, "%s", loaded);
            return 0;
        }
        snprintf(err, err_size, "it has another build of corscope's agent loaded from an earlier "
                 "attach (%s%s), and a process takes one: attach with the corscope that did, or "
                 "restart it", loaded, deleted ? ", since deleted" : "");
        return -1;
    }
    struct stat ours, theirs;
    if (stat(agent, &ours) < 0) {
        snprintf(err, err_size, "cannot read %s: %s", agent, strerror(errno));
        return -1;
    }
    snprintf(there, sizeof there, "%s%s", root, agent);
    int seen = container_open(there, O_PATH);
    int same = seen >= 0 && fstat(seen, &theirs) == 0 && theirs.st_dev == ours.st_dev &&
               theirs.st_ino == ours.st_ino;
    if (seen >= 0)
        close(seen);
    if (same) {
        snprintf(out, size, "%s", agent);
        return 0;
    }
    /* a copy in the process's TMPDIR, named for this build, kept for the
     * next attach (which must load the same file) */
    char dir_path[PATH_MAX + 64], name[64];
    snprintf(dir_path, sizeof dir_path, "%s%s", root, tmpdir);
    int dir = container_open(dir_path, O_PATH | O_DIRECTORY);
    if (dir < 0 || copy_name(agent, name, sizeof name) < 0) {
        snprintf(err, err_size, "the process's TMPDIR (%s) cannot be reached: %s", tmpdir,
                 strerror(errno));
        if (dir >= 0)
            close(dir);
        return -1;
    }
    int ready = trusted_copy(dir, dir_path, name, agent);
    if (!ready && make_copy(dir, name, agent) == 0)
        ready = 1;
    /* the name taken by something not to be trusted: a name of its own */
    for (int attempt = 0; !ready && errno == EEXIST && attempt < 8; attempt++) {
        unsigned long long r = 0;
        if (getrandom(&r, sizeof r, 0) != (ssize_t)sizeof r)
            r = (unsigned long long)getpid() << 8 | (unsigned)attempt;
        size_t n = strlen(name);
        snprintf(name + (n > 17 ? 17 : n), sizeof name - (n > 17 ? 17 : n), "-%016llx", r);
        ready = make_copy(dir, name, agent) == 0;
    }
    int saved = errno;
    close(dir);
    if (!ready) {
        snprintf(err, err_size, "cannot copy the agent into the process's TMPDIR (%s): %s",
                 tmpdir, strerror(saved));
        return -1;
    }
    int n = snprintf(out, size, "%s%s/libcorscope.so", tmpdir, name);
    if (n < 0 || (size_t)n >= size) {
        snprintf(err, err_size, "the process's TMPDIR is too long: %s", tmpdir);
        return -1;
    }
    return 0;
}

int container_in_net(pid_t pid, int (*fn)(void *ctx), void *ctx, char *err, size_t err_size)
{
    if (!container_other(pid, "net"))
        return fn(ctx);
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/ns/net", (int)pid);
    int ours = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
    int theirs = open(path, O_RDONLY | O_CLOEXEC);
    if (ours < 0 || theirs < 0 || setns(theirs, CLONE_NEWNET) < 0) {
        snprintf(err, err_size, "process %d is in another network namespace, where corscope's "
                 "control line must be opened: that needs root (%s)", (int)pid, strerror(errno));
        if (ours >= 0)
            close(ours);
        if (theirs >= 0)
            close(theirs);
        return -1;
    }
    int r = fn(ctx);
    if (setns(ours, CLONE_NEWNET) < 0) {
        /* corscope would go on in the process's network: never */
        fprintf(stderr, "corscope: cannot return to its own network namespace: %s\n",
                strerror(errno));
        abort();
    }
    close(ours);
    close(theirs);
    return r;
}
