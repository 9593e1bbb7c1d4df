/*
 * Tests of resolve (agent/resolve.h): instruction pointers to frames.
 * Managed code the code index holds is its range's frame; native code is
 * named by its library and symbol, one frame per function, and classed as
 * the program's, the runtime's or the agent's own; an address nothing
 * knows (the runtime, asked, does not know it either) is [unknown] and
 * counted each time it is seen; the cache of managed addresses is dropped
 * when code is unloaded; a library unloaded while its address is named
 * (issue 20.6).  The runtime is a fake ICorProfilerInfo here, of which only
 * GetFunctionFromIP is called.
 */
#include <dlfcn.h>
#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "agent/codemap.h"
#include "agent/recorder.h"
#include "agent/resolve.h"
#include "agent/stubcode.h"
#include "common/clock.h"
#include "common/config.h"
#include "fixture.h"
#include "format/recording.h"
#include "test.h"

static int asked;

static HRESULT STDMETHODCALLTYPE no_function_from_ip(ICorProfilerInfo15 *self, LPCBYTE ip,
                                                     FunctionID *function)
{
    (void)self;
    (void)ip;
    asked++;
    *function = 0;
    return E_FAIL;
}

struct setup {
    char path[64];
    ICorProfilerInfo15Vtbl vtbl;
    ICorProfilerInfo15 info;
    struct recorder rec;
    struct names names;
    struct resolver r;
};

static int start(struct setup *s)
{
    memset(s, 0, sizeof *s);
    snprintf(s->path, sizeof s->path, "/tmp/corscope-unit-resolve.XXXXXX");
    s->vtbl.GetFunctionFromIP = no_function_from_ip;
    s->info.lpVtbl = &s->vtbl;
    if (fixture_recorder(&s->rec, s->path) < 0)
        return -1;
    codemap_init(&s->info, 15, &s->rec);
    if (names_init(&s->names, &s->info, 15, &s->rec) < 0)
        return -1;
    resolve_init(&s->r, &s->info, &s->names, &s->rec);
    asked = 0;
    return 0;
}

/* Closes the recording and reads it back into *out (NULL: just clean up). */
static int finish(struct setup *s, struct recording *out)
{
    resolve_free(&s->r);
    names_free(&s->names);
    codemap_shutdown();
    recorder_close(&s->rec);
    char err[256];
    int rc = out ? rec_load_file(s->path, out, err, sizeof err) : 0;
    unlink(s->path);
    return rc;
}

static int frame_is(const struct recording *r, uint32_t frame, const char *module_suffix,
                    const char *name)
{
    if (frame >= r->frame_count)
        return 0;
    const struct rec_frame *f = &r->frames[frame];
    struct rec_str m = r->strings[f->module], n = r->strings[f->name];
    size_t k = strlen(module_suffix);
    return m.len >= k && !memcmp(m.p + m.len - k, module_suffix, k) && rec_str_eq(n, name);
}

/* A range of managed code the index holds is its frame, whatever the
 * address inside it; a return address is looked up inside the call. */
static void test_resolve_managed(void)
{
    struct setup s;
    REQUIRE(start(&s) == 0);
    uint32_t run = recorder_frame(&s.rec, FMT_FRAME_MANAGED, "/app/App.dll", "App.Work", "Run", 0);
    REQUIRE(run);
    struct code_range range = {0x7000000, 0x7000100, 0x7000000, 0x1234, 0, run, 1};
    code_index_insert(&range);
    uint64_t now = clock_now_ns();
    CHECK_EQ(resolve_ip(&s.r, 0x7000000, 0, now), run);
    CHECK_EQ(resolve_ip(&s.r, 0x70000ff, 0, now), run);
    CHECK_EQ(resolve_ip(&s.r, 0x7000100, 1, now), run); /* returns to the range's end */
    CHECK_EQ(resolve_frame_class(&s.r, run), FRAME_MANAGED);
    CHECK_EQ(asked, 0);
    CHECK_EQ(s.rec.counters[FMT_COUNTER_UNRESOLVED], 0);
    finish(&s, NULL);
}

/* Native code: one frame per function, named library!symbol, classed as
 * the program's; this test program's own code is classed as the agent's
 * (the resolver is linked into it). */
static void test_resolve_native(void)
{
    struct setup s;
    REQUIRE(start(&s) == 0);
    uint64_t now = clock_now_ns();
    uintptr_t q = (uintptr_t)getenv; /* 204 bytes in Debian 12's libc */
    uint32_t a = resolve_ip(&s.r, q + 4, 0, now), b = resolve_ip(&s.r, q + 20, 0, now);
    CHECK(a != 0);
    CHECK_EQ(a, b);
    CHECK_EQ(resolve_frame_class(&s.r, a), FRAME_NATIVE);
    uint32_t own = resolve_ip(&s.r, (uintptr_t)test_resolve_native + 4, 0, now);
    CHECK(own != 0 && own != a);
    CHECK_EQ(resolve_frame_class(&s.r, own), FRAME_AGENT);
    CHECK_EQ(asked, 0);
    struct recording r;
    REQUIRE(finish(&s, &r) == 0);
    CHECK(frame_is(&r, a, "libc.so.6", "getenv"));
    CHECK_EQ(r.frames[a].kind, FMT_FRAME_NATIVE);
    CHECK(frame_is(&r, own, "unit-tests", "test_resolve_native"));
    rec_free(&r);
}

static void test_runtime_modules(void)
{
    CHECK(resolve_is_runtime_module("libcoreclr.so"));
    CHECK(resolve_is_runtime_module("libclrjit.so"));
    CHECK(!resolve_is_runtime_module("libc.so.6"));
    CHECK(!resolve_is_runtime_module("libcorscope.so"));
}

/* An address in no range and no library: the runtime is asked (no code
 * was unloaded since it was seen), does not know it either, and it is
 * [unknown], counted every time a sample has it, asked about once. */
static void test_resolve_unknown(void)
{
    struct setup s;
    REQUIRE(start(&s) == 0);
    uint64_t now = clock_now_ns();
    uint32_t u = resolve_ip(&s.r, 0x10, 0, now);
    CHECK(u != 0);
    CHECK_EQ(resolve_ip(&s.r, 0x10, 0, now), u);
    CHECK_EQ(asked, 1);
    CHECK_EQ(s.rec.counters[FMT_COUNTER_UNRESOLVED], 2);
    CHECK_EQ(resolve_frame_class(&s.r, u), FRAME_OTHER);
    struct recording r;
    REQUIRE(finish(&s, &r) == 0);
    REQUIRE(u < r.frame_count);
    CHECK_EQ(r.frames[u].kind, FMT_FRAME_SYNTHETIC);
    CHECK(rec_str_eq(r.strings[r.frames[u].name], "[unknown]"));
    rec_free(&r);
}

/* An address the runtime does not know either, in executable memory of
 * no file (a page mapped here as the runtime's allocator maps its stubs):
 * the runtime's `[runtime stub]` at its offset, no unresolved frame. */
static void test_resolve_stub(void)
{
    long page = sysconf(_SC_PAGESIZE);
    uint8_t *code = mmap(NULL, 2 * (size_t)page, PROT_READ | PROT_EXEC,
                         MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    REQUIRE(code != MAP_FAILED);
    struct setup s;
    REQUIRE(start(&s) == 0);
    uint64_t now = clock_now_ns();
    uintptr_t at = (uintptr_t)code + (size_t)page + 0x43;
    uint32_t stub = resolve_ip(&s.r, at, 0, now);
    CHECK(stub != 0);
    CHECK_EQ(resolve_ip(&s.r, at, 0, now), stub);
    CHECK_EQ(asked, 1);
    CHECK_EQ(s.rec.counters[FMT_COUNTER_UNRESOLVED], 0);
    CHECK_EQ(resolve_frame_class(&s.r, stub), FRAME_RUNTIME);
    struct recording r;
    REQUIRE(finish(&s, &r) == 0);
    munmap(code, 2 * (size_t)page);
    REQUIRE(stub < r.frame_count);
    CHECK_EQ(r.frames[stub].kind, FMT_FRAME_RUNTIME);
    CHECK(rec_str_eq(r.strings[r.frames[stub].module], RESOLVE_STUB_MODULE));
    CHECK(r.frames[stub].extra >= (uint64_t)page + 0x43); /* the mapping may begin before code */
    rec_free(&r);
}

static uint64_t stub_clock_ns = 5000000000ull;

static uint64_t stub_clock(void)
{
    return stub_clock_ns;
}

/* A stub mapped after the copy of the mappings was read, too recently to
 * read it again: [unknown] for now, but not remembered as such: the next
 * sample asks again, and once the copy is read anew it is the stub. */
static void test_resolve_stub_later(void)
{
    uintptr_t ignored;
    stubcode_free();
    stubcode_test_clock(stub_clock);
    stubcode_find(0x10, &ignored); /* the copy, read now */
    long page = sysconf(_SC_PAGESIZE);
    uint8_t *code = mmap(NULL, (size_t)page, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    REQUIRE(code != MAP_FAILED);
    struct setup s;
    REQUIRE(start(&s) == 0);
    uint64_t now = clock_now_ns();
    uintptr_t at = (uintptr_t)code + 0x10;
    uint32_t first = resolve_ip(&s.r, at, 0, now);
    CHECK_EQ(s.rec.counters[FMT_COUNTER_UNRESOLVED], 1);
    resolve_ip(&s.r, at, 0, now);
    CHECK_EQ(asked, 2); /* not remembered */
    stub_clock_ns += 10000000; /* 10 ms later: read again */
    uint32_t later = resolve_ip(&s.r, at, 0, now);
    CHECK(later != first);
    CHECK_EQ(resolve_frame_class(&s.r, later), FRAME_RUNTIME);
    CHECK_EQ(s.rec.counters[FMT_COUNTER_UNRESOLVED], 2);
    struct recording r;
    REQUIRE(finish(&s, &r) == 0);
    munmap(code, (size_t)page);
    stubcode_test_clock(NULL);
    rec_free(&r);
}

/* Code that can be unloaded: after its module's unload its addresses are
 * no longer its frame once the managed cache is forgotten (the loop does
 * so at every unload). */
static void test_resolve_forget(void)
{
    struct setup s;
    REQUIRE(start(&s) == 0);
    uint32_t gone = recorder_frame(&s.rec, FMT_FRAME_MANAGED, "/app/Plugin.dll", "Plugin", "Go", 0);
    struct code_range range = {0x7100000, 0x7100100, 0x7100000, 0x5678, 77, gone, 0};
    code_index_insert(&range);
    uint64_t now = clock_now_ns();
    CHECK_EQ(resolve_ip(&s.r, 0x7100010, 0, now), gone);
    codemap_remove(77, 0);
    CHECK_EQ(resolve_ip(&s.r, 0x7100010, 0, now), gone); /* the cache, until forgotten */
    resolve_forget(&s.r);
    uint32_t after = resolve_ip(&s.r, 0x7100010, 0, clock_now_ns());
    CHECK(after != gone);
    CHECK_EQ(asked, 1);
    finish(&s, NULL);
}

/* ---- issue 20.6: a library unloaded while its address is named ------------ */

static void *unloadable;

static void unload_it(void)
{
    if (unloadable)
        dlclose(unloadable);
    unloadable = NULL;
}

/* The collector names an address in a library the program unloads at that
 * moment (NativeLibrary.Free on another thread): the loader's answer must
 * not be read after the loader let go of the library.  Here it is unloaded
 * between the lookup and the use of its answer (before: the names and the
 * symbol entry dladdr1 pointed at were read there, unmapped: a crash). */
static void test_native_name_of_unloaded_library(void)
{
    char lib[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", lib, sizeof lib - 32);
    REQUIRE(n > 0);
    lib[n] = '\0';
    strcpy(strrchr(lib, '/') + 1, "unloadable.so");
    unloadable = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    REQUIRE(unloadable != NULL);
    int (*work)(int) = (int (*)(int))dlsym(unloadable, "unloadable_work");
    REQUIRE(work != NULL);
    uintptr_t at = (uintptr_t)work + 4;
    char path[] = "/tmp/corscope-unit-unload.XXXXXX";
    int fd = mkstemp(path);
    REQUIRE(fd >= 0);
    close(fd);
    struct config cfg;
    config_defaults(&cfg);
    struct recorder rec;
    char err[256];
    REQUIRE(recorder_open(&rec, &cfg, path, err, sizeof err) == 0);
    struct resolver r;
    resolve_init(&r, NULL, NULL, &rec);
    resolve_test_after_lookup(unload_it);
    uint32_t frame = resolve_ip(&r, at, 0, 0);
    resolve_test_after_lookup(NULL);
    CHECK(unloadable == NULL); /* it was unloaded in between */
    Dl_info info;
    CHECK(!dladdr((void *)at, &info)); /* and is gone */
    CHECK(frame != 0);
    /* named from what was copied while it was there */
    int named = 0;
    for (size_t i = 1; i < r.native_keys.count; i++) {
        const char *key = r.native_keys.strs[i];
        const char *nl = strchr(key, '\n');
        named += nl && !strcmp(nl + 1, "unloadable_work") && nl - key == (ptrdiff_t)strlen(lib) &&
                 !strncmp(key, lib, strlen(lib));
    }
    CHECK_EQ(named, 1);
    resolve_free(&r);
    recorder_close(&rec);
    unlink(path);
}

void suite_resolve(void)
{
    RUN(test_resolve_managed);
    RUN(test_resolve_native);
    RUN(test_runtime_modules);
    RUN(test_resolve_unknown);
    RUN(test_resolve_stub);
    RUN(test_resolve_stub_later);
    RUN(test_resolve_forget);
    RUN(test_native_name_of_unloaded_library);
}
