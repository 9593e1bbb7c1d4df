/*
 * exflow: see exflow.h.
 */
#include "agent/sources/exflow.h"

#include <string.h>

static void end(struct exflow_throw *t, enum exflow_outcome outcome, uint64_t function,
                struct exflow_end *ends, uint32_t *n)
{
    if (t->done)
        return;
    t->done = 1;
    struct exflow_end e = {t->seq, outcome, function, t->filters_run, t->by_filter};
    ends[(*n)++] = e;
}

/* Removes the throws from index `from` up (ending those not ended yet as
 * unknown). */
static void pop_from(struct exflow *x, uint32_t from, struct exflow_end *ends, uint32_t *n)
{
    for (uint32_t i = from; i < x->depth; i++)
        end(&x->t[i], EXFLOW_UNKNOWN, 0, ends, n);
    if (from < x->depth)
        x->depth = from;
}

/* Throws whose end is known and that no callback is about any more: those
 * on top once the one below them was caught. */
static void prune_done(struct exflow *x)
{
    while (x->depth > 0 && x->t[x->depth - 1].done)
        x->depth--;
}

static int open_catch(struct exflow *x, uint64_t object, int close)
{
    for (uint32_t i = x->catches; i > 0; i--) {
        if (x->catch_object[i - 1] != object)
            continue;
        if (close) {
            memmove(x->catch_object + i - 1, x->catch_object + i,
                    (x->catches - i) * sizeof *x->catch_object);
            x->catches--;
        }
        return 1;
    }
    return 0;
}

uint32_t exflow_thrown(struct exflow *x, uint64_t object, int thrown_before, uint32_t *seq,
                       int *rethrow, struct exflow_end *ends)
{
    uint32_t n = 0;
    /* the catch block of this object is left by throwing it again */
    int in_catch = object && open_catch(x, object, 1);
    *rethrow = thrown_before || in_catch;
    if (x->depth == EXFLOW_DEPTH) {
        /* the oldest makes room (ended as unknown unless it was ended) */
        end(&x->t[0], EXFLOW_UNKNOWN, 0, ends, &n);
        memmove(x->t, x->t + 1, (EXFLOW_DEPTH - 1) * sizeof *x->t);
        x->depth--;
    }
    struct exflow_throw *below = x->depth ? &x->t[x->depth - 1] : NULL;
    struct exflow_throw *t = &x->t[x->depth++];
    memset(t, 0, sizeof *t);
    t->object = object;
    t->seq = ++x->next_seq;
    if (!t->seq)
        t->seq = ++x->next_seq; /* 0 is never a throw */
    t->in_filter = x->filters;
    t->in_unwind = below && below->unwinding && !below->done;
    *seq = t->seq;
    return n;
}

uint32_t exflow_step(struct exflow *x, enum source_exception_step step, uint64_t function,
                     uint64_t object, struct exflow_end *ends)
{
    uint32_t n = 0;
    struct exflow_throw *top = x->depth ? &x->t[x->depth - 1] : NULL;
    switch (step) {
    case SOURCE_EX_THROWN:
    case SOURCE_EX_SEARCH_ENTER:
        break;
    case SOURCE_EX_FILTER_ENTER:
        x->filters++;
        if (top && !top->unwinding) {
            top->filters_run++;
            top->filter_in = function;
        }
        break;
    case SOURCE_EX_FILTER_LEAVE:
        if (x->filters)
            x->filters--;
        /* what was thrown inside that filter and is still in flight is
         * swallowed with it */
        for (uint32_t i = x->depth; i > 0; i--) {
            if (x->t[i - 1].in_filter <= x->filters)
                break;
            end(&x->t[i - 1], EXFLOW_FILTER, 0, ends, &n);
            x->depth = i - 1;
        }
        break;
    case SOURCE_EX_SEARCH_CATCHER:
        if (top && !top->unwinding) {
            top->catcher_found = 1;
            top->by_filter = top->filters_run && top->filter_in == function;
        }
        break;
    case SOURCE_EX_UNWIND_ENTER:
        if (!top)
            break;
        if (!top->unwinding) {
            top->unwinding = 1;
            if (!top->catcher_found)
                end(top, top->in_filter ? EXFLOW_FILTER : EXFLOW_UNHANDLED, 0, ends, &n);
        }
        top->unwinding_in = function;
        break;
    case SOURCE_EX_UNWIND_LEAVE:
        if (!top || !top->unwinding)
            break;
        /* the function in whose finally block it was thrown is left */
        if (top->in_unwind && x->depth > 1 && top->unwinding_in &&
            top->unwinding_in == x->t[x->depth - 2].finally_in)
            top->left_finally = 1;
        top->unwinding_in = 0;
        break;
    case SOURCE_EX_FINALLY_ENTER:
        if (top)
            top->finally_in = function;
        break;
    case SOURCE_EX_CATCHER_ENTER: {
        if (!top)
            break;
        /* the throw of that object; else (a GC moved it) the innermost
         * one not ended */
        uint32_t at = x->depth - 1, undone = x->depth;
        for (uint32_t i = x->depth; i > 0; i--) {
            if (x->t[i - 1].done)
                continue;
            if (undone == x->depth)
                undone = i - 1;
            if (x->t[i - 1].object == object) {
                undone = i - 1;
                break;
            }
        }
        if (undone < x->depth)
            at = undone;
        struct exflow_throw *t = &x->t[at];
        end(t, EXFLOW_CAUGHT, function, ends, &n);
        int replaced = t->in_unwind && t->left_finally && at > 0;
        pop_from(x, at + 1, ends, &n);
        x->depth = at;
        if (replaced) {
            end(&x->t[at - 1], EXFLOW_REPLACED, 0, ends, &n);
            x->depth = at - 1;
        }
        prune_done(x);
        if (x->catches == EXFLOW_CATCHES) {
            memmove(x->catch_object, x->catch_object + 1,
                    (EXFLOW_CATCHES - 1) * sizeof *x->catch_object);
            x->catches--;
        }
        x->catch_object[x->catches++] = object;
        break;
    }
    case SOURCE_EX_CATCHER_LEAVE:
        if (x->catches)
            x->catches--;
        break;
    }
    return n;
}

uint32_t exflow_finish(struct exflow *x, struct exflow_end *ends)
{
    uint32_t n = 0;
    pop_from(x, 0, ends, &n);
    x->filters = 0;
    x->catches = 0;
    return n;
}
