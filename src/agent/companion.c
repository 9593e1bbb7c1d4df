/*
 * companion: see companion.h.
 */
#include "agent/companion.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
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
#include "common/pushcfg.h"

#define CHILD_STACK (64u << 10)
#define PIPE_SIZE (1 << 20)

static pid_t companion_pid;

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

/* Starts the uploader reading the pipe; returns the pipe's writing end, or
 * -1 with the reason. */
static int spawn(const char *path, const char *tee, int quiet, char *err, size_t err_size)
{
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) < 0) {
        snprintf(err, err_size, "cannot make a pipe: %s", strerror(errno));
        return -1;
    }
    fcntl(fds[1], F_SETPIPE_SZ, PIPE_SIZE); /* best effort: the limit may be lower */
    int in_fd = fcntl(fds[0], F_DUPFD_CLOEXEC, 3);
    int null_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
    int null_high = null_fd >= 0 ? fcntl(null_fd, F_DUPFD_CLOEXEC, 3) : -1;
    close(fds[0]);
    if (null_fd >= 0)
        close(null_fd);
    void *stack = mmap(NULL, CHILD_STACK, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
    if (in_fd < 0 || null_high < 0 || stack == MAP_FAILED) {
        snprintf(err, err_size, "cannot prepare the uploader: %s", strerror(errno));
        if (in_fd >= 0)
            close(in_fd);
        if (null_high >= 0)
            close(null_high);
        if (stack != MAP_FAILED)
            munmap(stack, CHILD_STACK);
        close(fds[1]);
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
    extern char **environ;
    struct spawn sp = {path, argv, environ, in_fd, null_high, max_fd};
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    /* no exit signal: the program gets no SIGCHLD for it */
    pid_t pid = clone(child_main, (char *)stack + CHILD_STACK, CLONE_VM | CLONE_VFORK, &sp);
    int e = errno;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    munmap(stack, CHILD_STACK);
    close(in_fd);
    close(null_high);
    if (pid < 0) {
        snprintf(err, err_size, "cannot start the uploader: %s", strerror(e));
        close(fds[1]);
        return -1;
    }
    int status;
    if (waitpid(pid, &status, WNOHANG | __WALL) == pid) {
        snprintf(err, err_size, "the uploader %.300s did not start (status %d)", path,
                 WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
        close(fds[1]);
        return -1;
    }
    companion_pid = pid;
    return fds[1];
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
    char uploader[PATH_MAX], lib[PATH_MAX];
    if (find_uploader(uploader, sizeof uploader, lib, sizeof lib) < 0) {
        log_error("CORSCOPE_PUSH: no corscope executable beside %s to send the profiles; "
                  "profiling is off for this run", lib[0] ? lib : "libcorscope.so");
        return -1;
    }
    /* CORSCOPE_OUTPUT given too: the uploader keeps the recording there */
    const char *tee = getenv("CORSCOPE_OUTPUT") ? a->output : NULL;
    int fd = spawn(uploader, tee, !log_enabled(CONFIG_LOG_WARN), err, sizeof err);
    if (fd < 0) {
        log_error("CORSCOPE_PUSH: %s; profiling is off for this run", err);
        return -1;
    }
    char where[600];
    push_url_display(&pc.url, where, sizeof where);
    if (!tee)
        snprintf(a->output, sizeof a->output, "the uploader's pipe (process %ld)",
                 (long)companion_pid);
    if (recorder_open_fd(&a->out, &a->cfg, fd, a->output, err, sizeof err) < 0) {
        log_error("%s; profiling is off for this run", err);
        return -1; /* the pipe is closed: the uploader ends */
    }
    log_info("pushing to %s every %llu ms: the uploader is process %ld", where,
             (unsigned long long)(pc.every_ns / 1000000), (long)companion_pid);
    return 1;
}

void companion_reap(void)
{
    if (companion_pid <= 0)
        return;
    int status;
    if (waitpid(companion_pid, &status, WNOHANG | __WALL) != companion_pid)
        return;
    if (WIFSIGNALED(status))
        log_warn("the uploader (process %ld) was killed by signal %d; no more profiles are "
                 "pushed in this run", (long)companion_pid, WTERMSIG(status));
    else
        log_warn("the uploader (process %ld) ended (status %d); no more profiles are pushed in "
                 "this run", (long)companion_pid, WEXITSTATUS(status));
    companion_pid = 0;
}

void companion_finish(void)
{
    if (companion_pid <= 0)
        return;
    /* process 1 of a container: its end ends the uploader too */
    int wait_ms = getpid() == 1 ? 1000 : 0;
    for (int waited = 0;; waited += 10) {
        int status;
        pid_t r = waitpid(companion_pid, &status, WNOHANG | __WALL);
        if (r == companion_pid || r < 0 || waited >= wait_ms)
            break;
        struct timespec ms = {0, 10000000};
        nanosleep(&ms, NULL);
    }
    companion_pid = 0;
}
