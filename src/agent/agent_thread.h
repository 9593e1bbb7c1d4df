/*
 * agent_thread: the agent's per-thread state, one heap block per thread,
 * reached through one initial-exec thread-local pointer.
 *
 * Why on the heap: the agent's thread-locals are initial-exec (the signal
 * handler and the tracing hooks read theirs without __tls_get_addr, which
 * may take the loader's lock and allocate), so the runtime's dlopen must
 * fit the agent's whole PT_TLS block into the static TLS surplus glibc
 * reserved at start: 1664 bytes by default, shared with every other
 * initial-exec library loaded late and, on arm64, with the runtime's own
 * TLSDESC thread-locals.  Over it the agent does not load at all (the
 * Makefile's AGENT_TLS_BUDGET, checked at every link).  So what a thread
 * keeps that is more than a word or two lives here, and PT_TLS holds the
 * pointer.
 *
 * The rules:
 *   - Each member is one module's; only that module reads or writes it.  A
 *     module that needs per-thread state adds its struct and a member here
 *     (zero is each member's initial state: the block is calloc'd).
 *   - Only the owning thread touches its block (and signal handlers that
 *     interrupt it).  No other thread ever reads it: what another thread
 *     must see goes elsewhere (evq.h's queues, signal/activity.h).
 *   - agent_thread_get() makes the block on a thread's first use: from
 *     callbacks and other code that may allocate, never from a signal
 *     handler.  agent_thread_peek() never allocates; a signal handler that
 *     finds NULL counts a drop and goes on.
 *   - The block is freed when the thread exits (a pthread key's
 *     destructor, which runs on the exiting thread): the pointer is
 *     cleared first, then the block freed, with a signal fence between, so
 *     a signal arriving during the teardown sees the live block or NULL.
 *     A callback after that (another destructor calling into the runtime)
 *     makes a new block and sets the key again; glibc runs the destructor
 *     again for it.  ThreadDestroyed is no place to free it: the runtime
 *     may call it on another thread (a Thread object finalized).
 *   - A block outlives a detach (the library stays loaded, and the
 *     threads go on): a module whose state must not survive into the next
 *     attach checks a run number (callback_activity.c does).
 *
 * Left in PT_TLS, each a word or less: the tracing hooks' shadow stack
 * pointer (trace/shadow.c), the signal chain's slot (signal/achain.c),
 * nativeunwind's collector flag, evq's queue pointer, alloc's random state.
 */
#ifndef CORSCOPE_AGENT_THREAD_H
#define CORSCOPE_AGENT_THREAD_H

#include <stdint.h>
#include <sys/types.h>

#include "agent/sources/exflow.h"
#include "clr/clr_interfaces.h"
#include "common/visibility.h"

/* callback_activity.c: what the thread is doing inside the runtime,
 * outermost first, each with the address of the callback frame that began
 * it. */
#define AGENT_ACTIVITY_DEPTH 16
struct agent_activities {
    uint32_t run; /* callback_activity's run number when last used */
    uint32_t handed_seen; /* its count of loads ended elsewhere, when last looked */
    uint32_t depth;
    uint64_t words[AGENT_ACTIVITY_DEPTH];
    uintptr_t frames[AGENT_ACTIVITY_DEPTH];
};

/* sources/jit.c: compiles and loads open on the thread. */
#define AGENT_JIT_NESTED 8
struct agent_jit_work {
    uint64_t id;
    uint64_t start_ns;
    uint32_t tier;
    uint32_t kind;
};
struct agent_jit {
    struct agent_jit_work compiles[AGENT_JIT_NESTED];
    uint32_t compile_depth;
    struct agent_jit_work loads[AGENT_JIT_NESTED];
    uint32_t load_depth;
};

/* sources/lock.c: the contended wait the thread is in. */
struct agent_lock_wait {
    uint64_t start_ns;
    uint64_t lock;
    uint64_t owner; /* OS tid, 0 unknown */
    uint8_t flags;  /* 0 managed, 1 native */
    uint8_t open;
};

/* unhandled.c: the exception the thread is throwing. */
struct agent_unhandled {
    int state;
    ObjectID object;
    ClassID klass;     /* its MethodTable, read at the throw */
    ICorProfilerInfo15 *info;
    uint32_t session;  /* unhandled.c's session the throw was seen in */
    uint64_t pass1_ns; /* the last step of pass 1, within STAMP_EVERY frames */
    uint32_t frames;   /* searched since pass1_ns */
};

/* sources/exceptions.c: the throws in flight, and the classes of the
 * last ones by MethodTable (an object's first word), so that a throw of a
 * class met before calls nothing in the runtime. */
#define AGENT_EX_CLASSES 8
struct agent_ex_class {
    uintptr_t table;
    ClassID klass;
    uint32_t epoch;
};
struct agent_exceptions {
    struct exflow flow;
    uint64_t pass1_ns; /* the last throw, or the end of a filter (pass 1's slow parts) */
    struct agent_ex_class seen[AGENT_EX_CLASSES];
};

/* sources/watch.c, watch_probe.c: the exception the thread threw last (its
 * class, its message as a string value), for the watched frames it unwinds. */
#define AGENT_WATCH_MESSAGE_WORDS 11
struct agent_watch {
    ClassID thrown_class;
    uint32_t message_words;
    uint64_t message[AGENT_WATCH_MESSAGE_WORDS];
};

/* async/enter.c: the homes of the rewritten async frames running on the
 * thread, outermost first (the first AGENT_ASYNC_NEST of `depth`). */
#define AGENT_ASYNC_NEST 16
struct agent_async {
    uint32_t depth;
    uintptr_t homes[AGENT_ASYNC_NEST];
};

struct agent_thread {
    pid_t tid; /* the OS thread id, 0 until agent_thread_tid asks */
    struct agent_activities activities;
    struct agent_jit jit;
    struct agent_lock_wait lock_wait;
    struct agent_unhandled unhandled;
    struct agent_exceptions exceptions;
    struct agent_watch watch;
    struct agent_async async;
};

/* The calling thread's block, made on first use; NULL when it cannot be
 * (out of memory: counted).  Not from a signal handler. */
HIDDEN struct agent_thread *agent_thread_get(void);
/* The calling thread's block or NULL; never allocates (signal handlers). */
HIDDEN struct agent_thread *agent_thread_peek(void);
/* The calling thread's OS thread id (kept in its block when there is one). */
HIDDEN pid_t agent_thread_tid(void);
/* How many times a thread needed its block and had none (out of memory). */
HIDDEN uint64_t agent_thread_missing(void);
/* Blocks alive now (tests). */
HIDDEN uint64_t agent_thread_live(void);

#endif
