/*
 * Tests of cfi (agent/signal/cfi.h): the .eh_frame parser against what
 * readelf says about the C library, damaged sections, and the gaps it
 * counts.
 */
#include <link.h>
#include <pthread.h>
#include <stdlib.h>

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

void suite_cfi(void)
{
    RUN(test_libc_rows_match_readelf);
    RUN(test_libc_all_rows_match_readelf);
    RUN(test_damaged_sections);
    RUN(test_long_cie_refused);
    RUN(test_gaps_counted);
}
