/*
 * record_push: `corscope record --push URL`: the recording streams to the
 * record command through a FIFO (in a private directory, mode 0700), and a
 * push session (push.h) in record cuts it into profiles and sends them,
 * on threads of its own; with -o the stream is also written to that file,
 * byte for byte what the agent would have written there.
 *
 * record holds a writing end of the FIFO open too while the program runs,
 * so the reader never takes "nobody has opened it yet" for the end; the
 * stream ends when the program (or the attached agent, at its detach) has
 * closed its end and record has closed its own.
 *
 * Other .NET processes of the tree (dotnet run's application is the first)
 * write beside the FIFO, as they would beside -o (agent/proctree.h): they
 * are recorded, not pushed, and their recordings go beside -o (or away,
 * said, when there is no -o).
 */
#ifndef CORSCOPE_CLI_RECORD_PUSH_H
#define CORSCOPE_CLI_RECORD_PUSH_H

#include <limits.h>
#include <pthread.h>
#include <sys/types.h>

#include "cli/push.h"
#include "common/visibility.h"

struct record_push {
    struct push_session session;
    char dir[PATH_MAX];
    char fifo[PATH_MAX];
    char tee_path[PATH_MAX]; /* "" when no recording is kept */
    int read_fd, hold_fd, tee_fd;
    pthread_t reader;
    int reader_started, bad_stream;
};

/* Makes the FIFO, takes a copy of tee_fd (the recording to keep, created
 * empty by record at tee_path; NULL and -1 for none), starts the session
 * and its reader.  The agent's output is rp->fifo.  Returns 0, or -1 after
 * saying why. */
HIDDEN int record_push_begin(struct record_push *rp, const struct push_config *cfg,
                             const char *tee_path, int tee_fd, int quiet);
/* The program (or the attached agent) is done: the stream ends, the last
 * profiles go, the summary is said.  Returns 0, or 1 when some could not
 * be sent; *recorded: whether the agent wrote anything at all. */
HIDDEN int record_push_end(struct record_push *rp, int *recorded);

#endif
