/*
 * launch: see launch.h.
 */
#include "cli/launch.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/perf_warm.h"
#include "common/product.h"
#include "common/pushcfg.h"

static volatile sig_atomic_t child_pid;

static void forward_signal(int sig)
{
    pid_t pid = (pid_t)child_pid;
    if (pid > 0)
        kill(pid, sig);
}

static const int forwarded_signals[] = {SIGTERM, SIGHUP, SIGUSR1, SIGUSR2};
static const int ignored_signals[] = {SIGINT, SIGQUIT};

/* Directory of this executable, for finding the agent beside it. */
static int self_dir(char *out, size_t size)
{
    ssize_t n = readlink("/proc/self/exe", out, size - 1);
    if (n <= 0)
        return -1;
    out[n] = '\0';
    char *slash = strrchr(out, '/');
    if (!slash)
        return -1;
    *slash = '\0';
    return 0;
}

int launch_find_agent(char *out, size_t size)
{
    char dir[PATH_MAX];
    if (self_dir(dir, sizeof dir) < 0)
        return -1;
    const char *const candidates[] = {"/libcorscope.so", "/../lib/corscope/libcorscope.so"};
    for (size_t i = 0; i < sizeof candidates / sizeof candidates[0]; i++) {
        char path[PATH_MAX + 64];
        snprintf(path, sizeof path, "%s%s", dir, candidates[i]);
        if (access(path, R_OK) == 0 && realpath(path, out) && strlen(out) < size)
            return 0;
    }
    return -1;
}

static void set_child_env(const struct config *c, const char *agent, const char *output)
{
    setenv("CORECLR_ENABLE_PROFILING", "1", 1);
    setenv("CORECLR_PROFILER", CORSCOPE_CLSID_STRING, 1);
    setenv("CORECLR_PROFILER_PATH", agent, 1);
    setenv("CORECLR_PROFILER_PATH_64", agent, 1); /* the _64 form wins when set */
    unsetenv("CORECLR_PROFILER_PATH_ARM64");
    char value[PATH_MAX];
#define EXPORT_SETTING(k, env)                        \
    config_value_text(c, #k, value, sizeof value);    \
    setenv(env, value, 1);
    CONFIG_KEYS(EXPORT_SETTING)
#undef EXPORT_SETTING
    /* never the agent's own uploads under record: record pushes, with
     * --push (and no secret reaches the program) */
#define NO_PUSH(k, env) unsetenv(env);
    PUSH_KEYS(NO_PUSH)
#undef NO_PUSH
    unsetenv(PUSH_PASSWORD_ENV);
    unsetenv(PUSH_TOKEN_ENV);
    /* a tree of processes is recorded: no compiler server or MSBuild node
     * may outlive the recording (they would go on profiling into a
     * finished file); the build runs its compiler as a process of its own
     * instead, recorded like the rest */
    if (c->children != CONFIG_CHILDREN_NONE) {
        setenv("MSBUILDDISABLENODEREUSE", "1", 1);
        setenv("UseSharedCompilation", "false", 1);
        setenv("DOTNET_CLI_USE_MSBUILD_SERVER", "0", 1);
    }
    /* the agent expands %p in the path; a literal % travels as %% */
    char escaped[2 * PATH_MAX];
    size_t o = 0;
    for (const char *p = output; *p && o + 2 < sizeof escaped; p++) {
        if (*p == '%')
            escaped[o++] = '%';
        escaped[o++] = *p;
    }
    escaped[o] = '\0';
    setenv("CORSCOPE_OUTPUT", escaped, 1);
}

int launch_run(char **cmd, const struct config *c, const char *agent, const char *output,
               int *exec_errno, struct session *sess, uint64_t duration_ns, int quiet)
{
    int pipefd[2];
    if (pipe2(pipefd, O_CLOEXEC) < 0) {
        cli_error("cannot start %s: %s", cmd[0], strerror(errno));
        return -1;
    }
    sigset_t block, old;
    sigemptyset(&block);
    for (size_t i = 0; i < sizeof forwarded_signals / sizeof forwarded_signals[0]; i++)
        sigaddset(&block, forwarded_signals[i]);
    sigprocmask(SIG_BLOCK, &block, &old);

    struct sigaction ign = {0}, saved_ign[2];
    ign.sa_handler = SIG_IGN;
    for (size_t i = 0; i < 2; i++)
        sigaction(ignored_signals[i], &ign, &saved_ign[i]);

    pid_t pid = fork();
    if (pid < 0) {
        cli_error("cannot start %s: %s", cmd[0], strerror(errno));
        sigprocmask(SIG_SETMASK, &old, NULL);
        return -1;
    }
    if (pid == 0) {
        for (size_t i = 0; i < 2; i++)
            sigaction(ignored_signals[i], &saved_ign[i], NULL);
        sigprocmask(SIG_SETMASK, &old, NULL);
        close(pipefd[0]);
        set_child_env(c, agent, output);
        execvp(cmd[0], cmd);
        int e = errno;
        ssize_t w = write(pipefd[1], &e, sizeof e);
        (void)w;
        _exit(127);
    }
    child_pid = pid;
    /* while the program starts (the agent loads tens of milliseconds
     * later): its first clock then finds perf's hooks on */
    int warm = perf_warm_open(c);
    struct sigaction fwd = {0};
    fwd.sa_handler = forward_signal;
    sigemptyset(&fwd.sa_mask);
    fwd.sa_flags = SA_RESTART;
    for (size_t i = 0; i < sizeof forwarded_signals / sizeof forwarded_signals[0]; i++)
        sigaction(forwarded_signals[i], &fwd, NULL);
    sigprocmask(SIG_SETMASK, &old, NULL);

    close(pipefd[1]);
    int e = 0;
    ssize_t got;
    do
        got = read(pipefd[0], &e, sizeof e);
    while (got < 0 && errno == EINTR);
    close(pipefd[0]);

    int status = 0;
    if (got == (ssize_t)sizeof e) {
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
        }
    } else {
        status = session_wait_child(sess, pid, duration_ns, quiet);
    }
    perf_warm_close(warm);
    if (status == -1)
        return -1;
    child_pid = 0;
    for (size_t i = 0; i < 2; i++)
        sigaction(ignored_signals[i], &saved_ign[i], NULL);
    if (got == (ssize_t)sizeof e) {
        *exec_errno = e;
        return -1;
    }
    return status;
}

int launch_exit_status(int status)
{
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    if (WIFSIGNALED(status))
        return 128 + WTERMSIG(status);
    return EXIT_WORK_FAILED;
}
