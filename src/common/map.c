/*
 * map: see map.h.
 */
#include "common/map.h"

#include <string.h>

#include "common/hash.h"
#include "common/mem.h"

void map64_init(struct map64 *m)
{
    memset(m, 0, sizeof *m);
}

void map64_free(struct map64 *m)
{
    mem_free(m->keys);
    mem_free(m->vals);
    map64_init(m);
}

void map64_clear(struct map64 *m)
{
    if (m->cap)
        memset(m->vals, 0, m->cap * sizeof *m->vals);
    m->count = 0;
}

int map64_get(const struct map64 *m, uint64_t key, uint32_t *val)
{
    if (!m->count)
        return 0;
    size_t mask = m->cap - 1;
    for (size_t i = hash_u64(key) & mask;; i = (i + 1) & mask) {
        if (!m->vals[i])
            return 0;
        if (m->keys[i] == key) {
            *val = m->vals[i] - 1;
            return 1;
        }
    }
}

static void place(uint64_t *keys, uint32_t *vals, size_t cap, uint64_t key, uint32_t stored)
{
    size_t mask = cap - 1;
    size_t i = hash_u64(key) & mask;
    while (vals[i] && keys[i] != key)
        i = (i + 1) & mask;
    keys[i] = key;
    vals[i] = stored;
}

static int grow(struct map64 *m)
{
    size_t cap = m->cap ? m->cap * 2 : 64;
    uint64_t *keys = mem_alloc(cap * sizeof *keys);
    uint32_t *vals = mem_calloc(cap, sizeof *vals);
    if (!keys || !vals) {
        mem_free(keys);
        mem_free(vals);
        return -1;
    }
    for (size_t i = 0; i < m->cap; i++)
        if (m->vals[i])
            place(keys, vals, cap, m->keys[i], m->vals[i]);
    mem_free(m->keys);
    mem_free(m->vals);
    m->keys = keys;
    m->vals = vals;
    m->cap = cap;
    return 0;
}

int map64_put(struct map64 *m, uint64_t key, uint32_t val)
{
    if ((m->count + 1) * 2 > m->cap && grow(m) < 0)
        return -1;
    size_t mask = m->cap - 1;
    size_t i = hash_u64(key) & mask;
    while (m->vals[i] && m->keys[i] != key)
        i = (i + 1) & mask;
    if (!m->vals[i])
        m->count++;
    m->keys[i] = key;
    m->vals[i] = val + 1;
    return 0;
}

int map64_remove(struct map64 *m, uint64_t key)
{
    if (!m->count)
        return 0;
    size_t mask = m->cap - 1;
    size_t i = hash_u64(key) & mask;
    while (m->vals[i] && m->keys[i] != key)
        i = (i + 1) & mask;
    if (!m->vals[i])
        return 0;
    m->vals[i] = 0;
    m->count--;
    /* shift later members of the probe run back over the hole */
    for (size_t j = (i + 1) & mask; m->vals[j]; j = (j + 1) & mask) {
        size_t home = hash_u64(m->keys[j]) & mask;
        /* j may move to i unless its home lies cyclically in (i, j] */
        int stays = (i <= j) ? (home > i && home <= j) : (home > i || home <= j);
        if (stays)
            continue;
        m->keys[i] = m->keys[j];
        m->vals[i] = m->vals[j];
        m->vals[j] = 0;
        i = j;
    }
    return 1;
}
