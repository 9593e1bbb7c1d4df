/*
 * strtab: see strtab.h.  Hash collisions are resolved by probing the next
 * key (hash + 1, + 2 ...) until the slot is empty or holds the same bytes.
 */
#include "common/strtab.h"

#include <string.h>

#include "common/hash.h"
#include "common/mem.h"

int strtab_init(struct strtab *t)
{
    memset(t, 0, sizeof *t);
    map64_init(&t->index);
    t->strs = mem_grow(NULL, &t->cap, 16, sizeof *t->strs);
    size_t lcap = 0;
    t->lens = mem_grow(NULL, &lcap, t->cap, sizeof *t->lens);
    if (!t->strs || !t->lens || !(t->strs[0] = mem_strdup(""))) {
        strtab_free(t);
        return -1;
    }
    t->lens[0] = 0;
    t->count = 1;
    return 0;
}

void strtab_free(struct strtab *t)
{
    for (size_t i = 0; i < t->count; i++)
        mem_free(t->strs[i]);
    mem_free(t->strs);
    mem_free(t->lens);
    map64_free(&t->index);
    memset(t, 0, sizeof *t);
}

/* Walks the probe sequence; returns the id, or UINT32_MAX with *free_key
 * set to the first key not in use. */
static uint32_t lookup(const struct strtab *t, const char *s, size_t len, uint64_t *free_key)
{
    uint64_t key = hash_bytes(s, len, 0x5157);
    for (;; key++) {
        uint32_t id;
        if (!map64_get(&t->index, key, &id)) {
            *free_key = key;
            return UINT32_MAX;
        }
        if (t->lens[id] == len && memcmp(t->strs[id], s, len) == 0)
            return id;
    }
}

uint32_t strtab_find(const struct strtab *t, const char *s, size_t len)
{
    if (len == 0)
        return 0;
    uint64_t unused;
    return lookup(t, s, len, &unused);
}

uint32_t strtab_intern(struct strtab *t, const char *s, size_t len, int *is_new)
{
    *is_new = 0;
    if (len == 0)
        return 0;
    uint64_t key;
    uint32_t id = lookup(t, s, len, &key);
    if (id != UINT32_MAX)
        return id;
    if (t->count >= UINT32_MAX - 1)
        return UINT32_MAX;
    size_t cap = t->cap;
    char **strs = mem_grow(t->strs, &cap, t->count + 1, sizeof *t->strs);
    if (!strs)
        return UINT32_MAX;
    t->strs = strs;
    size_t lcap = t->cap;
    uint32_t *lens = mem_grow(t->lens, &lcap, t->count + 1, sizeof *t->lens);
    if (!lens)
        return UINT32_MAX;
    t->lens = lens;
    t->cap = cap < lcap ? cap : lcap;
    char *copy = mem_strndup(s, len);
    if (!copy)
        return UINT32_MAX;
    id = (uint32_t)t->count;
    if (map64_put(&t->index, key, id) < 0) {
        mem_free(copy);
        return UINT32_MAX;
    }
    t->strs[id] = copy;
    t->lens[id] = (uint32_t)len;
    t->count++;
    *is_new = 1;
    return id;
}
