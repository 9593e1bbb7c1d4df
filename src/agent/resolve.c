/*
 * resolve: see resolve.h.  Native names come from the dynamic linker's
 * view of each object (dladdr1 with the symbol entry, so that an address
 * past the end of the nearest exported symbol is shown as an offset and
 * not blamed on that symbol).
 */
#include "agent/resolve.h"

#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <string.h>

#include "agent/names.h"
#include "common/mem.h"

void resolve_init(struct resolver *r, struct agent *a)
{
    memset(r, 0, sizeof *r);
    r->a = a;
    map64_init(&r->native_of_ip);
    map64_init(&r->managed_of_ip);
    strtab_init(&r->native_keys);
    strtab_init(&r->symbol_files);
}

void resolve_free(struct resolver *r)
{
    map64_free(&r->native_of_ip);
    map64_free(&r->managed_of_ip);
    strtab_free(&r->native_keys);
    mem_free(r->native_frame);
    for (size_t i = 1; i < r->symbol_files.count && r->symbols; i++)
        elfsym_free(r->symbols[i]); /* id 0 is the empty string, never set */
    strtab_free(&r->symbol_files);
    mem_free(r->symbols);
    memset(r, 0, sizeof *r);
}

void resolve_forget(struct resolver *r)
{
    map64_clear(&r->managed_of_ip);
}

int resolve_is_runtime_module(const char *base)
{
    static const char *const runtime[] = {"libcoreclr.so", "libclrjit.so", "libclrgc.so",
                                          "libhostfxr.so", "libhostpolicy.so",
                                          "libcoreclrtraceptprovider.so", "dotnet"};
    for (size_t i = 0; i < sizeof runtime / sizeof runtime[0]; i++)
        if (!strcmp(base, runtime[i]))
            return 1;
    return 0;
}

static const char *basename_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

/* One frame per (module, symbol): every address inside a function is the
 * same frame. */
static uint32_t native_symbol_frame(struct resolver *r, const char *module, const char *symbol,
                                    enum fmt_frame_kind kind)
{
    char key[1024];
    int n = snprintf(key, sizeof key, "%s\n%s", module, symbol);
    if (n < 0 || (size_t)n >= sizeof key)
        n = (int)sizeof key - 1;
    int is_new;
    uint32_t at = strtab_intern(&r->native_keys, key, (size_t)n, &is_new);
    if (at == UINT32_MAX)
        return 0;
    if (is_new) {
        uint32_t *grown = mem_grow(r->native_frame, &r->native_cap, at + 1, sizeof *grown);
        if (!grown)
            return 0;
        r->native_frame = grown;
        r->native_frame[at] = recorder_frame(&r->a->rec, kind, module, NULL, symbol, 0);
    }
    return r->native_frame[at];
}

/* Cached frame ids carry this bit when the frame has no name ([unknown]),
 * so every sample that uses one counts it ... */
#define UNNAMED (1u << 31)
/* ... and this one when it is native code with no symbol (module+offset) */
#define NO_SYMBOL (1u << 30)

/* The full symbol table of a module, loaded the first time (NULL when it
 * has none). */
static const struct elfsym *module_symbols(struct resolver *r, const char *path)
{
    /* room first, so that every interned path has its slot */
    struct elfsym **grown =
        mem_grow(r->symbols, &r->symbols_cap, r->symbol_files.count + 1, sizeof *grown);
    if (!grown)
        return NULL;
    r->symbols = grown;
    int is_new;
    uint32_t at = strtab_intern(&r->symbol_files, path, strlen(path), &is_new);
    if (at == UINT32_MAX || at >= r->symbols_cap)
        return NULL;
    if (is_new)
        r->symbols[at] = elfsym_load(path);
    return r->symbols[at];
}

/* Native code of a loaded ELF object: 1 and *frame (maybe | NO_SYMBOL), or 0. */
static int resolve_native(struct resolver *r, uintptr_t address, uint32_t *frame)
{
    Dl_info info;
    const ElfW(Sym) *sym = NULL;
    struct link_map *map = NULL;
    if (!dladdr1((void *)address, &info, (void **)&sym, RTLD_DL_SYMENT) || !info.dli_fbase ||
        !dladdr1((void *)address, &info, (void **)&map, RTLD_DL_LINKMAP) || !map)
        return 0;
    const char *module = info.dli_fname && info.dli_fname[0] ? info.dli_fname : "[main]";
    const char *file = map->l_name && map->l_name[0] ? map->l_name : "/proc/self/exe";
    enum fmt_frame_kind kind =
        resolve_is_runtime_module(basename_of(module)) ? FMT_FRAME_RUNTIME : FMT_FRAME_NATIVE;
    const char *full = elfsym_find(module_symbols(r, file), (uint64_t)(address - map->l_addr));
    uintptr_t start = (uintptr_t)info.dli_saddr;
    if (full) {
        *frame = native_symbol_frame(r, module, full, kind);
    } else if (info.dli_sname && sym && start <= address &&
               (address < start + sym->st_size || sym->st_size == 0)) {
        *frame = native_symbol_frame(r, module, info.dli_sname, kind);
    } else {
        /* shown as module!+offset: placed, though not named */
        *frame = recorder_frame(&r->a->rec, kind, module, NULL, NULL,
                                (uint64_t)(address - (uintptr_t)info.dli_fbase));
        if (*frame)
            *frame |= NO_SYMBOL;
    }
    return 1;
}

const struct code_range *resolve_managed(uintptr_t address)
{
    return codemap_find(address);
}

uint32_t resolve_ip(struct resolver *r, uintptr_t address, int is_return)
{
    uintptr_t at = is_return && address ? address - 1 : address;
    uint32_t frame;
    if (!map64_get(&r->native_of_ip, at, &frame) && !map64_get(&r->managed_of_ip, at, &frame)) {
        struct map64 *cache = &r->managed_of_ip;
        const struct code_range *range = codemap_find(at);
        if (range) {
            frame = names_function(&r->a->names, range->function);
        } else if (resolve_native(r, at, &frame)) {
            cache = &r->native_of_ip;
        } else {
            ICorProfilerInfo15 *info = r->a->info;
            FunctionID function = 0;
            if (info->lpVtbl->GetFunctionFromIP(info, (LPCBYTE)at, &function) >= 0 && function) {
                codemap_add_function(function);
                frame = names_function(&r->a->names, function);
            } else {
                frame = recorder_synthetic(&r->a->rec, "[unknown]");
                if (frame)
                    frame |= UNNAMED;
            }
        }
        if ((frame & ~(UNNAMED | NO_SYMBOL)) == 0)
            return 0;
        map64_put(cache, at, frame);
    }
    if (frame & UNNAMED)
        recorder_count(&r->a->rec, RECORDER_UNRESOLVED, 1);
    else if (frame & NO_SYMBOL)
        recorder_count(&r->a->rec, RECORDER_NO_SYMBOL, 1);
    return frame & ~(UNNAMED | NO_SYMBOL);
}
