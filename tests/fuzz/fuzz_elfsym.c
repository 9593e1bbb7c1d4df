/*
 * fuzz_elfsym: the ELF symbol reader (agent/elfsym.c) over arbitrary bytes.
 *
 * The collector reads the symbol table of every native library that shows
 * up in a stack, and of its separate debug file, inside the profiled
 * program.  The input is an ELF image: its function symbols are read
 * (elfsym_parse, what elfsym_load does with a mapped file and with each
 * debug file it finds), every symbol is looked up by its address and
 * between symbols, and the paths of its debug files are worked out from
 * its .note.gnu.build-id and .gnu_debuglink (elfsym_debug_paths), which
 * must be terminated strings, never the object's own path; then the
 * symbols are read again with one of the allocations failing.  No file is
 * opened: what elfsym_load adds is mmap and open.  Seeds: small libraries
 * built by tests/fuzz/seeds.sh, stripped and not, with debug links and
 * build ids, and their debug files.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agent/elfsym.h"
#include "common/mem.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* names are read to their end (ASan checks they end inside the table) */
static volatile size_t name_bytes;

static void read_name(const char *name)
{
    if (name)
        name_bytes += strlen(name);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* elfsym_parse wants an aligned image, as a mapping is */
    uint8_t *image = malloc(size ? size : 1);
    if (!image)
        return 0;
    memcpy(image, data, size);
    static const char path[] = "/usr/lib/x86_64-linux-gnu/libfuzz.so.1";
    struct elfsym *s = elfsym_parse(image, size, path);
    if (s) {
        for (size_t i = 0; i < s->count; i++) {
            const struct elfsym_entry *e = &s->entries[i];
            if (i > 0 && s->entries[i - 1].addr > e->addr)
                abort(); /* not sorted */
            const char *name = elfsym_find(s, e->addr);
            if (!name)
                abort(); /* every symbol covers its own address */
            read_name(name);
            read_name(elfsym_find(s, e->addr + e->size));
            read_name(elfsym_find(s, e->addr - 1));
        }
        if (strcmp(s->source, path) != 0)
            abort();
        elfsym_free(s);
    }
    char paths[ELFSYM_DEBUG_PATHS][ELFSYM_PATH_MAX];
    int n = elfsym_debug_paths(image, size, path, paths);
    if (n < 0 || n > ELFSYM_DEBUG_PATHS)
        abort();
    for (int i = 0; i < n; i++)
        if (strnlen(paths[i], ELFSYM_PATH_MAX) == ELFSYM_PATH_MAX || !strcmp(paths[i], path))
            abort();
    mem_fail_after(1 + (long)(size % 3), 0);
    elfsym_free(elfsym_parse(image, size, path));
    mem_fail_after(0, 0);
    free(image);
    return 0;
}
