/*
 * Unit tests of the async chain reader (signal/achain.h) on fake objects:
 * boxes, delegates, lists, the alternative path, cycles, unknown types;
 * guarded reads that fail instead of faulting, and nothing read during a
 * suspension.
 */
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include "agent/signal/achain.h"
#include "test.h"

/* Fake "objects": word 0 the MethodTable, then fields. */
static uintptr_t heap[64][8];
#define MT_BOX 0x1000
#define MT_ACTION 0x2000
#define MT_END 0x3000
#define MT_LIST 0x4000
#define MT_ITER 0x5000
#define MT_NEW 0x6000

static void put_type(uintptr_t mt, uint32_t kind, int32_t p0, int32_t p1, int32_t a0, int32_t a1)
{
    struct achain_type t;
    memset(&t, 0, sizeof t);
    atomic_store(&t.mt, mt);
    t.kind = kind;
    t.path[0] = p0;
    t.path[1] = p1;
    t.alt[0] = a0;
    t.alt[1] = a1;
    CHECK(achain_type_put(&t) == 0);
}

/* Reads the chain of an object held in a local (as the rewritten methods
 * do); coop: read directly (a fake Thread in cooperative mode), else
 * through the kernel. */
static uint32_t read_chain(uintptr_t object, int coop, uint64_t *mts, uint32_t *end)
{
    uintptr_t local[4] = {0, object, 0, 0};
    uintptr_t *slot = achain_slot();
    uintptr_t saved = *slot;
    *slot = (uintptr_t)&local[1];
    uint32_t fake_thread[4] = {0, 1, 0, 0};
    uintptr_t l = 0;
    uint32_t n = achain_read((uintptr_t)local, (uintptr_t)(local + 4),
                             coop ? (uintptr_t)fake_thread : 0, mts, ACHAIN_MAX, &l, end);
    CHECK_EQ(l, (uintptr_t)&local[1]);
    *slot = saved;
    return n;
}

static void test_achain_read(void)
{
    achain_types_clear();
    achain_set_coop_offset(4);
    /* box (continuation at 8) -> action (target at 16) -> box -> end */
    put_type(MT_BOX, ACHAIN_BOX, 8, -1, -1, -1);
    put_type(MT_ACTION, ACHAIN_FOLLOW, 16, -1, -1, -1);
    put_type(MT_END, ACHAIN_END, -1, -1, -1, -1);
    heap[0][0] = MT_BOX;
    heap[0][1] = (uintptr_t)heap[1];
    heap[1][0] = MT_ACTION;
    heap[1][2] = (uintptr_t)heap[2];
    heap[2][0] = MT_BOX;
    heap[2][1] = (uintptr_t)heap[3];
    heap[3][0] = MT_END;
    for (int coop = 0; coop <= 1; coop++) {
        uint64_t mts[ACHAIN_MAX];
        uint32_t end = 99;
        uint32_t n = read_chain((uintptr_t)heap[0], coop, mts, &end);
        REQUIRE(n == 4);
        CHECK(mts[0] == MT_BOX && mts[1] == MT_ACTION && mts[2] == MT_BOX && mts[3] == MT_END);
        CHECK_EQ(end, ACHAIN_END_KNOWN);
    }
    /* a null continuation ends it; an unknown type ends it, recorded */
    heap[2][1] = 0;
    uint64_t mts[ACHAIN_MAX];
    uint32_t end;
    CHECK_EQ(read_chain((uintptr_t)heap[0], 1, mts, &end), 3);
    CHECK_EQ(end, ACHAIN_END_NONE);
    heap[2][1] = (uintptr_t)heap[4];
    heap[4][0] = MT_NEW;
    CHECK_EQ(read_chain((uintptr_t)heap[0], 1, mts, &end), 4);
    CHECK_EQ(end, ACHAIN_END_UNKNOWN);
    CHECK_EQ(mts[3], MT_NEW);
    /* a list: its first non-null item (items array at 8, count at 16) */
    put_type(MT_LIST, ACHAIN_LIST, 8, 16, -1, -1);
    heap[5][0] = MT_LIST;
    heap[5][1] = (uintptr_t)heap[6];
    heap[5][2] = 2; /* _size (the low 32 bits) */
    heap[6][0] = 0x9999; /* the array: MethodTable, length, then items */
    heap[6][2] = 0;
    heap[6][3] = (uintptr_t)heap[3];
    heap[2][1] = (uintptr_t)heap[5];
    CHECK_EQ(read_chain((uintptr_t)heap[0], 1, mts, &end), 5);
    CHECK_EQ(mts[4], MT_END);
    /* the alternative path when the first is null: two loads */
    put_type(MT_ITER, ACHAIN_BOX, 8, -1, 24, 40);
    heap[7][0] = MT_ITER;
    heap[7][1] = 0;
    heap[7][3] = (uintptr_t)heap[8];
    heap[8][5] = (uintptr_t)heap[3];
    CHECK_EQ(read_chain((uintptr_t)heap[7], 0, mts, &end), 2);
    CHECK(mts[0] == MT_ITER && mts[1] == MT_END);
    /* a cycle stops at the limit */
    heap[9][0] = MT_BOX;
    heap[9][1] = (uintptr_t)heap[9];
    CHECK_EQ(read_chain((uintptr_t)heap[9], 1, mts, &end), ACHAIN_MAX);
    CHECK_EQ(end, ACHAIN_END_LIMIT);
    achain_types_clear();
    achain_set_coop_offset(-1);
}

/* Outside cooperative mode a bad pointer is a failed read, never a fault;
 * a suspension meanwhile drops the chain. */
static void test_achain_guarded(void)
{
    achain_types_clear();
    put_type(MT_BOX, ACHAIN_BOX, 8, -1, -1, -1);
    void *gone = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    REQUIRE(gone != MAP_FAILED);
    heap[10][0] = MT_BOX;
    heap[10][1] = (uintptr_t)gone;
    uint64_t mts[ACHAIN_MAX];
    uint32_t end;
    CHECK_EQ(read_chain((uintptr_t)heap[10], 0, mts, &end), 1);
    CHECK_EQ(end, ACHAIN_END_FAULT);
    munmap(gone, 4096);
    heap[10][1] = 0;
    uint64_t before = achain_discarded();
    achain_suspend_begin();
    /* nothing is read during a suspension, in either mode (the thread that
     * collects runs in cooperative mode, with the heap in motion) */
    achain_set_coop_offset(4);
    CHECK_EQ(read_chain((uintptr_t)heap[10], 0, mts, &end), 0);
    CHECK_EQ(read_chain((uintptr_t)heap[10], 1, mts, &end), 0);
    achain_set_coop_offset(-1);
    achain_suspend_end();
    CHECK_EQ(achain_discarded(), before + 2);
    /* a MethodTable with a low bit set (a collection's mark) is no object's:
     * the chain ends before it, a failed read (seen: a garbage ClassID the
     * loop then handed to the runtime crashed it) */
    heap[11][0] = MT_BOX | 1;
    heap[10][1] = (uintptr_t)heap[11];
    CHECK_EQ(read_chain((uintptr_t)heap[10], 0, mts, &end), 1);
    CHECK_EQ(end, ACHAIN_END_FAULT);
    heap[10][1] = 0;
    CHECK_EQ(read_chain((uintptr_t)heap[10], 0, mts, &end), 1);
    /* a slot pointing outside the stack is not followed */
    uintptr_t *slot = achain_slot();
    uintptr_t outside = (uintptr_t)heap[10];
    *slot = (uintptr_t)&outside;
    uintptr_t stack[4], l;
    CHECK_EQ(achain_read((uintptr_t)stack, (uintptr_t)(stack + 4), 0, mts, ACHAIN_MAX, &l, &end),
             0);
    *slot = 0;
    achain_types_clear();
}

/* The unhandled probe's read (achain_object_type): the MethodTable of the
 * object a frame's home holds, through the kernel; not during a
 * suspension (ask again), and a failed read or a MethodTable that is no
 * object's is said as such. */
static void test_achain_object_type(void)
{
    heap[20][0] = MT_BOX;
    uintptr_t home = (uintptr_t)heap[20], mt = 0;
    uint64_t reads = achain_kernel_reads();
    CHECK_EQ(achain_object_type((uintptr_t)&home, &mt), 1);
    CHECK_EQ(mt, (uintptr_t)MT_BOX);
    CHECK(achain_kernel_reads() > reads);
    achain_suspend_begin();
    mt = 0;
    CHECK_EQ(achain_object_type((uintptr_t)&home, &mt), 0);
    CHECK_EQ(mt, 0);
    achain_suspend_end();
    CHECK_EQ(achain_object_type((uintptr_t)&home, &mt), 1);
    void *gone = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    REQUIRE(gone != MAP_FAILED);
    home = (uintptr_t)gone;
    CHECK_EQ(achain_object_type((uintptr_t)&home, &mt), -1);
    munmap(gone, 4096);
    home = 0; /* a null reference */
    CHECK_EQ(achain_object_type((uintptr_t)&home, &mt), -1);
    heap[20][0] = MT_BOX | 1; /* a collection's mark: no object's MethodTable */
    home = (uintptr_t)heap[20];
    CHECK_EQ(achain_object_type((uintptr_t)&home, &mt), -1);
    heap[20][0] = 0;
}

/* Outside cooperative mode each object is one system call: its
 * MethodTable and the reference followed from it come in one window (a
 * box, an action and a box: 7 word reads, 4 calls); an object in the
 * last bytes of a page before an unmapped one is read whole, the window
 * cut at the page's end (a window of 64 bytes would reach the unmapped
 * page, and the kernel fails such a read). */
static void test_achain_window(void)
{
    achain_types_clear();
    achain_set_coop_offset(-1);
    put_type(MT_BOX, ACHAIN_BOX, 8, -1, -1, -1);
    put_type(MT_ACTION, ACHAIN_FOLLOW, 16, -1, -1, -1);
    put_type(MT_END, ACHAIN_END, -1, -1, -1, -1);
    memset(heap, 0, sizeof heap);
    heap[20][0] = MT_BOX;
    heap[20][1] = (uintptr_t)heap[21];
    heap[21][0] = MT_ACTION;
    heap[21][2] = (uintptr_t)heap[22];
    heap[22][0] = MT_BOX;
    heap[22][1] = (uintptr_t)heap[23];
    heap[23][0] = MT_END;
    uint64_t mts[ACHAIN_MAX];
    uint32_t end;
    uint64_t before = achain_kernel_reads();
    CHECK_EQ(read_chain((uintptr_t)heap[20], 0, mts, &end), 4);
    CHECK_EQ(end, ACHAIN_END_KNOWN);
    CHECK_EQ(achain_kernel_reads() - before, 4);

    uint8_t *pages = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    REQUIRE(pages != MAP_FAILED);
    REQUIRE(mprotect(pages + 4096, 4096, PROT_NONE) == 0);
    uintptr_t *last = (uintptr_t *)(pages + 4096 - 16); /* a box in the page's last 16 bytes */
    last[0] = MT_BOX;
    last[1] = (uintptr_t)heap[23];
    heap[22][1] = (uintptr_t)last;
    CHECK_EQ(read_chain((uintptr_t)heap[20], 0, mts, &end), 5);
    CHECK_EQ(end, ACHAIN_END_KNOWN);
    CHECK(mts[3] == MT_BOX && mts[4] == MT_END);
    /* and a reference into the unmapped page is a failed read, as before */
    last[1] = (uintptr_t)(pages + 4096);
    CHECK_EQ(read_chain((uintptr_t)heap[20], 0, mts, &end), 4);
    CHECK_EQ(end, ACHAIN_END_FAULT);
    munmap(pages, 8192);
    memset(heap, 0, sizeof heap);
    achain_types_clear();
}

/* Clearing forgets every type, each time: the table is only walked when
 * something was put since the last clear, and a put after a clear arms it
 * again. */
static void test_achain_clear(void)
{
    achain_types_clear();
    heap[12][0] = MT_END;
    uint64_t mts[ACHAIN_MAX];
    uint32_t end;
    for (int round = 0; round < 3; round++) {
        put_type(MT_END, ACHAIN_END, -1, -1, -1, -1);
        CHECK_EQ(read_chain((uintptr_t)heap[12], 0, mts, &end), 1);
        CHECK_EQ(end, ACHAIN_END_KNOWN);
        achain_types_clear();
        /* a type the table no longer knows: the chain ends at it */
        CHECK_EQ(read_chain((uintptr_t)heap[12], 0, mts, &end), 1);
        CHECK_EQ(end, ACHAIN_END_UNKNOWN);
        achain_types_clear(); /* nothing put: nothing to do, still empty */
        CHECK_EQ(read_chain((uintptr_t)heap[12], 0, mts, &end), 1);
        CHECK_EQ(end, ACHAIN_END_UNKNOWN);
    }
    heap[12][0] = 0;
}

void suite_achain(void)
{
    RUN(test_achain_read);
    RUN(test_achain_guarded);
    RUN(test_achain_object_type);
    RUN(test_achain_window);
    RUN(test_achain_clear);
}
