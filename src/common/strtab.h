/*
 * strtab: interns byte strings, giving each distinct string a small
 * sequential id (from 1).  The agent uses it to write each method, type and
 * module name once; the CLI to merge frames whose display names are equal.
 * Strings are copied; lookups hash the bytes and compare them, so two
 * different strings never share an id.
 */
#ifndef CORSCOPE_STRTAB_H
#define CORSCOPE_STRTAB_H

#include <stddef.h>
#include <stdint.h>

#include "common/map.h"
#include "common/visibility.h"

struct strtab {
    struct map64 index; /* hash (plus probe) -> id */
    char **strs;        /* [id], NUL-terminated copies; [0] = "" */
    uint32_t *lens;
    size_t count;       /* ids in use, including 0 */
    size_t cap;
};

HIDDEN int strtab_init(struct strtab *t);
HIDDEN void strtab_free(struct strtab *t);
/* Returns the id of the string, or 0 for the empty string.  *is_new is set
 * when this call added it.  Returns UINT32_MAX when out of memory. */
HIDDEN uint32_t strtab_intern(struct strtab *t, const char *s, size_t len, int *is_new);
/* Id of an existing string, or UINT32_MAX. */
HIDDEN uint32_t strtab_find(const struct strtab *t, const char *s, size_t len);

#endif
