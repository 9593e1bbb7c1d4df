/*
 * hash: the hash functions behind every deduplicating table (strings,
 * frames, stacks in the agent; aggregation in the CLI).  Not cryptographic;
 * chosen to be quick on short keys and to spread sequential integers
 * (pointer-like FunctionIDs, small frame ids) across the table.
 */
#ifndef CORSCOPE_HASH_H
#define CORSCOPE_HASH_H

#include <stddef.h>
#include <stdint.h>

/* splitmix64's finaliser: a bijective mix of one 64-bit value. */
static inline uint64_t hash_u64(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    x ^= x >> 31;
    return x;
}

/* Hash of a byte string: 8 bytes at a time through hash_u64. */
static inline uint64_t hash_bytes(const void *data, size_t n, uint64_t seed)
{
    const unsigned char *p = data;
    uint64_t h = hash_u64(seed ^ (n * 0x9e3779b97f4a7c15ull));
    while (n >= 8) {
        uint64_t w = 0;
        for (int i = 0; i < 8; i++)
            w |= (uint64_t)p[i] << (8 * i);
        h = hash_u64(h ^ w) + 0x9e3779b97f4a7c15ull;
        p += 8;
        n -= 8;
    }
    uint64_t w = 0;
    for (size_t i = 0; i < n; i++)
        w |= (uint64_t)p[i] << (8 * i);
    return hash_u64(h ^ w);
}

#endif
