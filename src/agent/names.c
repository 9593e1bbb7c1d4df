/*
 * names: see names.h.  The path from a FunctionID to a description:
 *   GetFunctionInfo2          -> ModuleID, method token
 *   (IsFunctionDynamic        -> GetDynamicFunctionInfo for IL stubs and
 *                                DynamicMethods, which have no metadata)
 *   GetModuleInfo2            -> the module's path, image and whether it
 *                                can be unloaded
 *   the module's tables, read in place (mdplace.h) -> method name,
 *                                declaring type, signature; the type
 *                                name, enclosing first
 *   (GetModuleMetaData        -> IMetaDataImport, only for modules whose
 *                                tables cannot be read in place: opening
 *                                an importer slows the runtime's own use
 *                                of that module's metadata for the rest
 *                                of the process, see mdplace.h)
 */
#include "agent/names.h"

#include <stdio.h>
#include <string.h>

#include "agent/log.h"
#include "agent/mdplace.h"
#include "clr/clr_guids.h"
#include "common/hash.h"
#include "common/mem.h"
#include "common/path.h"
#include "common/utf.h"

#define MAX_NESTING 16

struct names_module {
    ModuleID id;
    int in_place;            /* md is read (mdplace.h) */
    struct md md;
    IMetaDataImport *import; /* else this, NULL when the module has no metadata for us */
    char path[NAMES_CHARS];
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

/* ---- describing, with no state ------------------------------------------- */

void names_type_def(IMetaDataImport *import, mdTypeDef type, char *out, size_t size)
{
    char parts[MAX_NESTING][NAMES_CHARS];
    const char *chain[MAX_NESTING];
    size_t depth = 0;
    mdTypeDef t = type;
    while (t && depth < MAX_NESTING) {
        WCHAR w[NAMES_CHARS];
        ULONG len = 0;
        DWORD flags = 0;
        mdToken extends = 0;
        if (import->lpVtbl->GetTypeDefProps(import, t, w, NAMES_CHARS, &len, &flags, &extends) < 0)
            break;
        utf16_to_utf8(w, len, parts[depth], NAMES_CHARS);
        depth++;
        if ((flags & tdVisibilityMask) < tdNestedPublic)
            break; /* top level: its name carries the namespace */
        mdTypeDef outer = 0;
        if (import->lpVtbl->GetNestedClassProps(import, t, &outer) < 0)
            break;
        t = outer;
    }
    for (size_t i = 0; i < depth; i++)
        chain[i] = parts[depth - 1 - i];
    names_join_nested(chain, depth, out, size);
}

static int describe_dynamic(ICorProfilerInfo15 *info, FunctionID function, struct method_desc *d)
{
    WCHAR w[NAMES_CHARS];
    ULONG len = 0;
    ModuleID module = 0;
    PCCOR_SIGNATURE sig = NULL;
    ULONG sig_len = 0;
    if (info->lpVtbl->GetDynamicFunctionInfo(info, function, &module, &sig, &sig_len, NAMES_CHARS,
                                             &len, w) < 0)
        return -1;
    snprintf(d->module, sizeof d->module, "[dynamic]");
    snprintf(d->type, sizeof d->type, "dynamicClass");
    utf16_to_utf8(w, len, d->method, sizeof d->method);
    if (!d->method[0])
        snprintf(d->method, sizeof d->method, "dynamic_method");
    d->arity = 0;
    return 0;
}

/* The method's own facts from its module's metadata. */
static int describe_method(IMetaDataImport *import, mdToken token, struct method_desc *d,
                           mdTypeDef *type_out)
{
    WCHAR w[NAMES_CHARS];
    ULONG len = 0;
    mdTypeDef type = 0;
    DWORD attrs = 0, impl = 0;
    PCCOR_SIGNATURE sig = NULL;
    ULONG sig_len = 0, rva = 0;
    if (import->lpVtbl->GetMethodProps(import, token, &type, w, NAMES_CHARS, &len, &attrs, &sig,
                                       &sig_len, &rva, &impl) < 0)
        return -1;
    utf16_to_utf8(w, len, d->method, sizeof d->method);
    d->arity = sig ? names_generic_arity(sig, sig_len) : 0;
    *type_out = type;
    return 0;
}

static int is_dynamic(ICorProfilerInfo15 *info, int info_version, FunctionID function)
{
    BOOL dynamic = 0;
    return info_version >= 8 && info->lpVtbl->IsFunctionDynamic(info, function, &dynamic) >= 0 &&
           dynamic;
}

int names_describe(ICorProfilerInfo15 *info, int info_version, FunctionID function,
                   struct method_desc *d)
{
    memset(d, 0, sizeof *d);
    if (is_dynamic(info, info_version, function))
        return describe_dynamic(info, function, d);
    ClassID klass = 0;
    ModuleID module = 0;
    mdToken token = 0;
    ULONG32 type_args = 0;
    if (info->lpVtbl->GetFunctionInfo2(info, function, 0, &klass, &module, &token, 0, &type_args,
                                       NULL) < 0 || !module)
        return -1;
    WCHAR wname[NAMES_CHARS];
    ULONG len = 0;
    LPCBYTE base = NULL;
    AssemblyID assembly = 0;
    DWORD flags = 0;
    if (info->lpVtbl->GetModuleInfo2(info, module, &base, NAMES_CHARS, &len, wname, &assembly,
                                     &flags) >= 0) {
        utf16_to_utf8(wname, len, d->module, sizeof d->module);
        struct md md;
        if (mdplace_open_image(base, flags, &md) == 0) {
            mdTypeDef type = 0;
            if (mdplace_method(&md, token, d->method, sizeof d->method, &d->arity, &type) < 0)
                return -1;
            if (type)
                mdplace_type_name(&md, type, d->type, sizeof d->type);
            return 0;
        }
    }
    IUnknown *unk = NULL;
    if (mdplace_runtime_metadata(info, module, 0 /* ofRead */, &IID_IMetaDataImport, &unk) < 0 ||
        !unk)
        return -1;
    IMetaDataImport *import = (IMetaDataImport *)unk;
    mdTypeDef type = 0;
    int rc = describe_method(import, token, d, &type);
    if (rc == 0 && type)
        names_type_def(import, type, d->type, sizeof d->type);
    import->lpVtbl->Release(import);
    return rc;
}

int names_type_of(ICorProfilerInfo15 *info, ModuleID module, mdTypeDef type, char *out,
                  size_t size)
{
    struct md md;
    if (mdplace_open(info, module, &md) == 0) {
        mdplace_type_name(&md, type, out, size);
        return 0;
    }
    IUnknown *unk = NULL;
    if (mdplace_runtime_metadata(info, module, 0, &IID_IMetaDataImport, &unk) < 0 || !unk)
        return -1;
    IMetaDataImport *import = (IMetaDataImport *)unk;
    names_type_def(import, type, out, size);
    import->lpVtbl->Release(import);
    return 0;
}

static const char *primitive_name(CorElementType t)
{
    switch (t) {
    case ELEMENT_TYPE_BOOLEAN: return "System.Boolean";
    case ELEMENT_TYPE_CHAR: return "System.Char";
    case ELEMENT_TYPE_I1: return "System.SByte";
    case ELEMENT_TYPE_U1: return "System.Byte";
    case ELEMENT_TYPE_I2: return "System.Int16";
    case ELEMENT_TYPE_U2: return "System.UInt16";
    case ELEMENT_TYPE_I4: return "System.Int32";
    case ELEMENT_TYPE_U4: return "System.UInt32";
    case ELEMENT_TYPE_I8: return "System.Int64";
    case ELEMENT_TYPE_U8: return "System.UInt64";
    case ELEMENT_TYPE_R4: return "System.Single";
    case ELEMENT_TYPE_R8: return "System.Double";
    case ELEMENT_TYPE_STRING: return "System.String";
    case ELEMENT_TYPE_I: return "System.IntPtr";
    case ELEMENT_TYPE_U: return "System.UIntPtr";
    case ELEMENT_TYPE_OBJECT: return "System.Object";
    default: return NULL;
    }
}

/* Appends to out at *used, never past size. */
static void append(char *out, size_t size, size_t *used, const char *text)
{
    if (*used >= size)
        return;
    int n = snprintf(out + *used, size - *used, "%s", text);
    if (n > 0)
        *used = *used + (size_t)n < size ? *used + (size_t)n : size - 1;
}

static int class_name(ICorProfilerInfo15 *info, ClassID klass, char *out, size_t size, size_t *used,
                      int depth)
{
    if (depth > 8 || !klass)
        return -1;
    CorElementType elem = ELEMENT_TYPE_END;
    ClassID base = 0;
    ULONG rank = 0;
    if (info->lpVtbl->IsArrayClass(info, klass, &elem, &base, &rank) == S_OK) {
        const char *prim = primitive_name(elem);
        if (prim)
            append(out, size, used, prim);
        else if (class_name(info, base, out, size, used, depth + 1) < 0)
            return -1;
        append(out, size, used, "[");
        for (ULONG i = 1; i < rank; i++)
            append(out, size, used, ",");
        append(out, size, used, "]");
        return 0;
    }
    ModuleID module = 0;
    mdTypeDef token = 0;
    ClassID parent = 0;
    ClassID args[8];
    ULONG32 nargs = 0;
    if (info->lpVtbl->GetClassIDInfo2(info, klass, &module, &token, &parent, 8, &nargs, args) < 0 ||
        !module || !token)
        return -1;
    char name[2 * NAMES_CHARS];
    if (names_type_of(info, module, token, name, sizeof name) < 0)
        return -1;
    append(out, size, used, name);
    if (nargs > 8)
        nargs = 8;
    if (nargs) {
        append(out, size, used, "[");
        for (ULONG32 i = 0; i < nargs; i++) {
            if (i)
                append(out, size, used, ",");
            if (class_name(info, args[i], out, size, used, depth + 1) < 0)
                append(out, size, used, "?");
        }
        append(out, size, used, "]");
    }
    return 0;
}

int names_describe_class(ICorProfilerInfo15 *info, ClassID klass, char *out, size_t size)
{
    size_t used = 0;
    if (!size)
        return -1;
    out[0] = '\0';
    return class_name(info, klass, out, size, &used, 0);
}

static void base_name(const WCHAR *w, ULONG len, char *out, size_t size)
{
    char path[NAMES_CHARS];
    utf16_to_utf8(w, len, path, sizeof path);
    snprintf(out, size, "%s", path_basename(path));
}

int names_describe_assembly(ICorProfilerInfo15 *info, AssemblyID assembly, char *out, size_t size)
{
    WCHAR w[NAMES_CHARS];
    ULONG len = 0;
    AppDomainID domain = 0;
    ModuleID module = 0;
    if (info->lpVtbl->GetAssemblyInfo(info, assembly, NAMES_CHARS, &len, w, &domain, &module) < 0)
        return -1;
    base_name(w, len, out, size);
    return 0;
}

int names_describe_module(ICorProfilerInfo15 *info, ModuleID module, char *out, size_t size)
{
    WCHAR w[NAMES_CHARS];
    ULONG len = 0;
    LPCBYTE base = NULL;
    AssemblyID assembly = 0;
    if (info->lpVtbl->GetModuleInfo(info, module, &base, NAMES_CHARS, &len, w, &assembly) < 0)
        return -1;
    base_name(w, len, out, size);
    return 0;
}

int names_module_file(ICorProfilerInfo15 *info, ModuleID module, char *path, size_t size)
{
    LPCBYTE base;
    ULONG len = 0;
    AssemblyID assembly;
    DWORD flags = 0;
    WCHAR wname[PATH_MAX];
    if (info->lpVtbl->GetModuleInfo2(info, module, &base, PATH_MAX, &len, wname, &assembly,
                                     &flags) < 0 ||
        (flags & (COR_PRF_MODULE_DYNAMIC | COR_PRF_MODULE_RESOURCE)) || len <= 1)
        return -1;
    utf16_to_utf8(wname, len, path, size);
    return path[0] == '/' ? 0 : -1;
}

int names_field_offsets(ICorProfilerInfo15 *info, ClassID klass, ModuleID module,
                        const char *const *wanted, int32_t *offsets, size_t count)
{
    for (size_t k = 0; k < count; k++)
        offsets[k] = -1;
    COR_FIELD_OFFSET fields[64];
    ULONG n = 0, size = 0;
    if (info->lpVtbl->GetClassLayout(info, klass, fields, 64, &n, &size) < 0)
        return 0;
    struct md md;
    int in_place = mdplace_open(info, module, &md) == 0;
    IUnknown *unk = NULL;
    if (!in_place &&
        (mdplace_runtime_metadata(info, module, 0 /* ofRead */, &IID_IMetaDataImport, &unk) < 0 ||
         !unk))
        return 0;
    IMetaDataImport *import = (IMetaDataImport *)unk;
    int found = 0;
    for (ULONG i = 0; i < n && i < 64; i++) {
        if (in_place) {
            const char *name = mdplace_field_name(&md, fields[i].ridOfField);
            for (size_t k = 0; k < count; k++) {
                if (offsets[k] < 0 && !strcmp(name, wanted[k])) {
                    offsets[k] = (int32_t)fields[i].ulOffset;
                    found++;
                }
            }
            continue;
        }
        WCHAR w[128];
        ULONG len = 0;
        mdTypeDef owner;
        DWORD attrs, type_flag;
        PCCOR_SIGNATURE sig;
        ULONG sig_len, value_len;
        UVCP_CONSTANT value;
        if (import->lpVtbl->GetFieldProps(import, fields[i].ridOfField, &owner, w, 128, &len,
                                          &attrs, &sig, &sig_len, &type_flag, &value,
                                          &value_len) < 0)
            continue;
        char name[128];
        utf16_to_utf8(w, len, name, sizeof name);
        for (size_t k = 0; k < count; k++) {
            if (offsets[k] < 0 && !strcmp(name, wanted[k])) {
                offsets[k] = (int32_t)fields[i].ulOffset;
                found++;
            }
        }
    }
    if (import)
        import->lpVtbl->Release(import);
    return found;
}

/* ---- the loop's cached path ------------------------------------------------ */

int names_init(struct names *n, ICorProfilerInfo15 *info, int info_version, struct recorder *out)
{
    memset(n, 0, sizeof *n);
    n->info = info;
    n->info_version = info_version;
    n->out = out;
    map64_init(&n->frame_of);
    map64_init(&n->frame_of_facts);
    map64_init(&n->module_of);
    map64_init(&n->type_of);
    return strtab_init(&n->types);
}

/* The cached module, or NULL (out of memory, or one that can be unloaded:
 * its metadata interface must not outlive this call). */
static struct names_module *module_for(struct names *n, ModuleID id)
{
    uint32_t at;
    if (map64_get(&n->module_of, id, &at))
        return &n->modules[at];
    WCHAR wname[NAMES_CHARS];
    ULONG len = 0;
    LPCBYTE base = NULL;
    AssemblyID assembly = 0;
    DWORD flags = 0;
    if (n->info->lpVtbl->GetModuleInfo2(n->info, id, &base, NAMES_CHARS, &len, wname, &assembly,
                                        &flags) < 0 ||
        (flags & COR_PRF_MODULE_COLLECTIBLE))
        return NULL;
    struct names_module *grown =
        mem_grow(n->modules, &n->module_cap, n->module_count + 1, sizeof *n->modules);
    if (!grown)
        return NULL;
    n->modules = grown;
    struct names_module *m = &n->modules[n->module_count];
    memset(m, 0, sizeof *m);
    m->id = id;
    utf16_to_utf8(wname, len, m->path, sizeof m->path);
    m->in_place = mdplace_open_image(base, flags, &m->md) == 0;
    IUnknown *unk = NULL;
    if (!m->in_place &&
        mdplace_runtime_metadata(n->info, id, 0 /* ofRead */, &IID_IMetaDataImport, &unk) >= 0 &&
        unk)
        m->import = (IMetaDataImport *)unk;
    if (map64_put(&n->module_of, id, (uint32_t)n->module_count) < 0) {
        if (m->import)
            m->import->lpVtbl->Release(m->import);
        return NULL;
    }
    n->module_count++;
    return m;
}

static const char *cached_type_name(struct names *n, struct names_module *m, mdTypeDef type)
{
    uint64_t key = ((uint64_t)(m - n->modules) << 32) | type;
    uint32_t id;
    if (map64_get(&n->type_of, key, &id))
        return n->types.strs[id];
    char joined[2 * NAMES_CHARS];
    if (m->in_place)
        mdplace_type_name(&m->md, type, joined, sizeof joined);
    else
        names_type_def(m->import, type, joined, sizeof joined);
    int is_new;
    id = strtab_intern(&n->types, joined, strlen(joined), &is_new);
    if (id == UINT32_MAX || map64_put(&n->type_of, key, id) < 0)
        return "";
    return n->types.strs[id];
}

static uint32_t unresolved(struct names *n)
{
    recorder_count(n->out, FMT_COUNTER_UNRESOLVED, 1);
    return recorder_synthetic(n->out, "[unknown]");
}

static uint32_t frame_of_desc(struct names *n, const struct method_desc *d)
{
    return recorder_frame(n->out, FMT_FRAME_MANAGED, d->module, d->type, d->method, d->arity);
}

/* A function of a module the loop caches (the common case), else NULL
 * with *frame untouched. */
static int resolve_cached(struct names *n, FunctionID function, uint32_t *frame)
{
    ClassID klass = 0;
    ModuleID module = 0;
    mdToken token = 0;
    ULONG32 type_args = 0;
    if (n->info->lpVtbl->GetFunctionInfo2(n->info, function, 0, &klass, &module, &token, 0,
                                          &type_args, NULL) < 0 || !module)
        return 0;
    struct names_module *m = module_for(n, module);
    if (!m || (!m->in_place && !m->import))
        return 0;
    struct method_desc d;
    mdTypeDef type = 0;
    if ((m->in_place ? mdplace_method(&m->md, token, d.method, sizeof d.method, &d.arity, &type)
                     : describe_method(m->import, token, &d, &type)) < 0)
        return 0;
    snprintf(d.module, sizeof d.module, "%s", m->path);
    snprintf(d.type, sizeof d.type, "%s", type ? cached_type_name(n, m, type) : "");
    *frame = frame_of_desc(n, &d);
    return 1;
}

static uint32_t resolve(struct names *n, FunctionID function)
{
    uint32_t frame = 0;
    if (!is_dynamic(n->info, n->info_version, function) && resolve_cached(n, function, &frame))
        return frame ? frame : unresolved(n);
    struct method_desc d;
    if (names_describe(n->info, n->info_version, function, &d) < 0)
        return unresolved(n);
    frame = frame_of_desc(n, &d);
    return frame ? frame : unresolved(n);
}

uint32_t names_known(const struct names *n, FunctionID function)
{
    uint32_t frame;
    return map64_get(&n->frame_of, function, &frame) ? frame : 0;
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

/* A 64-bit hash of what the recording says of a method: two methods with
 * different facts share it with a chance of about 2^-64 per pair. */
static uint64_t facts_hash(const struct method_desc *d)
{
    uint64_t h = hash_bytes(d->module, strlen(d->module), d->arity);
    h = hash_bytes(d->type, strlen(d->type), h);
    return hash_bytes(d->method, strlen(d->method), h);
}

uint32_t names_add(struct names *n, FunctionID function, const struct method_desc *d)
{
    uint64_t key = facts_hash(d);
    uint32_t frame;
    if (!map64_get(&n->frame_of_facts, key, &frame)) {
        frame = frame_of_desc(n, d);
        if (frame) {
            if (n->frame_of_facts.count >= NAMES_FACTS_MAX)
                map64_clear(&n->frame_of_facts);
            map64_put(&n->frame_of_facts, key, frame);
        }
    }
    if (frame)
        map64_put(&n->frame_of, function, frame);
    return frame;
}

void names_forget(struct names *n, FunctionID function)
{
    map64_remove(&n->frame_of, function);
}

void names_forget_module(struct names *n, ModuleID module)
{
    uint32_t at;
    if (!module || !map64_get(&n->module_of, module, &at))
        return;
    struct names_module *m = &n->modules[at];
    if (m->import)
        m->import->lpVtbl->Release(m->import);
    m->import = NULL;
    m->in_place = 0;
    m->id = 0; /* the slot stays (type names are keyed by it), unreachable */
    map64_remove(&n->module_of, module);
}

void names_free(struct names *n)
{
    for (size_t i = 0; i < n->module_count; i++)
        if (n->modules[i].import)
            n->modules[i].import->lpVtbl->Release(n->modules[i].import);
    mem_free(n->modules);
    map64_free(&n->frame_of);
    map64_free(&n->frame_of_facts);
    map64_free(&n->module_of);
    map64_free(&n->type_of);
    strtab_free(&n->types);
    memset(n, 0, sizeof *n);
}
