/*
 * Tests of elfsym: libc's internal functions are named from its debug file
 * when Debian's libc6-dbg is installed (the project's install script
 * installs it), its exported ones in any case; damaged files give no
 * symbols and no crash.
 */
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "agent/elfsym.h"
#include "test.h"

static int find_libc(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    if (info->dlpi_name && strstr(info->dlpi_name, "libc.so")) {
        *(struct dl_phdr_info *)arg = *info;
        return 1;
    }
    return 0;
}

static void test_libc_symbols(void)
{
    struct dl_phdr_info libc;
    memset(&libc, 0, sizeof libc);
    dl_iterate_phdr(find_libc, &libc);
    REQUIRE(libc.dlpi_name);
    struct elfsym *s = elfsym_load(libc.dlpi_name);
    if (!s) {
        /* no .symtab anywhere: only acceptable without the debug file */
        CHECK(access("/usr/lib/debug/.build-id", F_OK) != 0);
        return;
    }
    CHECK(s->count > 1000);
    void *h = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
    REQUIRE(h);
    void *qs = dlsym(h, "qsort_r"), *rd = dlsym(h, "read");
    dlclose(h);
    REQUIRE(qs && rd);
    const char *n = elfsym_find(s, (uint64_t)((uintptr_t)qs - libc.dlpi_addr) + 4);
    CHECK(n && strstr(n, "qsort"));
    n = elfsym_find(s, (uint64_t)((uintptr_t)rd - libc.dlpi_addr) + 1);
    CHECK(n && strstr(n, "read"));
    /* an internal function that only .symtab names */
    int internal = 0;
    for (size_t i = 0; i < s->count; i++)
        if (!strncmp(s->names + s->entries[i].name, "msort_with_tmp", 14))
            internal = 1;
    CHECK(internal);
    CHECK(elfsym_find(s, 0) == NULL);
    elfsym_free(s);
}

static void test_damaged_files(void)
{
    char path[] = "/tmp/corscope-elfsym-XXXXXX";
    int fd = mkstemp(path);
    REQUIRE(fd >= 0);
    FILE *f = fdopen(fd, "wb");
    REQUIRE(f);
    /* an ELF header that points its section table past the end */
    unsigned char junk[256];
    memset(junk, 0xff, sizeof junk);
    memcpy(junk, "\177ELF\002\001\001", 7);
    fwrite(junk, 1, sizeof junk, f);
    fclose(f);
    CHECK(elfsym_load(path) == NULL);
    CHECK(elfsym_load("/nonexistent/lib.so") == NULL);
    CHECK(elfsym_load("/proc/self/status") == NULL);
    unlink(path);
}

void suite_elfsym(void)
{
    RUN(test_libc_symbols);
    RUN(test_damaged_files);
}
