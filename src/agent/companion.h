/*
 * companion: continuous profiling with the agent alone (CORSCOPE_PUSH=URL in
 * the program's environment, no corscope command): the agent starts the
 * uploader, `corscope push --agent` (the corscope executable shipped beside
 * libcorscope.so), and writes its recording into a pipe the uploader reads
 * (docs/push.md).  Analysis and the network stay out of the profiled
 * process: the uploader cuts the stream into profiles with the same code as
 * `record --push` and `report -f pprof`.
 *
 * The program must not notice it:
 *   - it is started by the agent's own thread, not in Initialize: starting
 *     a process holds the starting thread until the new one has exec'd;
 *   - the uploader is the program's sibling, not its child (clone with
 *     CLONE_PARENT): the program gets no SIGCHLD for it and its
 *     waitpid(-1) never sees it; the program's parent (a shell, systemd,
 *     a container's shim) reaps it.  An exit signal of 0 would not do:
 *     execve resets it to SIGCHLD.  A program that is process 1 of its PID
 *     namespace has no parent to share (CLONE_PARENT is refused): the
 *     uploader is then its child, reaped by the agent's own thread
 *     (__WALL), and its end, if it comes before the program's, is a
 *     SIGCHLD the program gets;
 *   - it starts in a session of its own (the terminal's Ctrl-C and the
 *     program's kill(0, ...) do not reach it), with every descriptor of the
 *     program closed but the pipe (as its standard input) and standard
 *     error, standard output going to /dev/null, and every signal blocked
 *     until it has exec'd;
 *   - the program never waits for it: only the agent's thread writes the
 *     pipe (1 MiB), so a stalled uploader stalls that thread, whose
 *     sampling rings then drop and count; a write to the pipe of an
 *     uploader that died raises no SIGPIPE (recorder.c);
 *   - it ends with the program: the pipe's end (exit, crash, SIGKILL)
 *     tells it to send what is left and go.  A program that is process 1
 *     of its container waits up to a second at its end for the last
 *     profile to go (the container would kill the uploader with it).
 */
#ifndef CORSCOPE_AGENT_COMPANION_H
#define CORSCOPE_AGENT_COMPANION_H

#include "agent/agent.h"
#include "common/visibility.h"

/* Initialize: when the environment asks for pushes, validates their
 * settings, finds the uploader and opens the recording on a pipe for it
 * (a->out; its first writes wait in the pipe).  Returns 1 when it did, 0
 * when no push is asked for (the recording goes to its file as usual), -1
 * when it could not (logged: the agent declines to load). */
HIDDEN int companion_open(struct agent *a);
/* The loop's thread, first thing: starts the uploader on the pipe's other
 * end.  Starting a process holds the starting thread until the new one
 * has exec'd (a millisecond, or the scheduler's delay on a busy machine):
 * that thread is ours, not the program's.  A failure is logged; the
 * recording's next write then fails and the agent stops recording. */
HIDDEN void companion_start(void);
/* The loop, each cycle: an uploader that ended is reaped (and said). */
HIDDEN void companion_reap(void);
/* After the recording is closed (Shutdown). */
HIDDEN void companion_finish(void);

#endif
