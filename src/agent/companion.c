/*
 * companion: see companion.h.
 */
#include "agent/companion.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "agent/log.h"
#include "common/mem.h"
#include "common/pushcfg.h"

#define CHILD_STACK (64u << 10)
#define PIPE_SIZE (1 << 20)

static pid_t companion_pid;
static int companion_ours;   /* our child (the program is process 1): we reap it */
static int companion_pidfd = -1; /* else a pidfd that says when it ends, -1 when none */

/* The corscope executable beside this library (the build tree, a tarball,
 * a container's /opt/corscope), or PREFIX/bin for PREFIX/lib/corscope. */
static int find_uploader(char *out, size_t size, char *lib, size_t lib_size)
{
    Dl_info info;
    if (!dladdr((void *)companion_open, &info) || !info.dli_fname)
        return -1;
    snprintf(lib, lib_size, "%s", info.dli_fname);
    char dir[PATH_MAX];
    if (!realpath(info.dli_fname, dir))
        return -1;
    char *slash = strrchr(dir, '/');
    if (!slash)
        return -1;
    *slash = '\0';
    const char *const candidates[] = {"/corscope", "/../../bin/corscope"};
    for (size_t i = 0; i < sizeof candidates / sizeof candidates[0]; i++) {
        char path[PATH_MAX + 32];
        snprintf(path, sizeof path, "%s%s", dir, candidates[i]);
        if (access(path, X_OK) == 0 && realpath(path, out) && strlen(out) < size)
            return 0;
    }
    return -1;
}

struct spawn {
    const char *path;
    char *const *argv;
    char *const *envp;
    int in_fd, null_fd; /* both above 2 */
    int max_fd;
};

/* The child, on its own stack in the program's memory until execve (the
 * parent thread waits: CLONE_VFORK): system calls only. */
static int child_main(void *arg)
{
    const struct spawn *sp = arg;
    if (dup2(sp->in_fd, 0) < 0 || dup2(sp->null_fd, 1) < 0)
        _exit(126);
    if (syscall(SYS_close_range, 3u, ~0u, 0u) < 0)
        for (int fd = 3; fd < sp->max_fd; fd++)
            close(fd);
    setsid();
    /* every signal stays blocked across execve; the uploader unblocks them */
    execve(sp->path, sp->argv, sp->envp);
    _exit(127);
}

/* Has the uploader ended (reaped, when it is ours)?  1 or 0. */
static int companion_ended(void)
{
    if (companion_ours) {
        int status;
        return waitpid(companion_pid, &status, WNOHANG | __WALL) == companion_pid;
    }
    if (companion_pidfd < 0)
        return 0; /* no pidfd (before Linux 5.3): its end shows as a write error */
    struct pollfd p = {companion_pidfd, POLLIN, 0};
    return poll(&p, 1, 0) == 1;
}

/* What Initialize prepared for the loop's thread to start. */
static struct {
    char path[PATH_MAX];
    char tee[4096];
    int has_tee, quiet;
    int read_fd; /* the pipe's reading end, the uploader's standard input; -1 none */
    char **envp; /* the environment as Initialize saw it: the settings are
                  * hidden from the program (lifecycle.c) before the loop
                  * starts the uploader */
} pending = {"", "", 0, 0, -1, NULL};

static void free_env(void)
{
    for (char **e = pending.envp; e && *e; e++) {
        memset(*e, 0, strlen(*e)); /* secrets among them */
        mem_free(*e);
    }
    mem_free(pending.envp);
    pending.envp = NULL;
}

/* A copy of the environment for the uploader.  0 or -1. */
static int save_env(void)
{
    extern char **environ;
    size_t n = 0;
    while (environ[n])
        n++;
    pending.envp = mem_calloc(n + 1, sizeof *pending.envp);
    if (!pending.envp)
        return -1;
    for (size_t i = 0; i < n; i++) {
        if (!(pending.envp[i] = mem_strdup(environ[i]))) {
            free_env();
            return -1;
        }
    }
    return 0;
}

/* Starts the uploader reading in_fd (closed here).  Returns 0, or -1 with
 * the reason. */
static int spawn(const char *path, const char *tee, int quiet, int in_fd, char **envp, char *err,
                 size_t err_size)
{
    int in_high = fcntl(in_fd, F_DUPFD_CLOEXEC, 3);
    int null_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
    int null_high = null_fd >= 0 ? fcntl(null_fd, F_DUPFD_CLOEXEC, 3) : -1;
    close(in_fd);
    if (null_fd >= 0)
        close(null_fd);
    void *stack = mmap(NULL, CHILD_STACK, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
    if (in_high < 0 || null_high < 0 || stack == MAP_FAILED) {
        snprintf(err, err_size, "cannot prepare the uploader: %s", strerror(errno));
        if (in_high >= 0)
            close(in_high);
        if (null_high >= 0)
            close(null_high);
        if (stack != MAP_FAILED)
            munmap(stack, CHILD_STACK);
        return -1;
    }
    char *argv[8];
    int argc = 0;
    argv[argc++] = (char *)path;
    argv[argc++] = "push";
    argv[argc++] = "--agent";
    if (quiet)
        argv[argc++] = "-q";
    if (tee) {
        argv[argc++] = "--tee";
        argv[argc++] = (char *)tee;
    }
    argv[argc] = NULL;
    struct rlimit lim;
    int max_fd = getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur < 65536 ? (int)lim.rlim_cur
                                                                             : 65536;
    struct spawn sp = {path, argv, envp, in_high, null_high, max_fd};
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    /* the program's sibling: its parent (the shell, the service manager,
     * the container's shim) is the uploader's, and gets the SIGCHLD that
     * execve makes of any exit signal (fs/exec.c); the program gets none.
     * A program that is process 1 of its namespace has no parent to share:
     * then the uploader is its child, reaped by the agent. */
    pid_t pid = clone(child_main, (char *)stack + CHILD_STACK, CLONE_VM | CLONE_VFORK | CLONE_PARENT,
                      &sp);
    int e = errno;
    companion_ours = pid < 0 && e == EINVAL;
    if (companion_ours) {
        pid = clone(child_main, (char *)stack + CHILD_STACK, CLONE_VM | CLONE_VFORK, &sp);
        e = errno;
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    munmap(stack, CHILD_STACK);
    close(in_high);
    close(null_high);
    if (pid < 0) {
        snprintf(err, err_size, "cannot start the uploader: %s", strerror(e));
        return -1;
    }
    companion_pid = pid;
    companion_pidfd = companion_ours ? -1 : (int)syscall(SYS_pidfd_open, pid, 0);
    if (companion_pidfd >= 0)
        fcntl(companion_pidfd, F_SETFD, FD_CLOEXEC);
    if (companion_ended()) {
        snprintf(err, err_size, "the uploader %.300s did not start", path);
        return -1;
    }
    return 0;
}

void companion_start(void)
{
    if (pending.read_fd < 0)
        return;
    char err[600];
    int fd = pending.read_fd;
    pending.read_fd = -1;
    int rc = spawn(pending.path, pending.has_tee ? pending.tee : NULL, pending.quiet, fd,
                   pending.envp, err, sizeof err);
    free_env();
    if (rc < 0) {
        log_error("CORSCOPE_PUSH: %s; the recording stops here (the program goes on)", err);
        return;
    }
    log_info("the uploader is process %ld", (long)companion_pid);
}

int companion_open(struct agent *a)
{
    if (a->attached || !push_config_in_env())
        return 0;
    struct push_config pc;
    char err[600];
    if (push_config_from_env(&pc, err, sizeof err) < 0) {
        log_error("%s; profiling is off for this run", err);
        return -1;
    }
    char lib[PATH_MAX] = "";
    if (find_uploader(pending.path, sizeof pending.path, lib, sizeof lib) < 0) {
        log_error("CORSCOPE_PUSH: no corscope executable beside %s to send the profiles; "
                  "profiling is off for this run", lib[0] ? lib : "libcorscope.so");
        return -1;
    }
    int fds[2];
    if (save_env() < 0) {
        log_error("CORSCOPE_PUSH: out of memory; profiling is off for this run");
        return -1;
    }
    if (pipe2(fds, O_CLOEXEC) < 0) {
        free_env();
        log_error("CORSCOPE_PUSH: cannot make a pipe: %s; profiling is off for this run",
                  strerror(errno));
        return -1;
    }
    fcntl(fds[1], F_SETPIPE_SZ, PIPE_SIZE); /* best effort: the limit may be lower */
    /* CORSCOPE_OUTPUT given too: the uploader keeps the recording there;
     * it says what it sent at the end only when asked (CORSCOPE_LOG=info):
     * the program's standard error is not kept open for it */
    pending.has_tee = getenv("CORSCOPE_OUTPUT") != NULL;
    snprintf(pending.tee, sizeof pending.tee, "%s", a->output);
    pending.quiet = !log_enabled(CONFIG_LOG_WARN);
    pending.read_fd = fds[0];
    char where[600];
    push_url_display(&pc.url, where, sizeof where);
    if (!pending.has_tee)
        snprintf(a->output, sizeof a->output, "the uploader's pipe");
    if (recorder_open_fd(&a->out, &a->cfg, fds[1], a->output, err, sizeof err) < 0) {
        log_error("%s; profiling is off for this run", err);
        close(pending.read_fd);
        pending.read_fd = -1;
        free_env();
        return -1;
    }
    log_info("pushing to %s every %llu ms", where, (unsigned long long)(pc.every_ns / 1000000));
    return 1;
}

static void forget(void)
{
    if (companion_pidfd >= 0)
        close(companion_pidfd);
    companion_pidfd = -1;
    companion_pid = 0;
}

void companion_reap(void)
{
    if (companion_pid <= 0 || !companion_ended())
        return;
    log_warn("the uploader (process %ld) ended before the program; no more profiles are pushed "
             "in this run", (long)companion_pid);
    forget();
}

void companion_finish(void)
{
    if (pending.read_fd >= 0) {
        close(pending.read_fd); /* the loop never started it */
        pending.read_fd = -1;
        free_env();
    }
    if (companion_pid <= 0)
        return;
    /* process 1 of a container: its end ends the uploader too; it has a
     * moment to send the last profile */
    int wait_ms = companion_ours ? 1000 : 0;
    for (int waited = 0; !companion_ended() && waited < wait_ms; waited += 10) {
        struct timespec ms = {0, 10000000};
        nanosleep(&ms, NULL);
    }
    forget();
}
