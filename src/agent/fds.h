/*
 * fds: where the agent's long-lived file descriptors go.
 *
 * A program expects the lowest free numbers for itself: some count on
 * open() returning what they closed, and select() watches only numbers
 * below FD_SETSIZE (1024).  The agent's own descriptors that live long (the
 * recording, each thread's perf_event clock) are moved above 1024 when the
 * process's limit (RLIMIT_NOFILE, which the runtime raises to its hard
 * limit at start-up) leaves room, else into the top quarter of what it
 * allows; and the agent never takes more than a share of the limit for its
 * clocks (fds_clock_budget), so the program does not run out of numbers
 * because of us.
 */
#ifndef CORSCOPE_FDS_H
#define CORSCOPE_FDS_H

#include <stddef.h>
#include <sys/types.h>

#include "common/visibility.h"

/* Growing the descriptor table to hold the high numbers waits for an RCU
 * grace period (the kernel must not free the old table under a thread that
 * reads it: 7 to 10 ms here), and while the agent's thread waits, no clock
 * is armed and the program runs unsampled.  fds_grow_start, in Initialize,
 * grows it on a short-lived thread of its own, while the agent's thread
 * starts (its first perf_event_open may wait for a grace period of its
 * own: the two waits overlap instead of adding up).  The thread blocks
 * every signal, is never sampled (fds_grower) and is joined by
 * fds_grow_join; once the table has grown it never shrinks, so a later
 * session does not start it again. */
HIDDEN void fds_grow_start(void);
/* The growing thread's id while it may still run, else 0.  Waits (at
 * most a few milliseconds) for a thread just started to say who it is, so
 * that a scan of /proc/self/task can leave it out. */
HIDDEN pid_t fds_grower(void);
/* Waits for the growing thread to end (nothing when none runs). */
HIDDEN void fds_grow_join(void);
/* Whether a descriptor moved high now finds the table grown (no growing
 * thread runs, or it has finished): else the caller keeps it low for now
 * and moves it later, if it cannot wait. */
HIDDEN int fds_high_ready(void);
/* Whether fd is below the high numbers. */
HIDDEN int fds_is_low(int fd);
/* A close-on-exec copy of fd at a high number (fd is left open), or fd
 * itself when it is high already or no high number is free. */
HIDDEN int fds_copy_high(int fd);
/* Moves fd to a high number (close-on-exec), closing the original.
 * Returns the new descriptor, or fd itself when it could not be moved. */
HIDDEN int fds_move_high(int fd);
/* How many perf_event clocks the agent may hold open at once: a quarter
 * of the limit, at most 4096. */
HIDDEN size_t fds_clock_budget(void);

#endif
