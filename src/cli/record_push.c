/*
 * record_push: see record_push.h.
 */
#include "cli/record_push.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"

static void *reader_main(void *arg)
{
    struct record_push *rp = arg;
    rp->bad_stream = push_read(&rp->session, rp->read_fd) < 0;
    return NULL;
}

static void cleanup(struct record_push *rp)
{
    if (rp->read_fd >= 0)
        close(rp->read_fd);
    if (rp->hold_fd >= 0)
        close(rp->hold_fd);
    if (rp->tee_fd >= 0)
        close(rp->tee_fd);
    rp->read_fd = rp->hold_fd = rp->tee_fd = -1;
    if (rp->fifo[0])
        unlink(rp->fifo);
    if (rp->dir[0])
        rmdir(rp->dir);
}

int record_push_begin(struct record_push *rp, const struct push_config *cfg, const char *tee_path,
                      int tee_fd, int quiet)
{
    memset(rp, 0, sizeof *rp);
    rp->read_fd = rp->hold_fd = rp->tee_fd = -1;
    const char *tmp = getenv("TMPDIR");
    snprintf(rp->dir, sizeof rp->dir, "%s/corscope-record-XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
    if (!mkdtemp(rp->dir)) {
        cli_error("cannot create a directory for the recording's stream in %s: %s",
                  tmp && tmp[0] ? tmp : "/tmp", strerror(errno));
        rp->dir[0] = '\0';
        return -1;
    }
    int n = snprintf(rp->fifo, sizeof rp->fifo, "%s/push.corscope", rp->dir);
    if (n >= (int)sizeof rp->fifo || mkfifo(rp->fifo, 0600) < 0) {
        cli_error("cannot make the recording's stream (a FIFO in %s): %s", rp->dir,
                  strerror(errno));
        rp->fifo[0] = '\0';
        cleanup(rp);
        return -1;
    }
    /* the reading end first (a non-blocking open needs no writer), then
     * our own writing end, which keeps the stream open until we close it */
    rp->read_fd = open(rp->fifo, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    rp->hold_fd = rp->read_fd >= 0 ? open(rp->fifo, O_WRONLY | O_CLOEXEC) : -1;
    if (rp->read_fd < 0 || rp->hold_fd < 0 ||
        fcntl(rp->read_fd, F_SETFL, fcntl(rp->read_fd, F_GETFL) & ~O_NONBLOCK) < 0) {
        cli_error("cannot open the recording's stream %s: %s", rp->fifo, strerror(errno));
        cleanup(rp);
        return -1;
    }
    /* room for a second or more of the agent's writes while a window is made */
    fcntl(rp->read_fd, F_SETPIPE_SZ, 1 << 20);
    if (tee_path) {
        snprintf(rp->tee_path, sizeof rp->tee_path, "%s", tee_path);
        rp->tee_fd = fcntl(tee_fd, F_DUPFD_CLOEXEC, 0);
        if (rp->tee_fd < 0) {
            cli_error("cannot open %s: %s", tee_path, strerror(errno));
            cleanup(rp);
            return -1;
        }
    }
    char err[512];
    if (push_start(&rp->session, cfg, rp->tee_fd, quiet, err, sizeof err) < 0) {
        cli_error("--push: %s", err);
        cleanup(rp);
        return -1;
    }
    if (pthread_create(&rp->reader, NULL, reader_main, rp) != 0) {
        cli_error("cannot start the push's reader thread");
        close(rp->hold_fd);
        rp->hold_fd = -1;
        push_finish(&rp->session);
        cleanup(rp);
        return -1;
    }
    rp->reader_started = 1;
    return 0;
}

/* The recordings of the tree's other processes, written beside the FIFO
 * (push-PID.corscope): beside the kept recording, or away. */
static void move_beside(struct record_push *rp)
{
    DIR *d = opendir(rp->dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strncmp(e->d_name, "push-", 5) != 0)
            continue;
        char from[PATH_MAX + 300], to[PATH_MAX + 300];
        snprintf(from, sizeof from, "%s/%s", rp->dir, e->d_name);
        if (!rp->tee_path[0]) {
            fprintf(stderr, "corscope: another process of the command (%s) was recorded, not "
                            "pushed; keep its recording with -o\n", e->d_name + 5);
            unlink(from);
            continue;
        }
        /* app.corscope: app-PID.corscope, as the agent names them */
        const char *dot = strrchr(rp->tee_path, '.'), *slash = strrchr(rp->tee_path, '/');
        size_t stem = dot && (!slash || dot > slash) ? (size_t)(dot - rp->tee_path)
                                                     : strlen(rp->tee_path);
        snprintf(to, sizeof to, "%.*s-%s", (int)stem, rp->tee_path, e->d_name + 5);
        if (link(from, to) < 0)
            fprintf(stderr, "corscope: cannot keep %s as %s: %s\n", from, to, strerror(errno));
        unlink(from);
    }
    closedir(d);
}

int record_push_end(struct record_push *rp, int *recorded)
{
    /* the program's end, or the detach, closed the agent's end: ours goes,
     * and the reader sees the end of the stream */
    if (rp->hold_fd >= 0)
        close(rp->hold_fd);
    rp->hold_fd = -1;
    if (rp->reader_started)
        pthread_join(rp->reader, NULL);
    *recorded = rp->session.stream.header_seen;
    int rc = push_finish(&rp->session);
    move_beside(rp);
    cleanup(rp);
    return rc || rp->bad_stream;
}
