/*
 * proctree: see proctree.h.
 */
#include "agent/proctree.h"
#include "common/path.h"

#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- which process this is ------------------------------------------------ */

static int find_coreclr(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    char *out = arg;
    const char *name = info->dlpi_name;
    const char *base = name ? strrchr(name, '/') : NULL;
    if (base && !strcmp(base + 1, "libcoreclr.so")) {
        snprintf(out, 4096, "%s", name);
        return 1;
    }
    return 0;
}

/* The SDK's directory, "<dotnet root>/sdk/", from where the runtime was
 * loaded (<root>/shared/Microsoft.NETCore.App/<version>/libcoreclr.so);
 * "" when not found. */
static void sdk_dir(char *out, size_t size)
{
    char path[4096] = "";
    out[0] = '\0';
    dl_iterate_phdr(find_coreclr, path);
    for (int up = 0; up < 4; up++) {
        char *slash = strrchr(path, '/');
        if (!slash)
            return;
        *slash = '\0';
    }
    snprintf(out, size, "%s/sdk/", path);
}

static int ends_with(const char *s, const char *tail)
{
    size_t n = strlen(s), t = strlen(tail);
    return n >= t && !strcmp(s + n - t, tail);
}

int proctree_is_sdk(void)
{
    char cmdline[8192];
    int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, cmdline, sizeof cmdline - 1);
    close(fd);
    if (n <= 0)
        return 0;
    cmdline[n] = '\0';
    const char *args[64];
    size_t argc = 0;
    for (ssize_t i = 0; i < n && argc < 64; i += (ssize_t)strlen(cmdline + i) + 1)
        args[argc++] = cmdline + i;
    if (!argc)
        return 0;
    char sdk[4200];
    sdk_dir(sdk, sizeof sdk);
    /* anything run from the SDK's directory: MSBuild, its nodes, csc ... */
    for (size_t i = 0; i < argc && sdk[0]; i++)
        if (!strncmp(args[i], sdk, strlen(sdk)))
            return 1;
    /* the dotnet command running one of the CLI's verbs in-process (dotnet
     * run, build, test ...), not an application (dotnet App.dll, dotnet
     * exec App.dll) */
    if (strcmp(path_basename(args[0]), "dotnet") != 0 || argc < 2)
        return 0;
    for (size_t i = 1; i < argc; i++) {
        if (ends_with(args[i], ".dll") || ends_with(args[i], ".exe"))
            return 0;
        if (!strcmp(args[i], "exec"))
            return 0;
        if (args[i][0] != '-')
            return 1; /* a verb */
    }
    return 0;
}

/* ---- whose file ------------------------------------------------------------ */

int proctree_beside(const char *path, long pid, int attempt, char *out, size_t size)
{
    const char *slash = strrchr(path, '/');
    const char *dot = strrchr(path, '.');
    size_t stem = dot && (!slash || dot > slash) ? (size_t)(dot - path) : strlen(path);
    const char *ext = path + stem;
    int n = attempt > 1 ? snprintf(out, size, "%.*s-%ld-%d%s", (int)stem, path, pid, attempt, ext)
                        : snprintf(out, size, "%.*s-%ld%s", (int)stem, path, pid, ext);
    return n < 0 || (size_t)n >= size ? -1 : 0;
}

int proctree_claim_first(const char *path)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        return -1;
    struct stat st;
    if (fstat(fd, &st) == 0 && !S_ISREG(st.st_mode)) {
        /* a device: nobody's recording to keep; a FIFO (record --push
         * reads it) is the first process's alone */
        if (!S_ISFIFO(st.st_mode) || flock(fd, LOCK_EX | LOCK_NB) == 0)
            return fd;
        close(fd);
        errno = EEXIST;
        return -1;
    }
    if (flock(fd, LOCK_EX | LOCK_NB) == 0 && st.st_size == 0)
        return fd; /* the lock stays while this process lives */
    close(fd);
    errno = EEXIST;
    return -1;
}

int proctree_claim(const char *path, long pid, char *chosen, size_t size)
{
    /* the first process: the file record made, empty, and nobody's yet */
    int fd = proctree_claim_first(path);
    if (fd >= 0) {
        snprintf(chosen, size, "%s", path);
        return fd;
    }
    for (int attempt = 1; attempt < 100; attempt++) {
        if (proctree_beside(path, pid, attempt, chosen, size) < 0) {
            errno = ENAMETOOLONG;
            return -1;
        }
        fd = open(chosen, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd >= 0 || errno != EEXIST)
            return fd;
    }
    errno = EEXIST;
    return -1;
}
