/*
 * map: an open-addressing hash map from 64-bit keys to 32-bit values, the
 * workhorse behind every id table (FunctionID -> frame, (parent, name) ->
 * call-tree node, thread/stack pairs).  Linear probing, power-of-two size,
 * at most half full; deletion by backward shifting, so no tombstones.
 */
#ifndef CORSCOPE_MAP_H
#define CORSCOPE_MAP_H

#include <stddef.h>
#include <stdint.h>

#include "common/visibility.h"

struct map64 {
    uint64_t *keys;
    uint32_t *vals; /* value + 1; 0 marks an empty slot */
    size_t cap;     /* slots, a power of two, or 0 */
    size_t count;
};

HIDDEN void map64_init(struct map64 *m);
HIDDEN void map64_free(struct map64 *m);
HIDDEN void map64_clear(struct map64 *m);
/* Returns 1 and sets *val when present, else 0. */
HIDDEN int map64_get(const struct map64 *m, uint64_t key, uint32_t *val);
/* Inserts or replaces.  Returns 0, or -1 when out of memory (map intact).
 * val must be below UINT32_MAX. */
HIDDEN int map64_put(struct map64 *m, uint64_t key, uint32_t val);
/* Removes the key if present; returns 1 when it was. */
HIDDEN int map64_remove(struct map64 *m, uint64_t key);

#endif
