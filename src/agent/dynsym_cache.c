/*
 * dynsym_cache: see dynsym_cache.h.
 */
#include "agent/dynsym_cache.h"

#include <link.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/mem.h"

struct export {
    uint64_t start, len; /* link-time address; bytes it names */
    uint64_t reach;      /* the furthest end of this and every export before */
    uint32_t name;       /* into the object's names */
    uint32_t order;      /* in the table */
};

/* A loaded object as a lookup found it: where it is (its program headers,
 * so that the next lookup in it needs no walk through the loader's list
 * while nothing is unloaded), and its exports once copied. */
struct dynsym_object {
    uintptr_t bias;
    uintptr_t lo, hi;    /* its loaded segments' extent: no address outside is its */
    char *path;          /* dlpi_name */
    ElfW(Phdr) *phdr;    /* a copy of its program headers */
    int phnum;
    unsigned scans;      /* lookups that scanned the table before it was copied */
    struct export *e;    /* by start, then table order; NULL until copied */
    size_t count;
    char *names;
};

/* Lookups of an object that scan its table before it is copied and
 * sorted: copying libstdc++'s 6,000 exports costs about what this many
 * scans do, and an object looked up a few times (the host's libraries,
 * at the root of a stack) never pays for it. */
#define EXPORT_SCANS 8

static int by_start(const void *a, const void *b)
{
    const struct export *x = a, *y = b;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

/* The copy of an object without a table that can be read: it holds
 * nothing, as the scan would find nothing (never freed). */
static struct export no_exports[1];
static char no_names[1];

/* The object's exports copied into x under the loader's lock; 0, or -1
 * without memory or for a table too large for the copy's 32-bit indices
 * (the caller then scans, and the copy is tried again only after another
 * EXPORT_SCANS lookups: not at every lookup). */
static int copy_exports(const struct dl_phdr_info *info, struct dynsym_object *x)
{
    struct dynsym_tables t;
    if (!dynsym_tables(info, &t)) {
        x->e = no_exports;
        x->names = no_names;
        x->count = 0;
        return 0;
    }
    if (t.count > UINT32_MAX || t.strsz > UINT32_MAX || !(x->e = mem_alloc(t.count * sizeof *x->e))) {
        x->scans = 0;
        return -1;
    }
    if (!(x->names = mem_alloc(t.strsz + 1))) {
        mem_free(x->e);
        x->e = NULL;
        x->scans = 0;
        return -1;
    }
    memcpy(x->names, t.strs, t.strsz);
    x->names[t.strsz] = '\0';
    x->count = 0;
    for (size_t i = 1; i < t.count; i++) {
        uint64_t len;
        if (!dynsym_usable(&t.syms[i], t.strsz, &len))
            continue;
        struct export *e = &x->e[x->count++];
        e->start = t.syms[i].st_value;
        e->len = len;
        e->name = t.syms[i].st_name;
        e->order = (uint32_t)i;
    }
    qsort(x->e, x->count, sizeof *x->e, by_start);
    uint64_t reach = 0;
    for (size_t i = 0; i < x->count; i++) {
        uint64_t end = x->e[i].start + x->e[i].len;
        if (end < x->e[i].start)
            end = UINT64_MAX;
        reach = end > reach ? end : reach;
        x->e[i].reach = reach;
    }
    return 0;
}

static void free_object(struct dynsym_object *x)
{
    mem_free(x->path);
    mem_free(x->phdr);
    if (x->e != no_exports) {
        mem_free(x->e);
        mem_free(x->names);
    }
    mem_free(x);
}

/* find_symbol's answer from the sorted exports: the last export starting
 * at or below the address, then down while one before may still reach it. */
static void find_cached(const struct dynsym_object *x, uintptr_t address, struct dynsym_hit *hit)
{
    if (address < x->bias)
        return;
    uint64_t at = (uint64_t)(address - x->bias);
    size_t a = 0, b = x->count;
    while (a < b) { /* first export with start > at: those before start at or below it */
        size_t m = a + (b - a) / 2;
        if (x->e[m].start <= at)
            a = m + 1;
        else
            b = m;
    }
    for (size_t i = a; i > 0 && x->e[i - 1].reach > at; i--) {
        const struct export *e = &x->e[i - 1];
        if (at - e->start >= e->len)
            continue;
        /* the first in the table's order among those at the same start */
        for (size_t j = i - 1; j > 0 && x->e[j - 1].start == e->start; j--)
            if (at - x->e[j - 1].start < x->e[j - 1].len)
                e = &x->e[j - 1];
        dynsym_copy_symbol(hit, x->names + e->name, SIZE_MAX, x->bias + e->start);
        return;
    }
}

struct dynsym_cache {
    unsigned long long subs; /* the loader's unloads when the cache was filled */
    /* every loaded object is recorded, as of the loader's count of loads
     * `adds`: an address none of them holds is in no object while that
     * count and subs stay (JIT'd and ReadyToRun code, the runtime's stubs:
     * half of a compiler's lookups, each a walk of the whole list) */
    int complete;
    unsigned long long adds;
    uint64_t answered_none; /* lookups the records answered "no object" (tests) */
    struct dynsym_object **objs;
    size_t count, cap;
};

struct dynsym_cache *dynsym_cache_new(void)
{
    return mem_calloc(1, sizeof(struct dynsym_cache));
}

static void cache_clear(struct dynsym_cache *c)
{
    for (size_t i = 0; i < c->count; i++)
        free_object(c->objs[i]);
    c->count = 0;
    c->complete = 0;
}

size_t dynsym_cache_objects(const struct dynsym_cache *c)
{
    return c ? c->count : 0;
}

uint64_t dynsym_cache_answered_none(const struct dynsym_cache *c)
{
    return c ? c->answered_none : 0;
}

void dynsym_cache_free(struct dynsym_cache *c)
{
    if (!c)
        return;
    cache_clear(c);
    mem_free(c->objs);
    mem_free(c);
}

static char *copy_string(const char *from)
{
    size_t n = strlen(from) + 1;
    char *to = mem_alloc(n);
    if (to)
        memcpy(to, from, n);
    return to;
}

/* Does the loader's record (size bytes of it) hold its counts of loads
 * and unloads? */
static int has_counts(size_t size)
{
    return size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof(unsigned long long);
}

struct dynsym_object *dynsym_cache_entry(struct dynsym_cache *c, const struct dl_phdr_info *info,
                                         size_t size)
{
    if (!has_counts(size))
        return NULL;
    if (info->dlpi_subs != c->subs) {
        cache_clear(c);
        c->subs = info->dlpi_subs;
    }
    const char *path = info->dlpi_name ? info->dlpi_name : "";
    for (size_t i = 0; i < c->count; i++)
        if (c->objs[i]->bias == info->dlpi_addr && !strcmp(c->objs[i]->path, path))
            return c->objs[i];
    struct dynsym_object **grown = mem_grow(c->objs, &c->cap, c->count + 1, sizeof *grown);
    if (!grown)
        return NULL;
    c->objs = grown;
    size_t phdr_bytes = (size_t)info->dlpi_phnum * sizeof *info->dlpi_phdr;
    struct dynsym_object *x = mem_calloc(1, sizeof *x);
    if (!x || !(x->path = copy_string(path)) || !(x->phdr = mem_alloc(phdr_bytes ? phdr_bytes : 1))) {
        if (x)
            free_object(x);
        return NULL;
    }
    memcpy(x->phdr, info->dlpi_phdr, phdr_bytes);
    x->phnum = info->dlpi_phnum;
    x->bias = info->dlpi_addr;
    x->lo = UINTPTR_MAX;
    for (int i = 0; i < x->phnum; i++)
        if (x->phdr[i].p_type == PT_LOAD) {
            uintptr_t start = x->bias + x->phdr[i].p_vaddr;
            x->lo = start < x->lo ? start : x->lo;
            x->hi = start + x->phdr[i].p_memsz > x->hi ? start + x->phdr[i].p_memsz : x->hi;
        }
    c->objs[c->count++] = x;
    return x;
}

int dynsym_cache_symbol(struct dynsym_object *x, const struct dl_phdr_info *info,
                        uintptr_t address, struct dynsym_hit *hit)
{
    if (!x->e && (x->scans++ < EXPORT_SCANS || copy_exports(info, x) < 0))
        return 0;
    find_cached(x, address, hit);
    return 1;
}

struct counts {
    unsigned long long adds, subs;
};

/* For dynsym_cache_fill, under the loader's lock: each object recorded. */
struct fill {
    struct dynsym_cache *cache;
    int unrecorded;
    struct counts seen;
};

static int record_object(struct dl_phdr_info *info, size_t size, void *data)
{
    struct fill *f = data;
    if (!dynsym_cache_entry(f->cache, info, size)) {
        f->unrecorded = 1;
        return 1;
    }
    f->seen.adds = info->dlpi_adds;
    f->seen.subs = info->dlpi_subs;
    return 0;
}

void dynsym_cache_fill(struct dynsym_cache *c)
{
    struct fill f = {.cache = c};
    dl_iterate_phdr(record_object, &f);
    if (!f.unrecorded && f.seen.subs == c->subs && c->count) {
        c->complete = 1;
        c->adds = f.seen.adds;
    }
}

/* The loader's counts of loads and unloads, read from the first object it
 * lists. */
static int first_counts(struct dl_phdr_info *info, size_t size, void *data)
{
    if (has_counts(size)) {
        struct counts *n = data;
        n->adds = info->dlpi_adds;
        n->subs = info->dlpi_subs;
    }
    return 1;
}

int dynsym_cache_lookup(struct dynsym_cache *c, uintptr_t address, uintptr_t page_mask,
                        struct dynsym_hit *hit, int (*want_symbol)(const char *file, void *ctx),
                        void *ctx)
{
    if (!c->count)
        return 0;
    struct counts now = {~0ull, ~0ull};
    dl_iterate_phdr(first_counts, &now);
    if (now.subs != c->subs)
        return 0;
    for (size_t i = 0; i < c->count; i++) {
        const struct dynsym_object *x = c->objs[i];
        uintptr_t lo;
        /* two comparisons for each object that cannot hold it (most of
         * the fifty-odd records of a program's every object) */
        if (address < (x->lo & page_mask) || address >= ((x->hi + ~page_mask) & page_mask))
            continue;
        if (!dynsym_holds(x->bias, x->phdr, x->phnum, address, page_mask, &lo))
            continue;
        dynsym_name_object(hit, x->path);
        if (!want_symbol || want_symbol(hit->file, ctx)) {
            if (!x->e) { /* its table is still scanned, under the loader's lock */
                hit->module[0] = hit->file[0] = '\0';
                return 0;
            }
            find_cached(x, address, hit);
        }
        hit->bias = x->bias;
        hit->base = lo;
        return 1;
    }
    if (!c->complete || now.adds != c->adds)
        return 0;
    c->answered_none++;
    return -1;
}
