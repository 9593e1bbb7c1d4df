/*
 * names: see names.h.  The path from a FunctionID to a frame:
 *   GetFunctionInfo2          -> ModuleID, method token
 *   (IsFunctionDynamic        -> GetDynamicFunctionInfo for IL stubs and
 *                                DynamicMethods, which have no metadata)
 *   GetModuleMetaData         -> IMetaDataImport of the module (cached)
 *   GetMethodProps            -> method name, declaring type, signature
 *   GetTypeDefProps, GetNestedClassProps -> the type name, enclosing first
 *   GetModuleInfo             -> the module's path
 */
#include "agent/names.h"

#include <stdio.h>
#include <string.h>

#include "agent/log.h"
#include "clr/clr_guids.h"
#include "common/mem.h"
#include "common/utf.h"

#define NAME_CHARS 512
#define MAX_NESTING 16

struct names_module {
    ModuleID id;
    IMetaDataImport *import; /* NULL when the module has no metadata for us */
    char path[512];
};

uint32_t names_generic_arity(const uint8_t *sig, size_t len)
{
    if (len < 2 || !(sig[0] & IMAGE_CEE_CS_CALLCONV_GENERIC))
        return 0;
    /* ECMA-335 II.23.2: compressed unsigned integer */
    uint8_t b = sig[1];
    if (!(b & 0x80))
        return b;
    if ((b & 0xC0) == 0x80)
        return len >= 3 ? (uint32_t)((b & 0x3F) << 8 | sig[2]) : 0;
    if ((b & 0xE0) == 0xC0)
        return len >= 5 ? (uint32_t)((b & 0x1F) << 24 | sig[2] << 16 | sig[3] << 8 | sig[4]) : 0;
    return 0;
}

void names_join_nested(const char *const *outermost_first, size_t count, char *out, size_t size)
{
    size_t o = 0;
    out[0] = '\0';
    for (size_t i = 0; i < count && o < size; i++) {
        int n = snprintf(out + o, size - o, "%s%s", i ? "+" : "", outermost_first[i]);
        if (n < 0)
            break;
        o += (size_t)n;
    }
}

int names_init(struct names *n, ICorProfilerInfo15 *info, int info_version, struct recorder *rec)
{
    memset(n, 0, sizeof *n);
    n->info = info;
    n->info_version = info_version;
    n->rec = rec;
    map64_init(&n->frame_of);
    map64_init(&n->module_of);
    map64_init(&n->type_of);
    return strtab_init(&n->types);
}

static struct names_module *module_for(struct names *n, ModuleID id)
{
    uint32_t at;
    if (map64_get(&n->module_of, id, &at))
        return &n->modules[at];
    struct names_module *grown =
        mem_grow(n->modules, &n->module_cap, n->module_count + 1, sizeof *n->modules);
    if (!grown)
        return NULL;
    n->modules = grown;
    struct names_module *m = &n->modules[n->module_count];
    memset(m, 0, sizeof *m);
    m->id = id;

    WCHAR wname[512];
    ULONG len = 0;
    LPCBYTE base = NULL;
    AssemblyID assembly = 0;
    if (n->info->lpVtbl->GetModuleInfo(n->info, id, &base, 512, &len, wname, &assembly) >= 0)
        utf16_to_utf8(wname, len, m->path, sizeof m->path);
    IUnknown *unk = NULL;
    if (n->info->lpVtbl->GetModuleMetaData(n->info, id, 0 /* ofRead */, &IID_IMetaDataImport,
                                           &unk) >= 0 && unk)
        m->import = (IMetaDataImport *)unk;
    if (map64_put(&n->module_of, id, (uint32_t)n->module_count) < 0) {
        if (m->import)
            m->import->lpVtbl->Release(m->import);
        return NULL;
    }
    n->module_count++;
    return m;
}

/* Name of a type definition, enclosing types first; "" when unknown. */
static const char *type_name(struct names *n, struct names_module *m, mdTypeDef type)
{
    uint64_t key = ((uint64_t)(m - n->modules) << 32) | type;
    uint32_t id;
    if (map64_get(&n->type_of, key, &id))
        return n->types.strs[id];

    char parts[MAX_NESTING][NAME_CHARS];
    const char *chain[MAX_NESTING];
    size_t depth = 0;
    mdTypeDef t = type;
    while (t && depth < MAX_NESTING) {
        WCHAR w[NAME_CHARS];
        ULONG len = 0;
        DWORD flags = 0;
        mdToken extends = 0;
        if (m->import->lpVtbl->GetTypeDefProps(m->import, t, w, NAME_CHARS, &len, &flags,
                                               &extends) < 0)
            break;
        utf16_to_utf8(w, len, parts[depth], NAME_CHARS);
        depth++;
        if ((flags & tdVisibilityMask) < tdNestedPublic)
            break; /* top level: its name carries the namespace */
        mdTypeDef outer = 0;
        if (m->import->lpVtbl->GetNestedClassProps(m->import, t, &outer) < 0)
            break;
        t = outer;
    }
    for (size_t i = 0; i < depth; i++)
        chain[i] = parts[depth - 1 - i];
    char joined[NAME_CHARS * 2];
    names_join_nested(chain, depth, joined, sizeof joined);
    int is_new;
    id = strtab_intern(&n->types, joined, strlen(joined), &is_new);
    if (id == UINT32_MAX || map64_put(&n->type_of, key, id) < 0)
        return "";
    return n->types.strs[id];
}

static uint32_t unresolved(struct names *n)
{
    recorder_count(n->rec, RECORDER_UNRESOLVED, 1);
    return recorder_synthetic(n->rec, "[unknown]");
}

static uint32_t dynamic_frame(struct names *n, FunctionID function)
{
    WCHAR w[NAME_CHARS];
    ULONG len = 0;
    ModuleID module = 0;
    PCCOR_SIGNATURE sig = NULL;
    ULONG sig_len = 0;
    if (n->info->lpVtbl->GetDynamicFunctionInfo(n->info, function, &module, &sig, &sig_len,
                                                NAME_CHARS, &len, w) < 0)
        return 0;
    char name[NAME_CHARS];
    utf16_to_utf8(w, len, name, sizeof name);
    if (!name[0])
        snprintf(name, sizeof name, "dynamic_method");
    return recorder_frame(n->rec, FMT_FRAME_MANAGED, "[dynamic]", "dynamicClass", name, 0);
}

static uint32_t resolve(struct names *n, FunctionID function)
{
    if (n->info_version >= 8) {
        BOOL dynamic = 0;
        if (n->info->lpVtbl->IsFunctionDynamic(n->info, function, &dynamic) >= 0 && dynamic) {
            uint32_t f = dynamic_frame(n, function);
            return f ? f : unresolved(n);
        }
    }
    ClassID klass = 0;
    ModuleID module = 0;
    mdToken token = 0;
    ULONG32 type_args = 0;
    if (n->info->lpVtbl->GetFunctionInfo2(n->info, function, 0, &klass, &module, &token, 0,
                                          &type_args, NULL) < 0 || !module)
        return unresolved(n);
    struct names_module *m = module_for(n, module);
    if (!m || !m->import)
        return unresolved(n);

    WCHAR w[NAME_CHARS];
    ULONG len = 0;
    mdTypeDef type = 0;
    DWORD attrs = 0, impl = 0;
    PCCOR_SIGNATURE sig = NULL;
    ULONG sig_len = 0, rva = 0;
    if (m->import->lpVtbl->GetMethodProps(m->import, token, &type, w, NAME_CHARS, &len, &attrs,
                                          &sig, &sig_len, &rva, &impl) < 0)
        return unresolved(n);
    char method[NAME_CHARS];
    utf16_to_utf8(w, len, method, sizeof method);
    const char *tname = type ? type_name(n, m, type) : "";
    uint32_t arity = sig ? names_generic_arity(sig, sig_len) : 0;
    uint32_t f = recorder_frame(n->rec, FMT_FRAME_MANAGED, m->path, tname, method, arity);
    return f ? f : unresolved(n);
}

uint32_t names_function(struct names *n, FunctionID function)
{
    uint32_t frame;
    if (map64_get(&n->frame_of, function, &frame))
        return frame;
    frame = resolve(n, function);
    if (frame)
        map64_put(&n->frame_of, function, frame);
    return frame;
}

static void forget_module(struct names_module *m)
{
    if (m->import)
        m->import->lpVtbl->Release(m->import);
    m->import = NULL;
    m->id = 0; /* the slot stays (type names are keyed by it), unreachable */
}

void names_forget(struct names *n, ModuleID module, FunctionID function)
{
    if (function) {
        map64_remove(&n->frame_of, function);
        return;
    }
    map64_clear(&n->frame_of);
    if (module) {
        uint32_t at;
        if (map64_get(&n->module_of, module, &at)) {
            forget_module(&n->modules[at]);
            map64_remove(&n->module_of, module);
        }
        return;
    }
    for (size_t i = 0; i < n->module_count; i++)
        forget_module(&n->modules[i]);
    map64_clear(&n->module_of);
}

void names_free(struct names *n)
{
    for (size_t i = 0; i < n->module_count; i++)
        if (n->modules[i].import)
            n->modules[i].import->lpVtbl->Release(n->modules[i].import);
    mem_free(n->modules);
    map64_free(&n->frame_of);
    map64_free(&n->module_of);
    map64_free(&n->type_of);
    strtab_free(&n->types);
    memset(n, 0, sizeof *n);
}
