/*
 * Tests of cfi (agent/signal/cfi.h): the .eh_frame parser against what
 * readelf says about the C library, damaged sections, and the gaps it
 * counts; one function at a time through .eh_frame_hdr's table against the
 * whole table, row for row, on the C library and the runtime's libraries.
 */
#include <elf.h>
#include <fcntl.h>
#include <glob.h>
#include <link.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/signal/cfi.h"
#include "test.h"

/* ---- the parser, on libc's own .eh_frame ----------------------------------- */

struct found {
    const char *want;
    const uint8_t *hdr, *lo, *hi;
    uintptr_t bias;
    char path[512];
};

static int find_object(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct found *f = arg;
    if (!info->dlpi_name || !strstr(info->dlpi_name, f->want))
        return 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_GNU_EH_FRAME)
            f->hdr = (const uint8_t *)(info->dlpi_addr + ph->p_vaddr);
    }
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        const uint8_t *a = (const uint8_t *)(info->dlpi_addr + ph->p_vaddr);
        if (ph->p_type == PT_LOAD && f->hdr >= a && f->hdr < a + ph->p_filesz) {
            f->lo = a;
            f->hi = a + ph->p_filesz;
        }
    }
    f->bias = info->dlpi_addr;
    snprintf(f->path, sizeof f->path, "%s", info->dlpi_name);
    return 1;
}

/* One FDE as readelf --debug-dump=frames-interp prints it: the rows of the
 * function holding `pc` (link-time), CFA and RBP columns. */
static int readelf_row(const char *path, uint64_t pc, char *cfa, size_t cfa_size, char *rbp,
                       size_t rbp_size)
{
    char cmd[700];
    snprintf(cmd, sizeof cmd, "readelf --debug-dump=frames-interp '%s' 2>/dev/null", path);
    FILE *p = popen(cmd, "r");
    if (!p)
        return -1;
    char line[512];
    int in_fde = 0, rbp_col = -1, found = 0;
    while (fgets(line, sizeof line, p)) {
        unsigned long long a, b;
        const char *fde = strstr(line, "FDE cie=");
        if (fde) {
            const char *eq = strstr(fde, "pc=");
            in_fde = eq && sscanf(eq, "pc=%llx..%llx", &a, &b) == 2 && a <= pc && pc < b;
            rbp_col = -1;
            continue;
        }
        if (!in_fde)
            continue;
        char cols[12][32];
        int n = sscanf(line, "%31s %31s %31s %31s %31s %31s %31s %31s %31s %31s", cols[0], cols[1],
                       cols[2], cols[3], cols[4], cols[5], cols[6], cols[7], cols[8], cols[9]);
        if (n > 0 && !strcmp(cols[0], "LOC")) {
            for (int i = 1; i < n; i++)
                if (!strcmp(cols[i], "rbp"))
                    rbp_col = i;
            continue;
        }
        if (n < 2 || sscanf(cols[0], "%llx", &a) != 1 || a > pc)
            continue;
        snprintf(cfa, cfa_size, "%s", cols[1]);
        snprintf(rbp, rbp_size, "%s", rbp_col > 0 && rbp_col < n ? cols[rbp_col] : "u");
        found = 1;
    }
    pclose(p);
    return found ? 0 : -1;
}

static void test_libc_rows_match_readelf(void)
{
    struct found f = {.want = "libc.so"};
    dl_iterate_phdr(find_object, &f);
    REQUIRE(f.hdr && f.lo);
    struct cfi_table t;
    REQUIRE(cfi_parse_hdr(f.hdr, f.lo, f.hi, f.bias, &t) == 0);
    CHECK(t.count > 1000);
    /* functions whose unwinding matters: qsort's helpers, memcpy, a syscall wrapper */
    const char *names[] = {"qsort", "qsort_r", "memcpy", "read", "pthread_cond_wait", "malloc"};
    int compared = 0;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        /* libc's own symbols (under ASan, RTLD_DEFAULT finds interceptors) */
        void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
        void *sym = libc ? dlsym(libc, names[i]) : NULL;
        if (libc)
            dlclose(libc);
        Dl_info info;
        if (!sym || !dladdr(sym, &info) || !strstr(info.dli_fname, "libc.so"))
            continue;
        for (int off = 0; off < 64; off += 5) {
            uint64_t pc = (uint64_t)(uintptr_t)sym - f.bias + (uint64_t)off;
            char cfa[32], rbp[32], mine[40];
            if (readelf_row(f.path, pc, cfa, sizeof cfa, rbp, sizeof rbp) < 0)
                continue;
            const struct cfi_row *row = cfi_find(&t, pc);
            REQUIRE(row);
            if (row->cfa == CFI_UNSUPPORTED || row->cfa == CFI_PLT10 || row->cfa == CFI_PLT11)
                snprintf(mine, sizeof mine, "exp");
            else
                snprintf(mine, sizeof mine, "%s%+d", row->cfa == CFI_RSP ? "rsp" : "rbp",
                         row->cfa_offset);
            CHECK_STR(mine, cfa);
            char my_rbp[16];
            if (row->rbp_offset)
                snprintf(my_rbp, sizeof my_rbp, "c%d", row->rbp_offset);
            else
                snprintf(my_rbp, sizeof my_rbp, "u");
            CHECK_STR(my_rbp, rbp);
            compared++;
        }
    }
    CHECK(compared >= 20);
    /* libc's PLT is described by the PLT expression, which we follow */
    size_t plt = 0;
    for (size_t i = 0; i < t.count; i++)
        plt += t.rows[i].cfa == CFI_PLT10 || t.rows[i].cfa == CFI_PLT11;
    CHECK(plt > 0);
    cfi_free(&t);
}

/* Every row readelf prints for libc, against the table: the CFA rule and
 * where RBP is saved, row by row. */
static void test_libc_all_rows_match_readelf(void)
{
    struct found f = {.want = "libc.so"};
    dl_iterate_phdr(find_object, &f);
    REQUIRE(f.hdr && f.lo);
    struct cfi_table t;
    REQUIRE(cfi_parse_hdr(f.hdr, f.lo, f.hi, f.bias, &t) == 0);
    char cmd[700];
    snprintf(cmd, sizeof cmd, "readelf --debug-dump=frames-interp '%s' 2>/dev/null", f.path);
    FILE *p = popen(cmd, "r");
    REQUIRE(p);
    char line[1024];
    int in_fde = 0, rbp_col = -1, cols = 0;
    size_t compared = 0, mismatched = 0;
    while (fgets(line, sizeof line, p)) {
        if (strstr(line, "FDE cie=")) {
            in_fde = 1;
            continue;
        }
        if (!in_fde || line[0] == '\n') {
            in_fde = 0;
            continue;
        }
        /* columns; a register rule prints as two words, "r10 (r10)" */
        char c[24][32];
        int n = 0;
        char *save = NULL;
        for (char *tok = strtok_r(line, " \n", &save); tok && n < 24; tok = strtok_r(NULL, " \n", &save)) {
            if (tok[0] == '(' && n > 0)
                continue;
            snprintf(c[n++], sizeof c[0], "%s", tok);
        }
        if (n > 0 && !strcmp(c[0], "LOC")) {
            rbp_col = -1;
            cols = n;
            for (int i = 1; i < n; i++)
                if (!strcmp(c[i], "rbp"))
                    rbp_col = i;
            continue;
        }
        unsigned long long loc;
        if (n != cols || n < 2 || sscanf(c[0], "%llx", &loc) != 1)
            continue;
        const struct cfi_row *row = cfi_find(&t, loc);
        char mine[40], my_rbp[16];
        if (!row)
            snprintf(mine, sizeof mine, "none");
        else if (row->cfa == CFI_UNSUPPORTED || row->cfa == CFI_PLT10 || row->cfa == CFI_PLT11 ||
                 row->cfa == CFI_SIGFRAME)
            snprintf(mine, sizeof mine, "exp");
        else
            snprintf(mine, sizeof mine, "%s%+d", row->cfa == CFI_RSP ? "rsp" : "rbp", row->cfa_offset);
        if (row && row->rbp_offset)
            snprintf(my_rbp, sizeof my_rbp, "c%+d", row->rbp_offset);
        else
            snprintf(my_rbp, sizeof my_rbp, "u");
        const char *want_rbp = rbp_col > 0 ? c[rbp_col] : "u";
        /* readelf says "exp" for CFA expressions; a register rule other
         * than an offset from the CFA is one we stop at (the row is
         * unsupported), which readelf shows as r<N> or exp */
        int rbp_ok = !strcmp(my_rbp, want_rbp) ||
                     (row && (row->cfa == CFI_UNSUPPORTED || row->cfa == CFI_SIGFRAME) &&
                      strcmp(want_rbp, "u") != 0 && want_rbp[0] != 'c');
        /* a CFA in another register (setcontext and the like): we stop */
        if (strncmp(c[1], "rsp", 3) != 0 && strncmp(c[1], "rbp", 3) != 0 && strcmp(c[1], "exp") != 0) {
            if (!row || row->cfa != CFI_UNSUPPORTED) {
                if (++mismatched <= 5)
                    printf("  row %llx: readelf %s, ours %s (should stop)\n", loc, c[1], mine);
            }
            compared++;
            continue;
        }
        if (strcmp(mine, c[1]) != 0 || !rbp_ok) {
            if (++mismatched <= 5)
                printf("  row %llx: readelf %s rbp %s, ours %s rbp %s\n", loc, c[1], want_rbp, mine,
                       my_rbp);
        }
        compared++;
    }
    pclose(p);
    CHECK(compared > 10000);
    CHECK_EQ(mismatched, 0);
    cfi_free(&t);
}

static void test_damaged_sections(void)
{
    /* every truncation of a real section parses without reading past it */
    struct found f = {.want = "libc.so"};
    dl_iterate_phdr(find_object, &f);
    REQUIRE(f.hdr && f.lo);
    const uint8_t *start = NULL;
    {
        /* the .eh_frame the header points to (pc-relative sdata4) */
        int32_t rel;
        memcpy(&rel, f.hdr + 4, 4);
        start = f.hdr + 4 + rel;
    }
    REQUIRE(start >= f.lo && start < f.hi);
    size_t sizes[] = {0, 1, 3, 4, 7, 8, 20, 25, 64, 100, 333, 1000, 4097};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        uint8_t *copy = malloc(sizes[i] + 1);
        REQUIRE(copy);
        memcpy(copy, start, sizes[i]);
        struct cfi_table t;
        CHECK(cfi_parse_section(copy, sizes[i], (uint64_t)(uintptr_t)start, f.bias, &t) == 0);
        cfi_free(&t);
        free(copy);
    }
    /* garbage */
    uint8_t junk[4096];
    uint32_t x = 12345;
    for (size_t i = 0; i < sizeof junk; i++) {
        x = x * 1103515245u + 12345u;
        junk[i] = (uint8_t)(x >> 16);
    }
    struct cfi_table t;
    CHECK(cfi_parse_section(junk, sizeof junk, 0x1000, 0, &t) == 0);
    cfi_free(&t);
}

/* A CIE is parsed again for every FDE that refers to it: a long one shared
 * by many FDEs made the parse quadratic (a 1 MiB section took seconds, with
 * the loader's lock held).  A CIE longer than any compiler writes is now
 * refused with its FDEs; the others parse as before, and quickly. */
static size_t put_cie(uint8_t *p, size_t insns)
{
    /* version 1, "zR", code align 1, data align -8, RA r16, pointers pcrel sdata4 */
    static const uint8_t head[] = {0, 0, 0, 0, 1, 'z', 'R', 0, 1, 0x78, 16, 1, 0x1b,
                                   0x0c, 7, 8, 0x90, 1}; /* def_cfa rsp+8; RA at cfa-8 */
    uint32_t len = (uint32_t)(sizeof head + insns);
    memcpy(p, &len, 4);
    memcpy(p + 4, head, sizeof head);
    memset(p + 4 + sizeof head, 0, insns); /* nops */
    return 4 + len;
}

static size_t put_fde(uint8_t *p, size_t at, size_t cie, uint32_t pc)
{
    /* CIE pointer, pc_begin (pcrel), range 16, no augmentation data,
     * def_cfa_offset 16 after 1 byte */
    uint32_t len = 16, cie_ptr = (uint32_t)(at + 4 - cie), range = 16;
    int32_t begin = (int32_t)(pc - (at + 8));
    uint8_t insns[] = {0, 0x41, 0x0e, 16};
    memcpy(p, &len, 4);
    memcpy(p + 4, &cie_ptr, 4);
    memcpy(p + 8, &begin, 4);
    memcpy(p + 12, &range, 4);
    memcpy(p + 16, insns, sizeof insns);
    return 20;
}

static void test_long_cie_refused(void)
{
    size_t size = 1 << 20;
    uint8_t *sec = calloc(1, size + 4);
    REQUIRE(sec);
    size_t at = 0, good = 0, big = 0;
    at += put_cie(sec + at, 2);
    at += put_fde(sec + at, at, good, 0x100000);
    big = at;
    at += put_cie(sec + at, 256 * 1024);
    uint32_t pc = 0x200000;
    while (at + 20 <= size) {
        at += put_fde(sec + at, at, big, pc);
        pc += 16;
    }
    struct cfi_table t;
    clock_t start = clock();
    REQUIRE(cfi_parse_section(sec, at + 4, 0, 0, &t) == 0);
    double seconds = (double)(clock() - start) / CLOCKS_PER_SEC;
    CHECK(seconds < 1.0);
    /* the FDE of the short CIE: rsp+8 at its start, rsp+16 after a byte */
    const struct cfi_row *row = cfi_find(&t, 0x100000);
    CHECK(row && row->cfa == CFI_RSP && row->cfa_offset == 8);
    row = cfi_find(&t, 0x100001);
    CHECK(row && row->cfa == CFI_RSP && row->cfa_offset == 16);
    CHECK(cfi_find(&t, 0x100010) == NULL);
    /* none of the long CIE's */
    CHECK(cfi_find(&t, 0x200000) == NULL);
    CHECK_EQ(t.count, 3);
    cfi_free(&t);
    free(sec);
}

/* An entry of `n` bytes (after its length word) at p. */
static size_t put_entry(uint8_t *p, const uint8_t *body, size_t n)
{
    uint32_t len = (uint32_t)n;
    memcpy(p, &len, 4);
    memcpy(p + 4, body, n);
    return 4 + n;
}

/* An FDE at `at` for the CIE at `cie`: pc_begin (pcrel sdata4), range 16,
 * no augmentation data, then `n` bytes of instructions after one byte of
 * code (the first row is the CIE's). */
static size_t put_fde_with(uint8_t *p, size_t at, size_t cie, uint32_t pc, const uint8_t *insns,
                           size_t n)
{
    uint8_t body[64];
    uint32_t cie_ptr = (uint32_t)(at + 4 - cie), range = 16;
    int32_t begin = (int32_t)(pc - (at + 8));
    memcpy(body, &cie_ptr, 4);
    memcpy(body + 4, &begin, 4);
    memcpy(body + 8, &range, 4);
    body[12] = 0;    /* augmentation data: none */
    body[13] = 0x41; /* advance_loc 1 */
    memcpy(body + 14, insns, n);
    return put_entry(p, body, 14 + n);
}

/* DWARF the walker does not follow is counted per function and reason
 * (cfi.h, shown by `check`), and its rows stop a walk; a function the
 * linker left without code is not a function. */
static void test_gaps_counted(void)
{
    static const uint8_t cie_zr[] = {0, 0, 0, 0, 1, 'z', 'R', 0, 1, 0x78, 16, 1, 0x1b,
                                     0x0c, 7, 8, 0x90, 1};
    static const uint8_t cie_zrs[] = {0, 0, 0, 0, 1, 'z', 'R', 'S', 0, 1, 0x78, 16, 1, 0x1b,
                                      0x0c, 7, 8, 0x90, 1};
    static const uint8_t cie_unknown[] = {0, 0, 0, 0, 1, 'x', 0, 1, 0x78, 16, 0x0c, 7, 8};
    static const uint8_t fine[] = {0x0e, 16};                    /* def_cfa_offset 16 */
    static const uint8_t cfa_expr[] = {0x0f, 2, 0x77, 0x10};     /* def_cfa_expression breg7 16 */
    static const uint8_t cfa_reg[] = {0x0c, 12, 8};              /* def_cfa r12+8 */
    static const uint8_t rbp_reg[] = {0x09, 6, 3};               /* RBP in RBX */
    static const uint8_t rbp_expr[] = {0x10, 6, 2, 0x77, 0x00};  /* RBP = [breg7 0] */
    static const uint8_t bad_op[] = {0x0e, 16, 0x3e};            /* an opcode no DWARF has */
    uint8_t sec[1024];
    memset(sec, 0, sizeof sec);
    size_t at = 0;
    size_t zr = at;
    at += put_entry(sec + at, cie_zr, sizeof cie_zr);
    size_t zrs = at;
    at += put_entry(sec + at, cie_zrs, sizeof cie_zrs);
    size_t unknown = at;
    at += put_entry(sec + at, cie_unknown, sizeof cie_unknown);
    at += put_fde_with(sec + at, at, zr, 0x1000, fine, sizeof fine);
    at += put_fde_with(sec + at, at, zr, 0x1100, cfa_expr, sizeof cfa_expr);
    at += put_fde_with(sec + at, at, zr, 0x1200, cfa_reg, sizeof cfa_reg);
    at += put_fde_with(sec + at, at, zr, 0x1300, rbp_reg, sizeof rbp_reg);
    at += put_fde_with(sec + at, at, zr, 0x1400, rbp_expr, sizeof rbp_expr);
    at += put_fde_with(sec + at, at, zr, 0x1500, bad_op, sizeof bad_op);
    at += put_fde_with(sec + at, at, zrs, 0x1600, cfa_expr, sizeof cfa_expr);
    at += put_fde_with(sec + at, at, unknown, 0x1700, fine, sizeof fine);
    at += put_fde_with(sec + at, at, zr, 0, fine, sizeof fine); /* at address 0: no code */
    REQUIRE(at + 4 <= sizeof sec);

    struct cfi_table t;
    REQUIRE(cfi_parse_section(sec, at + 4, 0, 0, &t) == 0);
    CHECK_EQ(t.gaps.functions, 8);
    CHECK_EQ(t.gaps.n[CFI_GAP_CFA_EXPRESSION], 1);
    CHECK_EQ(t.gaps.n[CFI_GAP_CFA_REGISTER], 1);
    CHECK_EQ(t.gaps.n[CFI_GAP_RBP_REGISTER], 1);
    CHECK_EQ(t.gaps.n[CFI_GAP_RBP_EXPRESSION], 1);
    CHECK_EQ(t.gaps.n[CFI_GAP_MALFORMED], 1);
    CHECK_EQ(t.gaps.n[CFI_GAP_SIGNAL_FRAME], 1);
    CHECK_EQ(t.gaps.n[CFI_GAP_AUGMENTATION], 1);
    CHECK_EQ(t.gaps.n[CFI_GAP_OFFSET_RANGE], 0);
    /* the rows: followed before the rule, a stop after it */
    const struct cfi_row *row = cfi_find(&t, 0x1001);
    CHECK(row && row->cfa == CFI_RSP && row->cfa_offset == 16);
    static const uint32_t stops[] = {0x1101, 0x1201, 0x1301, 0x1401, 0x1601};
    for (size_t i = 0; i < sizeof stops / sizeof stops[0]; i++) {
        row = cfi_find(&t, stops[i]);
        CHECK(row && row->cfa == CFI_UNSUPPORTED);
    }
    row = cfi_find(&t, 0x1501); /* the rows before the bad opcode are kept */
    CHECK(row && row->cfa == CFI_RSP && row->cfa_offset == 16);
    CHECK(cfi_find(&t, 0x1700) == NULL);
    cfi_free(&t);
}

/* ---- one function at a time ------------------------------------------------- */

static int same_row(const struct cfi_row *a, const struct cfi_row *b)
{
    return memcmp(a, b, sizeof *a) == 0;
}

/* cfi_index_row_copied's copies: from memory that is certainly there, or
 * from none (every copy refused, as the kernel refuses an unmapped one). */
static int copy_plain(void *dst, uint64_t src, size_t n)
{
    memcpy(dst, (const void *)(uintptr_t)src, n);
    return 0;
}

static int copy_never(void *dst, uint64_t src, size_t n)
{
    (void)dst;
    (void)src;
    (void)n;
    return -1;
}

/* Lookups cfi_index_row_copied left to the collector (FDEs too long to
 * copy onto a handler's stack), in index_against_table. */
static size_t copied_too_long;

/* Every row of the object's whole table, and the byte after each row's
 * start, looked up through the index: the same row (or none), and the
 * function cfi_index_function decodes holds it.  Returns how many
 * addresses were compared; *bad, how many disagreed. */
static size_t index_against_table(const char *what, const uint8_t *hdr, const uint8_t *lo,
                                  const uint8_t *hi, uintptr_t bias, size_t *bad)
{
    struct cfi_table t;
    struct cfi_index ix;
    *bad = 0;
    if (cfi_parse_hdr(hdr, lo, hi, bias, &t) != 0)
        return 0;
    if (!cfi_index_open(hdr, lo, hi, bias, &ix)) {
        cfi_free(&t);
        return 0;
    }
    size_t compared = 0;
    for (size_t i = 0; i < t.count; i++) {
        for (uint64_t d = 0; d < 2; d++) {
            uint64_t pc = t.rows[i].pc + d;
            if (d && i + 1 < t.count && t.rows[i + 1].pc <= pc)
                continue;
            const struct cfi_row *want = cfi_find(&t, pc);
            struct cfi_row got;
            int k = cfi_index_row(&ix, pc, SIZE_MAX, &got);
            struct cfi_row copied;
            int kc = cfi_index_row_copied(&ix, pc, copy_plain, &copied);
            copied_too_long += kc == -1;
            struct cfi_function f;
            int fk = cfi_index_function(&ix, pc, &f);
            const struct cfi_row *in_fn = NULL;
            for (size_t r = 0; fk == 1 && r < f.count; r++)
                if (f.rows[r].pc <= pc)
                    in_fn = &f.rows[r];
            int ok = want ? k == 1 && same_row(want, &got) && fk == 1 && in_fn &&
                                same_row(want, in_fn) && f.lo <= pc && pc < f.hi
                          : k == 0 && (fk == 0 || (in_fn && in_fn->cfa == CFI_NONE)) &&
                                f.lo <= pc && pc < f.hi;
            ok = ok && (kc == -1 || (kc == k && (k != 1 || same_row(&got, &copied))));
            if (!ok && ++*bad <= 5)
                printf("  %s: %llx: table %d, index %d, function %d [%llx, %llx)\n", what,
                       (unsigned long long)pc, want ? want->cfa : -1, k == 1 ? got.cfa : -k, fk,
                       (unsigned long long)f.lo, (unsigned long long)f.hi);
            cfi_function_free(&f);
            compared++;
        }
    }
    cfi_free(&t);
    return compared;
}

static void test_index_agrees_with_libc_table(void)
{
    struct found f = {.want = "libc.so"};
    dl_iterate_phdr(find_object, &f);
    REQUIRE(f.hdr && f.lo);
    size_t bad;
    copied_too_long = 0;
    size_t compared = index_against_table("libc", f.hdr, f.lo, f.hi, f.bias, &bad);
    CHECK(compared > 20000);
    CHECK_EQ(bad, 0);
    /* the copies decode what the reads in place decode, but for a few long
     * FDEs left to the collector */
    CHECK(copied_too_long * 100 < compared);
    /* and the index opened from copies is the one opened in place */
    struct cfi_index in_place, copied;
    REQUIRE(cfi_index_open(f.hdr, f.lo, f.hi, f.bias, &in_place) == 1);
    CHECK(cfi_index_open_copied((uintptr_t)f.hdr, (uintptr_t)f.lo, (uintptr_t)f.hi, f.bias,
                                copy_plain, &copied) == 1 &&
          memcmp(&in_place, &copied, sizeof copied) == 0);
    CHECK_EQ(cfi_index_open_copied((uintptr_t)f.hdr, (uintptr_t)f.lo, (uintptr_t)f.hi, f.bias,
                                   copy_never, &copied), 0);
    CHECK_EQ(cfi_index_open_copied((uintptr_t)f.hdr, (uintptr_t)f.lo, (uintptr_t)f.hdr + 8,
                                   f.bias, copy_plain, &copied), 0); /* past the segment */
}

/* An ELF file mapped whole: the segment holding its .eh_frame_hdr, and the
 * bias that puts its link-time addresses where the file's bytes are. */
struct image {
    uint8_t *map;
    size_t size;
    const uint8_t *hdr, *lo, *hi;
    uintptr_t bias;
};

static int map_image(const char *path, struct image *im)
{
    memset(im, 0, sizeof *im);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0 || st.st_size < (off_t)sizeof(Elf64_Ehdr)) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    im->size = (size_t)st.st_size;
    im->map = mmap(NULL, im->size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (im->map == MAP_FAILED)
        return -1;
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)im->map;
    const Elf64_Phdr *ph = (const Elf64_Phdr *)(im->map + eh->e_phoff);
    const Elf64_Phdr *frame = NULL;
    for (int i = 0; i < eh->e_phnum; i++)
        if (ph[i].p_type == PT_GNU_EH_FRAME)
            frame = &ph[i];
    for (int i = 0; frame && i < eh->e_phnum; i++) {
        if (ph[i].p_type == PT_LOAD && frame->p_vaddr >= ph[i].p_vaddr &&
            frame->p_vaddr < ph[i].p_vaddr + ph[i].p_filesz) {
            im->bias = (uintptr_t)im->map + ph[i].p_offset - ph[i].p_vaddr;
            im->lo = im->map + ph[i].p_offset;
            im->hi = im->lo + ph[i].p_filesz;
            im->hdr = (const uint8_t *)(im->bias + frame->p_vaddr);
        }
    }
    return im->hdr ? 0 : -1;
}

/* The runtime's libraries (libcoreclr.so: 17,000 functions, 110,000 rows):
 * the ones the agent meets most. */
static void test_index_agrees_with_runtime_tables(void)
{
    glob_t g;
    const char *env = getenv("CORSCOPE_TEST_RUNTIME_DIR");
    char pattern[600];
    snprintf(pattern, sizeof pattern, "%s/lib{coreclr,clrjit,System.Native}.so",
             env ? env : "/usr/share/dotnet/shared/Microsoft.NETCore.App/*");
    if (glob(pattern, GLOB_BRACE, NULL, &g) != 0 || g.gl_pathc == 0) {
        fprintf(stderr, "  (skipped: no runtime at %s)\n", pattern);
        return;
    }
    size_t total = 0;
    for (size_t i = 0; i < g.gl_pathc; i++) {
        struct image im;
        if (map_image(g.gl_pathv[i], &im) < 0)
            continue;
        size_t bad;
        size_t n = index_against_table(g.gl_pathv[i], im.hdr, im.lo, im.hi, im.bias, &bad);
        CHECK(n > 1000);
        CHECK_EQ(bad, 0);
        total += n;
        munmap(im.map, im.size);
    }
    globfree(&g);
    CHECK(total > 100000);
}

/* An .eh_frame_hdr with a search table over the section sec (at hdr + 64)
 * of n FDEs starting at pcs[i] (run-time addresses) at offsets fde_at[i]. */
static size_t put_hdr(uint8_t *hdr, uint8_t enc_count, uint8_t enc_table, uint32_t count,
                      const uint32_t *pcs, const uint32_t *fde_at, size_t n)
{
    hdr[0] = 1;
    hdr[1] = 0x1b; /* eh_frame_ptr: pcrel sdata4 */
    hdr[2] = enc_count;
    hdr[3] = enc_table;
    int32_t to_section = 64 - 4;
    memcpy(hdr + 4, &to_section, 4);
    memcpy(hdr + 8, &count, 4);
    for (size_t i = 0; i < n; i++) {
        int32_t pc = (int32_t)pcs[i], at = (int32_t)(64 + fde_at[i]);
        memcpy(hdr + 12 + 8 * i, &pc, 4);
        memcpy(hdr + 16 + 8 * i, &at, 4);
    }
    return 12 + 8 * n;
}

/* The index over a small made-up object: lookups inside and between its
 * functions, and tables it must refuse or survive. */
static void test_index_lookups_and_damage(void)
{
    static const uint8_t cie_zr[] = {0, 0, 0, 0, 1, 'z', 'R', 0, 1, 0x78, 16, 1, 0x1b,
                                     0x0c, 7, 8, 0x90, 1};
    static const uint8_t fine[] = {0x0e, 16};
    static uint8_t mem[4096];
    memset(mem, 0, sizeof mem);
    uint8_t *hdr = mem, *sec = mem + 64;
    const uint32_t base = 0x400; /* the functions' code: offsets from mem */
    size_t at = 0, cie = at;
    at += put_entry(sec + at, cie_zr, sizeof cie_zr);
    uint32_t fde_at[3], pcs[3];
    for (int i = 0; i < 3; i++) {
        fde_at[i] = (uint32_t)at;
        pcs[i] = base + 0x100 * (uint32_t)i;
        at += put_fde_with(sec + at, at, cie, pcs[i] - 64, fine, sizeof fine);
    }
    const uint8_t *hi = sec + at + 4;
    /* the FDEs' pc_begin is pcrel to their field in sec: the addresses
     * in mem are pcs[i] */
    put_hdr(hdr, 0x03, 0x3b, 3, pcs, fde_at, 3);
    struct cfi_index ix;
    REQUIRE(cfi_index_open(hdr, mem, hi, (uintptr_t)mem, &ix) == 1);
    CHECK_EQ(ix.count, 3);
    struct cfi_row row;
    CHECK(cfi_index_row(&ix, base + 0x100, SIZE_MAX, &row) == 1 && row.cfa == CFI_RSP &&
          row.cfa_offset == 8);
    CHECK(cfi_index_row(&ix, base + 0x101, SIZE_MAX, &row) == 1 && row.cfa_offset == 16);
    CHECK_EQ(cfi_index_row(&ix, base + 0x110, SIZE_MAX, &row), 0); /* past its 16 bytes */
    CHECK_EQ(cfi_index_row(&ix, base - 1, SIZE_MAX, &row), 0);     /* before the first */
    CHECK_EQ(cfi_index_row(&ix, base + 0x101, 8, &row), -1);       /* longer than allowed */
    /* copied rather than read in place: the same answers; nothing readable, -1 */
    CHECK(cfi_index_row_copied(&ix, base + 0x100, copy_plain, &row) == 1 && row.cfa == CFI_RSP &&
          row.cfa_offset == 8);
    CHECK(cfi_index_row_copied(&ix, base + 0x201, copy_plain, &row) == 1 && row.cfa_offset == 16);
    CHECK_EQ(cfi_index_row_copied(&ix, base + 0x110, copy_plain, &row), 0);
    CHECK_EQ(cfi_index_row_copied(&ix, base - 1, copy_plain, &row), 0);
    CHECK_EQ(cfi_index_row_copied(&ix, base + 0x101, copy_never, &row), -1);
    struct cfi_function f;
    CHECK_EQ(cfi_index_function(&ix, base + 0x105, &f), 1);
    CHECK(f.lo == base + 0x100 && f.hi == base + 0x110 && f.count == 2);
    cfi_function_free(&f);
    CHECK_EQ(cfi_index_function(&ix, base + 0x150, &f), 0); /* the gap to the next one */
    CHECK(f.lo == base + 0x110 && f.hi == base + 0x200 && !f.rows);
    CHECK_EQ(cfi_index_function(&ix, base - 5, &f), 0);
    CHECK(f.lo == 0 && f.hi == base);
    CHECK_EQ(cfi_index_function(&ix, base + 0x250, &f), 0);
    CHECK(f.lo == base + 0x210 && f.hi == UINT64_MAX);

    /* no table, or one no linker writes, or longer than the segment */
    put_hdr(hdr, 0xff, 0x3b, 3, pcs, fde_at, 3);
    CHECK_EQ(cfi_index_open(hdr, mem, hi, (uintptr_t)mem, &ix), 0);
    put_hdr(hdr, 0x03, 0x03, 3, pcs, fde_at, 3);
    CHECK_EQ(cfi_index_open(hdr, mem, hi, (uintptr_t)mem, &ix), 0);
    put_hdr(hdr, 0x03, 0x3b, 100000, pcs, fde_at, 3);
    CHECK_EQ(cfi_index_open(hdr, mem, hi, (uintptr_t)mem, &ix), 0);
    CHECK_EQ(cfi_index_open(hdr, mem, mem + 10, (uintptr_t)mem, &ix), 0);
    /* entries pointing outside the section, or at the CIE */
    uint32_t wild[3] = {100000, 0, fde_at[2] + 3};
    put_hdr(hdr, 0x03, 0x3b, 3, pcs, wild, 3);
    REQUIRE(cfi_index_open(hdr, mem, hi, (uintptr_t)mem, &ix) == 1);
    for (int i = 0; i < 3; i++) {
        CHECK_EQ(cfi_index_row(&ix, pcs[i] + 1, SIZE_MAX, &row), 0);
        CHECK_EQ(cfi_index_row_copied(&ix, pcs[i] + 1, copy_plain, &row), 0);
        CHECK(cfi_index_function(&ix, pcs[i] + 1, &f) == 0 && !f.rows);
    }
    /* unsorted: a function is still found where its entry leads */
    uint32_t backwards[3] = {pcs[2], pcs[1], pcs[0]}, fdes_back[3] = {fde_at[2], fde_at[1], fde_at[0]};
    put_hdr(hdr, 0x03, 0x3b, 3, backwards, fdes_back, 3);
    REQUIRE(cfi_index_open(hdr, mem, hi, (uintptr_t)mem, &ix) == 1);
    for (uint32_t pc = base - 8; pc < base + 0x300; pc += 7) {
        int k = cfi_index_row(&ix, pc, SIZE_MAX, &row);
        CHECK(k == 0 || k == 1);
        struct cfi_row copied;
        CHECK(cfi_index_row_copied(&ix, pc, copy_plain, &copied) == k &&
              (k != 1 || same_row(&row, &copied)));
        if (cfi_index_function(&ix, pc, &f) >= 0)
            CHECK(f.lo <= pc && pc < f.hi);
        cfi_function_free(&f);
    }
}

void suite_cfi(void)
{
    RUN(test_libc_rows_match_readelf);
    RUN(test_libc_all_rows_match_readelf);
    RUN(test_damaged_sections);
    RUN(test_long_cie_refused);
    RUN(test_gaps_counted);
    RUN(test_index_agrees_with_libc_table);
    RUN(test_index_agrees_with_runtime_tables);
    RUN(test_index_lookups_and_damage);
}
