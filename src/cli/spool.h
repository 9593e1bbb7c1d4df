/*
 * spool: the pushes that wait for the server, on disk under a size cap.
 *
 * Each window's request body is one file, written whole (a temporary name
 * renamed into place), sent oldest first, and removed once the server
 * took it.  When a new one would pass the cap, the oldest waiting ones
 * are dropped, counted (windows and bytes) and said: a long outage loses
 * its beginning, never its end, and never slows the program.
 *
 * Layout: ROOT/DEST/run-PID-NS/NNNNNNNNNNNN.push, where DEST stands for the
 * server (a hash of its URL and tenant: what one run spooled for a server
 * only ever goes to that server) and a run's directory holds a lock (flock)
 * while its uploader lives.  An uploader that starts takes over the runs
 * whose lock is free (their uploader ended before it could send
 * everything): after a restart, what the last run could not send goes
 * first.  Directories are created 0700 and must belong to us.
 *
 * When no directory can be used, the spool keeps the bodies in memory,
 * under the same cap, and says so once.
 *
 * Thread-safe: the reader of the stream adds, the uploader takes.
 */
#ifndef CORSCOPE_CLI_SPOOL_H
#define CORSCOPE_CLI_SPOOL_H

#include <limits.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "common/visibility.h"

struct spool_entry {
    uint64_t id;
    uint64_t window_ns; /* the window's start (Unix ns), for the order */
    size_t size;
    char *path; /* NULL in memory */
    void *mem;
    size_t run; /* index into runs: whose directory */
    int in_flight;
    int doomed; /* in flight when the cap needed its room: dropped if it must wait */
};

struct spool_run {
    char *path;
    size_t left; /* its entries still here */
    int fd;      /* the lock it holds for us (-1: none) */
};

struct spool {
    pthread_mutex_t lock;
    char dir[PATH_MAX]; /* this run's directory; "" in memory */
    int lock_fd;
    uint64_t max_bytes, bytes;
    uint64_t doomed_bytes; /* of the doomed entry: room already given up */
    struct spool_entry *entries; /* oldest first */
    size_t count, cap;
    uint64_t next_id;
    struct spool_run *runs; /* [0] = ours, then the directories taken over */
    size_t run_count, run_cap;
    /* what the cap cost */
    uint64_t dropped, dropped_bytes, adopted;
    char note[PATH_MAX + 256]; /* a warning for the caller to print once, "" when none */
};

/* Opens the spool for a destination (dest_key: any text naming the server
 * and tenant).  root "" = $TMPDIR/corscope-push-UID.  Never fails for want
 * of a directory (memory then, with s->note saying so); -1 only when out of
 * memory. */
HIDDEN int spool_open(struct spool *s, const char *root, const char *dest_key, uint64_t max_bytes);
/* Adds a body; drops the oldest to stay under the cap.  The oldest may be
 * in flight: then it is doomed (its room counted as free) and goes if its
 * send fails (spool_release), so that what stays is always the newest, in
 * a row; the cap is exceeded by that one body while it is sent.  Returns 0
 * or -1 (the body itself is larger than the cap, or out of memory: counted
 * as dropped). */
HIDDEN int spool_add(struct spool *s, uint64_t window_ns, const void *body, size_t len);
/* The oldest body not yet sent into out, marked in flight.  Returns its id,
 * or 0 when there is none. */
HIDDEN uint64_t spool_take(struct spool *s, struct buf *out);
/* The body `id` is done with: sent (or refused for good): removed. */
HIDDEN void spool_done(struct spool *s, uint64_t id);
/* It must wait: it goes back (still the oldest), or is dropped (counted)
 * when it was doomed meanwhile. */
HIDDEN void spool_release(struct spool *s, uint64_t id);
HIDDEN size_t spool_waiting(struct spool *s);
/* Closes; what was not sent stays on disk for the next run. */
HIDDEN void spool_close(struct spool *s);

#endif
