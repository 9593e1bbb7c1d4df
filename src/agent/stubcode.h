/*
 * stubcode: executable memory of no file, where a .NET process runs code
 * the runtime generated that is no method: its stubs (precode, virtual
 * dispatch, the write barrier it copies there at start; with W^X on,
 * "/memfd:doublemapper" mappings).  An address in a ReadyToRun image that
 * the runtime does not know stays unknown: it may be one of the image's
 * import thunks, or a method's code the runtime cannot name yet, and
 * nothing here tells them apart.
 *
 * The resolver asks here last, after the JIT's code, the loaded ELF objects
 * and GetFunctionFromIP have all said no: an address inside such a mapping
 * is shown as `[runtime stub]` (the runtime's code, no symbol) instead of
 * `[unknown]`; any other address stays unknown.  An address not in the
 * copy is asked of the kernel where it answers for one address
 * (vma_query.h: the mapping then joins the copy); elsewhere the copy is
 * /proc/self/maps, read again when an address is not in it and it is
 * older than 10 ms, at most eight times a second (a run of unknown
 * addresses does not read it over and over); a miss while the copy could
 * not be read again says so, so that the caller can ask again later rather
 * than remember "unknown" (the runtime maps new stubs all along).  Loop
 * thread only.
 */
#ifndef CORSCOPE_STUBCODE_H
#define CORSCOPE_STUBCODE_H

#include <stdint.h>

#include "common/visibility.h"

enum stubcode_answer {
    STUBCODE_NO = 0,    /* in no such mapping, as of a copy read after the address was seen */
    STUBCODE_YES = 1,   /* *start: the mapping's first address */
    STUBCODE_STALE = 2, /* not in the copy, which could not be read again yet */
};

HIDDEN enum stubcode_answer stubcode_find(uintptr_t address, uintptr_t *start);
/* Frees the copy (the agent's end). */
HIDDEN void stubcode_free(void);
/* For tests: parse maps text (as /proc/self/maps) into the copy; the
 * clock the copy's age is read from (NULL: the real one). */
HIDDEN int stubcode_load_text(const char *text);
HIDDEN void stubcode_test_clock(uint64_t (*now)(void));

#endif
