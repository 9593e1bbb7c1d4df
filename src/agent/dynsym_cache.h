/*
 * dynsym_cache: what dynsym learns of the loaded objects, kept for the
 * collector's many lookups.
 *
 * A lookup walks the loader's list until an object holds the address
 * (reading each object's program headers: 0.3 ms of a short process whose
 * samples go through the runtime), then scans that object's exported
 * symbols (libcoreclr.so's 322, for each address: 0.7 ms).  The cache
 * records each object a lookup found (its name, a copy of its program
 * headers) and, once it has been looked up EXPORT_SCANS times, a sorted
 * copy of its exports; a later lookup in a recorded object answers from
 * the record without the loader's list.  Everything is copied while the loader holds the
 * object, as dynsym copies its answers.  Records are dropped as soon as
 * the loader counts an unload (dlpi_subs): another object may then hold
 * the addresses.  After a lookup that finds no object holding the
 * address, a second walk records every object, and while the loader
 * counts no load or unload the records answer such lookups alone.  For the
 * collector alone (one cache, one thread).
 */
#ifndef CORSCOPE_DYNSYM_CACHE_H
#define CORSCOPE_DYNSYM_CACHE_H

#include <elf.h>
#include <link.h>
#include <stdint.h>

#include "agent/dynsym.h"
#include "common/visibility.h"

struct dynsym_object;

/* The record of the object the loader's list found (info, under its
 * lock), made the first time; NULL without memory.  The cache is emptied
 * first when the loader has unloaded anything since it was filled. */
HIDDEN struct dynsym_object *dynsym_cache_entry(struct dynsym_cache *c,
                                                const struct dl_phdr_info *info, size_t size);
/* The exported symbol covering address from the object's sorted copy,
 * made under the loader's lock once the object has been looked up often
 * enough (an object without a table that can be read holds none: the
 * answer is no symbol); 0 when the copy does not serve (yet, or without
 * memory), and the caller scans the loader's table. */
HIDDEN int dynsym_cache_symbol(struct dynsym_object *x, const struct dl_phdr_info *info,
                               uintptr_t address, struct dynsym_hit *hit);
/* Records every loaded object (a walk of the loader's list, each copied
 * under its lock): until the loader counts a load or an unload, an address
 * outside them all is in no object.  Without memory for all, the cache
 * stays incomplete and such lookups walk the list. */
HIDDEN void dynsym_cache_fill(struct dynsym_cache *c);
/* The whole lookup from the records, without the loader's list, when an
 * object recorded since the last unload holds the address and its
 * exports are copied (or no symbol is wanted).  1 when answered; -1 when
 * the records are complete (dynsym_cache_fill) and none holds it;
 * after 0 the caller fills the hit again. */
HIDDEN int dynsym_cache_lookup(struct dynsym_cache *c, uintptr_t address, uintptr_t page_mask,
                               struct dynsym_hit *hit,
                               int (*want_symbol)(const char *file, void *ctx), void *ctx);

/* dynsym's own, shared with the cache: the object's dynamic symbol table
 * and its strings, checked against its loaded segments (0 when it has
 * none that can be read); whether a symbol can name an address, as
 * dladdr decides, and over how many bytes from its start (1 for one of
 * size 0 or undefined: a PLT entry's address); a symbol copied into a
 * hit; whether an object (its bias and program headers) holds an address
 * as the loader decides (inside one of its loaded segments, or anywhere
 * between its first and last page when the segments leave no hole
 * between them: the padding counts), *lo its lowest mapped address; a
 * hit's module and file named after the loader's name for the object
 * (the main program's is empty). */
struct dynsym_tables {
    const ElfW(Sym) *syms;
    size_t count;
    const char *strs;
    size_t strsz;
};
HIDDEN int dynsym_tables(const struct dl_phdr_info *info, struct dynsym_tables *t);
HIDDEN int dynsym_usable(const ElfW(Sym) *s, size_t strsz, uint64_t *len);
HIDDEN void dynsym_copy_symbol(struct dynsym_hit *hit, const char *name, size_t room,
                               uintptr_t start);
HIDDEN int dynsym_holds(uintptr_t bias, const ElfW(Phdr) *phdr, int phnum, uintptr_t address,
                        uintptr_t page_mask, uintptr_t *lo);
HIDDEN void dynsym_name_object(struct dynsym_hit *hit, const char *dlpi_name);

#endif
