/*
 * anoncode: executable memory that belongs to no file, where a .NET process
 * runs code the runtime generated that is no method: the stubs of its
 * executable allocator (precode, virtual dispatch, the write barrier it
 * copies there at start; with W^X on, "/memfd:doublemapper" mappings).
 *
 * The resolver asks here last, after the JIT's code, the loaded ELF objects
 * and GetFunctionFromIP have all said no: an address inside such a mapping
 * is shown as `[runtime stub]` (the runtime's code, no symbol) instead of
 * `[unknown]`; any other address stays unknown.  The mappings come from
 * /proc/self/maps, read again when an address is not in the copy and the
 * copy is older than a quarter of a second, so a burst of unknown
 * addresses reads the file at most four times a second.  Loop thread only.
 */
#ifndef CORSCOPE_ANONCODE_H
#define CORSCOPE_ANONCODE_H

#include <stdint.h>

#include "common/visibility.h"

/* 1 and *start (the mapping's first address) when address lies in
 * executable memory backed by no regular file; else 0. */
HIDDEN int anoncode_find(uintptr_t address, uintptr_t *start);
/* Frees the copy (the agent's end). */
HIDDEN void anoncode_free(void);
/* For tests: parse maps text (as /proc/self/maps) into the copy. */
HIDDEN int anoncode_load_text(const char *text);

#endif
