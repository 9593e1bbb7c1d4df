/*
 * code_index: see code_index.h.
 */
#include "agent/code_index.h"

#include <string.h>

#include "agent/signal/ranges.h"
#include "common/map.h"
#include "common/mem.h"

_Static_assert(offsetof(struct code_range, start) == 0, "ranges.h searches by the first member");

static struct code_range *big, *recent;
static size_t big_count, big_cap, recent_count, recent_cap;
static struct map64 owner_of;  /* owner key -> index into owners */

/* A removed range stays in its array as a tombstone (empty: end == start,
 * no ids) until the next merge or compaction; a lookup that lands on one
 * looks at the range before it. */
static int is_tomb(const struct code_range *r)
{
    return r->end == r->start;
}

/* Ranges that can be unloaded are listed by their owner: a collectible
 * module (key: its ModuleID) or a DynamicMethod (key: its FunctionID with
 * the top bit set; no id has it), so that an unload finds its own ranges
 * by their starts, O(k log n), instead of looking at every range. */
#define OWNER_FUNCTION (1ull << 63)

struct owner {
    uintptr_t *starts;
    size_t n, cap;
};
static struct owner *owners;
static size_t owner_count, owner_cap;
static uint32_t *free_owners;
static size_t free_count, free_cap;
static size_t tombs; /* tombstones in big and recent */

static uint64_t owner_key(const struct code_range *r)
{
    return r->module ? (uint64_t)r->module : (uint64_t)r->function | OWNER_FUNCTION;
}

static void owner_add(uint64_t key, uintptr_t start)
{
    uint32_t at;
    if (!map64_get(&owner_of, key, &at)) {
        if (free_count) {
            at = free_owners[--free_count];
        } else {
            struct owner *grown = mem_grow(owners, &owner_cap, owner_count + 1, sizeof *owners);
            if (!grown)
                return;
            owners = grown;
            at = (uint32_t)owner_count++;
        }
        memset(&owners[at], 0, sizeof owners[at]);
        if (map64_put(&owner_of, key, at) < 0) {
            if (at + 1 == owner_count)
                owner_count--;
            else
                free_count++; /* it was the last free one: back where it was */
            return;
        }
    }
    struct owner *o = &owners[at];
    uintptr_t *grown = mem_grow(o->starts, &o->cap, o->n + 1, sizeof *o->starts);
    if (!grown)
        return; /* its range stays until the next unload of the same start */
    o->starts = grown;
    o->starts[o->n++] = start;
}

/* Index of the first range of v[0..n) whose start is >= address. */
static size_t lower_bound(const struct code_range *v, size_t n, uintptr_t address)
{
    return ranges_lower_bound(v, n, sizeof *v, address);
}

/* Tombstones passed over by the last search. */
static size_t skipped_tombs;

static const struct code_range *search(const struct code_range *v, size_t n, uintptr_t address)
{
    size_t at = ranges_upper_bound(v, n, sizeof *v, address);
    while (at > 0 && is_tomb(&v[at - 1])) {
        at--;
        skipped_tombs++;
    }
    if (at == 0)
        return NULL;
    const struct code_range *r = &v[at - 1];
    return address < r->end ? r : NULL;
}

static size_t drop_tombs(struct code_range *v, size_t n)
{
    size_t kept = 0;
    for (size_t i = 0; i < n; i++)
        if (!is_tomb(&v[i]))
            v[kept++] = v[i];
    return kept;
}

static void compact(void)
{
    big_count = drop_tombs(big, big_count);
    recent_count = drop_tombs(recent, recent_count);
    tombs = 0;
}

/* Merges `recent` into `big` (both sorted; no start is in both, since an
 * insertion at a start `big` holds replaces it there), in place from the
 * end, tombstones left out: no new allocation once `big` has grown to the
 * map's size, so a merge costs one pass over memory already mapped. */
static void merge(void)
{
    if (!recent_count)
        return;
    if (tombs) {
        big_count = drop_tombs(big, big_count);
        tombs = 0;
    }
    struct code_range *grown = mem_grow(big, &big_cap, big_count + recent_count, sizeof *big);
    if (!grown)
        return; /* stays in recent, still found */
    big = grown;
    size_t i = big_count, j = recent_count, k = big_count + recent_count;
    while (j > 0) {
        if (i > 0 && big[i - 1].start > recent[j - 1].start)
            big[--k] = big[--i];
        else
            big[--k] = recent[--j];
    }
    big_count += recent_count;
    recent_count = 0;
}

void code_index_insert(const struct code_range *r)
{
    if (r->end <= r->start)
        return;
    if (!r->permanent)
        owner_add(owner_key(r), r->start);
    /* a newer report of code at the same start takes the older one's place */
    size_t in_big = lower_bound(big, big_count, r->start);
    if (in_big < big_count && big[in_big].start == r->start) {
        if (is_tomb(&big[in_big]))
            tombs--;
        big[in_big] = *r;
        return;
    }
    size_t at = lower_bound(recent, recent_count, r->start);
    if (at < recent_count && recent[at].start == r->start) {
        if (is_tomb(&recent[at]))
            tombs--;
        recent[at] = *r;
        return;
    }
    struct code_range *grown = mem_grow(recent, &recent_cap, recent_count + 1, sizeof *recent);
    if (!grown)
        return;
    recent = grown;
    memmove(recent + at + 1, recent + at, (recent_count - at) * sizeof *recent);
    recent[at] = *r;
    recent_count++;
    if ((double)recent_count * recent_count > (double)(big_count + 1024))
        merge();
}

const struct code_range *code_index_find(uintptr_t address)
{
    skipped_tombs = 0;
    const struct code_range *r = search(recent, recent_count, address);
    if (!r)
        r = search(big, big_count, address);
    if (skipped_tombs > 32) {
        /* a run of removed ranges under a lookup: clear them all now */
        compact();
        r = search(recent, recent_count, address);
        if (!r)
            r = search(big, big_count, address);
    }
    return r;
}

size_t code_index_count(void)
{
    return big_count + recent_count - tombs;
}

/* Removes the range at `start` if it is still the owner's (a newer report
 * may have taken its place): from the small array at once, in the large
 * one as a tombstone; hands it to gone first. */
static void remove_range_at(uint64_t key, uintptr_t start,
                            void (*gone)(void *ctx, const struct code_range *r), void *ctx)
{
    struct code_range *v[2] = {recent, big};
    size_t n[2] = {recent_count, big_count};
    for (int a = 0; a < 2; a++) {
        size_t at = lower_bound(v[a], n[a], start);
        if (at >= n[a] || v[a][at].start != start)
            continue;
        struct code_range *r = &v[a][at];
        if (is_tomb(r) || r->permanent || owner_key(r) != key)
            return;
        gone(ctx, r);
        if (a == 0) {
            /* the small array: out at once, O(sqrt n), so that code loaded
             * and unloaded again and again never makes it grow */
            memmove(r, r + 1, (recent_count - at - 1) * sizeof *r);
            recent_count--;
            return;
        }
        r->end = r->start;
        r->function = 0;
        r->module = 0;
        r->frame = 0;
        tombs++;
        return;
    }
}

void code_index_remove(ModuleID module, FunctionID function,
                       void (*gone)(void *ctx, const struct code_range *r), void *ctx)
{
    uint64_t key = function ? (uint64_t)function | OWNER_FUNCTION : (uint64_t)module;
    uint32_t at;
    if ((function || module) && map64_get(&owner_of, key, &at)) {
        struct owner *o = &owners[at];
        for (size_t i = 0; i < o->n; i++)
            remove_range_at(key, o->starts[i], gone, ctx);
        mem_free(o->starts);
        memset(o, 0, sizeof *o);
        map64_remove(&owner_of, key);
        uint32_t *grown = mem_grow(free_owners, &free_cap, free_count + 1, sizeof *free_owners);
        if (grown) {
            free_owners = grown;
            free_owners[free_count++] = at;
        }
    }
    if (tombs > (big_count + recent_count) / 4 + 64)
        compact();
}

void code_index_init(void)
{
    map64_init(&owner_of);
}

void code_index_free(void)
{
    mem_free(big);
    mem_free(recent);
    for (size_t i = 0; i < owner_count; i++)
        mem_free(owners[i].starts);
    mem_free(owners);
    mem_free(free_owners);
    owners = NULL;
    free_owners = NULL;
    owner_count = owner_cap = free_count = free_cap = 0;
    tombs = 0;
    map64_free(&owner_of);
    big = recent = NULL;
    big_count = big_cap = recent_count = recent_cap = 0;
}
