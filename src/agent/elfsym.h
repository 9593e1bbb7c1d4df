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
 * sorted by address.  Used by the collector, never in a signal handler.
 */
#ifndef CORSCOPE_ELFSYM_H
#define CORSCOPE_ELFSYM_H

#include <stddef.h>
#include <stdint.h>

#include "common/visibility.h"

struct elfsym_entry {
    uint64_t addr; /* link-time address */
    uint64_t size;
    uint32_t name; /* offset into names */
};

struct elfsym {
    struct elfsym_entry *entries; /* sorted by addr */
    size_t count;
    char *names;
    char source[256]; /* the file the symbols came from */
};

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
/* The function covering link-time address `addr`, or NULL. */
HIDDEN const char *elfsym_find(const struct elfsym *s, uint64_t addr);
HIDDEN void elfsym_free(struct elfsym *s);

#endif
