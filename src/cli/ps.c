/*
 * ps: see ps.h.
 */
#include "cli/ps.h"

#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/container.h"
#include "cli/ipc.h"
#include "cli/termsafe.h"
#include "common/mem.h"

/* Profiler libraries known by name: the file name seen in maps, and what
 * to call it. */
static const struct {
    const char *file;
    const char *name;
} known_profilers[] = {
    {"libcorscope.so", "corscope"},
    {"Datadog.Trace.ClrProfiler.Native.so", "Datadog"},
    {"Datadog.Tracer.Native.so", "Datadog"},
    {"libNewRelicProfiler.so", "New Relic"},
    {"OpenTelemetry.AutoInstrumentation.Native.so", "OpenTelemetry"},
    {"libelastic_apm_profiler.so", "Elastic APM"},
    {"libappdprofiler.so", "AppDynamics"},
    {"libInstrumentationEngine.so", "CLR Instrumentation Engine"},
};

static ssize_t read_all(const char *path, char *buf, size_t size)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    size_t got = 0;
    while (got + 1 < size) {
        ssize_t n = read(fd, buf + got, size - 1 - got);
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    close(fd);
    buf[got] = '\0';
    return (ssize_t)got;
}

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

int ps_major_version(const char *version)
{
    return version && isdigit((unsigned char)version[0]) ? atoi(version) : 0;
}

static int same_namespace(pid_t pid, const char *ns)
{
    char a[64], b[64], la[128], lb[128];
    snprintf(a, sizeof a, "/proc/%d/ns/%s", (int)pid, ns);
    snprintf(b, sizeof b, "/proc/self/ns/%s", ns);
    ssize_t na = readlink(a, la, sizeof la - 1), nb = readlink(b, lb, sizeof lb - 1);
    if (na <= 0 || nb <= 0)
        return 1; /* cannot tell: assume so */
    la[na] = lb[nb] = '\0';
    return !strcmp(la, lb);
}

/* Has the process a thread named "corscope" (the agent's loop)? */
static int has_corscope_thread(pid_t pid)
{
    char dir[64];
    snprintf(dir, sizeof dir, "/proc/%d/task", (int)pid);
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    int found = 0;
    struct dirent *e;
    while (!found && (e = readdir(d)) != NULL) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9')
            continue;
        char path[384], comm[32];
        snprintf(path, sizeof path, "%s/%s/comm", dir, e->d_name);
        if (read_all(path, comm, sizeof comm) > 0 && !strcmp(comm, "corscope\n"))
            found = 1;
    }
    closedir(d);
    return found;
}

/* maps: the runtime (and its version directory), and profilers by name. */
static int scan_maps(pid_t pid, struct dotnet_process *p, const char **mapped_profiler)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
    FILE *f = fopen(path, "re");
    if (!f)
        return -1;
    char line[PATH_MAX + 128];
    *mapped_profiler = NULL;
    while (fgets(line, sizeof line, f)) {
        char *file = strchr(line, '/');
        if (!file)
            continue;
        file[strcspn(file, "\n")] = '\0';
        const char *base = base_name(file);
        if (!strcmp(base, "libcoreclr.so")) {
            p->runtime_mapped = 1;
            /* .../shared/Microsoft.NETCore.App/10.0.12/libcoreclr.so */
            const char *app = strstr(file, "/Microsoft.NETCore.App/");
            if (app && !p->version[0]) {
                app += strlen("/Microsoft.NETCore.App/");
                size_t n = strcspn(app, "/");
                if (n < sizeof p->version && app[n] == '/')
                    snprintf(p->version, sizeof p->version, "%.*s", (int)n, app);
            }
        }
        for (size_t i = 0; i < sizeof known_profilers / sizeof known_profilers[0]; i++)
            if (!strcmp(base, known_profilers[i].file) && !*mapped_profiler)
                *mapped_profiler = known_profilers[i].name;
    }
    fclose(f);
    return 0;
}

/* The startup profiler the process was started with, from its environment,
 * when its library is loaded (one the runtime could not load is none). */
static void startup_profiler(pid_t pid, char *out, size_t size)
{
    out[0] = '\0';
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/environ", (int)pid);
    static char env[1 << 17];
    ssize_t n = read_all(path, env, sizeof env);
    if (n <= 0)
        return;
    int enabled = 0;
    const char *lib = NULL, *lib64 = NULL;
    for (char *e = env; e < env + n; e += strlen(e) + 1) {
        if (!strcmp(e, "CORECLR_ENABLE_PROFILING=1"))
            enabled = 1;
        else if (!strncmp(e, "CORECLR_PROFILER_PATH=", 22))
            lib = e + 22;
        else if (!strncmp(e, "CORECLR_PROFILER_PATH_64=", 25))
            lib64 = e + 25;
    }
    if (!enabled)
        return;
    const char *which = lib64 && *lib64 ? lib64 : lib;
    if (!which || !*which || !container_mapped(pid, base_name(which), NULL, 0, NULL))
        return;
    snprintf(out, size, "%s", base_name(which));
}

int ps_inspect(pid_t pid, struct dotnet_process *p, int ask_runtime)
{
    memset(p, 0, sizeof *p);
    p->pid = pid;
    char path[64], buf[4096];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    if (read_all(path, buf, sizeof buf) <= 0)
        return -1;
    const char *uid = strstr(buf, "\nUid:");
    unsigned real = 0, effective = 0;
    if (!uid || sscanf(uid + 5, "%u %u", &real, &effective) != 2)
        return -1;
    p->uid = effective;
    const char *mapped = NULL;
    if (scan_maps(pid, p, &mapped) < 0)
        return -1; /* another user's (or gone) */
    if (ipc_socket_path(pid, p->socket, sizeof p->socket) < 0)
        p->socket[0] = '\0';
    if (!p->runtime_mapped && !p->socket[0])
        return 0;
    p->other_namespace = !same_namespace(pid, "pid") || !same_namespace(pid, "mnt");
    p->inner_pid = container_inner_pid(pid);

    snprintf(path, sizeof path, "/proc/%d/cmdline", (int)pid);
    ssize_t n = read_all(path, p->command, sizeof p->command);
    for (ssize_t i = 0; i < n; i++)
        if (p->command[i] == '\0')
            p->command[i] = ' ';
    while (n > 0 && p->command[n - 1] == ' ')
        p->command[--n] = '\0';

    char startup[128];
    startup_profiler(pid, startup, sizeof startup);
    int ours_running = has_corscope_thread(pid);
    if (startup[0]) {
        snprintf(p->profiler, sizeof p->profiler, "%s",
                 !strcmp(startup, "libcorscope.so") ? "corscope" : startup);
        p->profiler_is_corscope = !strcmp(startup, "libcorscope.so") && ours_running;
    } else if (mapped && strcmp(mapped, "corscope") != 0) {
        snprintf(p->profiler, sizeof p->profiler, "%s", mapped);
    } else if (ours_running) {
        snprintf(p->profiler, sizeof p->profiler, "corscope");
        p->profiler_is_corscope = 1;
    }

    if (ask_runtime && p->socket[0]) {
        struct ipc_info info;
        char err[256];
        if (ipc_process_info(p->socket, &info, err, sizeof err) == 0 && info.version[0])
            snprintf(p->version, sizeof p->version, "%s", info.version);
    }
    return 1;
}

static const char ps_usage[] =
    "usage: corscope ps\n"
    "\n"
    "Lists the .NET processes you can profile (all of them for root): pid,\n"
    "runtime version, the profiler already loaded in it if any, and the\n"
    "command line.  `corscope record -p PID` attaches to one.\n";

/* How long `ps` waits for the runtimes' answers, all of them together:
 * one that accepts and never answers (held up, or not a runtime at all)
 * costs no more than that, and its row shows what /proc says. */
#define PS_ASK_MS 2000

int cmd_ps(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            fputs(ps_usage, stdout);
            return 0;
        }
        return cli_usage_error("ps", "unknown argument '%s'", argv[i]);
    }
    DIR *d = opendir("/proc");
    if (!d) {
        cli_error("cannot read /proc");
        return EXIT_WORK_FAILED;
    }
    /* the processes first, from /proc; then every runtime asked at once */
    uid_t me = geteuid();
    pid_t self = getpid();
    struct dotnet_process *procs = NULL;
    size_t count = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        char *end;
        long pid = strtol(e->d_name, &end, 10);
        if (*end || pid <= 0 || pid == self)
            continue;
        struct dotnet_process *grown = mem_grow(procs, &cap, count + 1, sizeof *procs);
        if (!grown) {
            cli_error("out of memory");
            break;
        }
        procs = grown;
        if (ps_inspect((pid_t)pid, &procs[count], 0) == 1 && (me == 0 || procs[count].uid == me))
            count++;
    }
    closedir(d);
    struct ipc_query *q = mem_calloc(count ? count : 1, sizeof *q);
    struct ipc_info *info = mem_calloc(count ? count : 1, sizeof *info);
    size_t asked = 0;
    for (size_t i = 0; q && info && i < count; i++)
        if (procs[i].socket[0])
            q[asked++] = (struct ipc_query){.socket_path = procs[i].socket, .info = &info[i]};
    ipc_process_info_many(q, asked, PS_ASK_MS);
    for (size_t j = 0; j < asked; j++)
        if (q[j].ok && q[j].info->version[0]) {
            struct dotnet_process *p = &procs[q[j].info - info];
            snprintf(p->version, sizeof p->version, "%s", q[j].info->version);
        }
    for (size_t i = 0; i < count; i++) {
        const struct dotnet_process *p = &procs[i];
        if (!i)
            printf("%7s  %-9s  %-12s  %s\n", "PID", "RUNTIME", "PROFILER", "COMMAND");
        char note[96] = "";
        if (!p->socket[0])
            snprintf(note, sizeof note, "  (no diagnostics socket: cannot attach)");
        else if (p->inner_pid != p->pid)
            snprintf(note, sizeof note, "  (in a container, as pid %d)", (int)p->inner_pid);
        /* what the processes say of themselves (other users' among them),
         * escaped */
        char version[4 * sizeof p->version], profiler[4 * sizeof p->profiler],
            command[4 * sizeof p->command];
        printf("%7ld  %-9s  %-12s  %s%s\n", (long)p->pid,
               p->version[0] ? termsafe(p->version, version, sizeof version) : "?",
               p->profiler[0] ? termsafe(p->profiler, profiler, sizeof profiler) : "-",
               termsafe(p->command, command, sizeof command), note);
    }
    if (!count)
        fprintf(stderr, "corscope: no .NET process of yours is running\n");
    mem_free(q);
    mem_free(info);
    mem_free(procs);
    return 0;
}
