/*
 * container: reaching a .NET process that lives in other namespaces than
 * corscope (a container, a systemd service with PrivateTmp, a chroot).
 *
 *   - Files: its paths mean what they mean in its mount namespace and under
 *     its root.  corscope reaches them through /proc/PID/root, resolved
 *     with openat2(RESOLVE_IN_ROOT), so that a symbolic link in the
 *     process's /tmp (absolute or with ..) stays inside its root and never
 *     leads corscope, perhaps as root, to a file of the host.
 *   - Pids: the runtime names its diagnostics socket by the pid it knows
 *     itself by, the last of NSpid in /proc/PID/status.
 *   - The agent: the runtime loads it by a path of the process's own; when
 *     that path is not corscope's agent there (a container's other root, a
 *     private /tmp holding corscope), a copy is made in the process's
 *     TMPDIR (a directory of its own, created exclusively, the library
 *     written with O_EXCL and readable once whole) and kept: a process
 *     loads the agent once, and a later attach must name the same file.
 *   - The control line is an abstract socket, which lives in a network
 *     namespace: for a process in another one, corscope (as root) opens it
 *     there (setns), and comes back.
 * The recording itself crosses no namespace: corscope creates it where it
 * was asked, and sends the agent the open file (common/control.h).
 */
#ifndef CORSCOPE_CONTAINER_H
#define CORSCOPE_CONTAINER_H

#include <limits.h>
#include <stddef.h>
#include <sys/types.h>

#include "common/visibility.h"

/* The prefix under which corscope sees the process's files: "" when they
 * are its own (same mount namespace and root), else "/proc/PID/root". */
HIDDEN void container_root(pid_t pid, char *out, size_t size);
/* The pid the process knows itself by (innermost NSpid); pid itself when
 * it is in corscope's pid namespace or that cannot be read. */
HIDDEN pid_t container_inner_pid(pid_t pid);
/* Is the process in another namespace of this kind ("pid", "mnt", "net")
 * than corscope? 0 when it cannot be told. */
HIDDEN int container_other(pid_t pid, const char *ns);

/* Is a file named base (its last component) mapped in the process?  Its
 * path as the process names it goes to path (when not NULL), and whether
 * it was deleted since to *deleted (when not NULL).  Returns 1 or 0. */
HIDDEN int container_mapped(pid_t pid, const char *base, char *path, size_t size, int *deleted);

/* open(2) of a path that may start with "/proc/PID/root/": that part is
 * resolved inside the process's root (above).  Returns a descriptor or -1
 * with errno. */
HIDDEN int container_open(const char *path, int flags);
/* open(2) of rest resolved inside the directory root, as if it were "/". */
HIDDEN int container_open_in(const char *root, const char *rest, int flags);
/* connect(2) of an AF_UNIX stream socket to the socket file at path (any
 * length; under /proc/PID/root/ as above).  Returns 0 or -1 with errno. */
HIDDEN int container_connect(int sock, const char *path);

/* The agent for the process, by a path the process sees (out): the one it
 * has loaded from an earlier attach if that is this very build (a process
 * can load only one: container.c says why), else corscope's own when the
 * process sees that very file, else a copy in the process's TMPDIR (tmpdir,
 * as the process names it, with a trailing slash), named for the build and
 * kept for the next attach.  Returns 0, or -1 with the reason in err. */
HIDDEN int container_agent(pid_t pid, const char *agent, const char *tmpdir, char *out,
                           size_t size, char *err, size_t err_size);

/* Runs fn(ctx) with the calling thread in the process's network namespace
 * (when it has another one), then returns to corscope's.  Returns fn's
 * result, or -1 with the reason in err when the namespace cannot be
 * entered (that needs root). */
HIDDEN int container_in_net(pid_t pid, int (*fn)(void *ctx), void *ctx, char *err,
                            size_t err_size);

#endif
