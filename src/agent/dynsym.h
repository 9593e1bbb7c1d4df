/*
 * dynsym: the dynamic linker's view of a native address (which loaded
 * object holds it, and the exported symbol that covers it), copied out
 * while the loader still holds the object.
 *
 * dladdr1 answers with pointers into the object and the loader's own
 * records (its name, its link_map, its .dynsym entry and .dynstr string),
 * valid only while the object stays loaded; a program that unloads a
 * library at that moment (NativeLibrary.Free, dlclose on another thread)
 * unmaps them under the reader.  Here the lookup runs inside
 * dl_iterate_phdr's callback, under the loader's lock, which an unload
 * takes before it unmaps anything: everything needed is copied there.  The
 * symbol is found as dladdr finds it: the object's dynamic symbols (their
 * count from its GNU or SysV hash table), the one with the highest address
 * whose extent holds the address (or, of size 0, at the address itself).
 * For the collector, never a signal handler.
 */
#ifndef CORSCOPE_DYNSYM_H
#define CORSCOPE_DYNSYM_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "common/visibility.h"

struct dynsym_hit {
    char module[PATH_MAX];   /* as the loader names it; the main program: its argv[0] */
    char file[PATH_MAX];     /* where its symbol table can be read: its path, or /proc/self/exe */
    uintptr_t bias;          /* runtime address - link-time address */
    uintptr_t base;          /* its lowest mapped address */
    char symbol[512];        /* the exported symbol covering the address, "" when none */
    uintptr_t symbol_start;  /* its runtime address */
};

/* The exported symbols of the loaded objects, for one caller's many
 * lookups (the collector's): forgotten whenever the loader has unloaded
 * an object since they were copied. */
struct dynsym_cache;

/* Fills *hit for the loaded object holding address.  Returns 1, or 0 when
 * no loaded object holds it. */
HIDDEN int dynsym_lookup(uintptr_t address, struct dynsym_hit *hit);
/* The same, with the exported symbol looked for only when want_symbol
 * answers non-zero for the object's file (else symbol ""): the search
 * goes through every dynamic symbol of the object (libc's 3,000), which
 * the resolver skips for a library whose full table it has.  want_symbol
 * runs under the loader's lock: it may not load a library, nor read a
 * file that could wait for one.  With a cache, each object's exported
 * symbols are copied and sorted the first time, and later lookups search
 * the copy (scanning libcoreclr.so's 322 for each of a collection's
 * addresses took 0.7 ms of a short process); without one, or when the
 * cache cannot be filled, the table is scanned. */
HIDDEN int dynsym_lookup_if(uintptr_t address, struct dynsym_hit *hit,
                            int (*want_symbol)(const char *file, void *ctx), void *ctx,
                            struct dynsym_cache *cache);

HIDDEN struct dynsym_cache *dynsym_cache_new(void);
HIDDEN void dynsym_cache_free(struct dynsym_cache *c);
/* Tests: the objects whose exports the cache holds. */
HIDDEN size_t dynsym_cache_objects(const struct dynsym_cache *c);
/* Tests: lookups in no object that the cache answered without the
 * loader's list. */
HIDDEN uint64_t dynsym_cache_answered_none(const struct dynsym_cache *c);

#endif
