/*
 * Tests of elfsym: libc's internal functions are named from its debug file
 * when Debian's libc6-dbg is installed (the project's install script
 * installs it), its exported ones in any case; damaged files give no
 * symbols and no crash; images built here in memory show the bugs the
 * fuzzer and review found.
 */
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "agent/elfsym.h"
#include "common/mem.h"
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
    /* an internal function that only .symtab names (the first lookups
     * scanned the file's table: sorted now to list it) */
    CHECK(!s->sorted);
    CHECK_EQ(elfsym_sort(s), 0);
    CHECK(s->sorted && s->entries != NULL);
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

/* ---- ELF images built in memory ------------------------------------------ */

struct image {
    uint8_t *p;
    size_t size, cap;
};

static size_t put(struct image *im, const void *data, size_t n, size_t align)
{
    size_t at = (im->size + align - 1) / align * align;
    if (at + n > im->cap) {
        im->cap = 2 * (at + n);
        im->p = realloc(im->p, im->cap);
    }
    memset(im->p + im->size, 0, at - im->size);
    if (data)
        memcpy(im->p + at, data, n);
    else
        memset(im->p + at, 0, n);
    im->size = at + n;
    return at;
}

/* An ELF image with sections .symtab (syms), .strtab (strs) and, when
 * `link` is set, .gnu_debuglink naming it. */
static struct image make_elf(const Elf64_Sym *syms, size_t nsyms, const char *strs,
                             size_t strs_size, const char *link)
{
    struct image im = {NULL, 0, 0};
    Elf64_Ehdr eh;
    memset(&eh, 0, sizeof eh);
    memcpy(eh.e_ident, ELFMAG, SELFMAG);
    eh.e_ident[EI_CLASS] = ELFCLASS64;
    eh.e_ident[EI_DATA] = ELFDATA2LSB;
    eh.e_ident[EI_VERSION] = EV_CURRENT;
    eh.e_type = ET_DYN;
    eh.e_machine = EM_X86_64;
    eh.e_ehsize = sizeof eh;
    eh.e_shentsize = sizeof(Elf64_Shdr);
    put(&im, &eh, sizeof eh, 8);
    static const char shstrs[] = "\0.symtab\0.strtab\0.shstrtab\0.gnu_debuglink";
    size_t shstr_at = put(&im, shstrs, sizeof shstrs, 1);
    size_t str_at = put(&im, strs, strs_size, 1);
    size_t sym_at = put(&im, syms, nsyms * sizeof *syms, 8);
    /* .gnu_debuglink: the name, padding to 4 bytes, a CRC (left 0) */
    size_t link_at = link ? put(&im, link, strlen(link) + 1, 4) : 0;
    size_t link_size = link ? put(&im, NULL, 4, 4) + 4 - link_at : 0;
    Elf64_Shdr sh[5];
    memset(sh, 0, sizeof sh);
    sh[1] = (Elf64_Shdr){.sh_name = 1, .sh_type = SHT_SYMTAB, .sh_offset = sym_at,
                         .sh_size = nsyms * sizeof *syms, .sh_link = 2,
                         .sh_entsize = sizeof(Elf64_Sym)};
    sh[2] = (Elf64_Shdr){.sh_name = 9, .sh_type = SHT_STRTAB, .sh_offset = str_at,
                         .sh_size = strs_size};
    sh[3] = (Elf64_Shdr){.sh_name = 17, .sh_type = SHT_STRTAB, .sh_offset = shstr_at,
                         .sh_size = sizeof shstrs};
    sh[4] = (Elf64_Shdr){.sh_name = 27, .sh_type = SHT_PROGBITS, .sh_offset = link_at,
                         .sh_size = link_size};
    size_t shoff = put(&im, sh, (link ? 5 : 4) * sizeof sh[0], 8);
    Elf64_Ehdr *h = (Elf64_Ehdr *)im.p;
    h->e_shoff = shoff;
    h->e_shnum = link ? 5 : 4;
    h->e_shstrndx = 3;
    return im;
}

static Elf64_Sym func(uint32_t name, uint64_t addr, uint64_t size)
{
    Elf64_Sym s;
    memset(&s, 0, sizeof s);
    s.st_name = name;
    s.st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC);
    s.st_shndx = 1;
    s.st_value = addr;
    s.st_size = size;
    return s;
}

static void test_image_symbols(void)
{
    static const char strs[] = "\0read@GLIBC_2.2.5\0wrap\0small";
    Elf64_Sym syms[] = {func(1, 0x1000, 0x40), func(23, 0x2000, 0),
                        func(18, 0x4c46457f00000000, 0xffffffff00010102)};
    struct image im = make_elf(syms, 3, strs, sizeof strs, NULL);
    struct elfsym *s = elfsym_parse(im.p, im.size, "mem");
    REQUIRE(s);
    CHECK_EQ(s->count, 3);
    CHECK_STR(elfsym_find(s, 0x1010), "read"); /* the version is not part of the name */
    CHECK_STR(elfsym_find(s, 0x2000), "small");
    CHECK(elfsym_find(s, 0x1040) == NULL);
    /* a size whose end wraps past 2^64 covered nothing, not even its own
     * start (fuzz_elfsym, corpus/elfsym/crash-size-wraps) */
    CHECK_STR(elfsym_find(s, 0x4c46457f00000000), "wrap");
    CHECK_STR(elfsym_find(s, 0x4c46457f00000100), "wrap");
    elfsym_free(s);
    /* the section table at an odd offset: refused, not read misaligned
     * (corpus/elfsym/crash-misaligned-shdr) */
    Elf64_Ehdr *h = (Elf64_Ehdr *)im.p;
    uint8_t *odd = malloc(im.size + 1);
    REQUIRE(odd);
    memcpy(odd, im.p, im.size);
    memmove(odd + h->e_shoff + 1, odd + h->e_shoff, im.size - h->e_shoff);
    ((Elf64_Ehdr *)odd)->e_shoff++;
    CHECK(elfsym_parse(odd, im.size + 1, "odd") == NULL);
    free(odd);
    free(im.p);
}

/* Symbols that all name one long string: when each name was copied, 40,000
 * of them naming 512 KiB asked for 20 GB (and were refused for it).  Names
 * now stay in the string table: the table is read at once, its memory
 * that of the file's tables, and a lookup answers the long name. */
static void test_shared_long_names(void)
{
    size_t n = 40000, len = 512 * 1024;
    char *strs = calloc(1, len + 2);
    Elf64_Sym *syms = calloc(n, sizeof *syms);
    REQUIRE(strs && syms);
    memset(strs + 1, 'x', len);
    for (size_t i = 0; i < n; i++)
        syms[i] = func(1, 0x1000 + 16 * i, 16);
    struct image im = make_elf(syms, n, strs, len + 2, NULL);
    size_t before = mem_live_bytes();
    clock_t start = clock();
    struct elfsym *s = elfsym_parse(im.p, im.size, "mem");
    REQUIRE(s);
    CHECK_EQ(s->count, n);
    CHECK(mem_live_bytes() - before < 4 * (len + n * sizeof(Elf64_Sym)));
    const char *name = elfsym_find(s, 0x1000 + 16 * 20000 + 4);
    CHECK(name && strlen(name) == len);
    CHECK((double)(clock() - start) / CLOCKS_PER_SEC < 1.0);
    elfsym_free(s);
    free(im.p);
    free(strs);
    free(syms);
}

/* What a scan of the file's table answers and what the sorted table
 * answers, for every address in `probe` */
static void check_scan_equals_sorted(const char *path, const uint64_t *probe, size_t n)
{
    elfsym_set_scan_budget(UINT32_MAX);
    struct elfsym *scanned = elfsym_load(path);
    struct elfsym *sorted = elfsym_load(path);
    REQUIRE(scanned && sorted);
    REQUIRE(elfsym_sort(sorted) == 0);
    size_t differ = 0;
    for (size_t i = 0; i < n; i++) {
        const char *a = elfsym_find(scanned, probe[i]);
        char copy[512];
        snprintf(copy, sizeof copy, "%s", a ? a : "(none)");
        const char *b = elfsym_find(sorted, probe[i]);
        if (strcmp(copy, b ? b : "(none)") != 0 && differ++ < 5)
            fprintf(stderr, "  %s 0x%llx: scan %s, sorted %s\n", path, (unsigned long long)probe[i],
                    copy, b ? b : "(none)");
    }
    CHECK_EQ(differ, 0);
    CHECK(!scanned->sorted); /* never sorted */
    CHECK(sorted->sorted);
    elfsym_set_scan_budget(ELFSYM_SCANS);
    elfsym_free(scanned);
    elfsym_free(sorted);
}

static void write_file(const char *path, const void *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    REQUIRE(f);
    CHECK_EQ(fwrite(p, 1, n, f), n);
    fclose(f);
}

/* The first lookups scan the table as the file has it (a short process
 * never sorts it); their answers are the sorted table's: aliases, a
 * version cut, sizes 0, an address between functions, below them all,
 * a shared string whose version starts it, a last name without its NUL. */
static void test_scan_equals_sorted(void)
{
    static const char strs[] = "\0read@GLIBC_2.2.5\0alias\0zero\0big\0inner\0last";
    Elf64_Sym syms[] = {func(1, 0x1000, 0x40),    func(18, 0x1000, 0x40), func(24, 0x2000, 0),
                        func(29, 0x3000, 0x1000), func(33, 0x3800, 0x10), func(5, 0x5000, 8),
                        func(3, 0x5100, 8),       func(18, 0x1000, 0x20), func(39, 0x6000, 4),
                        func(40, 0x6010, 4)};
    /* the string table without its last NUL: "last" runs to its end */
    struct image im = make_elf(syms, sizeof syms / sizeof syms[0], strs, sizeof strs - 1, NULL);
    char path[] = "/tmp/corscope-elfsym-XXXXXX";
    int fd = mkstemp(path);
    REQUIRE(fd >= 0);
    close(fd);
    write_file(path, im.p, im.size);
    uint64_t probe[200];
    size_t n = 0;
    for (uint64_t a = 0xff0; a < 0x1050; a += 8)
        probe[n++] = a;
    const uint64_t more[] = {0,      0x2000, 0x2001, 0x3000, 0x37ff, 0x3800, 0x3808, 0x3810,
                             0x3900, 0x3fff, 0x4000, 0x5000, 0x5004, 0x5008, 0x5100, 0x5104,
                             0x6000, 0x6003, 0x6004, 0x6010, 0x6013, 0x6014, UINT64_MAX};
    for (size_t i = 0; i < sizeof more / sizeof more[0]; i++)
        probe[n++] = more[i];
    check_scan_equals_sorted(path, probe, n);
    elfsym_set_scan_budget(UINT32_MAX);
    struct elfsym *s = elfsym_load(path);
    REQUIRE(s);
    CHECK_STR(elfsym_find(s, 0x1010), "alias"); /* the last alias that covers it */
    CHECK_STR(elfsym_find(s, 0x1030), "alias");
    CHECK_STR(elfsym_find(s, 0x3808), "inner");
    CHECK_STR(elfsym_find(s, 0x3900), "big"); /* the one below still covers it */
    CHECK_STR(elfsym_find(s, 0x5004), "@GLIBC_2.2.5"); /* a name that is all version */
    CHECK_STR(elfsym_find(s, 0x5104), "ad"); /* a version cut from a shared string */
    CHECK_STR(elfsym_find(s, 0x1010), "alias"); /* ... which stays whole for the others */
    CHECK_STR(elfsym_find(s, 0x6010), "ast");
    elfsym_set_scan_budget(ELFSYM_SCANS);
    elfsym_free(s);
    unlink(path);
    free(im.p);

    /* libc's table (from its debug file when installed): every function's
     * start, middle and end, and the addresses between */
    struct dl_phdr_info libc;
    memset(&libc, 0, sizeof libc);
    dl_iterate_phdr(find_libc, &libc);
    REQUIRE(libc.dlpi_name);
    struct elfsym *t = elfsym_load(libc.dlpi_name);
    if (!t)
        return;
    REQUIRE(elfsym_sort(t) == 0);
    size_t m = t->count * 4 < 8000 ? t->count * 4 : 8000;
    uint64_t *at = malloc(m * sizeof *at);
    REQUIRE(at);
    for (size_t i = 0; i < m; i++) {
        const struct elfsym_entry *e = &t->entries[(i / 4) * (t->count / (m / 4))];
        at[i] = e->addr + (i % 4 == 0 ? 0 : i % 4 == 1 ? e->size / 2 : i % 4 == 2 ? e->size : e->size + 7);
    }
    elfsym_free(t);
    check_scan_equals_sorted(libc.dlpi_name, at, m);
    free(at);
}

/* After the budget of scans, the table is sorted once and answers alike. */
static void test_sorted_after_budget(void)
{
    struct dl_phdr_info libc;
    memset(&libc, 0, sizeof libc);
    dl_iterate_phdr(find_libc, &libc);
    REQUIRE(libc.dlpi_name);
    void *h = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
    REQUIRE(h);
    void *rd = dlsym(h, "read");
    dlclose(h);
    REQUIRE(rd);
    struct elfsym *s = elfsym_load(libc.dlpi_name);
    if (!s)
        return;
    uint64_t at = (uint64_t)((uintptr_t)rd - libc.dlpi_addr) + 1;
    for (unsigned i = 0; i < ELFSYM_SCANS; i++) {
        const char *n = elfsym_find(s, at);
        CHECK(n && strstr(n, "read"));
    }
    CHECK(!s->sorted);
    const char *n = elfsym_find(s, at);
    CHECK(n && strstr(n, "read"));
    CHECK(s->sorted && s->entries != NULL);
    elfsym_free(s);
}

/* Where the debug file of a stripped object is looked for. */
static void test_debug_paths(void)
{
    static const char strs[] = "\0f";
    Elf64_Sym sym = func(1, 0x1000, 1);
    struct image im = make_elf(&sym, 1, strs, sizeof strs, "libx.so.debug");
    char paths[ELFSYM_DEBUG_PATHS][ELFSYM_PATH_MAX];
    CHECK_EQ(elfsym_debug_paths(im.p, im.size, "/opt/lib/libx.so", paths), 2);
    CHECK(!strcmp(paths[0], "/usr/lib/debug/opt/lib/libx.so.debug"));
    CHECK(!strcmp(paths[1], "/opt/lib/.debug/libx.so.debug"));
    CHECK_EQ(elfsym_debug_paths(im.p, 16, "/opt/lib/libx.so", paths), 0);
    free(im.p);
}

/* A stripped object whose debug file lies beside it, in .debug/, named by
 * its .gnu_debuglink: elfsym_load finds the symbols there, reading the
 * object's few sections with pread (the object is not mapped). */
static void test_debug_link_beside(void)
{
    char dir[] = "/tmp/corscope-elfsym-XXXXXX";
    REQUIRE(mkdtemp(dir));
    char lib[128], debug_dir[128], debug[160];
    snprintf(lib, sizeof lib, "%s/libx.so", dir);
    snprintf(debug_dir, sizeof debug_dir, "%s/.debug", dir);
    snprintf(debug, sizeof debug, "%s/libx.so.debug", debug_dir);
    REQUIRE(mkdir(debug_dir, 0700) == 0);
    static const char strs[] = "\0inner_function";
    Elf64_Sym sym = func(1, 0x1000, 0x80);
    /* the object: its .symtab renamed away (a stripped object has none) */
    struct image stripped = make_elf(&sym, 1, strs, sizeof strs, "libx.so.debug");
    Elf64_Ehdr *h = (Elf64_Ehdr *)stripped.p;
    ((Elf64_Shdr *)(stripped.p + h->e_shoff))[1].sh_type = SHT_PROGBITS;
    struct image full = make_elf(&sym, 1, strs, sizeof strs, NULL);
    write_file(lib, stripped.p, stripped.size);
    CHECK(elfsym_load(lib) == NULL); /* no debug file yet */
    write_file(debug, full.p, full.size);
    struct elfsym *s = elfsym_load(lib);
    REQUIRE(s);
    CHECK_STR(elfsym_find(s, 0x1010), "inner_function");
    CHECK_STR(s->source, debug);
    elfsym_free(s);
    /* a debug link with no name, and one longer than its section: no
     * debug file is looked for, and nothing breaks */
    uint8_t *link = stripped.p + ((Elf64_Shdr *)(stripped.p + h->e_shoff))[4].sh_offset;
    link[0] = '\0';
    write_file(lib, stripped.p, stripped.size);
    CHECK(elfsym_load(lib) == NULL);
    memset(link, 'x', ((Elf64_Shdr *)(stripped.p + h->e_shoff))[4].sh_size);
    write_file(lib, stripped.p, stripped.size);
    CHECK(elfsym_load(lib) == NULL);
    unlink(debug);
    rmdir(debug_dir);
    unlink(lib);
    rmdir(dir);
    free(stripped.p);
    free(full.p);
}

void suite_elfsym(void)
{
    RUN(test_debug_link_beside);
    RUN(test_libc_symbols);
    RUN(test_damaged_files);
    RUN(test_image_symbols);
    RUN(test_shared_long_names);
    RUN(test_debug_paths);
    RUN(test_scan_equals_sorted);
    RUN(test_sorted_after_budget);
}
