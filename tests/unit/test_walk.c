/*
 * Tests of walk (agent/signal/walk.h): whole walks over synthetic stacks:
 * frameless and framed frames mid-stack, a funclet, a hijacked return
 * address.
 */

#include "agent/signal/hijack.h"
#include "agent/signal/stack_bounds.h"
#include "agent/signal/thread_rings.h"
#include "agent/signal/walk.h"
#include "fixture.h"
#include "test.h"

static uint64_t stack[2048];

/* ---- whole walks over synthetic stacks -------------------------------------- */

/* N: frameless, calls M; M: framed, calls L; L: push rbx; sub rsp, 16 */
static const uint8_t code_n[] = {0xE8, 0, 0, 0, 0, 0x90, 0xC3};
static const uint8_t code_m[] = {0x55, 0x48, 0x8B, 0xEC, 0xE8, 0, 0, 0, 0, 0x90, 0x5D, 0xC3};
static const uint8_t code_l[] = {0x53, 0x48, 0x83, 0xEC, 0x10, 0x90, 0x90, 0x48, 0x83, 0xC4, 0x10, 0x5B, 0xC3};
static const uint8_t code_n2[] = {0x90, 0xE8, 0, 0, 0, 0, 0x90, 0xC3}; /* another caller of M */
static const uint8_t thunk[] = {0xFF, 0x25, 0, 0, 0, 0}; /* a precode: in no table */
static const uint8_t stub[] = {0x50, 0x55, 0x5D, 0xC3};  /* stands for the hijack stub */

/* the runtime's Thread: the real return address, then the slot it was taken from */
static struct {
    uint64_t state;
    uint64_t other[18];
    uint64_t real, slot;
    uint64_t more[8];
} fake_thread;

struct walk_out {
    uint64_t ips[16];
    uint64_t n;
};

static void put_ip(void *ctx, uint64_t index, uint64_t pc, uintptr_t sp)
{
    (void)sp;
    struct walk_out *o = ctx;
    if (index < 16)
        o->ips[index] = pc;
    o->n = index + 1;
}

/* Builds the stack of N -> M -> L, interrupted in L's body (or, with
 * in_thunk, L replaced by a precode N -> M -> thunk).  Returns the regs. */
static struct walk_regs build_stack(int in_thunk, uint64_t **m_slot)
{
    memset(stack, 0, sizeof stack);
    uintptr_t sp = (uintptr_t)&stack[1800];
    *(uint64_t *)sp = 0;                      /* N's caller: the outermost frame */
    sp -= 8, *(uint64_t *)sp = (uintptr_t)code_n + 5; /* N calls M */
    *m_slot = (uint64_t *)sp;
    sp -= 8, *(uint64_t *)sp = 0x7777;        /* M: push rbp */
    uintptr_t rbp = sp;                       /* mov rbp, rsp */
    sp -= 8, *(uint64_t *)sp = (uintptr_t)code_m + 9; /* M calls L */
    if (in_thunk)
        return (struct walk_regs){(uintptr_t)thunk, sp, rbp, (uintptr_t)&fake_thread, 0};
    sp -= 8;                                  /* L: push rbx */
    sp -= 16;                                 /* sub rsp, 16 */
    return (struct walk_regs){(uintptr_t)code_l + 6, sp, rbp, (uintptr_t)&fake_thread, 0};
}

static void test_walks(void)
{
    REQUIRE(thread_rings_init() == 0);
    REQUIRE(stack_bounds_refresh() == 0);
    struct mcode_entry e;
    e = fixture_mcode_entry(code_n, sizeof code_n), mcode_add(&e);
    e = fixture_mcode_entry(code_m, sizeof code_m), mcode_add(&e);
    e = fixture_mcode_entry(code_l, sizeof code_l), mcode_add(&e);
    mcode_publish();
    uintptr_t hi = (uintptr_t)&stack[2048];
    uint64_t *m_slot;

    /* a frame without RBP mid-stack: its caller is not skipped */
    struct walk_out o = {{0}, 0};
    uint32_t flags = 0;
    uint64_t n = walk_stack(build_stack(0, &m_slot), hi, 16, put_ip, &o, &flags);
    REQUIRE(n == 3);
    CHECK_EQ(o.ips[0], (uintptr_t)code_l + 6);
    CHECK_EQ(o.ips[1], (uintptr_t)code_m + 9);
    CHECK_EQ(o.ips[2], (uintptr_t)code_n + 5);
    CHECK_EQ(flags, 0);

    /* a sample in a stub: the return address on top of the stack */
    memset(&o, 0, sizeof o);
    flags = 0;
    n = walk_stack(build_stack(1, &m_slot), hi, 16, put_ip, &o, &flags);
    REQUIRE(n == 3);
    CHECK_EQ(o.ips[1], (uintptr_t)code_m + 9);
    CHECK_EQ(o.ips[2], (uintptr_t)code_n + 5);
    CHECK_EQ(flags, 0);

    /* a call through a null pointer: the pc is unmapped, the return
     * address on top of the stack */
    memset(stack, 0, sizeof stack);
    stack[1800] = 0;
    stack[1799] = (uintptr_t)code_n + 5;
    memset(&o, 0, sizeof o);
    flags = 0;
    n = walk_stack((struct walk_regs){0x10, (uintptr_t)&stack[1799], 0, 0, 0}, hi, 16, put_ip, &o,
                   &flags);
    REQUIRE(n == 2);
    CHECK_EQ(o.ips[1], (uintptr_t)code_n + 5);

    /* M's return address hijacked: the real one comes from the Thread */
    hijack_set_range((uintptr_t)stub, (uintptr_t)stub + sizeof stub);
    struct walk_regs r = build_stack(0, &m_slot);
    *m_slot = (uintptr_t)stub;
    fake_thread.real = (uintptr_t)code_n + 5;
    fake_thread.slot = (uintptr_t)m_slot;
    memset(&o, 0, sizeof o);
    flags = 0;
    n = walk_stack(r, hi, 16, put_ip, &o, &flags);
    REQUIRE(n == 3);
    CHECK_EQ(o.ips[2], (uintptr_t)code_n + 5);
    CHECK_EQ(flags, WALK_HIJACKED);
    /* ... and when the Thread does not say (not this slot): the walk stops */
    fake_thread.slot = 0;
    memset(&o, 0, sizeof o);
    flags = 0;
    n = walk_stack(r, hi, 16, put_ip, &o, &flags);
    CHECK_EQ(n, 2);
    CHECK(flags & WALK_STOP_HIJACK);
    hijack_set_range(0, 0);

    mcode_shutdown();
    stack_bounds_shutdown();
    thread_rings_reclaim();
    thread_rings_shutdown();
}

/* walk_stack_memo: a walk of the same stack takes the frames above the
 * first one it shares with the last walk from the memo, and only while
 * their return addresses (and a restored frame pointer) are still in their
 * slots; what it gives is what walk_stack gives. */
static void test_memo(void)
{
#if defined(__x86_64__)
    REQUIRE(thread_rings_init() == 0);
    REQUIRE(stack_bounds_refresh() == 0);
    struct mcode_entry e;
    e = fixture_mcode_entry(code_n, sizeof code_n), mcode_add(&e);
    e = fixture_mcode_entry(code_n2, sizeof code_n2), mcode_add(&e);
    e = fixture_mcode_entry(code_m, sizeof code_m), mcode_add(&e);
    e = fixture_mcode_entry(code_l, sizeof code_l), mcode_add(&e);
    mcode_publish();
    uintptr_t hi = (uintptr_t)&stack[2048];
    uint64_t *m_slot;
    struct walk_memo_frame frames[2 * 8];
    struct walk_memo memo = {frames, 8, 0, 0, 0, 0};
    struct walk_out o = {{0}, 0};
    uint32_t flags = 0;

    /* the first walk: nothing to take, remembered */
    uint64_t n = walk_stack_memo(build_stack(0, &m_slot), hi, 16, put_ip, &o, &flags, &memo);
    REQUIRE(n == 3);
    CHECK_EQ(memo.count, 3);
    CHECK_EQ(memo.reused, 0);
    /* the same stack: M's and N's frames from the memo */
    memset(&o, 0, sizeof o);
    n = walk_stack_memo(build_stack(0, &m_slot), hi, 16, put_ip, &o, &flags, &memo);
    REQUIRE(n == 3);
    CHECK_EQ(memo.reused, 2);
    CHECK_EQ(o.ips[0], (uintptr_t)code_l + 6);
    CHECK_EQ(o.ips[1], (uintptr_t)code_m + 9);
    CHECK_EQ(o.ips[2], (uintptr_t)code_n + 5);
    CHECK_EQ(flags, 0);
    /* another leaf (a stub) over the same frames: they meet at M */
    memset(&o, 0, sizeof o);
    n = walk_stack_memo(build_stack(1, &m_slot), hi, 16, put_ip, &o, &flags, &memo);
    REQUIRE(n == 3);
    CHECK_EQ(memo.reused, 3);
    CHECK_EQ(o.ips[2], (uintptr_t)code_n + 5);
    /* M called from elsewhere (N2), at the same place on the stack: its
     * return address changed, so N's frame is not taken */
    struct walk_regs r = build_stack(0, &m_slot);
    *m_slot = (uintptr_t)code_n2 + 6;
    memset(&o, 0, sizeof o);
    n = walk_stack_memo(r, hi, 16, put_ip, &o, &flags, &memo);
    REQUIRE(n == 3);
    CHECK_EQ(memo.reused, 3);
    CHECK_EQ(o.ips[2], (uintptr_t)code_n2 + 6);
    /* the frame pointer M saved changed (its caller's): not taken either */
    r = build_stack(0, &m_slot);
    n = walk_stack_memo(r, hi, 16, put_ip, &o, &flags, &memo); /* remembers N again */
    m_slot[-1] = 0x8888;
    memset(&o, 0, sizeof o);
    n = walk_stack_memo(r, hi, 16, put_ip, &o, &flags, &memo);
    REQUIRE(n == 3);
    CHECK_EQ(memo.reused, 3);
    CHECK_EQ(o.ips[2], (uintptr_t)code_n + 5);
    CHECK_EQ(flags, 0);
    /* a walk cut at the depth limit is not remembered, and the memo's
     * frames never go past the limit */
    uint32_t before = memo.count;
    memset(&o, 0, sizeof o);
    flags = 0;
    n = walk_stack_memo(build_stack(0, &m_slot), hi, 2, put_ip, &o, &flags, &memo);
    CHECK_EQ(n, 2);
    CHECK(flags & WALK_TRUNCATED);
    CHECK_EQ(memo.count, before);
    /* deeper than the memo holds: walked whole, not remembered */
    struct walk_memo small = {frames, 2, 0, 0, 0, 0};
    memset(&o, 0, sizeof o);
    flags = 0;
    n = walk_stack_memo(build_stack(0, &m_slot), hi, 16, put_ip, &o, &flags, &small);
    CHECK_EQ(n, 3);
    CHECK_EQ(small.count, 0);

    mcode_shutdown();
    stack_bounds_shutdown();
    thread_rings_reclaim();
    thread_rings_shutdown();
#else
    (void)code_n2;
#endif
}

void suite_walk(void)
{
    RUN(test_walks);
    RUN(test_memo);
}
