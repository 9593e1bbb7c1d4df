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

#include "common/visibility.h"

/* Moves fd to a high number (close-on-exec), closing the original.
 * Returns the new descriptor, or fd itself when it could not be moved. */
HIDDEN int fds_move_high(int fd);
/* How many perf_event clocks the agent may hold open at once: a quarter
 * of the limit, at most 4096. */
HIDDEN size_t fds_clock_budget(void);

#endif
