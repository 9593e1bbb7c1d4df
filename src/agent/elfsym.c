/*
 * elfsym: see elfsym.h.  Every offset and size taken from a file is
 * checked against the file (or the image in memory) before use: a damaged
 * or hostile file yields no symbols, never a crash.  The parsing works on
 * any image in memory (elfsym_parse, elfsym_debug_paths), so the fuzzer
 * (tests/fuzz/fuzz_elfsym.c) feeds it bytes without files; elfsym_load
 * reads files with pread, the few parts it needs, with the same checks,
 * and tries the debug files in turn.
 */
#include "agent/elfsym.h"

#include <elf.h>
#include <errno.h>
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

/* Sorts entries by address, stably (aliases keep the file's order, which
 * scan() and elfsym_find's answers rely on): least significant byte first,
 * the counts of all eight bytes taken in one pass, a byte that every
 * address shares skipped.  With qsort (its calls of the comparison) and
 * each name copied, sorting libc's 6,700 functions took 1.7 ms; now 0.3
 * ms (build/elfsym_cost), much of it the fresh pages of the second array.
 * -1 when out of memory. */
static int sort_by_addr(struct elfsym_entry *e, size_t n)
{
    uint32_t count[8][256] = {{0}}; /* entries number less than 2^32 (a table's size) */
    if (n > UINT32_MAX)
        return -1;
    for (size_t i = 0; i < n; i++)
        for (unsigned d = 0; d < 8; d++)
            count[d][e[i].addr >> (8 * d) & 0xff]++;
    struct elfsym_entry *tmp = NULL, *from = e, *to = NULL;
    for (unsigned d = 0; d < 8; d++) {
        if (!n || count[d][e[0].addr >> (8 * d) & 0xff] == n)
            continue; /* one byte for all */
        if (!tmp && !(tmp = to = mem_alloc(n * sizeof *tmp)))
            return -1;
        uint32_t at = 0;
        for (size_t v = 0; v < 256; v++) {
            uint32_t c = count[d][v];
            count[d][v] = at;
            at += c;
        }
        for (size_t i = 0; i < n; i++)
            to[count[d][from[i].addr >> (8 * d) & 0xff]++] = from[i];
        struct elfsym_entry *t = from;
        from = to;
        to = t;
    }
    if (from != e)
        memcpy(e, from, n * sizeof *e);
    mem_free(tmp);
    return 0;
}

/* Is this symbol one of the table's functions? */
static int kept_symbol(const Elf64_Sym *sym, size_t strs_size)
{
    return ELF64_ST_TYPE(sym->st_info) == STT_FUNC && sym->st_value && sym->st_name < strs_size;
}

/* The image's .symtab and its string table, checked against the image;
 * -1 when it has none. */
static int find_symtab(const struct image *im, const Elf64_Sym **syms, size_t *n, const char **strs,
                       size_t *strs_size)
{
    const Elf64_Ehdr *eh = header(im);
    if (!eh)
        return -1;
    const Elf64_Shdr *symtab = NULL;
    for (size_t i = 0; i < eh->e_shnum && !symtab; i++) {
        const Elf64_Shdr *sh = section(im, eh, i);
        if (sh->sh_type == SHT_SYMTAB)
            symtab = sh;
    }
    if (!symtab || symtab->sh_entsize != sizeof(Elf64_Sym) ||
        symtab->sh_offset % _Alignof(Elf64_Sym) != 0 ||
        !in_bounds(im, symtab->sh_offset, symtab->sh_size))
        return -1;
    const Elf64_Shdr *strtab = section(im, eh, symtab->sh_link);
    if (!strtab || !in_bounds(im, strtab->sh_offset, strtab->sh_size) || strtab->sh_size == 0)
        return -1;
    *n = symtab->sh_size / sizeof(Elf64_Sym);
    *syms = (const Elf64_Sym *)(im->p + symtab->sh_offset);
    *strs = (const char *)im->p + strtab->sh_offset;
    *strs_size = strtab->sh_size;
    return 0;
}

/* Appends the functions among syms to s->entries (room for them made by
 * the caller), in the file's order; their names stay offsets into the
 * string table (copying each cost a strnlen and a memcpy; and symbols may
 * share a string: 40,000 symbols naming one string of 512 KiB asked for
 * 20 GB when each was copied). */
static void add_functions(struct elfsym *s, const Elf64_Sym *syms, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const Elf64_Sym *sym = &syms[i];
        if (!kept_symbol(sym, s->names_size))
            continue;
        s->entries[s->count].addr = sym->st_value;
        s->entries[s->count].size = sym->st_size;
        s->entries[s->count].name = sym->st_name;
        s->count++;
    }
}

/* A table of its own: the string table copied (NUL-terminated: a last
 * name without its NUL ends at the table's end), the functions sorted. */
static struct elfsym *sorted_table(const Elf64_Sym *syms, size_t n, const char *strs,
                                   size_t strs_size, const char *source)
{
    struct elfsym *s = mem_calloc(1, sizeof *s);
    if (!s || strs_size > UINT32_MAX || !(s->names = mem_alloc(strs_size + 1))) {
        elfsym_free(s);
        return NULL;
    }
    memcpy(s->names, strs, strs_size);
    s->names[strs_size] = '\0';
    s->names_size = strs_size;
    if (!(s->entries = mem_alloc(n ? n * sizeof *s->entries : 1))) {
        elfsym_free(s);
        return NULL;
    }
    add_functions(s, syms, n);
    if (!s->count || elfsym_sort(s) < 0) {
        elfsym_free(s);
        return NULL;
    }
    snprintf(s->source, sizeof s->source, "%s", source);
    return s;
}

/* Function symbols of .symtab, or NULL when there is none. */
static struct elfsym *read_symtab(const struct image *im, const char *source)
{
    const Elf64_Sym *syms;
    const char *strs;
    size_t n, strs_size;
    if (find_symtab(im, &syms, &n, &strs, &strs_size) < 0)
        return NULL;
    return sorted_table(syms, n, strs, strs_size, source);
}

/* A build id note's descriptor as hex (a .note.gnu.build-id section's
 * `size` bytes at `p`): 0, or -1. */
static int note_build_id(const uint8_t *p, size_t size, char *out, size_t out_size)
{
    if (size < 12)
        return -1;
    uint32_t namesz, descsz, type;
    memcpy(&namesz, p, 4);
    memcpy(&descsz, p + 4, 4);
    memcpy(&type, p + 8, 4);
    size_t desc = 12 + ((namesz + 3) & ~3u);
    if (type != NT_GNU_BUILD_ID || descsz < 2 || desc > size || descsz > size - desc ||
        2 * (size_t)descsz + 1 > out_size)
        return -1;
    for (uint32_t i = 0; i < descsz; i++)
        snprintf(out + 2 * i, 3, "%02x", p[desc + i]);
    return 0;
}

/* The file name a .gnu_debuglink section (`size` bytes at `p`) names: 0,
 * or -1. */
static int note_debug_link(const uint8_t *p, size_t size, char *out, size_t out_size)
{
    if (size <= 1)
        return -1;
    size_t len = strnlen((const char *)p, size);
    if (len == 0 || len >= size || len >= out_size)
        return -1;
    memcpy(out, p, len);
    out[len] = '\0';
    return 0;
}

/* What names a stripped object's debug file: its build id (hex) and its
 * debug link's file name, each empty when it has none. */
struct debug_names {
    char id[128];
    char link[256];
};

/* Where the debug file may be, in the order it is looked for (see
 * elfsym_debug_paths). */
static int debug_paths(const struct debug_names *dn, const char *path,
                       char out[ELFSYM_DEBUG_PATHS][ELFSYM_PATH_MAX])
{
    int n = 0;
    if (dn->id[0])
        snprintf(out[n++], ELFSYM_PATH_MAX, "/usr/lib/debug/.build-id/%.2s/%s.debug", dn->id,
                 dn->id + 2);
    if (!dn->link[0])
        return n;
    char dir[768];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = '\0';
    else
        snprintf(dir, sizeof dir, ".");
    for (int i = 0; i < 2; i++) {
        if (i == 0)
            snprintf(out[n], ELFSYM_PATH_MAX, "/usr/lib/debug%s/%s", dir, dn->link);
        else
            snprintf(out[n], ELFSYM_PATH_MAX, "%s/.debug/%s", dir, dn->link);
        if (strcmp(out[n], path) != 0)
            n++;
    }
    return n;
}

static int read_at(int fd, void *out, uint64_t n, uint64_t off)
{
    uint8_t *p = out;
    while (n) {
        ssize_t r = pread(fd, p, n, (off_t)off);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        p += r;
        off += (uint64_t)r;
        n -= (uint64_t)r;
    }
    return 0;
}

/* The small sections that name a stripped object's debug file, read with
 * pread (mapping the whole object to find them, faulting in its section
 * table and unmapping it, took a tenth of a millisecond per library of
 * every process).  Bounded reads; a section that cannot be read leaves its
 * name empty. */
static void read_debug_names(int fd, const Elf64_Ehdr *eh, const Elf64_Shdr *sh,
                             const struct image *bounds, struct debug_names *dn)
{
    if (eh->e_shstrndx >= eh->e_shnum)
        return;
    const Elf64_Shdr *strs = &sh[eh->e_shstrndx];
    if (!strs->sh_size || strs->sh_size > (1u << 20) ||
        !in_bounds(bounds, strs->sh_offset, strs->sh_size))
        return;
    char *names = mem_alloc(strs->sh_size + 1);
    if (!names || read_at(fd, names, strs->sh_size, strs->sh_offset) < 0) {
        mem_free(names);
        return;
    }
    names[strs->sh_size] = '\0';
    for (size_t i = 0; i < eh->e_shnum; i++) {
        if (sh[i].sh_name >= strs->sh_size)
            continue;
        const char *name = names + sh[i].sh_name;
        int is_id = !strcmp(name, ".note.gnu.build-id"), is_link = !strcmp(name, ".gnu_debuglink");
        uint8_t buf[512];
        if ((!is_id && !is_link) || !sh[i].sh_size || sh[i].sh_size > sizeof buf ||
            !in_bounds(bounds, sh[i].sh_offset, sh[i].sh_size) ||
            read_at(fd, buf, sh[i].sh_size, sh[i].sh_offset) < 0)
            continue;
        if (is_id && note_build_id(buf, sh[i].sh_size, dn->id, sizeof dn->id) < 0)
            dn->id[0] = '\0';
        if (is_link && note_debug_link(buf, sh[i].sh_size, dn->link, sizeof dn->link) < 0)
            dn->link[0] = '\0';
    }
    mem_free(names);
}

/* raw_symtab's table, read from the file with pread: only its header, its
 * section table and the two sections are read, nothing is mapped (mapping
 * a 4 MB debug file, faulting its pages in and unmapping it cost more than
 * the copy in a short process).  The same checks as header() and
 * find_symtab(), against the file's size. */
static struct elfsym *raw_from_file(const char *path, struct debug_names *dn)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    struct elfsym *s = NULL;
    Elf64_Shdr *sh = NULL;
    Elf64_Ehdr eh;
    struct stat st;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size < (off_t)sizeof eh ||
        read_at(fd, &eh, sizeof eh, 0) < 0)
        goto out;
    struct image bounds = {NULL, (size_t)st.st_size}; /* sizes only: in_bounds */
    if (memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
        eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shoff % _Alignof(Elf64_Shdr) != 0 ||
        !in_bounds(&bounds, eh.e_shoff, (uint64_t)eh.e_shnum * sizeof(Elf64_Shdr)) || !eh.e_shnum)
        goto out;
    sh = mem_alloc((size_t)eh.e_shnum * sizeof *sh);
    if (!sh || read_at(fd, sh, (uint64_t)eh.e_shnum * sizeof *sh, eh.e_shoff) < 0)
        goto out;
    const Elf64_Shdr *symtab = NULL;
    for (size_t i = 0; i < eh.e_shnum && !symtab; i++)
        if (sh[i].sh_type == SHT_SYMTAB)
            symtab = &sh[i];
    if (!symtab && dn)
        read_debug_names(fd, &eh, sh, &bounds, dn);
    if (!symtab || symtab->sh_entsize != sizeof(Elf64_Sym) ||
        symtab->sh_offset % _Alignof(Elf64_Sym) != 0 ||
        !in_bounds(&bounds, symtab->sh_offset, symtab->sh_size) || symtab->sh_link >= eh.e_shnum)
        goto out;
    const Elf64_Shdr *strtab = &sh[symtab->sh_link];
    if (!in_bounds(&bounds, strtab->sh_offset, strtab->sh_size) || strtab->sh_size == 0)
        goto out;
    size_t n = symtab->sh_size / sizeof(Elf64_Sym), strs_size = strtab->sh_size;
    s = mem_calloc(1, sizeof *s);
    if (!s || strs_size > UINT32_MAX || !(s->entries = mem_alloc(n ? n * sizeof *s->entries : 1)) ||
        !(s->names = mem_alloc(strs_size + 1)) ||
        read_at(fd, s->names, strs_size, strtab->sh_offset) < 0)
        goto refused;
    s->names[strs_size] = '\0'; /* a last name without its NUL ends at the table's end */
    s->names_size = strs_size;
    /* the symbols through a buffer of the stack, their functions kept: the
     * table itself is never held (libc's is 240 KB, its functions' entries
     * two thirds of that, and fresh pages cost a fault each) */
    Elf64_Sym chunk[256];
    for (size_t at = 0; at < n; at += sizeof chunk / sizeof chunk[0]) {
        size_t k = n - at < sizeof chunk / sizeof chunk[0] ? n - at : sizeof chunk / sizeof chunk[0];
        if (read_at(fd, chunk, k * sizeof chunk[0], symtab->sh_offset + at * sizeof chunk[0]) < 0)
            goto refused;
        add_functions(s, chunk, k);
    }
    if (!s->count)
        goto refused;
    struct elfsym_entry *fit = mem_realloc(s->entries, s->count * sizeof *s->entries);
    if (fit)
        s->entries = fit; /* room was made for every symbol */
    snprintf(s->source, sizeof s->source, "%s", path);
    goto out;
refused:
    elfsym_free(s);
    s = NULL;
out:
    mem_free(sh);
    close(fd);
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
    struct debug_names dn = {"", ""};
    const Elf64_Ehdr *eh = header(&im);
    const Elf64_Shdr *id = eh ? named(&im, eh, ".note.gnu.build-id") : NULL;
    if (id && in_bounds(&im, id->sh_offset, id->sh_size) &&
        note_build_id(im.p + id->sh_offset, id->sh_size, dn.id, sizeof dn.id) < 0)
        dn.id[0] = '\0';
    const Elf64_Shdr *link = eh ? named(&im, eh, ".gnu_debuglink") : NULL;
    if (link && in_bounds(&im, link->sh_offset, link->sh_size) &&
        note_debug_link(im.p + link->sh_offset, link->sh_size, dn.link, sizeof dn.link) < 0)
        dn.link[0] = '\0';
    return debug_paths(&dn, path, out);
}

struct elfsym *elfsym_load(const char *path)
{
    struct debug_names dn = {"", ""};
    struct elfsym *s = raw_from_file(path, &dn);
    if (s)
        return s;
    /* stripped: its debug file, named by its build id or debug link */
    char paths[ELFSYM_DEBUG_PATHS][ELFSYM_PATH_MAX];
    int n = debug_paths(&dn, path, paths);
    for (int i = 0; i < n && !s; i++)
        s = raw_from_file(paths[i], NULL);
    return s;
}

static unsigned scan_budget = ELFSYM_SCANS;

void elfsym_set_scan_budget(unsigned scans)
{
    scan_budget = scans;
}

int elfsym_sort(struct elfsym *s)
{
    if (!s)
        return -1;
    if (s->sorted)
        return 0;
    if (sort_by_addr(s->entries, s->count) < 0)
        return -1; /* out of memory: the lookups go on scanning */
    s->sorted = 1;
    return 0;
}

/* A symbol's name without its version ("read@GLIBC_2.2.5" is read; the
 * table's strings are shared by symbols: the name is copied, then cut). */
static const char *unversioned(struct elfsym *s, const char *name)
{
    const char *version = strchr(name, '@');
    if (!version || version == name)
        return name;
    size_t len = (size_t)(version - name);
    char *room = mem_grow(s->found, &s->found_cap, len + 1, 1);
    if (!room)
        return NULL;
    s->found = room;
    memcpy(room, name, len);
    room[len] = '\0';
    return room;
}

static int covers(uint64_t start, uint64_t size, uint64_t addr)
{
    return addr - start < (size ? size : 1);
}

/* The sorted table's answer, from the table as the file has it: among the
 * functions at the highest address at or below addr, the last one (in the
 * file's order, which the sort keeps) that covers it, else the last one
 * of the next address down if it does. */
static const char *scan(struct elfsym *s, uint64_t addr)
{
    const struct elfsym_entry *top = NULL, *top_cover = NULL, *below = NULL;
    for (size_t i = 0; i < s->count; i++) {
        const struct elfsym_entry *e = &s->entries[i];
        if (e->addr > addr)
            continue;
        if (!top || e->addr > top->addr) {
            below = top;
            top = e;
            top_cover = covers(e->addr, e->size, addr) ? e : NULL;
        } else if (e->addr == top->addr) {
            top = e;
            if (covers(e->addr, e->size, addr))
                top_cover = e;
        } else if (!below || e->addr >= below->addr) {
            below = e;
        }
    }
    const struct elfsym_entry *hit = top_cover;
    if (!hit && below && covers(below->addr, below->size, addr))
        hit = below;
    return hit ? unversioned(s, s->names + hit->name) : NULL;
}

const char *elfsym_find(struct elfsym *s, uint64_t addr)
{
    if (!s)
        return NULL;
    if (!s->sorted) {
        /* a few lookups (a short process's) scan the table, each in about
         * the time of one pass over it; past the budget, which costs about
         * what sorting does, the table is sorted once (a ski rental) */
        if (s->scans < scan_budget || elfsym_sort(s) < 0) {
            s->scans++;
            return scan(s, addr);
        }
    }
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
            return unversioned(s, s->names + e->name);
        if (i < a && e->addr != s->entries[i].addr)
            break;
    }
    return NULL;
}

void elfsym_free(struct elfsym *s)
{
    if (!s)
        return;
    mem_free(s->found);
    mem_free(s->entries);
    mem_free(s->names);
    mem_free(s);
}
