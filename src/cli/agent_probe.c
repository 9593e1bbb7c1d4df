/*
 * agent_probe: see agent_probe.h.
 */
#include "cli/agent_probe.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/cli.h"

/* glibc's static TLS surplus with its default tunables (the Makefile's
 * AGENT_TLS_BUDGET says how it is made up). */
#define GLIBC_STATIC_TLS_SURPLUS 1664

/* The memsz of the file's PT_TLS header; 0 when it has none or cannot be
 * read. */
static size_t tls_bytes_of(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    size_t bytes = 0;
    Elf64_Ehdr eh;
    if (pread(fd, &eh, sizeof eh, 0) == (ssize_t)sizeof eh && !memcmp(eh.e_ident, ELFMAG, SELFMAG) &&
        eh.e_ident[EI_CLASS] == ELFCLASS64 && eh.e_phentsize == sizeof(Elf64_Phdr) &&
        eh.e_phnum < 256) {
        for (unsigned i = 0; i < eh.e_phnum; i++) {
            Elf64_Phdr ph;
            if (pread(fd, &ph, sizeof ph, (off_t)(eh.e_phoff + (uint64_t)i * sizeof ph)) !=
                (ssize_t)sizeof ph)
                break;
            if (ph.p_type == PT_TLS) {
                bytes = (size_t)ph.p_memsz;
                break;
            }
        }
    }
    close(fd);
    return bytes;
}

int agent_probe(const char *agent, char *why, size_t size, size_t *tls_bytes)
{
    *tls_bytes = tls_bytes_of(agent);
    why[0] = '\0';
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) < 0)
        return 0; /* nothing known: say nothing */
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return 0;
    }
    if (pid == 0) {
        close(fds[0]);
        void *h = dlopen(agent, RTLD_NOW | RTLD_LOCAL);
        if (!h) {
            const char *e = dlerror();
            if (e && write(fds[1], e, strlen(e)) < 0)
                _exit(2);
            _exit(1);
        }
        _exit(0);
    }
    close(fds[1]);
    size_t got = 0;
    while (got + 1 < size) {
        ssize_t n = read(fds[0], why + got, size - 1 - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    why[got] = '\0';
    close(fds[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    for (char *p = why; *p; p++)
        if (*p == '\n')
            *p = ' ';
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return 0;
    if (!why[0])
        snprintf(why, size, "the loader's test process ended (status %d)", status);
    return -1;
}

void agent_probe_explain(const char *agent)
{
    char why[512];
    size_t tls = 0;
    if (agent_probe(agent, why, sizeof why, &tls) == 0) {
        /* it loads here; in the runtime, its libraries may have taken
         * part of the surplus first */
        if (tls > GLIBC_STATIC_TLS_SURPLUS / 2)
            cli_error("the agent loads in a plain process, but its %zu bytes of thread-locals "
                      "need most of glibc's static TLS surplus (%d bytes by default), which the "
                      "runtime may have used first; GLIBC_TUNABLES=glibc.rtld.optional_static_tls=2048 "
                      "makes it bigger",
                      tls, GLIBC_STATIC_TLS_SURPLUS);
        return;
    }
    if (strstr(why, "static TLS"))
        cli_error("the agent cannot be loaded: %s (its %zu bytes of thread-locals do not fit "
                  "glibc's static TLS surplus here; GLIBC_TUNABLES=glibc.rtld.optional_static_tls=2048 "
                  "makes it bigger)",
                  why, tls);
    else
        cli_error("the agent cannot be loaded: %s", why);
}
