/*
 * dynsym: see dynsym.h.
 */
#include "agent/dynsym.h"
#include "agent/dynsym_cache.h"

#include <elf.h>
#include <errno.h>
#include <link.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

struct search {
    uintptr_t address;
    uintptr_t page_mask; /* ~(page size - 1) */
    struct dynsym_hit *hit;
    int (*want_symbol)(const char *file, void *ctx); /* NULL: always */
    void *ctx;
    struct dynsym_cache *cache; /* NULL: scan each time */
    int found;
};

/* Does [p, p + n) lie in the file-backed part of one of the object's
 * loaded segments (mapped for as long as the object is)? */
static int in_object(const struct dl_phdr_info *info, uintptr_t p, size_t n)
{
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_LOAD && p >= lo && n <= ph->p_filesz && p - lo <= ph->p_filesz - n)
            return 1;
    }
    return 0;
}

/* A dynamic-section address: relocated in place by the loader for most
 * objects, left as a link-time address where the section is read-only
 * (the vDSO). */
static uintptr_t dyn_address(const struct dl_phdr_info *info, ElfW(Addr) v)
{
    return v < info->dlpi_addr ? info->dlpi_addr + v : v;
}

/* Symbols in the dynamic symbol table: from the GNU hash table (the highest
 * index any chain reaches, plus one) or the SysV one (nchain); 0 when
 * neither can be read. */
static size_t symbol_count(const struct dl_phdr_info *info, uintptr_t gnu, uintptr_t sysv)
{
    if (sysv && in_object(info, sysv, 8))
        return ((const uint32_t *)sysv)[1];
    if (!gnu || !in_object(info, gnu, 16))
        return 0;
    const uint32_t *h = (const uint32_t *)gnu;
    uint32_t nbuckets = h[0], symoffset = h[1], bloom_words = h[2];
    uintptr_t buckets = gnu + 16 + (uintptr_t)bloom_words * sizeof(ElfW(Addr));
    if (!nbuckets || !in_object(info, buckets, (size_t)nbuckets * 4))
        return 0;
    uint32_t last = 0;
    for (uint32_t b = 0; b < nbuckets; b++)
        if (((const uint32_t *)buckets)[b] > last)
            last = ((const uint32_t *)buckets)[b];
    if (last < symoffset)
        return symoffset; /* no exported symbol at all */
    uintptr_t chain = buckets + (uintptr_t)nbuckets * 4;
    for (;; last++) {
        uintptr_t at = chain + (uintptr_t)(last - symoffset) * 4;
        if (!in_object(info, at, 4))
            return 0;
        if (*(const uint32_t *)at & 1)
            return (size_t)last + 1;
    }
}

int dynsym_tables(const struct dl_phdr_info *info, struct dynsym_tables *t)
{
    const ElfW(Dyn) *dyn = NULL;
    size_t dyn_size = 0;
    for (int i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_DYNAMIC) {
            dyn = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
            dyn_size = info->dlpi_phdr[i].p_filesz;
        }
    if (!dyn || !in_object(info, (uintptr_t)dyn, dyn_size))
        return 0;
    uintptr_t symtab = 0, strtab = 0, gnu = 0, sysv = 0;
    size_t strsz = 0, syment = sizeof(ElfW(Sym));
    for (size_t i = 0; i < dyn_size / sizeof *dyn && dyn[i].d_tag != DT_NULL; i++) {
        switch (dyn[i].d_tag) {
        case DT_SYMTAB: symtab = dyn_address(info, dyn[i].d_un.d_ptr); break;
        case DT_STRTAB: strtab = dyn_address(info, dyn[i].d_un.d_ptr); break;
        case DT_STRSZ: strsz = dyn[i].d_un.d_val; break;
        case DT_SYMENT: syment = dyn[i].d_un.d_val; break;
        case DT_GNU_HASH: gnu = dyn_address(info, dyn[i].d_un.d_ptr); break;
        case DT_HASH: sysv = dyn_address(info, dyn[i].d_un.d_ptr); break;
        default: break;
        }
    }
    size_t count = symbol_count(info, gnu, sysv);
    if (!symtab || !strtab || !strsz || syment != sizeof(ElfW(Sym)) || !count ||
        !in_object(info, symtab, count * sizeof(ElfW(Sym))) || !in_object(info, strtab, strsz))
        return 0;
    t->syms = (const ElfW(Sym) *)symtab;
    t->count = count;
    t->strs = (const char *)strtab;
    t->strsz = strsz;
    return 1;
}

int dynsym_usable(const ElfW(Sym) *s, size_t strsz, uint64_t *len)
{
    int type = ELF64_ST_TYPE(s->st_info);
    if ((s->st_shndx == SHN_UNDEF && s->st_value == 0) || s->st_shndx == SHN_ABS ||
        type == STT_TLS || type == STT_SECTION || type == STT_FILE || s->st_name >= strsz)
        return 0;
    *len = s->st_size == 0 || s->st_shndx == SHN_UNDEF ? 1 : s->st_size;
    return 1;
}

void dynsym_copy_symbol(struct dynsym_hit *hit, const char *name, size_t room, uintptr_t start)
{
    size_t len = strnlen(name, room);
    if (len >= sizeof hit->symbol)
        len = sizeof hit->symbol - 1;
    memcpy(hit->symbol, name, len);
    hit->symbol[len] = '\0';
    hit->symbol_start = start;
}

/* The exported symbol covering the address, copied into the hit: of those
 * that cover it, the one with the highest address, the first in the
 * table's order among equals. */
static void find_symbol(const struct dl_phdr_info *info, uintptr_t address, struct dynsym_hit *hit)
{
    struct dynsym_tables t;
    if (!dynsym_tables(info, &t))
        return;
    const ElfW(Sym) *best = NULL;
    for (size_t i = 1; i < t.count; i++) {
        const ElfW(Sym) *s = &t.syms[i];
        uint64_t len;
        if (!dynsym_usable(s, t.strsz, &len))
            continue;
        uintptr_t start = info->dlpi_addr + s->st_value;
        if (address - start < len && address >= start && (!best || best->st_value < s->st_value))
            best = s;
    }
    if (best)
        dynsym_copy_symbol(hit, t.strs + best->st_name, t.strsz - best->st_name,
                    info->dlpi_addr + best->st_value);
}

int dynsym_holds(uintptr_t bias, const ElfW(Phdr) *phdr, int phnum, uintptr_t address,
                 uintptr_t page_mask, uintptr_t *lo_out)
{
#define PAGE_DOWN(a) ((a) & page_mask)
#define PAGE_UP(a) PAGE_DOWN((a) + ~page_mask)
    uintptr_t lo = UINTPTR_MAX, hi = 0, prev_end = 0;
    int inside = 0, contiguous = 1, any = 0;
    for (int i = 0; i < phnum; i++) {
        const ElfW(Phdr) *ph = &phdr[i];
        if (ph->p_type != PT_LOAD)
            continue;
        uintptr_t start = bias + ph->p_vaddr, end = start + ph->p_memsz;
        if (any && PAGE_DOWN(start) != prev_end)
            contiguous = 0;
        any = 1;
        prev_end = PAGE_UP(end);
        if (PAGE_DOWN(start) < lo)
            lo = PAGE_DOWN(start);
        if (PAGE_UP(end) > hi)
            hi = PAGE_UP(end);
        if (address >= start && address < end)
            inside = 1;
    }
    *lo_out = lo;
    return inside || (any && contiguous && address >= lo && address < hi);
#undef PAGE_DOWN
#undef PAGE_UP
}

void dynsym_name_object(struct dynsym_hit *hit, const char *dlpi_name)
{
    if (dlpi_name && dlpi_name[0]) {
        snprintf(hit->module, sizeof hit->module, "%s", dlpi_name);
        snprintf(hit->file, sizeof hit->file, "%s", dlpi_name);
    } else { /* the main program, as dladdr names it */
        snprintf(hit->module, sizeof hit->module, "%s", program_invocation_name);
        snprintf(hit->file, sizeof hit->file, "/proc/self/exe");
    }
}

/* Called for each loaded object with the loader's lock held. */
static int on_object(struct dl_phdr_info *info, size_t size, void *data)
{
    struct search *s = data;
    uintptr_t lo;
    if (!dynsym_holds(info->dlpi_addr, info->dlpi_phdr, info->dlpi_phnum, s->address, s->page_mask,
                      &lo))
        return 0;
    struct dynsym_hit *hit = s->hit;
    dynsym_name_object(hit, info->dlpi_name);
    hit->bias = info->dlpi_addr;
    hit->base = lo;
    struct dynsym_object *x = s->cache ? dynsym_cache_entry(s->cache, info, size) : NULL;
    if ((!s->want_symbol || s->want_symbol(hit->file, s->ctx)) &&
        (!x || !dynsym_cache_symbol(x, info, s->address, hit)))
        find_symbol(info, s->address, hit);
    s->found = 1;
    return 1;
}

int dynsym_lookup_if(uintptr_t address, struct dynsym_hit *hit,
                     int (*want_symbol)(const char *file, void *ctx), void *ctx,
                     struct dynsym_cache *cache)
{
    /* the strings emptied, not the whole 9 KB of the hit */
    hit->module[0] = hit->file[0] = hit->symbol[0] = '\0';
    hit->bias = hit->base = hit->symbol_start = 0;
    long page = sysconf(_SC_PAGESIZE);
    uintptr_t page_mask = ~(uintptr_t)((page > 0 ? page : 4096) - 1);
    if (cache) {
        int known = dynsym_cache_lookup(cache, address, page_mask, hit, want_symbol, ctx);
        if (known)
            return known > 0;
    }
    struct search s = {address, page_mask, hit, want_symbol, ctx, cache, 0};
    dl_iterate_phdr(on_object, &s);
    if (cache && !s.found)
        dynsym_cache_fill(cache); /* the next address in no object is answered from the records */
    return s.found;
}

int dynsym_lookup(uintptr_t address, struct dynsym_hit *hit)
{
    return dynsym_lookup_if(address, hit, NULL, NULL, NULL);
}
