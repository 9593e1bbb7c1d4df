/*
 * fuzz_cfi: the .eh_frame parser (agent/signal/cfi.c) and its lookup over
 * arbitrary bytes.
 *
 * The agent parses the unwind tables of every library the profiled program
 * loads, inside that program: a crash here is the user's crash.  The input
 * is read three ways: as an .eh_frame section at a plausible address (a
 * library mapped high, with its bias), as one at a low address with no
 * bias (pc-relative pointers wrap around), and as what the agent really
 * gets, an .eh_frame_hdr followed by the section it points to (the seeds
 * of corpus/cfi named hdr-* are laid out so).  Each table must hold rows in
 * strictly increasing pc order with known rules, and cfi_find must give,
 * for every row's pc and the byte before it, that row (or nothing for a
 * gap) and the row before it.  When the header has a search table (seeds
 * hdr-*, and hdr-index-*, sampled sections with a table made for them),
 * the one-function lookups (cfi_index_row, the walker's, and
 * cfi_index_function, the collector's) run at every entry's start, the
 * bytes around it and every row's pc: their ranges must hold the address,
 * their rows be sorted, and the walker's row be the collector's.  Last,
 * the section is parsed again with one of its first allocations failing:
 * the parser must give -1 and an empty table, or a good table.  Seeds:
 * tests/fuzz/seeds.sh.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agent/signal/cfi.h"
#include "common/mem.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(const struct cfi_table *t)
{
    for (size_t i = 0; i < t->count; i++) {
        const struct cfi_row *row = &t->rows[i];
        if (i > 0 && t->rows[i - 1].pc >= row->pc)
            abort(); /* not sorted, or a pc twice */
        if (row->cfa > CFI_SIGFRAME || row->outermost > 1)
            abort();
        const struct cfi_row *found = cfi_find(t, row->pc);
        if (found != (row->cfa == CFI_NONE ? NULL : row))
            abort();
        if (row->pc > 0) {
            found = cfi_find(t, row->pc - 1);
            const struct cfi_row *before = i > 0 ? &t->rows[i - 1] : NULL;
            if (found != (before && before->cfa != CFI_NONE ? before : NULL))
                abort();
        }
    }
    const struct cfi_row *last = cfi_find(t, UINT64_MAX);
    if (t->count && last != (t->rows[t->count - 1].cfa == CFI_NONE ? NULL : &t->rows[t->count - 1]))
        abort();
    if (!t->count && (last || cfi_find(t, 0)))
        abort();
}

/* The input's bytes, for cfi_index_row_copied: a copy from outside them is
 * a read the in-place lookup would not make. */
static const uint8_t *input_lo, *input_hi;

static int copy_input(void *dst, uint64_t src, size_t n)
{
    if (src < (uintptr_t)input_lo || src > (uintptr_t)input_hi || n > (uintptr_t)input_hi - src)
        abort();
    memcpy(dst, (const void *)(uintptr_t)src, n);
    return 0;
}

/* One address through the index: the walker's row agrees with the
 * function the collector decodes, and with the row decoded from copies. */
static void check_index_at(const struct cfi_index *ix, uint64_t pc)
{
    if (pc == UINT64_MAX)
        return; /* the address space's last byte: no [lo, hi) holds it, and it is no code */
    struct cfi_row row;
    int k = cfi_index_row(ix, pc, SIZE_MAX, &row);
    if (k != 0 && k != 1)
        abort();
    if (k == 1 && (row.cfa == CFI_NONE || row.cfa > CFI_SIGFRAME || row.outermost > 1))
        abort();
    struct cfi_row capped;
    int c = cfi_index_row(ix, pc, 64, &capped);
    if (c != -1 && (c != k || (k == 1 && memcmp(&row, &capped, sizeof row))))
        abort();
    struct cfi_row copied;
    int kc = cfi_index_row_copied(ix, pc, copy_input, &copied);
    if (kc != -1 && (kc != k || (k == 1 && memcmp(&row, &copied, sizeof row))))
        abort();
    struct cfi_function f;
    int fk = cfi_index_function(ix, pc, &f);
    if (fk < 0)
        return;
    if (f.lo > pc || pc >= f.hi)
        abort();
    if (fk == 0 && (f.rows || f.count || k == 1))
        abort();
    if (fk == 1) {
        if (!f.count || f.rows[0].pc != f.lo)
            abort();
        const struct cfi_row *at = NULL;
        for (size_t i = 0; i < f.count; i++) {
            if (i > 0 && f.rows[i - 1].pc >= f.rows[i].pc)
                abort();
            if (f.rows[i].pc >= f.hi)
                abort();
            if (f.rows[i].pc <= pc)
                at = &f.rows[i];
        }
        int found = at && at->cfa != CFI_NONE;
        if (found != k || (found && memcmp(at, &row, sizeof row)))
            abort();
    }
    cfi_function_free(&f);
}

static void check_index(const uint8_t *data, size_t size, const struct cfi_table *t)
{
    struct cfi_index ix, copied;
    input_lo = data;
    input_hi = data + size;
    /* the index opened from copies takes a subset of the encodings, and
     * is the same index where it takes one */
    int opened = cfi_index_open(data, data, data + size, 0, &ix);
    if (cfi_index_open_copied((uintptr_t)data, (uintptr_t)data, (uintptr_t)(data + size), 0,
                              copy_input, &copied) &&
        (!opened || memcmp(&ix, &copied, sizeof ix)))
        abort();
    if (!opened)
        return;
    size_t n = ix.count < 4096 ? ix.count : 4096;
    for (size_t i = 0; i < n; i++) {
        const uint8_t *e = ix.table + 8 * i;
        int32_t off = (int32_t)((uint32_t)e[0] | (uint32_t)e[1] << 8 | (uint32_t)e[2] << 16 |
                                (uint32_t)e[3] << 24);
        uint64_t pc = (uint64_t)(uintptr_t)data + (uint64_t)(int64_t)off;
        check_index_at(&ix, pc - 1);
        check_index_at(&ix, pc);
        check_index_at(&ix, pc + 1);
    }
    for (size_t i = 0; t && i < t->count && i < 4096; i++)
        check_index_at(&ix, t->rows[i].pc);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct cfi_table t;
    /* a library mapped at 0x7f0000000000, its .eh_frame 256 MB in: far
     * enough for the pc-relative pointers of real sections to stay above
     * the bias */
    const uintptr_t bias = 0x7f0000000000;
    if (cfi_parse_section(data, size, bias + 0x10000000, bias, &t) == 0) {
        check(&t);
        cfi_free(&t);
    }
    if (cfi_parse_section(data, size, 0x1000, 0, &t) == 0) {
        check(&t);
        cfi_free(&t);
    }
    /* the header and the section in one readable range, as mapped */
    if (cfi_parse_hdr(data, data, data + size, 0, &t) == 0) {
        check(&t);
        check_index(data, size, &t);
        cfi_free(&t);
    } else {
        check_index(data, size, NULL);
    }
    mem_fail_after(1 + (long)(size % 3), 0);
    int rc = cfi_parse_section(data, size, bias + 0x10000000, bias, &t);
    mem_fail_after(0, 0);
    if (rc < 0 && (t.rows || t.count))
        abort();
    if (rc == 0) {
        check(&t);
        cfi_free(&t);
    }
    return 0;
}
