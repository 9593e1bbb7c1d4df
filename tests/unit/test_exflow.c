/*
 * Tests of exflow (agent/sources/exflow.h): how a throw ends, fed the
 * callback sequences the runtime makes (observed on .NET 8, 9 and 10,
 * docs/events.md).
 */

#include "agent/sources/exflow.h"
#include "test.h"

/* Functions and objects of the sequences, by name. */
enum { THROWER = 0x10, MIDDLE, MAIN, RETHROW, WRAP, FILTERS, BAD_FILTER, FINALLY_THROWS };
enum { A = 0x1000, B = 0x2000 };

struct run {
    struct exflow x;
    struct exflow_end ends[64];
    uint32_t n;
};

static uint32_t thrown(struct run *r, uint64_t object, int before, int *rethrow)
{
    uint32_t seq = 0;
    int again = 0;
    r->n += exflow_thrown(&r->x, object, before, &seq, &again, r->ends + r->n);
    if (rethrow)
        *rethrow = again;
    return seq;
}

static void step(struct run *r, enum source_exception_step s, uint64_t f, uint64_t o)
{
    r->n += exflow_step(&r->x, s, f, o, r->ends + r->n);
}

/* pass 1 over the frames, the catcher found in the last one */
static void search(struct run *r, const uint64_t *frames, int count, int found)
{
    for (int i = 0; i < count; i++)
        step(r, SOURCE_EX_SEARCH_ENTER, frames[i], 0);
    if (found)
        step(r, SOURCE_EX_SEARCH_CATCHER, frames[count - 1], 0);
}

/* pass 2 to the catching frame, and the catch block entered */
static void unwind_to(struct run *r, const uint64_t *frames, int count, uint64_t object)
{
    for (int i = 0; i < count; i++) {
        step(r, SOURCE_EX_UNWIND_ENTER, frames[i], 0);
        if (i + 1 < count)
            step(r, SOURCE_EX_UNWIND_LEAVE, 0, 0);
    }
    step(r, SOURCE_EX_CATCHER_ENTER, frames[count - 1], object);
}

static void test_plain_catch(void)
{
    struct run r = {0};
    const uint64_t path[] = {THROWER, MIDDLE, MAIN};
    int again = -1;
    CHECK_EQ(thrown(&r, A, 0, &again), 1);
    CHECK_EQ(again, 0);
    search(&r, path, 3, 1);
    CHECK_EQ(r.n, 0);
    step(&r, SOURCE_EX_UNWIND_ENTER, THROWER, 0);
    step(&r, SOURCE_EX_UNWIND_LEAVE, 0, 0);
    step(&r, SOURCE_EX_UNWIND_ENTER, MIDDLE, 0);
    step(&r, SOURCE_EX_FINALLY_ENTER, MIDDLE, 0);
    step(&r, SOURCE_EX_UNWIND_LEAVE, 0, 0);
    step(&r, SOURCE_EX_UNWIND_ENTER, MAIN, 0);
    step(&r, SOURCE_EX_CATCHER_ENTER, MAIN, A);
    step(&r, SOURCE_EX_CATCHER_LEAVE, 0, 0);
    REQUIRE(r.n == 1);
    CHECK_EQ(r.ends[0].seq, 1);
    CHECK_EQ(r.ends[0].outcome, EXFLOW_CAUGHT);
    CHECK_EQ(r.ends[0].function, MAIN);
    CHECK_EQ(r.ends[0].by_filter, 0);
    CHECK_EQ(r.x.depth, 0);
    /* the next throw is numbered on */
    CHECK_EQ(thrown(&r, B, 0, NULL), 2);
}

/* `throw;` in a catch block: the catch block never gets its leave; the
 * same object is thrown again (its stack trace set: thrown before). */
static void test_rethrow(void)
{
    struct run r = {0};
    const uint64_t first[] = {THROWER, RETHROW}, second[] = {RETHROW, MAIN};
    int again = -1;
    thrown(&r, A, 0, &again);
    search(&r, first, 2, 1);
    unwind_to(&r, first, 2, A);
    CHECK_EQ(thrown(&r, A, 1, &again), 2);
    CHECK_EQ(again, 1);
    search(&r, second, 2, 1);
    unwind_to(&r, second, 2, A);
    step(&r, SOURCE_EX_CATCHER_LEAVE, 0, 0);
    REQUIRE(r.n == 2);
    CHECK(r.ends[0].seq == 1 && r.ends[0].outcome == EXFLOW_CAUGHT && r.ends[0].function == RETHROW);
    CHECK(r.ends[1].seq == 2 && r.ends[1].outcome == EXFLOW_CAUGHT && r.ends[1].function == MAIN);
    CHECK_EQ(r.x.depth, 0);
}

/* `throw e` of the caught object: the runtime clears its stack trace, but
 * it is the object of the open catch block: a rethrow.  A new exception
 * thrown there (a wrapper) is not. */
static void test_throw_e_and_wrap(void)
{
    struct run r = {0};
    const uint64_t first[] = {THROWER, WRAP}, second[] = {WRAP, MAIN};
    int again = -1;
    thrown(&r, A, 0, NULL);
    search(&r, first, 2, 1);
    unwind_to(&r, first, 2, A);
    thrown(&r, A, 0, &again);
    CHECK_EQ(again, 1);
    search(&r, second, 2, 1);
    unwind_to(&r, second, 2, A);
    step(&r, SOURCE_EX_CATCHER_LEAVE, 0, 0);

    struct run w = {0};
    thrown(&w, A, 0, NULL);
    search(&w, first, 2, 1);
    unwind_to(&w, first, 2, A);
    thrown(&w, B, 0, &again);
    CHECK_EQ(again, 0);
    search(&w, second, 2, 1);
    unwind_to(&w, second, 2, B);
    step(&w, SOURCE_EX_CATCHER_LEAVE, 0, 0);
    REQUIRE(w.n == 2);
    CHECK(w.ends[0].seq == 1 && w.ends[0].function == WRAP);
    CHECK(w.ends[1].seq == 2 && w.ends[1].function == MAIN && w.ends[1].outcome == EXFLOW_CAUGHT);
}

/* A filter that throws: the inner exception's pass 2 begins without a
 * catcher, inside the filter: swallowed (the filter counts as false);
 * the outer one goes on to its catcher, and its unwind callbacks are not
 * taken for the inner one's. */
static void test_filter_that_throws(void)
{
    struct run r = {0};
    thrown(&r, A, 0, NULL);
    step(&r, SOURCE_EX_SEARCH_ENTER, THROWER, 0);
    step(&r, SOURCE_EX_SEARCH_ENTER, FILTERS, 0);
    step(&r, SOURCE_EX_FILTER_ENTER, FILTERS, 0);
    thrown(&r, B, 0, NULL);
    step(&r, SOURCE_EX_SEARCH_ENTER, BAD_FILTER, 0);
    step(&r, SOURCE_EX_SEARCH_ENTER, FILTERS, 0);
    step(&r, SOURCE_EX_UNWIND_LEAVE, 0, 0); /* the runtime sends this first */
    step(&r, SOURCE_EX_UNWIND_ENTER, BAD_FILTER, 0);
    REQUIRE(r.n == 1);
    CHECK(r.ends[0].seq == 2 && r.ends[0].outcome == EXFLOW_FILTER);
    step(&r, SOURCE_EX_UNWIND_LEAVE, 0, 0);
    step(&r, SOURCE_EX_UNWIND_ENTER, FILTERS, 0);
    step(&r, SOURCE_EX_FILTER_LEAVE, 0, 0);
    step(&r, SOURCE_EX_SEARCH_ENTER, MAIN, 0);
    step(&r, SOURCE_EX_SEARCH_CATCHER, MAIN, 0);
    const uint64_t path[] = {THROWER, FILTERS, MAIN};
    unwind_to(&r, path, 3, A);
    REQUIRE(r.n == 2);
    CHECK(r.ends[1].seq == 1 && r.ends[1].outcome == EXFLOW_CAUGHT && r.ends[1].function == MAIN);
    CHECK_EQ(r.ends[1].by_filter, 0);
    CHECK_EQ(r.ends[1].filters_run, 1);
    CHECK_EQ(r.x.depth, 0);
}

/* `catch (E) when (...)`: the filter of the catching method chose it. */
static void test_caught_by_filter(void)
{
    struct run r = {0};
    thrown(&r, A, 0, NULL);
    step(&r, SOURCE_EX_SEARCH_ENTER, THROWER, 0);
    step(&r, SOURCE_EX_SEARCH_ENTER, MAIN, 0);
    step(&r, SOURCE_EX_FILTER_ENTER, MAIN, 0);
    step(&r, SOURCE_EX_FILTER_LEAVE, 0, 0);
    step(&r, SOURCE_EX_SEARCH_CATCHER, MAIN, 0);
    const uint64_t path[] = {THROWER, MAIN};
    unwind_to(&r, path, 2, A);
    REQUIRE(r.n == 1);
    CHECK(r.ends[0].outcome == EXFLOW_CAUGHT && r.ends[0].by_filter == 1);
    CHECK_EQ(r.ends[0].filters_run, 1);
}

/* No catcher in pass 1: pass 2 begins (after the runtime printed it). */
static void test_unhandled(void)
{
    struct run r = {0};
    const uint64_t path[] = {THROWER, MAIN};
    thrown(&r, A, 0, NULL);
    search(&r, path, 2, 0);
    step(&r, SOURCE_EX_UNWIND_LEAVE, 0, 0);
    step(&r, SOURCE_EX_UNWIND_ENTER, THROWER, 0);
    REQUIRE(r.n == 1);
    CHECK(r.ends[0].seq == 1 && r.ends[0].outcome == EXFLOW_UNHANDLED);
    step(&r, SOURCE_EX_UNWIND_LEAVE, 0, 0);
    step(&r, SOURCE_EX_UNWIND_ENTER, MAIN, 0);
    CHECK_EQ(r.n, 1); /* ended once */
}

/* A finally block run by A's pass 2 throws B, which leaves that block's
 * method and is caught by a caller: A is gone, replaced by B. */
static void test_replaced_by_finally(void)
{
    struct run r = {0};
    thrown(&r, A, 0, NULL);
    const uint64_t path[] = {THROWER, FINALLY_THROWS, MAIN};
    search(&r, path, 3, 1);
    step(&r, SOURCE_EX_UNWIND_ENTER, THROWER, 0);
    step(&r, SOURCE_EX_UNWIND_LEAVE, 0, 0);
    step(&r, SOURCE_EX_UNWIND_ENTER, FINALLY_THROWS, 0);
    step(&r, SOURCE_EX_FINALLY_ENTER, FINALLY_THROWS, 0);
    thrown(&r, B, 0, NULL);
    const uint64_t path_b[] = {FINALLY_THROWS, MAIN};
    search(&r, path_b, 2, 1);
    unwind_to(&r, path_b, 2, B);
    REQUIRE(r.n == 2);
    CHECK(r.ends[0].seq == 2 && r.ends[0].outcome == EXFLOW_CAUGHT && r.ends[0].function == MAIN);
    CHECK(r.ends[1].seq == 1 && r.ends[1].outcome == EXFLOW_REPLACED);
    CHECK_EQ(r.x.depth, 0);

    /* caught inside the finally block's callee instead: A goes on */
    struct run k = {0};
    thrown(&k, A, 0, NULL);
    search(&k, path, 3, 1);
    step(&k, SOURCE_EX_UNWIND_ENTER, THROWER, 0);
    step(&k, SOURCE_EX_UNWIND_LEAVE, 0, 0);
    step(&k, SOURCE_EX_UNWIND_ENTER, FINALLY_THROWS, 0);
    step(&k, SOURCE_EX_FINALLY_ENTER, FINALLY_THROWS, 0);
    thrown(&k, B, 0, NULL);
    const uint64_t inner[] = {BAD_FILTER, WRAP};
    search(&k, inner, 2, 1);
    unwind_to(&k, inner, 2, B);
    step(&k, SOURCE_EX_CATCHER_LEAVE, 0, 0);
    REQUIRE(k.n == 1);
    CHECK(k.ends[0].seq == 2 && k.ends[0].function == WRAP);
    step(&k, SOURCE_EX_UNWIND_LEAVE, 0, 0);
    step(&k, SOURCE_EX_UNWIND_ENTER, MAIN, 0);
    step(&k, SOURCE_EX_CATCHER_ENTER, MAIN, A);
    REQUIRE(k.n == 2);
    CHECK(k.ends[1].seq == 1 && k.ends[1].outcome == EXFLOW_CAUGHT && k.ends[1].function == MAIN);
}

/* The object moved (a GC during the dispatch): the catch is the innermost
 * throw's. */
static void test_moved_object(void)
{
    struct run r = {0};
    const uint64_t path[] = {THROWER, MAIN};
    thrown(&r, A, 0, NULL);
    search(&r, path, 2, 1);
    unwind_to(&r, path, 2, A + 0x40);
    REQUIRE(r.n == 1);
    CHECK(r.ends[0].seq == 1 && r.ends[0].outcome == EXFLOW_CAUGHT);
}

/* More in flight than followed, and the thread's end: nothing is lost
 * without an end. */
static void test_overflow_and_finish(void)
{
    struct run r = {0};
    for (int i = 0; i < EXFLOW_DEPTH + 2; i++)
        thrown(&r, A + (uint64_t)i, 0, NULL);
    CHECK_EQ(r.n, 2);
    CHECK(r.ends[0].seq == 1 && r.ends[0].outcome == EXFLOW_UNKNOWN);
    CHECK(r.ends[1].seq == 2 && r.ends[1].outcome == EXFLOW_UNKNOWN);
    r.n += exflow_finish(&r.x, r.ends + r.n);
    CHECK_EQ(r.n, EXFLOW_DEPTH + 2);
    CHECK_EQ(r.x.depth, 0);
    /* callbacks with nothing in flight do nothing */
    step(&r, SOURCE_EX_UNWIND_ENTER, MAIN, 0);
    step(&r, SOURCE_EX_CATCHER_ENTER, MAIN, A);
    step(&r, SOURCE_EX_FILTER_LEAVE, 0, 0);
    CHECK_EQ(r.n, EXFLOW_DEPTH + 2);
}

void suite_exflow(void)
{
    RUN(test_plain_catch);
    RUN(test_rethrow);
    RUN(test_throw_e_and_wrap);
    RUN(test_filter_that_throws);
    RUN(test_caught_by_filter);
    RUN(test_unhandled);
    RUN(test_replaced_by_finally);
    RUN(test_moved_object);
    RUN(test_overflow_and_finish);
}
