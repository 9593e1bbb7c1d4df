/*
 * Tests of anoncode (agent/anoncode.h): of the mappings /proc/self/maps
 * lists, only executable memory of no file (empty path, "[anon:...]", a
 * memfd, deleted or not) is where the runtime's stubs may be; files, the
 * stack, [vdso] and memory that cannot execute are not.  And in this very
 * process, a page mapped executable and anonymous is found (the file read
 * again for an address it did not hold), a libc function is not.
 */
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "agent/anoncode.h"
#include "test.h"

static const char maps[] =
    "7f0ee0840000-7f0ee0841000 r-xs 00000000 00:01 62                         /memfd:doublemapper (deleted)\n"
    "7f0ee0841000-7f0ee0842000 rw-s 00001000 00:01 62                         /memfd:doublemapper (deleted)\n"
    "7f0ee1890000-7f0ee18dc000 r-xs 00111000 00:01 62                         /memfd:doublemapper\n"
    "7f0ee2000000-7f0ee2001000 r-xp 00000000 00:00 0 \n"
    "7f0ee2100000-7f0ee2101000 rwxp 00000000 00:00 0                          [anon:jit]\n"
    "7f0ee3000000-7f0ee3100000 r-xp 00010000 08:01 1234                       /usr/lib/libc.so.6\n"
    "7ffc00000000-7ffc00021000 rwxp 00000000 00:00 0                          [stack]\n"
    "7ffc00100000-7ffc00102000 r-xp 00000000 00:00 0                          [vdso]\n";

static void test_which_mappings(void)
{
    REQUIRE(anoncode_load_text(maps) == 0);
    uintptr_t start = 0;
    CHECK(anoncode_find(0x7f0ee0840043u, &start) && start == 0x7f0ee0840000u);
    CHECK(!anoncode_find(0x7f0ee0841010u, &start)); /* the writable view */
    CHECK(anoncode_find(0x7f0ee18dbfffu, &start) && start == 0x7f0ee1890000u);
    CHECK(!anoncode_find(0x7f0ee18dc000u, &start)); /* one past the end */
    CHECK(anoncode_find(0x7f0ee2000010u, &start) && start == 0x7f0ee2000000u);
    CHECK(anoncode_find(0x7f0ee2100000u, &start));
    CHECK(!anoncode_find(0x7f0ee3000400u, &start)); /* a file */
    CHECK(!anoncode_find(0x7ffc00000100u, &start)); /* the stack */
    CHECK(!anoncode_find(0x7ffc00100100u, &start)); /* [vdso] */
    CHECK(!anoncode_find(0x7f0ee083ffffu, &start)); /* before any */
    /* malformed lines are skipped, not misread */
    REQUIRE(anoncode_load_text("garbage\n7f00-7e00 r-xp 0 00:00 0\n-\n\n10-20 r-xp zz\n") == 0);
    CHECK(!anoncode_find(0x7e80u, &start));
    anoncode_free();
}

static void test_this_process(void)
{
    anoncode_free(); /* the next miss reads /proc/self/maps */
    long page = sysconf(_SC_PAGESIZE);
    uint8_t *code = mmap(NULL, (size_t)page, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    REQUIRE(code != MAP_FAILED);
    uintptr_t start = 0;
    CHECK(anoncode_find((uintptr_t)code + 17, &start) && start <= (uintptr_t)code);
    CHECK(!anoncode_find((uintptr_t)&abort, &start));
    munmap(code, (size_t)page);
    anoncode_free();
}

void suite_anoncode(void)
{
    RUN(test_which_mappings);
    RUN(test_this_process);
}
