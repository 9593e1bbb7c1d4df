/*
 * elfsym: names for addresses in native code, from an ELF object's full
 * symbol table.
 *
 * The dynamic linker knows only exported symbols (.dynsym); the internal
 * functions where programs actually wait and spin (glibc's
 * __futex_abstimed_wait_common, msort_with_tmp) are in .symtab, which
 * distributions strip into separate debug files.  This module reads
 * .symtab from the object itself or, when it was stripped, from its debug
 * file: /usr/lib/debug/.build-id/xx/yyyy.debug (by the object's build id,
 * as Debian's -dbg packages install them) or the .gnu_debuglink name under
 * /usr/lib/debug and beside the object.  Only function symbols are kept,
 * sorted by address, once enough addresses were looked up to pay for the
 * sort: a short process's few lookups scan the table as the file has it
 * (sorting libc's takes 0.3 ms: build/elfsym_cost), read with pread (the
 * file is not mapped); names stay in the file's string table, never copied
 * one by one.  Used by the collector, never in a signal handler.
 */
#ifndef CORSCOPE_ELFSYM_H
#define CORSCOPE_ELFSYM_H

#include <elf.h>
#include <stddef.h>
#include <stdint.h>

#include "common/visibility.h"

struct elfsym_entry {
    uint64_t addr; /* link-time address */
    uint64_t size;
    uint32_t name; /* offset into names */
};

struct elfsym {
    /* the function symbols: in the file's order, scanned by the first
     * ELFSYM_SCANS lookups of a loaded table; then sorted by address */
    struct elfsym_entry *entries;
    size_t count;
    int sorted;
    char *names; /* the string table, NUL-terminated */
    size_t names_size;
    char source[256]; /* the file the symbols came from */
    unsigned scans;
    char *found; /* an answer with its version cut */
    size_t found_cap;
};

/* How many lookups scan a loaded table before it is sorted: a scan of
 * libc's 6,700 functions takes about what sorting them takes divided by
 * 14 (21-22 us against 0.28-0.3 ms: build/elfsym_cost, addresses spread
 * over the table), so a process that looks up a few addresses (a short
 * one's samples) never sorts, and one that looks up many pays at most
 * about twice the sort. */
#define ELFSYM_SCANS 16

/* Loads the function symbols of the object at `path`.  Returns NULL when it
 * (and its debug files) have no .symtab, or on error. */
HIDDEN struct elfsym *elfsym_load(const char *path);
/* The function symbols of an ELF image already in memory: `size` bytes at
 * `image`, which must be 8-byte aligned (a mapping, a heap block).  Any
 * bytes are safe.  `source` is kept as where the symbols came from.  NULL
 * when the image has no .symtab, or on error. */
HIDDEN struct elfsym *elfsym_parse(const uint8_t *image, size_t size, const char *source);

#define ELFSYM_DEBUG_PATHS 3
#define ELFSYM_PATH_MAX 1400
/* Where the debug file of a stripped image, loaded from `path`, may be, in
 * the order elfsym_load tries them: by build id, then by .gnu_debuglink
 * under /usr/lib/debug and beside the object; never `path` itself.
 * Returns how many of `out` were written (0 to ELFSYM_DEBUG_PATHS). */
HIDDEN int elfsym_debug_paths(const uint8_t *image, size_t size, const char *path,
                              char out[ELFSYM_DEBUG_PATHS][ELFSYM_PATH_MAX]);
/* Whether the ELF file at `path` has a section named `name`: 1, 0, or -1
 * when it cannot be read as ELF. */
HIDDEN int elfsym_has_section(const char *path, const char *name);
/* The function covering link-time address `addr`, or NULL.  The name
 * lasts until the next call with `s`. */
HIDDEN const char *elfsym_find(struct elfsym *s, uint64_t addr);
/* Sorts a loaded table now (entries, names); 0, or -1 without memory. */
HIDDEN int elfsym_sort(struct elfsym *s);
/* Tests: how many lookups scan before the table is sorted. */
HIDDEN void elfsym_set_scan_budget(unsigned scans);
HIDDEN void elfsym_free(struct elfsym *s);

#endif
