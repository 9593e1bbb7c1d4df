/*
 * elfsym: see elfsym.h.  The file is mapped read-only and every offset and
 * size taken from it is checked against the mapping before use: a damaged
 * or hostile file yields no symbols, never a crash.  The parsing works on
 * any image in memory (elfsym_parse, elfsym_debug_paths), so the fuzzer
 * (tests/fuzz/fuzz_elfsym.c) feeds it bytes without files; elfsym_load
 * only maps files and tries the debug files in turn.
 */
#include "agent/elfsym.h"

#include <elf.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/mem.h"

struct image {
    const uint8_t *p;
    size_t size;
};

static int map_file(const char *path, struct image *im)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    struct stat st;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size < (off_t)sizeof(Elf64_Ehdr)) {
        close(fd);
        return -1;
    }
    void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (p == MAP_FAILED)
        return -1;
    im->p = p;
    im->size = (size_t)st.st_size;
    return 0;
}

static void unmap_file(struct image *im)
{
    if (im->p)
        munmap((void *)im->p, im->size);
    im->p = NULL;
}

static int in_bounds(const struct image *im, uint64_t off, uint64_t len)
{
    return off <= im->size && len <= im->size - off;
}

static const Elf64_Ehdr *header(const struct image *im)
{
    /* an image from memory may be shorter than a header (map_file refuses
     * such files) */
    if (im->size < sizeof(Elf64_Ehdr))
        return NULL;
    /* the tables are read in place, so they must be aligned as their types
     * are (the ELF format requires it of its tables): a header table at an
     * odd offset made every access undefined (found by fuzz_elfsym,
     * tests/fuzz/corpus/elfsym/crash-misaligned-shdr) */
    if ((uintptr_t)im->p % _Alignof(Elf64_Ehdr) != 0)
        return NULL;
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)im->p;
    if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
        eh->e_shentsize != sizeof(Elf64_Shdr) || eh->e_shoff % _Alignof(Elf64_Shdr) != 0 ||
        !in_bounds(im, eh->e_shoff, (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr)))
        return NULL;
    return eh;
}

static const Elf64_Shdr *section(const struct image *im, const Elf64_Ehdr *eh, size_t i)
{
    return i < eh->e_shnum ? (const Elf64_Shdr *)(im->p + eh->e_shoff) + i : NULL;
}

/* The section named `name`, or NULL. */
static const Elf64_Shdr *named(const struct image *im, const Elf64_Ehdr *eh, const char *name)
{
    const Elf64_Shdr *strs = section(im, eh, eh->e_shstrndx);
    if (!strs || !in_bounds(im, strs->sh_offset, strs->sh_size))
        return NULL;
    for (size_t i = 0; i < eh->e_shnum; i++) {
        const Elf64_Shdr *sh = section(im, eh, i);
        if (sh->sh_name >= strs->sh_size)
            continue;
        const char *n = (const char *)im->p + strs->sh_offset + sh->sh_name;
        size_t room = strs->sh_size - sh->sh_name;
        if (strnlen(n, room) < room && !strcmp(n, name))
            return sh;
    }
    return NULL;
}

static int by_addr(const void *a, const void *b)
{
    const struct elfsym_entry *x = a, *y = b;
    return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* Function symbols of .symtab, or NULL when there is none. */
static struct elfsym *read_symtab(const struct image *im, const char *source)
{
    const Elf64_Ehdr *eh = header(im);
    if (!eh)
        return NULL;
    const Elf64_Shdr *symtab = NULL;
    for (size_t i = 0; i < eh->e_shnum && !symtab; i++) {
        const Elf64_Shdr *sh = section(im, eh, i);
        if (sh->sh_type == SHT_SYMTAB)
            symtab = sh;
    }
    if (!symtab || symtab->sh_entsize != sizeof(Elf64_Sym) ||
        symtab->sh_offset % _Alignof(Elf64_Sym) != 0 ||
        !in_bounds(im, symtab->sh_offset, symtab->sh_size))
        return NULL;
    const Elf64_Shdr *strtab = section(im, eh, symtab->sh_link);
    if (!strtab || !in_bounds(im, strtab->sh_offset, strtab->sh_size) || strtab->sh_size == 0)
        return NULL;
    size_t n = symtab->sh_size / sizeof(Elf64_Sym);
    const Elf64_Sym *syms = (const Elf64_Sym *)(im->p + symtab->sh_offset);
    const char *strs = (const char *)im->p + strtab->sh_offset;

    /* Each symbol's name is copied, and symbols may share a string: 40,000
     * symbols naming one string of 512 KiB asked for 20 GB, and scanned as
     * much first (found by review; the fuzzer's inputs are too small for the
     * memory limit to see it).  The function names of real tables take less
     * than their string table (0.9 of it at most, among 289 ELF files of the
     * test machine), so names beyond 4 times its size and 1 MiB are refused
     * like any damaged table; that also keeps their offsets within 32 bits. */
    uint64_t names_max = 4 * (uint64_t)strtab->sh_size + (1u << 20);
    if (names_max > UINT32_MAX)
        names_max = UINT32_MAX;
    struct elfsym *s = mem_calloc(1, sizeof *s);
    size_t names_size = 0, kept = 0;
    for (size_t i = 0; i < n && names_size <= names_max; i++) {
        if (ELF64_ST_TYPE(syms[i].st_info) == STT_FUNC && syms[i].st_value &&
            syms[i].st_name < strtab->sh_size) {
            names_size += strnlen(strs + syms[i].st_name, strtab->sh_size - syms[i].st_name) + 1;
            kept++;
        }
    }
    if (!s || kept == 0 || names_size > names_max ||
        !(s->entries = mem_alloc(kept * sizeof *s->entries)) ||
        !(s->names = mem_alloc(names_size))) {
        elfsym_free(s);
        return NULL;
    }
    size_t at = 0;
    for (size_t i = 0; i < n; i++) {
        const Elf64_Sym *sym = &syms[i];
        if (ELF64_ST_TYPE(sym->st_info) != STT_FUNC || !sym->st_value ||
            sym->st_name >= strtab->sh_size)
            continue;
        size_t len = strnlen(strs + sym->st_name, strtab->sh_size - sym->st_name);
        /* "read@GLIBC_2.2.5": the version is not part of the name */
        const char *version = memchr(strs + sym->st_name, '@', len);
        if (version && version > strs + sym->st_name)
            len = (size_t)(version - (strs + sym->st_name));
        memcpy(s->names + at, strs + sym->st_name, len);
        s->names[at + len] = '\0';
        s->entries[s->count].addr = sym->st_value;
        s->entries[s->count].size = sym->st_size;
        s->entries[s->count].name = (uint32_t)at;
        s->count++;
        at += len + 1;
    }
    qsort(s->entries, s->count, sizeof *s->entries, by_addr);
    snprintf(s->source, sizeof s->source, "%s", source);
    return s;
}

/* The object's build id as hex, from its PT_NOTE/SHT_NOTE .note.gnu.build-id. */
static int build_id(const struct image *im, char *out, size_t size)
{
    const Elf64_Ehdr *eh = header(im);
    const Elf64_Shdr *sh = eh ? named(im, eh, ".note.gnu.build-id") : NULL;
    if (!sh || !in_bounds(im, sh->sh_offset, sh->sh_size) || sh->sh_size < 12)
        return -1;
    const uint8_t *p = im->p + sh->sh_offset;
    uint32_t namesz, descsz, type;
    memcpy(&namesz, p, 4);
    memcpy(&descsz, p + 4, 4);
    memcpy(&type, p + 8, 4);
    size_t desc = 12 + ((namesz + 3) & ~3u);
    if (type != NT_GNU_BUILD_ID || descsz < 2 || desc > sh->sh_size ||
        descsz > sh->sh_size - desc || 2 * (size_t)descsz + 1 > size)
        return -1;
    for (uint32_t i = 0; i < descsz; i++)
        snprintf(out + 2 * i, 3, "%02x", p[desc + i]);
    return 0;
}

static struct elfsym *try_file(const char *path)
{
    struct image im = {NULL, 0};
    if (map_file(path, &im) < 0)
        return NULL;
    struct elfsym *s = elfsym_parse(im.p, im.size, path);
    unmap_file(&im);
    return s;
}

int elfsym_has_section(const char *path, const char *name)
{
    struct image im = {NULL, 0};
    if (map_file(path, &im) < 0)
        return -1;
    const Elf64_Ehdr *eh = header(&im);
    int found = eh ? named(&im, eh, name) != NULL : -1;
    unmap_file(&im);
    return found;
}

struct elfsym *elfsym_parse(const uint8_t *p, size_t size, const char *source)
{
    struct image im = {p, size};
    return read_symtab(&im, source);
}

int elfsym_debug_paths(const uint8_t *p, size_t size, const char *path,
                       char out[ELFSYM_DEBUG_PATHS][ELFSYM_PATH_MAX])
{
    struct image im = {p, size};
    int n = 0;
    char id[128];
    if (build_id(&im, id, sizeof id) == 0)
        snprintf(out[n++], ELFSYM_PATH_MAX, "/usr/lib/debug/.build-id/%.2s/%s.debug", id, id + 2);
    const Elf64_Ehdr *eh = header(&im);
    const Elf64_Shdr *link = eh ? named(&im, eh, ".gnu_debuglink") : NULL;
    if (!link || !in_bounds(&im, link->sh_offset, link->sh_size) || link->sh_size <= 1)
        return n;
    char name[256];
    size_t len = strnlen((const char *)im.p + link->sh_offset, link->sh_size);
    if (len >= link->sh_size || len >= sizeof name)
        return n;
    memcpy(name, im.p + link->sh_offset, len);
    name[len] = '\0';
    char dir[768];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = '\0';
    else
        snprintf(dir, sizeof dir, ".");
    for (int i = 0; i < 2; i++) {
        if (i == 0)
            snprintf(out[n], ELFSYM_PATH_MAX, "/usr/lib/debug%s/%s", dir, name);
        else
            snprintf(out[n], ELFSYM_PATH_MAX, "%s/.debug/%s", dir, name);
        if (strcmp(out[n], path) != 0)
            n++;
    }
    return n;
}

struct elfsym *elfsym_load(const char *path)
{
    struct image im = {NULL, 0};
    if (map_file(path, &im) < 0)
        return NULL;
    struct elfsym *s = elfsym_parse(im.p, im.size, path);
    if (!s) {
        char paths[ELFSYM_DEBUG_PATHS][ELFSYM_PATH_MAX];
        int n = elfsym_debug_paths(im.p, im.size, path, paths);
        for (int i = 0; i < n && !s; i++)
            s = try_file(paths[i]);
    }
    unmap_file(&im);
    return s;
}

const char *elfsym_find(const struct elfsym *s, uint64_t addr)
{
    if (!s)
        return NULL;
    size_t a = 0, b = s->count;
    while (a < b) { /* first entry with entry.addr > addr */
        size_t m = a + (b - a) / 2;
        if (s->entries[m].addr <= addr)
            a = m + 1;
        else
            b = m;
    }
    /* aliases share an address: any of them that covers addr (measured
     * from the symbol's start: its end, addr + size, can wrap around, and
     * then no address matched, not even the symbol's own; found by
     * fuzz_elfsym, tests/fuzz/corpus/elfsym/crash-size-wraps) */
    for (size_t i = a; i > 0; i--) {
        const struct elfsym_entry *e = &s->entries[i - 1];
        if (addr - e->addr < (e->size ? e->size : 1))
            return s->names + e->name;
        if (i < a && e->addr != s->entries[i].addr)
            break;
    }
    return NULL;
}

void elfsym_free(struct elfsym *s)
{
    if (!s)
        return;
    mem_free(s->entries);
    mem_free(s->names);
    mem_free(s);
}
