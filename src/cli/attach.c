/*
 * attach: see attach.h.
 */
#include "cli/attach.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/container.h"
#include "cli/ipc.h"
#include "cli/rendezvous.h"
#include "cli/session.h"
#include "common/clock.h"
#include "common/product.h"
#include "common/units.h"

/* How long the runtime may take to answer AttachProfiler: it loads the
 * agent and runs InitializeForAttach on its diagnostics thread, which
 * also answers every other diagnostics client one at a time. */
#define ATTACH_TIMEOUT_MS 30000
/* A process that is still starting (its socket is there before its runtime
 * takes a profiler) is asked again, every RETRY_MS, for this long. */
#define STARTING_WAIT_NS 10000000000ull
#define RETRY_MS 100

int attach_parse_pid(const char *text, pid_t *pid, char *err, size_t err_size)
{
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (!*text || *end || errno || v <= 0 || v > 4194304) {
        snprintf(err, err_size, "not a process id");
        return -1;
    }
    *pid = (pid_t)v;
    return 0;
}

static void comm_of(pid_t pid, char *out, size_t size)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/comm", (int)pid);
    FILE *f = fopen(path, "re");
    out[0] = '\0';
    if (f) {
        if (fgets(out, (int)size, f))
            out[strcspn(out, "\n")] = '\0';
        fclose(f);
    }
    if (!out[0])
        snprintf(out, size, "?");
}

/* The real and effective uid and the gid of a process, from its status
 * (readable by anyone).  Returns 0 or -1 when it is gone. */
static int ids_of(pid_t pid, uid_t *uid, gid_t *gid)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "re");
    if (!f)
        return -1;
    int found = 0;
    while (fgets(line, sizeof line, f)) {
        unsigned real, effective;
        if (sscanf(line, "Uid: %u %u", &real, &effective) == 2) {
            *uid = effective;
            found |= 1;
        } else if (sscanf(line, "Gid: %u %u", &real, &effective) == 2) {
            *gid = effective;
            found |= 2;
        }
    }
    fclose(f);
    return found == 3 ? 0 : -1;
}

int attach_check(pid_t pid, struct attach_target *t)
{
    memset(t, 0, sizeof *t);
    char name[64];
    uid_t uid = 0;
    if ((kill(pid, 0) < 0 && errno == ESRCH) || ids_of(pid, &uid, &t->gid) < 0) {
        cli_error("no process %d", (int)pid);
        return -1;
    }
    comm_of(pid, name, sizeof name);
    if (geteuid() != 0 && uid != geteuid()) {
        cli_error("process %d (%s) belongs to another user (uid %u); corscope attaches to your "
                  "own processes (or, as root, to any)", (int)pid, name, (unsigned)uid);
        return -1;
    }
    int r = ps_inspect(pid, &t->proc, 1);
    if (r < 0) {
        cli_error("cannot look at process %d (%s): it ended, or its /proc entries are not "
                  "readable", (int)pid, name);
        return -1;
    }
    if (r == 0) {
        cli_error("process %d (%s) is not a .NET program (no .NET runtime in it)", (int)pid, name);
        return -1;
    }
    if (geteuid() != 0 && container_other(pid, "net")) {
        cli_error("process %d (%s) runs in another network namespace (a container), where "
                  "corscope's control line must be opened: attaching to it needs root", (int)pid,
                  name);
        return -1;
    }
    if (!t->proc.socket[0]) {
        cli_error("process %d (%s) is a .NET program without a diagnostics socket (started "
                  "with DOTNET_EnableDiagnostics=0 or DOTNET_EnableDiagnostics_IPC=0?); "
                  "the runtime cannot take a profiler after it started", (int)pid, name);
        return -1;
    }
    /* the agent needs ICorProfilerInfo11: .NET Core 3.1 */
    int major = ps_major_version(t->proc.version);
    if (major && (major < 3 || (major == 3 && strncmp(t->proc.version, "3.0", 3) == 0))) {
        cli_error("process %d (%s) runs .NET %s; corscope attaches to .NET Core 3.1 or later",
                  (int)pid, name, t->proc.version);
        return -1;
    }
    /* our library mapped, no session running: a dormant agent, or a
     * record -p's that detached (its socket is not there) */
    if (!t->proc.profiler[0] && container_mapped(pid, "libcorscope.so", NULL, 0, NULL)) {
        int file = rendezvous_find(pid, t->proc.uid);
        if (file >= 0) {
            t->dormant = 1;
            close(file);
        }
    }
    if (t->proc.profiler[0]) {
        if (t->proc.profiler_is_corscope)
            cli_error("process %d (%s) is already being recorded by corscope (or watched: one "
                      "session at a time)", (int)pid, name);
        else
            cli_error("process %d (%s) already has a profiler loaded (%s); the runtime takes "
                      "one at a time", (int)pid, name, t->proc.profiler);
        return -1;
    }
    return 0;
}

void attach_default_output(const struct attach_target *t, char *out, size_t size)
{
    char name[64];
    comm_of(t->proc.pid, name, sizeof name);
    for (char *c = name; *c; c++)
        if (*c == '/' || *c == ' ')
            *c = '_';
    time_t now = time(NULL);
    struct tm tm;
    localtime_r(&now, &tm);
    char stamp[32];
    strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
    snprintf(out, size, "%s-%d-%s.corscope", name, (int)t->proc.pid, stamp);
}

static void clsid_bytes(uint8_t out[16])
{
    static const struct {
        uint32_t d1;
        uint16_t d2, d3;
        uint8_t d4[8];
    } id = CORSCOPE_CLSID_INIT;
    for (int i = 0; i < 4; i++)
        out[i] = (uint8_t)(id.d1 >> (8 * i));
    out[4] = (uint8_t)id.d2;
    out[5] = (uint8_t)(id.d2 >> 8);
    out[6] = (uint8_t)id.d3;
    out[7] = (uint8_t)(id.d3 >> 8);
    memcpy(out + 8, id.d4, 8);
}

/* Why the runtime said no, in words. */
static void refused(pid_t pid, const char *name, const char *agent, uint32_t hr, int agent_spoke)
{
    switch (hr) {
    case IPC_E_PROFILER_ALREADY_ACTIVE:
        cli_error("process %d (%s) already has a profiler loaded (not one corscope recognizes); "
                  "the runtime takes one at a time", (int)pid, name);
        break;
    case 0x80131367u: /* CORPROF_E_PROFILER_DETACHING */
        cli_error("a profiler is detaching from process %d (%s); try again in a few seconds",
                  (int)pid, name);
        break;
    case IPC_E_NOT_YET_AVAILABLE:
    case IPC_E_RUNTIME_UNINITIALIZED:
        cli_error("process %d (%s) is still starting: its runtime took no profiler for %llu s",
                  (int)pid, name, STARTING_WAIT_NS / 1000000000ull);
        break;
    case IPC_E_FILE_NOT_FOUND:
        cli_error("process %d (%s) could not load %s (is it, and each directory above it, "
                  "readable by the process's user?)", (int)pid, name, agent);
        break;
    case IPC_E_PROFILER_NOT_ATTACHABLE:
        if (agent_spoke)
            cli_error("the agent declined to attach to process %d (%s), for the reason above",
                      (int)pid, name);
        else
            cli_error("the agent declined to attach to process %d (%s) without a word: it could "
                      "not reach corscope's control socket (is the process in another network "
                      "namespace?), or it is from another version of corscope", (int)pid, name);
        break;
    default:
        cli_error("the runtime of process %d (%s) refused the attach (0x%08x)", (int)pid, name,
                  (unsigned)hr);
    }
}

/* The agent that stayed loaded after a watch takes this session: the
 * settings go to its own socket, not to the runtime.  Returns 0 when it
 * said yes (it connects to the control socket next), else -1 (said). */
static int rejoin(const struct attach_target *t, const char *name, const struct config *cfg,
                  const char *text, size_t len)
{
    pid_t pid = t->proc.pid;
    if (!cfg->watch[0]) {
        cli_error("process %d (%s) has corscope's agent loaded since a watch (the runtime does "
                  "not let a profiler that rewrote code detach): it takes further `corscope watch "
                  "-p` sessions, not recordings", (int)pid, name);
        return -1;
    }
    int file = rendezvous_find(pid, t->proc.uid);
    char answer[512];
    if (file < 0 || rendezvous_ask(file, text, len, answer, sizeof answer) < 0) {
        cli_error("process %d (%s) has corscope's agent loaded since a watch, and it did not "
                  "answer (%s)", (int)pid, name, file < 0 ? "its socket is gone" : answer);
        return -1;
    }
    if (!strcmp(answer, "ok"))
        return 0;
    if (!strcmp(answer, "busy"))
        cli_error("process %d (%s) is being watched by corscope already (one session at a time)",
                  (int)pid, name);
    else if (!strncmp(answer, "no ", 3))
        cli_error("process %d (%s): %s", (int)pid, name, answer + 3);
    else
        cli_error("process %d (%s): the agent's answer is not this corscope's ('%.60s')",
                  (int)pid, name, answer);
    return -1;
}

struct opening {
    struct session *s;
    pid_t pid;
    char *err;
    size_t err_size;
};

static int open_session(void *ctx)
{
    struct opening *o = ctx;
    return session_open(o->s, o->pid, o->err, o->err_size);
}

struct giving {
    struct session *s;
    int file;
};

static void give_recording(void *ctx)
{
    struct giving *g = ctx;
    session_give_recording(g->s, g->file);
}

int attach_run(const struct attach_target *t, const struct config *cfg_in, const char *agent,
               const char *path, int file, uint64_t duration_ns, int quiet)
{
    return attach_run_with(t, cfg_in, agent, path, file, duration_ns, quiet, NULL, NULL);
}

/* Is the diagnostics socket at path (maybe "/proc/PID/root/...", resolved
 * as the connect resolves it) no longer there? */
static int socket_gone(const char *path)
{
    int fd = container_open(path, O_PATH);
    if (fd >= 0) {
        close(fd);
        return 0;
    }
    return errno == ENOENT;
}

int attach_run_with(const struct attach_target *t, const struct config *cfg_in, const char *agent,
                    const char *path, int file, uint64_t duration_ns, int quiet,
                    void (*setup)(struct session *s, void *ctx), void *ctx)
{
    pid_t pid = t->proc.pid;
    char name[64], err[512];
    comm_of(pid, name, sizeof name);
    struct session s;
    /* the control line is opened in the process's network namespace */
    struct opening o = {&s, pid, err, sizeof err};
    if (container_in_net(pid, open_session, &o, err, sizeof err) < 0) {
        cli_error("%s", err);
        return EXIT_WORK_FAILED;
    }
    /* the agent by a path the process sees: corscope's own, or a copy */
    char tmpdir[PATH_MAX], loadable[PATH_MAX];
    ipc_tmpdir(pid, tmpdir, sizeof tmpdir);
    if (container_agent(pid, agent, tmpdir, loadable, sizeof loadable, err, sizeof err) < 0) {
        cli_error("process %d (%s): %s", (int)pid, name, err);
        session_close(&s);
        return EXIT_WORK_FAILED;
    }
    /* the recording, created by record where it was asked: the agent gets
     * that very file open over the control line (never its path again:
     * the directory may be writable by the process's user) */
    struct giving g = {&s, fcntl(file, F_DUPFD_CLOEXEC, 0)};
    if (g.file < 0) {
        cli_error("cannot pass on %s: %s", path, strerror(errno));
        session_close(&s);
        return EXIT_WORK_FAILED;
    }
    if (setup)
        setup(&s, ctx);
    struct config cfg = *cfg_in;
    snprintf(cfg.control, sizeof cfg.control, "%s", s.address);
    /* the agent expands %p in the path (its name in messages only); a
     * literal % travels as %% */
    size_t o_len = 0;
    for (const char *c = path; *c && o_len + 2 < sizeof cfg.output; c++) {
        if (*c == '%')
            cfg.output[o_len++] = '%';
        cfg.output[o_len++] = *c;
    }
    cfg.output[o_len] = '\0';
    static char text[CONFIG_TEXT_MAX];
    int len = config_to_text(&cfg, text, sizeof text);
    int rc = EXIT_WORK_FAILED;
    if (len < 0) {
        cli_error("the settings do not fit in an attach request");
        goto out;
    }
    uint64_t t0 = clock_now_ns();
    if (t->dormant) {
        if (rejoin(t, name, &cfg, text, (size_t)len) < 0)
            goto out;
        goto accept;
    }
    uint8_t clsid[16];
    clsid_bytes(clsid);
    uint32_t hr = 0;
    struct ipc_waiter w = {s.listen_fd, give_recording, &g};
    int asked;
    for (;;) {
        asked = ipc_attach_profiler(t->proc.socket, clsid, loadable, text, (size_t)len,
                                    ATTACH_TIMEOUT_MS, &w, &hr, err, sizeof err);
        if (asked < 0 || (hr != IPC_E_NOT_YET_AVAILABLE && hr != IPC_E_RUNTIME_UNINITIALIZED) ||
            clock_now_ns() - t0 > STARTING_WAIT_NS)
            break;
        struct timespec pause = {0, RETRY_MS * 1000000L};
        nanosleep(&pause, NULL);
    }
    if (asked < 0 && (kill(pid, 0) < 0 || socket_gone(t->proc.socket))) {
        /* the runtime removes its diagnostics socket as it shuts down: the
         * process was found, and is ending (or gone) */
        cli_error("process %d (%s) ended during the attach", (int)pid, name);
        goto out;
    }
    if (asked < 0) {
        cli_error("attaching to process %d (%s): %s", (int)pid, name, err);
        session_print_pending(&s, 200);
        goto out;
    }
    if (hr != 0) {
        int spoke = session_print_pending(&s, 500);
        refused(pid, name, loadable, hr, spoke);
        goto out;
    }
accept:
    if (session_accept_agent(&s, 5000) < 0) {
        session_print_pending(&s, 200);
        cli_error("the agent attached to process %d (%s) but never reached corscope; it stops on "
                  "its own", (int)pid, name);
        goto out;
    }
    session_give_recording(&s, g.file);
    close(g.file);
    g.file = -1;
    if (!quiet) {
        char until[64] = "Ctrl-C", inner[64] = "";
        if (duration_ns) {
            char d[32];
            units_format_duration(duration_ns, d, sizeof d);
            snprintf(until, sizeof until, "%s or Ctrl-C", d);
        }
        pid_t in = container_inner_pid(pid);
        if (in != pid)
            snprintf(inner, sizeof inner, ", pid %d in its container", (int)in);
        fprintf(stderr, "corscope: attached to process %d (%s, .NET %s%s) in %.0f ms; recording "
                "until %s\n", (int)pid, name, t->proc.version[0] ? t->proc.version : "?", inner,
                (double)(clock_now_ns() - t0) / 1e6, until);
    }
    rc = session_attached(&s, pid, duration_ns, quiet) == 0 ? 0 : EXIT_WORK_FAILED;
    if (!quiet && s.peers[0].detached)
        fprintf(stderr, "corscope: detached from process %d (%s); it runs on\n", (int)pid, name);
out:
    if (g.file >= 0)
        close(g.file);
    session_close(&s);
    return rc;
}
