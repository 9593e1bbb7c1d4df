/*
 * Tests of dynsym (agent/dynsym.h): the loader's answer for an address,
 * copied while the loader holds the library (issue 20.6: dladdr1's
 * answer was read after the library could be unloaded), checked against
 * dladdr1 itself.
 */
#include <dlfcn.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>

#include "agent/dynsym.h"
#include "agent/dynsym_cache.h"
#include "test.h"

/* What the copy says is what dladdr1 says (the object, where it is
 * mapped, the exported symbol covering the address), across libc's code
 * around qsort, the vDSO (whose dynamic section the loader does not
 * relocate) and this program; while nothing is unloaded. */
static int agrees_with_dladdr(uintptr_t at)
{
    Dl_info info;
    const ElfW(Sym) *sym = NULL;
    struct dynsym_hit hit;
    int known = dladdr1((void *)at, &info, (void **)&sym, RTLD_DL_SYMENT) != 0;
    if (dynsym_lookup(at, &hit) != known)
        return 0;
    if (!known)
        return 1;
    const char *want = info.dli_sname && sym && (uintptr_t)info.dli_saddr <= at ? info.dli_sname : "";
    return !strcmp(hit.module, info.dli_fname) && hit.base == (uintptr_t)info.dli_fbase &&
           !strcmp(hit.symbol, want) && (!want[0] || hit.symbol_start == (uintptr_t)info.dli_saddr);
}

static void test_dynsym_agrees_with_the_loader(void)
{
    uintptr_t around[3] = {(uintptr_t)(void *)qsort, (uintptr_t)getauxval(AT_SYSINFO_EHDR),
                           (uintptr_t)(void *)test_dynsym_agrees_with_the_loader};
    uintptr_t span[3] = {1 << 18, 1 << 13, 1 << 12};
    for (int k = 0; k < 3; k++) {
        if (!around[k])
            continue;
        size_t tried = 0, differ = 0, named = 0;
        for (uintptr_t at = around[k] - span[k] / 2; at < around[k] + span[k] / 2; at += 7) {
            Dl_info info;
            if (!dladdr((void *)at, &info))
                continue;
            tried++;
            named += info.dli_sname != NULL;
            if (!agrees_with_dladdr(at)) {
                if (differ++ < 3) {
                    struct dynsym_hit hit;
                    dynsym_lookup(at, &hit);
                    printf("  differ at %#lx: dladdr %s %s, dynsym %s %s\n", (unsigned long)at,
                           info.dli_fname, info.dli_sname ? info.dli_sname : "-", hit.module,
                           hit.symbol);
                }
            }
        }
        CHECK(tried > 100);
        CHECK_EQ(differ, 0);
        if (k < 2)
            CHECK(named > 10);
    }
}

/* dynsym_lookup_if: the object as dynsym_lookup finds it, and its symbol
 * only when asked for (the resolver asks only for a library whose full
 * table it lacks), by the object's file. */
static const char *asked_for;
static int refuse(const char *file, void *ctx)
{
    (void)ctx;
    asked_for = file;
    return 0;
}

static void test_dynsym_lookup_if(void)
{
    uintptr_t at[3] = {(uintptr_t)(void *)qsort + 3, (uintptr_t)(void *)test_dynsym_lookup_if,
                       (uintptr_t)(void *)dynsym_lookup_if};
    for (int k = 0; k < 3; k++) {
        struct dynsym_hit full, located;
        REQUIRE(dynsym_lookup(at[k], &full) == 1);
        asked_for = NULL;
        REQUIRE(dynsym_lookup_if(at[k], &located, refuse, NULL, NULL) == 1);
        CHECK(asked_for && !strcmp(asked_for, full.file));
        CHECK(!strcmp(located.module, full.module));
        CHECK(!strcmp(located.file, full.file));
        CHECK_EQ(located.bias, full.bias);
        CHECK_EQ(located.base, full.base);
        CHECK(located.symbol[0] == 0);
        CHECK_EQ(located.symbol_start, 0);
    }
    struct dynsym_hit full;
    REQUIRE(dynsym_lookup((uintptr_t)(void *)qsort + 3, &full) == 1);
    CHECK(full.symbol[0] != 0); /* qsort, or a sanitizer's interceptor of it */
    struct dynsym_hit none;
    CHECK_EQ(dynsym_lookup_if(8, &none, refuse, NULL, NULL), 0);
}

/* Through a cache (each object's exports copied and sorted once), the
 * same answers as the scan of the loader's table: around qsort (libc's
 * 3,000 exports), in the vDSO and in this program; and a library loaded,
 * looked up, unloaded and loaded again is looked up afresh (the cache is
 * dropped when the loader's count of unloads moves: another object may
 * now hold the address). */
static int same_hit(const struct dynsym_hit *a, const struct dynsym_hit *b)
{
    return !strcmp(a->module, b->module) && !strcmp(a->file, b->file) && a->bias == b->bias &&
           a->base == b->base && !strcmp(a->symbol, b->symbol) && a->symbol_start == b->symbol_start;
}

static void test_dynsym_cache(void)
{
    struct dynsym_cache *cache = dynsym_cache_new();
    REQUIRE(cache);
    uintptr_t around[3] = {(uintptr_t)(void *)qsort, (uintptr_t)getauxval(AT_SYSINFO_EHDR),
                           (uintptr_t)(void *)test_dynsym_cache};
    uintptr_t span[3] = {1 << 20, 1 << 13, 1 << 12};
    for (int k = 0; k < 3; k++) {
        if (!around[k])
            continue;
        size_t tried = 0, differ = 0, named = 0;
        for (uintptr_t at = around[k] - span[k] / 2; at < around[k] + span[k] / 2; at += 5) {
            struct dynsym_hit scanned, cached;
            int s = dynsym_lookup(at, &scanned);
            int c = dynsym_lookup_if(at, &cached, NULL, NULL, cache);
            tried += s;
            named += s && scanned.symbol[0];
            if (s != c || (s && !same_hit(&scanned, &cached))) {
                if (differ++ < 3)
                    printf("  differ at %#lx: scan %s, cache %s\n", (unsigned long)at,
                           scanned.symbol, cached.symbol);
            }
        }
        CHECK(tried > 100);
        CHECK_EQ(differ, 0);
        if (k == 0)
            CHECK(named > 1000);
    }
    /* an object whose symbol is not wanted: located alike, the first time
     * through the loader and then from the cache's record */
    for (int k = 0; k < 3; k++) {
        if (!around[k])
            continue;
        struct dynsym_hit plain, first, again;
        int found = dynsym_lookup_if(around[k] + 1, &plain, refuse, NULL, NULL);
        CHECK_EQ(dynsym_lookup_if(around[k] + 1, &first, refuse, NULL, cache), found);
        CHECK_EQ(dynsym_lookup_if(around[k] + 1, &again, refuse, NULL, cache), found);
        CHECK(!found || (same_hit(&plain, &first) && same_hit(&plain, &again)));
        CHECK(plain.symbol[0] == 0);
    }
    for (int round = 0; round < 2; round++) {
        /* a library of its own code (libresolv's functions are libc's
         * now), which nothing else here loads */
        void *lib = dlopen("libbz2.so.1.0", RTLD_NOW | RTLD_LOCAL);
        REQUIRE(lib);
        void *fn = dlsym(lib, "BZ2_bzlibVersion");
        REQUIRE(fn);
        struct dynsym_hit scanned, cached;
        size_t held = dynsym_cache_objects(cache);
        REQUIRE(dynsym_lookup((uintptr_t)fn + 1, &scanned) == 1);
        REQUIRE(dynsym_lookup_if((uintptr_t)fn + 1, &cached, NULL, NULL, cache) == 1);
        CHECK(same_hit(&scanned, &cached));
        CHECK(cached.symbol[0] != 0);
        /* the first round adds the library to the objects above; the
         * second finds the cache dropped by the unload between */
        if (round == 0)
            CHECK(held >= 2 && dynsym_cache_objects(cache) == held + 1);
        else
            CHECK_EQ(dynsym_cache_objects(cache), 1);
        dlclose(lib);
    }
    dynsym_cache_free(cache);
}

/* An object without a dynamic table (made up here: one loaded segment
 * over a buffer): past its first lookups its record answers, with no
 * symbol as the scan finds none, instead of trying the copy again at
 * every lookup (it did: each lookup fell back to the scan); and the
 * record is freed like any other. */
static void test_dynsym_cache_without_table(void)
{
    static const unsigned char code[256];
    struct dynsym_cache *cache = dynsym_cache_new();
    REQUIRE(cache);
    ElfW(Phdr) load = {.p_type = PT_LOAD, .p_flags = PF_R | PF_X, .p_filesz = sizeof code,
                       .p_memsz = sizeof code};
    struct dl_phdr_info info = {.dlpi_addr = (uintptr_t)code, .dlpi_name = "/made/up/libnotable.so",
                                .dlpi_phdr = &load, .dlpi_phnum = 1};
    struct dynsym_object *x = dynsym_cache_entry(cache, &info, sizeof info);
    REQUIRE(x);
    CHECK(dynsym_cache_entry(cache, &info, sizeof info) == x);
    int scanned = 0, answered = 0;
    for (int i = 0; i < 100; i++) {
        struct dynsym_hit hit;
        hit.symbol[0] = '\0';
        hit.symbol_start = 0;
        if (dynsym_cache_symbol(x, &info, (uintptr_t)code + 16, &hit)) {
            answered++;
            CHECK(hit.symbol[0] == 0 && hit.symbol_start == 0);
        } else {
            scanned++;
        }
    }
    CHECK(scanned > 0 && scanned <= 10);
    CHECK_EQ(answered, 100 - scanned);
    dynsym_cache_free(cache);
}

/* An address in no loaded object (JIT'd code, the runtime's stubs: half
 * of a compiler's native lookups) walked the loader's whole list every
 * time.  Once a walk has found nothing the cache records every object and
 * answers such addresses itself, until the loader counts a load (a new
 * library may hold them) or an unload; a library loaded after that is
 * found, and looked up alike, through the walk. */
static void test_dynsym_cache_knows_none(void)
{
    struct dynsym_cache *cache = dynsym_cache_new();
    REQUIRE(cache);
    void *anon = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    REQUIRE(anon != MAP_FAILED);
    uintptr_t nowhere = (uintptr_t)anon + 64;
    struct dynsym_hit hit, scanned;
    CHECK_EQ(dynsym_lookup_if(nowhere, &hit, NULL, NULL, cache), 0);
    CHECK_EQ(dynsym_cache_answered_none(cache), 0); /* the first walked the list */
    CHECK(dynsym_cache_objects(cache) >= 3);        /* and recorded every object */
    CHECK_EQ(dynsym_lookup_if(nowhere, &hit, NULL, NULL, cache), 0);
    CHECK_EQ(dynsym_lookup_if(nowhere + 8, &hit, NULL, NULL, cache), 0);
    CHECK_EQ(dynsym_cache_answered_none(cache), 2);
    /* objects recorded that way still answer as the scan does */
    uintptr_t in_libc = (uintptr_t)(void *)qsort + 3;
    REQUIRE(dynsym_lookup(in_libc, &scanned) == 1);
    CHECK_EQ(dynsym_lookup_if(in_libc, &hit, NULL, NULL, cache), 1);
    CHECK(same_hit(&scanned, &hit));

    void *lib = dlopen("libbz2.so.1.0", RTLD_NOW | RTLD_LOCAL);
    REQUIRE(lib);
    void *fn = dlsym(lib, "BZ2_bzlibVersion");
    REQUIRE(fn);
    REQUIRE(dynsym_lookup((uintptr_t)fn + 1, &scanned) == 1);
    CHECK_EQ(dynsym_lookup_if((uintptr_t)fn + 1, &hit, NULL, NULL, cache), 1);
    CHECK(same_hit(&scanned, &hit));
    CHECK(hit.symbol[0] != 0);
    /* after a load, the next address in no object walks again */
    CHECK_EQ(dynsym_lookup_if(nowhere, &hit, NULL, NULL, cache), 0);
    CHECK_EQ(dynsym_cache_answered_none(cache), 2);
    CHECK_EQ(dynsym_lookup_if(nowhere, &hit, NULL, NULL, cache), 0);
    CHECK_EQ(dynsym_cache_answered_none(cache), 3);
    dlclose(lib);
    /* and after an unload */
    CHECK_EQ(dynsym_lookup_if(nowhere, &hit, NULL, NULL, cache), 0);
    CHECK_EQ(dynsym_cache_answered_none(cache), 3);
    CHECK_EQ(dynsym_lookup_if(nowhere, &hit, NULL, NULL, cache), 0);
    CHECK_EQ(dynsym_cache_answered_none(cache), 4);
    munmap(anon, 4096);
    dynsym_cache_free(cache);
}

void suite_dynsym(void)
{
    RUN(test_dynsym_cache_knows_none);
    RUN(test_dynsym_cache);
    RUN(test_dynsym_cache_without_table);
    RUN(test_dynsym_agrees_with_the_loader);
    RUN(test_dynsym_lookup_if);
}
