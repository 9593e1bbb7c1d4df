/*
 * Tests of codemap (agent/codemap.h) and the index it keeps
 * (agent/code_index.h): ranges found, replaced and removed by owner, no
 * write of the recording while the ids lock is held, and what the JIT
 * callback asks the runtime (a fake ICorProfilerInfo here).
 */
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "agent/codemap.h"
#include "common/clock.h"
#include "fixture.h"
#include "test.h"

/* The code map: lookups find the range that holds an address, after
 * thousands of insertions out of order (merged from the small array into
 * the large one on the way), and an unload removes only its own ranges. */
static void test_codemap(void)
{
    enum { N = 5000 };
    for (uint32_t i = 0; i < N; i++) {
        uint32_t k = (i * 7919u) % N; /* a permutation: out of order */
        struct code_range r = {0x100000 + k * 0x100, 0x100000 + k * 0x100 + 0x80,
                               0x100000 + k * 0x100, 1000 + k, 1 + k % 3, 0, 0};
        code_index_insert(&r);
    }
    CHECK_EQ(code_index_count(), N);
    for (uint32_t k = 0; k < N; k += 97) {
        const struct code_range *r = code_index_find(0x100000 + k * 0x100 + 0x40);
        CHECK(r && r->function == 1000 + k);
        CHECK(code_index_find(0x100000 + k * 0x100 + 0x80) == NULL); /* the gap after it */
    }
    CHECK(code_index_find(0xfffff) == NULL);
    /* a newer report of the same start replaces the older one */
    struct code_range again = {0x100000, 0x100090, 0x100000, 4242, 0, 0, 0}; /* a DynamicMethod */
    code_index_insert(&again);
    CHECK(code_index_find(0x100085) && code_index_find(0x100085)->function == 4242);
    uint32_t of_module_2 = 0;
    for (uint32_t k = 0; k < N; k++)
        of_module_2 += k % 3 == 1 && k != 0;
    codemap_remove(2, 0); /* module 2: a third of them */
    CHECK_EQ(code_index_count(), N - of_module_2);
    for (uint32_t k = 0; k < N; k += 97) {
        const struct code_range *r = code_index_find(0x100000 + k * 0x100 + 0x40);
        CHECK(k % 3 == 1 ? r == NULL : r != NULL);
    }
    /* the runtime reuses unloaded code's addresses, at other starts: a new
     * range that begins before a removed one and covers its place is found
     * there (a removed range left behind must not hide it) */
    struct code_range reuse = {0x100000 + 1 * 0x100 - 0x20, 0x100000 + 1 * 0x100 + 0x70,
                               0x100000 + 1 * 0x100 - 0x20, 7777, 9, 0, 0};
    code_index_insert(&reuse);
    CHECK(code_index_find(0x100000 + 1 * 0x100 + 0x40) && code_index_find(0x100000 + 1 * 0x100 + 0x40)->function == 7777);
    CHECK(code_index_find(0x100000 + 4 * 0x100 + 0x40) == NULL);
    /* a range that took an unloaded one's start belongs to its new owner */
    struct code_range took = {0x100000 + 4 * 0x100, 0x100000 + 4 * 0x100 + 0x80,
                              0x100000 + 4 * 0x100, 8888, 5, 0, 0};
    code_index_insert(&took);
    codemap_remove(2, 0);
    CHECK(code_index_find(0x100000 + 4 * 0x100 + 0x40) && code_index_find(0x100000 + 4 * 0x100 + 0x40)->function == 8888);
    codemap_remove(9, 0);
    codemap_remove(5, 0);
    CHECK_EQ(code_index_count(), N - of_module_2);
    codemap_remove(0, 4242); /* one function */
    CHECK(code_index_find(0x100040) == NULL);
    CHECK_EQ(code_index_count(), N - of_module_2 - 1);
    codemap_shutdown();
    CHECK_EQ(code_index_count(), 0);
}

static long long file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (long long)st.st_size : -1;
}

/* Rule 1: while the loop holds the code map's ids lock (which an unload
 * callback takes), the recording is not written to, however much is named
 * meanwhile: a stalled disk cannot hold the lock, and the program's unload
 * callbacks behind it.  What was named is written after the lock. */
static void test_no_write_under_ids_lock(void)
{
    char path[] = "/tmp/corscope-unit-hold.XXXXXX";
    struct recorder rec;
    REQUIRE(fixture_recorder(&rec, path) == 0);
    codemap_init(NULL, 0, &rec);
    long long before = file_size(path);
    REQUIRE(codemap_ids_begin(UINT64_MAX));
    char name[64];
    for (int i = 0; i < 20000; i++) { /* about 600 KiB: past the writer's flush threshold twice */
        snprintf(name, sizeof name, "Method_%d_with_a_long_enough_name", i);
        CHECK(recorder_frame(&rec, FMT_FRAME_MANAGED, "/app/App.dll", "App.Type", name, 0) != 0);
    }
    CHECK_EQ(file_size(path), before);
    recorder_maybe_flush(&rec, clock_now_ns() + RECORDER_FLUSH_NS); /* due, but held */
    CHECK_EQ(file_size(path), before);
    codemap_ids_end();
    recorder_frame(&rec, FMT_FRAME_MANAGED, "/app/App.dll", "App.Type", "After", 0);
    CHECK(file_size(path) > before + (512 << 10));
    recorder_close(&rec);
    codemap_shutdown();
    codemap_init(NULL, 0, NULL);
    unlink(path);
}

/* May ids seen at t be asked about?  (The lock let go at once.) */
static int granted(uint64_t t)
{
    if (!codemap_ids_begin(t))
        return 0;
    codemap_ids_end();
    return 1;
}

/* A collectible module's code goes in steps: ModuleUnloadStarted, the
 * runtime's suspension (APPDOMAIN_SHUTDOWN) that takes the code out of its
 * lists, the resume, and only then the freeing of its MethodDescs.  Ids
 * listed between the first step and the resume are of code about to be
 * freed: no question is allowed meanwhile, and ids seen before the resume
 * are stale after it.  (Asked about, they crashed an attach's catch-up in
 * GetFunctionInfo2 under tests/stress/attach.sh alc: the ids were listed
 * after ModuleUnloadStarted, which was all the old rule knew of.) */
static void test_unload_in_flight(void)
{
    codemap_init(NULL, 0, NULL);
    uint64_t before = clock_now_ns();
    CHECK(granted(before));
    codemap_unloading(7, 0); /* ModuleUnloadStarted */
    CHECK(!granted(before));
    uint64_t listed = clock_now_ns() + 1; /* EnumJITedFunctions2 after it */
    CHECK(!granted(listed)); /* its code is still listed */
    CHECK(codemap_unloaded_since(listed));
    codemap_unload_suspension(1);
    uint64_t during = clock_now_ns() + 1;
    CHECK(!granted(during));
    codemap_unload_suspension(0); /* resumed: the MethodDescs may go now */
    CHECK(!granted(during));
    CHECK(codemap_unloaded_since(during));
    uint64_t after = clock_now_ns() + 1;
    CHECK(!codemap_unloaded_since(after));
    CHECK(granted(after));
    /* a collection's resume changes nothing */
    codemap_unload_suspension(0);
    CHECK(granted(after));
    /* a DynamicMethod is freed right after its callback: no suspension
     * follows, and ids seen after it are good */
    codemap_unloading(0, 42);
    CHECK(!granted(after));
    uint64_t later = clock_now_ns() + 1;
    CHECK(granted(later));
    /* detached between an unload's announcement and its resume: the next
     * attach (the same library, its statics kept) hears of neither */
    codemap_unloading(8, 0);
    codemap_unload_suspension(1);
    codemap_shutdown();
    codemap_init(NULL, 0, NULL);
    uint64_t attached = clock_now_ns() + 1;
    CHECK(granted(attached));
    codemap_unload_suspension(0); /* a collection's resume, not the old one's */
    CHECK(granted(attached));
    codemap_shutdown();
    codemap_init(NULL, 0, NULL);
}

/* ---- the JIT callback against a fake runtime ------------------------------ */

/* Functions 1..9, each with one code range in `code`: 1 to 5 in module
 * STAYS (not collectible), 6 to 8 in module GOES (collectible), 9 in a
 * module the runtime says is 0 and knows nothing of. */
#define STAYS ((ModuleID)0x7f0000001000)
#define GOES ((ModuleID)0x7f0000002000)
static uint8_t code[10][64];
static int flag_asks[2]; /* GetModuleInfo2 for the flags alone: STAYS, GOES */

static HRESULT STDMETHODCALLTYPE fake_starts(ICorProfilerInfo15 *self, FunctionID f, ReJITID rejit,
                                             ULONG32 cap, ULONG32 *n, UINT_PTR starts[])
{
    (void)self;
    (void)rejit;
    if (f < 1 || f > 9 || cap < 1)
        return E_FAIL;
    *n = 1;
    starts[0] = (UINT_PTR)code[f];
    return S_OK;
}

static HRESULT STDMETHODCALLTYPE fake_code_info(ICorProfilerInfo15 *self, UINT_PTR start,
                                                ULONG32 cap, ULONG32 *n, COR_PRF_CODE_INFO parts[])
{
    (void)self;
    if (cap < 1)
        return E_FAIL;
    *n = 1;
    parts[0].startAddress = start;
    parts[0].size = sizeof code[0];
    return S_OK;
}

static HRESULT STDMETHODCALLTYPE fake_function_info(ICorProfilerInfo15 *self, FunctionID f,
                                                    COR_PRF_FRAME_INFO frame, ClassID *klass,
                                                    ModuleID *module, mdToken *token,
                                                    ULONG32 type_cap, ULONG32 *type_args,
                                                    ClassID types[])
{
    (void)self;
    (void)frame;
    (void)type_cap;
    (void)types;
    if (type_args) /* naming: not this test's */
        return E_FAIL;
    *klass = 0;
    *module = f <= 5 ? STAYS : f <= 8 ? GOES : 0;
    *token = 0x06000000 | (mdToken)f;
    return S_OK;
}

static HRESULT STDMETHODCALLTYPE fake_is_dynamic(ICorProfilerInfo15 *self, FunctionID f,
                                                 BOOL *dynamic)
{
    (void)self;
    (void)f;
    *dynamic = FALSE;
    return S_OK;
}

static HRESULT STDMETHODCALLTYPE fake_module_info(ICorProfilerInfo15 *self, ModuleID module,
                                                  LPCBYTE *base, ULONG cap, ULONG *len, WCHAR name[],
                                                  AssemblyID *assembly, DWORD *flags)
{
    (void)self;
    (void)name;
    if (cap || !module) /* naming: not this test's */
        return E_FAIL;
    flag_asks[module == GOES]++;
    *base = NULL;
    *len = 0;
    *assembly = 1;
    *flags = module == GOES ? COR_PRF_MODULE_COLLECTIBLE : 0;
    return S_OK;
}

/* Whether a compiled method's code may go is its module's: a module that
 * is not collectible is asked about once (it was asked at every method, a
 * tenth to a fifth of the callback's time in a compiler), a collectible
 * one every time, and only the first kind's code is kept for good. */
static void test_module_asked_once(void)
{
    ICorProfilerInfo15Vtbl vtbl;
    memset(&vtbl, 0, sizeof vtbl);
    vtbl.GetNativeCodeStartAddresses = fake_starts;
    vtbl.GetCodeInfo4 = fake_code_info;
    vtbl.GetFunctionInfo2 = fake_function_info;
    vtbl.GetModuleInfo2 = fake_module_info;
    vtbl.IsFunctionDynamic = fake_is_dynamic;
    ICorProfilerInfo15 info = {&vtbl};
    memset(code, 0x90, sizeof code); /* nop: a shape the walker does not know */
    flag_asks[0] = flag_asks[1] = 0;
    codemap_init(&info, 15, NULL);
    for (int round = 0; round < 2; round++)
        for (FunctionID f = 1; f <= 9; f++)
            codemap_jitted(f, 0);
    CHECK_EQ(flag_asks[0], 1);
    CHECK_EQ(flag_asks[1], 6); /* three methods, twice */
    codemap_update(NULL, NULL, NULL);
    for (FunctionID f = 1; f <= 5; f++) {
        const struct code_range *r = code_index_find((uintptr_t)code[f] + 8);
        CHECK(r && r->function == f && r->permanent);
        CHECK(codemap_permanent(f));
    }
    for (FunctionID f = 6; f <= 9; f++)
        CHECK(!codemap_permanent(f)); /* not named here: dropped, not kept for good */
    codemap_shutdown();
    codemap_init(NULL, 0, NULL);
}

void suite_codemap(void)
{
    RUN(test_codemap);
    RUN(test_no_write_under_ids_lock);
    RUN(test_unload_in_flight);
    RUN(test_module_asked_once);
}
