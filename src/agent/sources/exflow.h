/*
 * exflow: how each throw on one thread ends, from the runtime's exception
 * callbacks alone.  Pure (no runtime, no clock): the exceptions source
 * keeps one per thread and feeds it every callback (but
 * ExceptionSearchFunctionEnter, a no-op here); it is unit tested with
 * the callback sequences the runtime makes (docs/events.md).
 *
 * The runtime dispatches an exception in two passes on the throwing thread:
 * pass 1 searches up the stack for a catch clause (running filters), pass 2
 * unwinds to it (running finally blocks) and enters the catch block.  Code
 * run by a filter, a finally or a catch block may throw again, so throws
 * nest: the exceptions in flight are a stack, and every callback is about
 * the innermost one.  A throw ends in one of these ways:
 *
 *   caught     CatcherEnter: the catching method, and whether a filter
 *              (`catch ... when`) chose that clause;
 *   unhandled  pass 2 began with no catcher found in pass 1: no managed
 *              code catches it (the runtime either reports it unhandled,
 *              and the program ends, or catches it itself where managed
 *              code was called from the runtime, as a static constructor's
 *              exception becomes a TypeInitializationException);
 *   filter     thrown inside a filter and not caught there: the runtime
 *              swallows it (the filter counts as false);
 *   replaced   a finally block run by its pass 2 threw another exception
 *              that left that block: the first one is gone;
 *   unknown    the agent lost track (more than EXFLOW_DEPTH in flight, the
 *              thread or the program ended during the dispatch).
 *
 * A rethrow (`throw;`, `throw e` of a caught exception, an exception
 * rethrown by ExceptionDispatchInfo as `await` does) is the same object
 * thrown again: the source says whether the object was thrown before (its
 * stack trace is set, see exceptions.c), and the object of a catch block
 * still open on the thread is one.  It gets its own throw and its own end.
 */
#ifndef CORSCOPE_EXFLOW_H
#define CORSCOPE_EXFLOW_H

#include <stdint.h>

#include "agent/source.h"
#include "common/visibility.h"

#define EXFLOW_DEPTH 8
#define EXFLOW_CATCHES 4

enum exflow_outcome {
    EXFLOW_UNKNOWN = 0,
    EXFLOW_CAUGHT = 1,
    EXFLOW_UNHANDLED = 2,
    EXFLOW_FILTER = 3,
    EXFLOW_REPLACED = 4,
};

struct exflow_throw {
    uint64_t object;
    uint64_t unwinding_in;   /* pass 2: the function last entered */
    uint64_t finally_in;     /* pass 2: the function whose finally block runs now */
    uint64_t filter_in;      /* pass 1: the function whose filter ran last */
    uint32_t seq;
    uint32_t filters_run;    /* filters pass 1 ran for it */
    uint32_t in_filter;      /* open filters when it was thrown */
    uint8_t catcher_found;   /* pass 1 found a catch clause */
    uint8_t by_filter;       /* ... and a filter chose it */
    uint8_t unwinding;       /* pass 2 began */
    uint8_t in_unwind;       /* thrown while the one below it was in pass 2 */
    uint8_t left_finally;    /* pass 2 left the function of the finally block it was thrown in */
    uint8_t done;            /* its end was reported */
};

struct exflow {
    uint32_t next_seq;
    uint32_t depth; /* throws in flight */
    struct exflow_throw t[EXFLOW_DEPTH];
    uint32_t filters; /* filters running */
    uint32_t catches; /* catch blocks open */
    uint64_t catch_object[EXFLOW_CATCHES];
};

struct exflow_end {
    uint32_t seq;
    enum exflow_outcome outcome;
    uint64_t function;     /* caught: the catching method */
    uint32_t filters_run;
    uint8_t by_filter;
};

/* Room every call needs in `ends`. */
#define EXFLOW_MAX_ENDS (EXFLOW_DEPTH + 2)

/* ExceptionThrown(object): a new throw, numbered *seq (from 1, per
 * thread); *rethrow says whether it throws an object thrown before.
 * Throws it pushes out of the stack end as unknown.  Returns the ends. */
HIDDEN uint32_t exflow_thrown(struct exflow *x, uint64_t object, int thrown_before, uint32_t *seq,
                              int *rethrow, struct exflow_end *ends);
/* Any other step (function, object: the callback's, or 0). */
HIDDEN uint32_t exflow_step(struct exflow *x, enum source_exception_step step, uint64_t function,
                            uint64_t object, struct exflow_end *ends);
/* The thread ends: every throw still in flight ends unknown. */
HIDDEN uint32_t exflow_finish(struct exflow *x, struct exflow_end *ends);

#endif
