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

#include "agent/dynsym.h"
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

void suite_dynsym(void)
{
    RUN(test_dynsym_agrees_with_the_loader);
}
