/*
 * resolve: see resolve.h.  Native names come from the dynamic linker's
 * view of each object (dynsym.h: copied under its lock; an address past
 * the end of the nearest exported symbol is shown as an offset and not
 * blamed on that symbol).
 */
#include "agent/resolve.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "agent/codemap.h"
#include "agent/dynsym.h"
#include "agent/stubcode.h"
#include "common/mem.h"
#include "common/path.h"

void resolve_init(struct resolver *r, ICorProfilerInfo15 *info, struct names *names,
                  struct recorder *out)
{
    memset(r, 0, sizeof *r);
    r->info = info;
    r->names = names;
    r->out = out;
    map64_init(&r->native_of_ip);
    map64_init(&r->managed_of_ip);
    map64_init(&r->class_of);
    strtab_init(&r->native_keys);
    strtab_init(&r->symbol_files);
    r->exports = dynsym_cache_new();
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
    dynsym_cache_free(r->exports);
    map64_free(&r->class_of);
    stubcode_free();
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

static void set_class(struct resolver *r, uint32_t frame, enum frame_class c)
{
    if (frame && c != FRAME_OTHER)
        map64_put(&r->class_of, frame, (uint32_t)c);
}

enum frame_class resolve_frame_class(const struct resolver *r, uint32_t frame)
{
    uint32_t c;
    return map64_get(&r->class_of, frame, &c) ? (enum frame_class)c : FRAME_OTHER;
}

void resolve_bound(struct resolver *r)
{
    if (r->class_of.count <= RESOLVE_CLASSES_MAX)
        return;
    map64_clear(&r->class_of);
    map64_clear(&r->native_of_ip);
    map64_clear(&r->managed_of_ip);
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
        r->native_frame[at] = recorder_frame(r->out, kind, module, NULL, symbol, 0);
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
static struct elfsym *module_symbols(struct resolver *r, const char *path)
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

/* For dynsym_lookup_if, under the loader's lock: is the exported symbol
 * wanted?  Unless the file's full symbol table is loaded already (asked of
 * what module_symbols kept, never of the file). */
static int lacks_symbols(const char *file, void *ctx)
{
    const struct resolver *r = ctx;
    uint32_t at = strtab_find(&r->symbol_files, file, strlen(file));
    return at == UINT32_MAX || at >= r->symbols_cap || !r->symbols[at];
}

static int is_agent_module(const char *path)
{
    Dl_info self;
    return dladdr((void *)is_agent_module, &self) && self.dli_fname &&
           !strcmp(self.dli_fname, path);
}

static void (*after_lookup)(void);

void resolve_test_after_lookup(void (*fn)(void))
{
    after_lookup = fn;
}

/* Native code of a loaded ELF object: 1 and *frame (maybe | NO_SYMBOL), or
 * 0.  What the loader says is a copy (dynsym.h): the object may be gone by
 * the time it is used. */
static int resolve_native(struct resolver *r, uintptr_t address, uint32_t *frame)
{
    static struct dynsym_hit hit; /* the loop's own; big */
    if (!dynsym_lookup_if(address, &hit, lacks_symbols, r, r->exports))
        return 0;
    if (after_lookup)
        after_lookup();
    const char *full = elfsym_find(module_symbols(r, hit.file), (uint64_t)(address - hit.bias));
    const char *module = hit.module[0] ? hit.module : "[main]";
    int runtime = resolve_is_runtime_module(path_basename(module));
    enum fmt_frame_kind kind = runtime ? FMT_FRAME_RUNTIME : FMT_FRAME_NATIVE;
    if (full) {
        *frame = native_symbol_frame(r, module, full, kind);
    } else if (hit.symbol[0]) {
        *frame = native_symbol_frame(r, module, hit.symbol, kind);
    } else {
        /* shown as module!+offset: placed, though not named */
        *frame = recorder_frame(r->out, kind, module, NULL, NULL, (uint64_t)(address - hit.base));
        if (*frame)
            set_class(r, *frame, runtime ? FRAME_RUNTIME : FRAME_NATIVE);
        if (*frame)
            *frame |= NO_SYMBOL;
        return 1;
    }
    set_class(r, *frame, is_agent_module(module) ? FRAME_AGENT
                         : runtime              ? FRAME_RUNTIME
                                                : FRAME_NATIVE);
    return 1;
}

const struct code_range *resolve_managed(uintptr_t address)
{
    return code_index_find(address);
}

uint32_t resolve_function(struct resolver *r, FunctionID function, uint64_t seen_ns)
{
    uint32_t frame = names_known(r->names, function);
    if (!frame && codemap_permanent(function))
        frame = names_function(r->names, function);
    if (!frame) {
        if (!codemap_ids_begin(seen_ns)) {
            recorder_count(r->out, FMT_COUNTER_UNRESOLVED, 1);
            return recorder_synthetic(r->out, "[unknown]");
        }
        frame = names_function(r->names, function);
        codemap_ids_end();
    }
    set_class(r, frame, FRAME_MANAGED);
    return frame;
}

/* Managed code: its frame, named now if need be; 0 when it cannot be
 * (*asked: whether the runtime was asked). */
static uint32_t managed_frame(struct resolver *r, const struct code_range *range, uint64_t seen_ns,
                              int *asked)
{
    *asked = 1;
    if (range->frame)
        return range->frame;
    uint32_t frame = names_known(r->names, range->function);
    if (frame)
        return frame;
    if (range->permanent)
        return names_function(r->names, range->function);
    if (!codemap_ids_begin(seen_ns)) {
        *asked = 0;
        return 0;
    }
    frame = names_function(r->names, range->function);
    codemap_ids_end();
    return frame;
}

/* Code that is no method (stubcode.h): a runtime frame without a symbol,
 * `[runtime stub]!+offset` in its mapping; 0 when the address is in no
 * such memory, and *stale when that may change. */
static uint32_t stub_frame(struct resolver *r, uintptr_t address, int *stale)
{
    uintptr_t start;
    enum stubcode_answer answer = stubcode_find(address, &start);
    *stale = answer == STUBCODE_STALE;
    if (answer != STUBCODE_YES)
        return 0;
    uint32_t frame =
        recorder_frame(r->out, FMT_FRAME_RUNTIME, RESOLVE_STUB_MODULE, NULL, NULL, address - start);
    if (!frame)
        return 0;
    set_class(r, frame, FRAME_RUNTIME);
    return frame | NO_SYMBOL;
}

uint32_t resolve_ip(struct resolver *r, uintptr_t address, int is_return, uint64_t seen_ns)
{
    uintptr_t at = is_return && address ? address - 1 : address;
    uint32_t frame;
    if (!map64_get(&r->native_of_ip, at, &frame) && !map64_get(&r->managed_of_ip, at, &frame)) {
        struct map64 *cache = &r->managed_of_ip;
        const struct code_range *range = code_index_find(at);
        int asked = 1;
        frame = 0;
        if (range) {
            frame = managed_frame(r, range, seen_ns, &asked);
            set_class(r, frame, FRAME_MANAGED);
        } else if (resolve_native(r, at, &frame)) {
            cache = &r->native_of_ip;
        } else if (codemap_in_permanent_image(at) || codemap_ids_begin(seen_ns)) {
            /* ReadyToRun code of a module that stays, or an address no
             * unload could have freed since it was seen */
            int locked = !codemap_in_permanent_image(at);
            FunctionID function = 0;
            if (r->info->lpVtbl->GetFunctionFromIP(r->info, (LPCBYTE)at, &function) >= 0 &&
                function) {
                codemap_add_function(function);
                frame = names_function(r->names, function);
                set_class(r, frame, FRAME_MANAGED);
            }
            if (locked)
                codemap_ids_end();
            int stale = 0;
            if (!frame)
                frame = stub_frame(r, at, &stale);
            if (stale)
                asked = 0; /* not remembered: a later sample asks again */
        } else {
            asked = 0;
        }
        if (!frame) {
            frame = recorder_synthetic(r->out, "[unknown]");
            if (frame)
                frame |= UNNAMED;
        }
        if ((frame & ~(UNNAMED | NO_SYMBOL)) == 0)
            return 0;
        /* an address the runtime could not be asked about (code was
         * unloaded since it was seen) may be asked about next time */
        if (asked)
            map64_put(cache, at, frame);
    }
    if (frame & UNNAMED)
        recorder_count(r->out, FMT_COUNTER_UNRESOLVED, 1);
    else if (frame & NO_SYMBOL)
        recorder_count(r->out, FMT_COUNTER_NO_SYMBOL, 1);
    return frame & ~(UNNAMED | NO_SYMBOL);
}
