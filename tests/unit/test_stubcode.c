/*
 * Tests of stubcode (agent/stubcode.h): of the mappings /proc/self/maps
 * lists, only executable memory of no file (empty path, "[anon:...]", a
 * memfd, deleted or not) is where the runtime's stubs may be; files (PE
 * images included: what the runtime cannot name there may be a method),
 * the stack, [vdso] and memory that cannot execute are not.  A miss right after a read says the copy was
 * too recent to read again.  And in this very process, a page mapped
 * executable and anonymous is found (the file read again for an address
 * it did not hold), a libc function is not.  Where the kernel answers for
 * one address (vma_query.h), a miss asks it and never reads the file: the
 * answer is current (no, not stale), and its mapping replaces any range of
 * the copy it overlaps.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "agent/signal/thread_rings.h"
#include "agent/signal/vma_query.h"
#include "agent/stubcode.h"
#include "common/procmaps.h"
#include "test.h"

static const char maps[] =
    "7f0ee0840000-7f0ee0841000 r-xs 00000000 00:01 62                         /memfd:doublemapper (deleted)\n"
    "7f0ee0841000-7f0ee0842000 rw-s 00001000 00:01 62                         /memfd:doublemapper (deleted)\n"
    "7f0ee1890000-7f0ee18dc000 r-xs 00111000 00:01 62                         /memfd:doublemapper\n"
    "7f0ee2000000-7f0ee2001000 r-xp 00000000 00:00 0 \n"
    "7f0ee2100000-7f0ee2101000 rwxp 00000000 00:00 0                          [anon:jit]\n"
    "7f0ee3000000-7f0ee3100000 r-xp 00010000 08:01 1234                       /usr/lib/libc.so.6\n"
    "7f0ee4000000-7f0ee4100000 r-xp 00000000 08:01 1235                       /usr/share/dotnet/System.Private.CoreLib.dll\n"
    "7f0ee4200000-7f0ee4300000 r-xp 00000000 08:01 1236                       /app/Tool.exe (deleted)\n"
    "7f0ee4400000-7f0ee4500000 r-xp 00000000 00:00 0                          [vsyscall]\n"
    "7ffc00000000-7ffc00021000 rwxp 00000000 00:00 0                          [stack]\n"
    "7ffc00100000-7ffc00102000 r-xp 00000000 00:00 0                          [vdso]\n";

static uint64_t fake_ns = 1000000000000ull;

static uint64_t fake_now(void)
{
    return fake_ns;
}

static void test_which_mappings(void)
{
    stubcode_test_clock(fake_now);
    REQUIRE(stubcode_load_text(maps) == 0);
    uintptr_t start = 0;
    CHECK(stubcode_find(0x7f0ee0840043u, &start) == STUBCODE_YES && start == 0x7f0ee0840000u);
    CHECK(STUBCODE_YES != stubcode_find(0x7f0ee0841010u, &start)); /* the writable view */
    CHECK(stubcode_find(0x7f0ee18dbfffu, &start) == STUBCODE_YES && start == 0x7f0ee1890000u);
    CHECK(STUBCODE_YES != stubcode_find(0x7f0ee18dc000u, &start)); /* one past the end */
    CHECK(stubcode_find(0x7f0ee2000010u, &start) == STUBCODE_YES && start == 0x7f0ee2000000u);
    CHECK(stubcode_find(0x7f0ee2100000u, &start) == STUBCODE_YES);
    CHECK(STUBCODE_YES != stubcode_find(0x7f0ee3000400u, &start)); /* a file */
    CHECK(STUBCODE_YES != stubcode_find(0x7ffc00000100u, &start)); /* the stack */
    CHECK(STUBCODE_YES != stubcode_find(0x7ffc00100100u, &start)); /* [vdso] */
    CHECK(STUBCODE_YES != stubcode_find(0x7f0ee083ffffu, &start)); /* before any */
    CHECK(STUBCODE_YES != stubcode_find(0x7f0ee4000100u, &start)); /* a PE image */
    CHECK(STUBCODE_YES != stubcode_find(0x7f0ee4200100u, &start));
    CHECK(STUBCODE_YES != stubcode_find(0x7f0ee4400100u, &start));
    /* the copy was read just now: a miss is stale, not a no */
    CHECK_EQ(stubcode_find(0x7f0ee083ffffu, &start), STUBCODE_STALE);
    fake_ns += 9000000; /* 9 ms on: still */
    CHECK_EQ(stubcode_find(0x7f0ee083ffffu, &start), STUBCODE_STALE);
    stubcode_test_clock(NULL);
    /* malformed lines are skipped, not misread */
    REQUIRE(stubcode_load_text("garbage\n7f00-7e00 r-xp 0 00:00 0\n-\n\n10-20 r-xp zz\n") == 0);
    CHECK(STUBCODE_YES != stubcode_find(0x7e80u, &start));
    stubcode_free();
}

/* Misses 10 ms apart read /proc/self/maps again, eight times a second at
 * most; the next window reads again. */
static void test_read_budget(void)
{
    stubcode_free();
    stubcode_test_clock(fake_now);
    uintptr_t start;
    int read = 0;
    for (int i = 0; i < 12; i++) {
        fake_ns += 11000000; /* 11 ms */
        read += stubcode_find(0x10, &start) == STUBCODE_NO; /* read, not found */
    }
    CHECK_EQ(read, 8);
    fake_ns += 1000000000;
    CHECK_EQ(stubcode_find(0x10, &start), STUBCODE_NO);
    stubcode_test_clock(NULL);
    stubcode_free();
}

static void test_this_process(void)
{
    stubcode_free(); /* the next miss reads /proc/self/maps */
    long page = sysconf(_SC_PAGESIZE);
    uint8_t *code = mmap(NULL, (size_t)page, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    REQUIRE(code != MAP_FAILED);
    uintptr_t start = 0;
    CHECK(stubcode_find((uintptr_t)code + 17, &start) == STUBCODE_YES && start <= (uintptr_t)code);
    /* read just now, for the page: the copy holds this process's mappings */
    CHECK(STUBCODE_YES != stubcode_find((uintptr_t)&abort, &start));
    munmap(code, (size_t)page);
    stubcode_free();
}

static void test_kernel_answers(void)
{
    REQUIRE(thread_rings_init() == 0);
    if (!vma_query_start(open("/proc/self/maps", O_RDONLY | O_CLOEXEC))) {
        thread_rings_shutdown();
        return; /* an older kernel: test_vma_query says whether it should */
    }
    long page = sysconf(_SC_PAGESIZE);
    uint8_t *code = mmap(NULL, (size_t)page * 2, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    REQUIRE(code != MAP_FAILED);
    REQUIRE(munmap(code + page, (size_t)page) == 0);
    /* a copy with a stale range over the page's second half and beyond */
    char text[256];
    snprintf(text, sizeof text, "%lx-%lx r-xp 00000000 00:00 0\n%lx-%lx r-xp 00000000 00:00 0\n",
             (unsigned long)0x1000, (unsigned long)0x2000, (unsigned long)(code + page / 2),
             (unsigned long)(code + 2 * page));
    stubcode_test_clock(fake_now);
    REQUIRE(stubcode_load_text(text) == 0); /* read "now": the file would not be read again */
    uint64_t reads = procmaps_reads();
    uintptr_t start = 0;
    CHECK(stubcode_find((uintptr_t)code + 5, &start) == STUBCODE_YES && start == (uintptr_t)code);
    /* the kernel's mapping took the stale range's place */
    CHECK(stubcode_find((uintptr_t)code + page / 2 + 1, &start) == STUBCODE_YES &&
          start == (uintptr_t)code);
    CHECK_EQ(stubcode_find((uintptr_t)code + page + 8, &start), STUBCODE_NO); /* unmapped */
    CHECK_EQ(stubcode_find((uintptr_t)&abort, &start), STUBCODE_NO);         /* a file */
    CHECK(stubcode_find(0x1800, &start) == STUBCODE_YES && start == 0x1000); /* kept */
    CHECK_EQ(procmaps_reads(), reads);
    vma_query_test_refuse(1); /* as before 6.11: a miss this soon after a read is stale */
    CHECK_EQ(stubcode_find((uintptr_t)&abort, &start), STUBCODE_STALE);
    vma_query_test_refuse(0);
    stubcode_test_clock(NULL);
    munmap(code, (size_t)page);
    stubcode_free();
    vma_query_stop();
    thread_rings_shutdown();
}

void suite_stubcode(void)
{
    RUN(test_which_mappings);
    RUN(test_read_budget);
    RUN(test_this_process);
    RUN(test_kernel_answers);
}
