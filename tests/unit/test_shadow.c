/*
 * Tests of tracing mode's shadow stacks and hooks (src/agent/trace/shadow.c,
 * elt_x64.S, elt_arm64.S): the assembly hooks called the way the JIT calls
 * them (trace_calls.S; trace_calls_arm64.S, built into build/aarch64/
 * shadow-tests and run under qemu-user by tests/arm64/t_trace.sh), with the
 * registers they must keep checked on the fast and the slow paths, and the
 * stack kept right through mismatched returns, exceptions, tail calls,
 * deep recursion, more frames than fit, many paths, and a thread that ends
 * with calls open; the calibration of the hooks' own cost.  Needs nothing
 * but the agent's objects, so that it builds for arm64 on its own.
 */
#include <pthread.h>
#include <stdlib.h>

#include "agent/trace/methods.h"
#include "agent/trace/shadow.h"
#include "test.h"

#if defined(__x86_64__) || defined(__aarch64__)

/* trace_calls.S, trace_calls_arm64.S */
void trace_test_enter(void *hook, uint64_t id, uint64_t sp, uint64_t out[64]);
void trace_test_leave(void *hook, uint64_t id, uint64_t sp, uint64_t out[64]);

static FunctionEnter3 *enter_hook;
static FunctionLeave3 *leave_hook;
static FunctionTailcall3 *tail_hook;
static int regs_bad;

static void setup(int timed, uint32_t depth)
{
    methods_reset_for_test();
    shadow_reset_for_test();
    shadow_init(timed, depth);
    shadow_hooks(&enter_hook, &leave_hook, &tail_hook);
}

static void done(void)
{
    shadow_thread_end_for_test();
    shadow_reset_for_test();
    methods_reset_for_test();
}

#if defined(__aarch64__)
/* What a hook left in the registers the arm64 JIT expects kept (the same
 * for Enter, Leave and Tailcall): 1 when one of them changed. */
static int arm64_regs_changed(const uint64_t *out)
{
    int bad = 0;
    for (int n = 0; n <= 8; n++)
        bad |= out[n] != 0xA0A0A0A0A0A0A000ull + (uint64_t)n; /* X0-X8 */
    for (int n = 19; n <= 29; n++)
        bad |= out[n - 10] != 0xB0B0B0B0B0B0B000ull + (uint64_t)n; /* X19-X29 */
    bad |= out[20] != out[21];                                    /* SP */
    for (int n = 0; n < 8; n++)                                   /* Q0-Q7, whole */
        bad |= out[22 + 2 * n] != 0x5100000000000000ull + (uint64_t)n ||
               out[23 + 2 * n] != 0x5100000000000100ull + (uint64_t)n;
    for (int n = 8; n < 16; n++) /* D8-D15: AAPCS64 keeps their low halves */
        bad |= out[38 + n - 8] != 0x5100000000000000ull + (uint64_t)n;
    return bad;
}
#endif

/* Enter, with every register the JIT keeps across it checked. */
static void enter(uint64_t id, uint64_t sp)
{
    uint64_t out[64];
    trace_test_enter((void *)enter_hook, id, sp, out);
#if defined(__x86_64__)
    static const uint64_t want[] = {0xA0A0A0A0A0A0A0A0ull, 0xA1A1A1A1A1A1A1A1ull,
                                    0xA2A2A2A2A2A2A2A2ull, 0xA3A3A3A3A3A3A3A3ull,
                                    0xA4A4A4A4A4A4A4A4ull, 0xA5A5A5A5A5A5A5A5ull,
                                    0xB0B0B0B0B0B0B0B0ull, 0xB1B1B1B1B1B1B1B1ull};
    int bad = 0;
    for (int i = 0; i < 8; i++)
        bad |= out[i] != want[i];
    bad |= out[8] != (uint64_t)(uintptr_t)out || out[10] != id || out[11] != sp;
    for (int x = 0; x < 8; x++)
        bad |= out[12 + 2 * x] != 0x5100000000000000ull + (uint64_t)x ||
               out[13 + 2 * x] != 0x5100000000000100ull + (uint64_t)x;
#else
    int bad = arm64_regs_changed(out);
#endif
    regs_bad += bad;
}

static void leave_with(void *hook, uint64_t id, uint64_t sp)
{
    uint64_t out[64];
    trace_test_leave(hook, id, sp, out);
#if defined(__x86_64__)
    int bad = out[0] != 0xC0C0C0C0C0C0C0C0ull || out[1] != 0xC2C2C2C2C2C2C2C2ull ||
              out[2] != 0xB0B0B0B0B0B0B0B0ull || out[3] != 0xB1B1B1B1B1B1B1B1ull ||
              out[4] != (uint64_t)(uintptr_t)out || out[6] != 0xB4B4B4B4B4B4B4B4ull ||
              out[7] != 0xB5B5B5B5B5B5B5B5ull;
    for (int x = 0; x < 2; x++)
        bad |= out[8 + 2 * x] != 0x5100000000000000ull + (uint64_t)x ||
               out[9 + 2 * x] != 0x5100000000000100ull + (uint64_t)x;
#else
    int bad = arm64_regs_changed(out);
#endif
    regs_bad += bad;
}

static void leave(uint64_t id, uint64_t sp)
{
    leave_with((void *)leave_hook, id, sp);
}

/* The node of a path given root first, or NULL. */
static struct trace_node *path(struct trace_thread *t, const uint64_t *ids, int n)
{
    struct trace_node *at = shadow_node(t, SHADOW_ROOT);
    for (int k = 0; k < n; k++) {
        struct trace_node *next = NULL;
        for (uint32_t i = 0; i < shadow_node_count(t) && !next; i++) {
            struct trace_node *c = shadow_node(t, i);
            if (c->parent == at && c->method == ids[k])
                next = c;
        }
        if (!next)
            return NULL;
        at = next;
    }
    return at;
}

static void test_shadow_balanced_calls(void)
{
    for (int timed = 1; timed >= 0; timed--) {
        setup(timed, 64);
        regs_bad = 0;
        /* A calls B three times and C once; B calls C; twice over: the second
         * round runs on the fast path only */
        for (int round = 0; round < 2; round++) {
            enter(1, 1000);
            for (int i = 0; i < 3; i++) {
                enter(2, 900);
                enter(3, 800);
                leave(3, 800);
                leave(2, 900);
            }
            enter(3, 900);
            leave(3, 900);
            leave(1, 1000);
        }
        struct trace_thread *t = shadow_self();
        REQUIRE(t);
        CHECK_EQ(shadow_depth(t), 0);
        CHECK_EQ(regs_bad, 0);
        uint64_t a[] = {1}, ab[] = {1, 2}, abc[] = {1, 2, 3}, ac[] = {1, 3};
        REQUIRE(path(t, a, 1) && path(t, ab, 2) && path(t, abc, 3) && path(t, ac, 2));
        CHECK_EQ(path(t, a, 1)->calls, 2);
        CHECK_EQ(path(t, ab, 2)->calls, 6);
        CHECK_EQ(path(t, abc, 3)->calls, 6);
        CHECK_EQ(path(t, ac, 2)->calls, 2);
        CHECK_EQ(shadow_node_count(t), 2 + 4); /* root, lost, four paths */
        CHECK_EQ(t->unmatched + t->abandoned + t->untracked, 0);
        if (timed) {
            struct trace_node *na = path(t, a, 1), *nab = path(t, ab, 2), *nabc = path(t, abc, 3),
                              *nac = path(t, ac, 2);
            /* inclusive = self + the callees' inclusive, exactly */
            CHECK_EQ(na->incl, na->self + nab->incl + nac->incl);
            CHECK_EQ(nab->incl, nab->self + nabc->incl);
            CHECK(na->incl > 0 && na->max > 0 && na->max <= na->incl);
            CHECK_EQ(na->active + nab->active + nabc->active, 0);
        }
        done();
    }
}

static void test_shadow_leave_mismatches(void)
{
    setup(1, 64);
    regs_bad = 0;
    /* B is left without its Leave: A's Leave closes it */
    enter(1, 1000);
    enter(2, 900);
    enter(3, 800);
    leave(1, 1000);
    struct trace_thread *t = shadow_self();
    REQUIRE(t);
    CHECK_EQ(shadow_depth(t), 0);
    CHECK_EQ(t->abandoned, 2);
    /* a Leave that matches nothing changes nothing */
    enter(1, 1000);
    leave(7, 1000);
    leave(1, 500);
    CHECK_EQ(shadow_depth(t), 1);
    CHECK_EQ(t->unmatched, 2);
    leave(1, 1000);
    CHECK_EQ(shadow_depth(t), 0);
    /* a tail call ends the caller; the callee enters at the same SP */
    enter(1, 1000);
    enter(2, 900);
    leave_with((void *)tail_hook, 2, 900);
    enter(3, 900);
    leave(3, 900);
    leave(1, 1000);
    CHECK_EQ(shadow_depth(t), 0);
    uint64_t ac[] = {1, 3};
    CHECK(path(t, ac, 2) && path(t, ac, 2)->calls == 1);
    CHECK_EQ(regs_bad, 0);
    done();
}

static void test_shadow_exceptions(void)
{
    setup(1, 64);
    regs_bad = 0;
    FunctionID fa = 0x1000, fb = 0x2000, fc = 0x3000, fd = 0x4000;
    uint32_t a = methods_add_for_test(fa, "T", "A"), b = methods_add_for_test(fb, "T", "B");
    uint32_t c = methods_add_for_test(fc, "T", "C"), d = methods_add_for_test(fd, "T", "D");
    REQUIRE(a && b && c && d);
    /* A (catches) -> B (finally calls D) -> C throws; C's frame, and an
     * EH frame entered and never left (.NET 9), go at C's unwind */
    enter(a, 1000);
    enter(b, 900);
    enter(c, 800);
    enter(d, 700); /* stands for the runtime's EH frame */
    shadow_unwind_enter(fc);
    shadow_unwind_leave();
    struct trace_thread *t = shadow_self();
    REQUIRE(t);
    CHECK_EQ(shadow_depth(t), 2);
    /* B's finally calls D: under B */
    shadow_unwind_enter(fb);
    enter(d, 600);
    leave(d, 600);
    shadow_unwind_leave();
    CHECK_EQ(shadow_depth(t), 1);
    /* an untraced frame's unwind changes nothing */
    shadow_unwind_enter(0x9999);
    shadow_unwind_leave();
    CHECK_EQ(shadow_depth(t), 1);
    /* the catcher stays; its catch block's callees are its children */
    shadow_unwind_enter(fa);
    shadow_catcher_enter(fa);
    enter(d, 500);
    leave(d, 500);
    leave(a, 1000);
    CHECK_EQ(shadow_depth(t), 0);
    uint64_t ab[] = {a, b}, abd[] = {a, b, d}, ad[] = {a, d}, abc[] = {a, b, c};
    CHECK(path(t, abd, 3) && path(t, abd, 3)->calls == 1);
    CHECK(path(t, ad, 2) && path(t, ad, 2)->calls == 1);
    CHECK(path(t, ab, 2) && path(t, abc, 3));
    /* the catcher left above the catch: a catch further up pops what the
     * unwinder left */
    enter(a, 1000);
    enter(b, 900);
    enter(c, 800);
    shadow_catcher_enter(fa);
    CHECK_EQ(shadow_depth(t), 1);
    leave(a, 1000);
    CHECK_EQ(shadow_depth(t), 0);
    CHECK_EQ(regs_bad, 0);
    done();
}

static void test_shadow_recursion_and_capacity(void)
{
    setup(1, 100);
    regs_bad = 0;
    /* 10,000 deep: paths stop at depth 100, the counts do not */
    const int deep = 10000;
    for (int i = 0; i <= deep; i++)
        enter(5, 10000000 - 64 * (uint64_t)i);
    for (int i = deep; i >= 0; i--)
        leave(5, 10000000 - 64 * (uint64_t)i);
    struct trace_thread *t = shadow_self();
    REQUIRE(t);
    CHECK_EQ(shadow_depth(t), 0);
    uint64_t calls = 0;
    for (uint32_t i = 2; i < shadow_node_count(t); i++) {
        struct trace_node *n = shadow_node(t, i);
        calls += n->calls;
        CHECK(n->depth <= 100);
        CHECK_EQ(n->active, 0);
    }
    CHECK_EQ(calls, deep + 1);
    CHECK_EQ(shadow_node_count(t), 2 + 100);
    /* the node at the limit holds the calls from there down, its
     * inclusive time that of the outermost of them only */
    struct trace_node *last = shadow_node(t, shadow_node_count(t) - 1);
    CHECK_EQ(last->depth, 100);
    CHECK_EQ(last->calls, deep + 1 - 99);
    CHECK(last->incl <= shadow_node(t, 2)->incl);
    /* more frames than fit: counted, not stacked, and left in order */
    const uint64_t many = SHADOW_FRAMES + 100;
    for (uint64_t i = 0; i < many; i++)
        enter(6, 100000000 - 64 * i);
    CHECK_EQ(shadow_depth(t), SHADOW_FRAMES);
    CHECK_EQ(t->overflow, 100);
    for (uint64_t i = many; i > 0; i--)
        leave(6, 100000000 - 64 * (i - 1));
    CHECK_EQ(shadow_depth(t), 0);
    CHECK_EQ(t->overflow, 0);
    CHECK_EQ(t->untracked, 100);
    CHECK_EQ(t->unmatched, 0);
    CHECK_EQ(regs_bad, 0);
    done();
}

static void test_shadow_many_paths(void)
{
    setup(0, 64);
    regs_bad = 0;
    /* 5000 callees of one method: the slot table grows; the second round
     * finds them all */
    for (int round = 0; round < 2; round++) {
        enter(1, 1000);
        for (uint64_t m = 100; m < 5100; m++) {
            enter(m, 900);
            leave(m, 900);
        }
        leave(1, 1000);
    }
    struct trace_thread *t = shadow_self();
    REQUIRE(t);
    CHECK_EQ(shadow_node_count(t), 2 + 1 + 5000);
    CHECK(t->mask + 1 >= 2 * 5001);
    for (uint32_t i = 3; i < shadow_node_count(t); i++)
        CHECK_EQ(shadow_node(t, i)->calls, 2);
    CHECK_EQ(shadow_depth(t), 0);
    CHECK_EQ(regs_bad, 0);
    done();
}

static void *ends_with_calls_open(void *arg)
{
    (void)arg;
    enter(1, 1000);
    enter(2, 900);
    enter(3, 800);
    leave(3, 800);
    return NULL; /* the thread ends inside 1 and 2 */
}

struct seen_threads {
    int ended, live;
    uint64_t closed, calls;
};

static int look(void *ctx, struct trace_thread *t, int ended)
{
    struct seen_threads *s = ctx;
    if (ended) {
        s->ended++;
        s->closed += shadow_read(&t->closed_at_end);
        for (uint32_t i = 2; i < shadow_node_count(t); i++)
            s->calls += shadow_read(&shadow_node(t, i)->calls);
        CHECK_EQ(shadow_depth(t), 0);
        CHECK(shadow_node(t, 2)->incl > 0);
    } else {
        s->live++;
    }
    return 1;
}

static void test_shadow_thread_end(void)
{
    setup(1, 64);
    regs_bad = 0;
    pthread_t th;
    REQUIRE(pthread_create(&th, NULL, ends_with_calls_open, NULL) == 0);
    pthread_join(th, NULL);
    struct seen_threads s = {0, 0, 0, 0};
    shadow_each(look, &s, 0, NULL);
    CHECK_EQ(s.ended, 1);
    CHECK_EQ(s.closed, 2);
    CHECK_EQ(s.calls, 3);
    /* the ended state was freed: a second look does not see it */
    struct seen_threads again = {0, 0, 0, 0};
    shadow_each(look, &again, 1, NULL);
    CHECK_EQ(again.ended, 0);
    CHECK_EQ(regs_bad, 0);
    done();
}

static void test_shadow_open_frames_read(void)
{
    setup(1, 64);
    enter(1, 1000);
    enter(2, 900);
    struct trace_thread *t = shadow_self();
    REQUIRE(t);
    struct trace_frame f[4];
    CHECK_EQ(shadow_open_frames(t, f, 4), 2);
    CHECK(f[0].node && f[0].node->method == 1 && f[0].sp == 1000);
    CHECK(f[1].node && f[1].node->method == 2 && f[1].t0 >= f[0].t0);
    CHECK_EQ(shadow_open_frames(t, f, 1), 1);
    leave(2, 900);
    leave(1, 1000);
    done();
}

static int count_state(void *ctx, struct trace_thread *t, int ended)
{
    (void)t;
    (void)ended;
    ++*(int *)ctx;
    return 0;
}

/* The hooks' cost measured on the calling thread leaves its own state as
 * it was: its open call and its paths. */
static void test_shadow_calibrate(void)
{
    double call = 0, own = 0;
    setup(0, 64);
    CHECK(shadow_calibrate(1000, 3, &call, &own) < 0); /* counts only: nothing to take out */
    done();
    setup(1, 64);
    enter(5, 0x7000);
    struct trace_thread *t = shadow_self();
    REQUIRE(t);
    uint32_t nodes = shadow_node_count(t);
    REQUIRE(shadow_calibrate(1000, 5, &call, &own) == 0);
    CHECK(own > 0 && call > own);
    CHECK(shadow_self() == t && shadow_depth(t) == 1 && shadow_node_count(t) == nodes);
    leave(5, 0x7000);
    CHECK(shadow_depth(t) == 0);
    /* a thread with no state keeps none */
    shadow_thread_end_for_test();
    shadow_reset_for_test();
    shadow_init(1, 64);
    REQUIRE(shadow_calibrate(1000, 5, &call, &own) == 0);
    CHECK(shadow_self() == NULL);
    int listed = 0;
    shadow_each(count_state, &listed, 0, NULL);
    CHECK_EQ(listed, 0);
    done();
}

void suite_shadow(void)
{
    RUN(test_shadow_balanced_calls);
    RUN(test_shadow_leave_mismatches);
    RUN(test_shadow_exceptions);
    RUN(test_shadow_recursion_and_capacity);
    RUN(test_shadow_many_paths);
    RUN(test_shadow_thread_end);
    RUN(test_shadow_open_frames_read);
    RUN(test_shadow_calibrate);
}
#else
void suite_shadow(void)
{
}
#endif
