/*
 * mdplace: see mdplace.h.
 */
#include "agent/mdplace.h"

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "agent/names.h"
#include "common/pdb/pe.h"

#define MAX_NESTING 16

static _Atomic uint64_t runtime_opens;

HRESULT mdplace_runtime_metadata(ICorProfilerInfo15 *info, ModuleID module, DWORD flags,
                                 REFIID riid, IUnknown **out)
{
    atomic_fetch_add_explicit(&runtime_opens, 1, memory_order_relaxed);
    return info->lpVtbl->GetModuleMetaData(info, module, flags, riid, out);
}

uint64_t mdplace_runtime_opens(void)
{
    return atomic_load_explicit(&runtime_opens, memory_order_relaxed);
}

/* Is all of [p, p + n) mapped?  msync(MS_ASYNC) fails with ENOMEM for a
 * range with a hole, without touching it, and looks only at the mappings
 * (mincore, used before, looked each page up: CoreLib's metadata, a few
 * megabytes, took 0.6 ms of every process's start). */
static int mapped(const uint8_t *p, size_t n)
{
    long page = sysconf(_SC_PAGESIZE);
    if (page <= 0 || !p || !n)
        return 0;
    uintptr_t lo = (uintptr_t)p & ~(uintptr_t)(page - 1);
    uintptr_t hi = (uintptr_t)p + n;
    if (hi < (uintptr_t)p)
        return 0;
    return msync((void *)lo, hi - lo, MS_ASYNC) == 0;
}

int mdplace_open_image(const uint8_t *base, DWORD module_flags, struct md *md)
{
    if (!base || (module_flags & (COR_PRF_MODULE_DYNAMIC | COR_PRF_MODULE_RESOURCE)))
        return -1;
    struct pe_image pe;
    const char *why;
    if (pe_open_loaded(&pe, base, (module_flags & COR_PRF_MODULE_FLAT_LAYOUT) != 0, mapped,
                       &why) < 0 ||
        md_open(md, pe.metadata, pe.metadata_size, &why) < 0)
        return -1;
    /* the pointer tables of unoptimized metadata reorder rows (rare in
     * compiled assemblies): the runtime's importer reads those */
    if (md->uncompressed || md_rows(md, MD_METHODPTR) || md_rows(md, MD_FIELDPTR) ||
        md_rows(md, MD_TYPEDEF) == 0)
        return -1;
    return 0;
}

int mdplace_open(ICorProfilerInfo15 *info, ModuleID module, struct md *md)
{
    LPCBYTE base = NULL;
    ULONG len = 0;
    AssemblyID assembly = 0;
    DWORD flags = 0;
    if (info->lpVtbl->GetModuleInfo2(info, module, &base, 0, &len, NULL, &assembly, &flags) < 0)
        return -1;
    return mdplace_open_image(base, flags, md);
}

/* The NestedClass row's enclosing type of a nested TypeDef row, 0 when
 * none (the table is sorted by its nested column: II.22.32). */
static uint32_t enclosing(const struct md *m, uint32_t row)
{
    uint32_t lo = 1, hi = md_rows(m, MD_NESTEDCLASS) + 1;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        uint32_t nested = md_get(m, MD_NESTEDCLASS, mid, MD_NESTEDCLASS_NESTED);
        if (nested == row)
            return md_get(m, MD_NESTEDCLASS, mid, MD_NESTEDCLASS_ENCLOSING);
        if (nested < row)
            lo = mid + 1;
        else
            hi = mid;
    }
    return 0;
}

void mdplace_type_name(const struct md *m, mdTypeDef type, char *out, size_t size)
{
    char parts[MAX_NESTING][NAMES_CHARS];
    const char *chain[MAX_NESTING];
    size_t depth = 0;
    uint32_t row = (type >> 24) == MD_TYPEDEF ? type & 0xffffff : 0;
    while (row && row <= md_rows(m, MD_TYPEDEF) && depth < MAX_NESTING) {
        uint32_t flags = md_get(m, MD_TYPEDEF, row, MD_TYPEDEF_FLAGS);
        const char *name = md_string(m, md_get(m, MD_TYPEDEF, row, MD_TYPEDEF_NAME));
        const char *ns = md_string(m, md_get(m, MD_TYPEDEF, row, MD_TYPEDEF_NAMESPACE));
        int nested = (flags & tdVisibilityMask) >= tdNestedPublic;
        snprintf(parts[depth++], NAMES_CHARS, "%s%s%s", nested ? "" : ns,
                 !nested && ns[0] ? "." : "", name);
        if (!nested)
            break; /* top level: its name carries the namespace */
        row = enclosing(m, row);
    }
    for (size_t i = 0; i < depth; i++)
        chain[i] = parts[depth - 1 - i];
    names_join_nested(chain, depth, out, size);
}

/* The TypeDef whose method list holds a MethodDef row: the last type whose
 * list starts at or before it (types without methods share the next one's
 * start, and come before it). */
static uint32_t owner_of(const struct md *m, uint32_t method)
{
    uint32_t lo = 1, hi = md_rows(m, MD_TYPEDEF) + 1;
    while (lo < hi) { /* first type whose list starts after method */
        uint32_t mid = lo + (hi - lo) / 2;
        if (md_get(m, MD_TYPEDEF, mid, MD_TYPEDEF_METHODLIST) <= method)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo - 1;
}

int mdplace_method(const struct md *m, mdMethodDef method, char *name, size_t size,
                   uint32_t *arity, mdTypeDef *type)
{
    uint32_t row = method & 0xffffff;
    if ((method >> 24) != MD_METHODDEF || !row || row > md_rows(m, MD_METHODDEF))
        return -1;
    snprintf(name, size, "%s", md_string(m, md_get(m, MD_METHODDEF, row, MD_METHODDEF_NAME)));
    const uint8_t *sig = NULL;
    uint32_t len = 0;
    uint32_t signature = md_get(m, MD_METHODDEF, row, MD_METHODDEF_SIGNATURE);
    *arity = md_blob(m, signature, &sig, &len) == 0 && sig ? names_generic_arity(sig, len) : 0;
    uint32_t owner = owner_of(m, row);
    *type = owner ? md_token(MD_TYPEDEF, owner) : 0;
    return 0;
}

mdTypeDef mdplace_find_type(const struct md *m, const char *full_name)
{
    const char *dot = strrchr(full_name, '.');
    size_t ns_len = dot ? (size_t)(dot - full_name) : 0;
    const char *name = dot ? dot + 1 : full_name;
    for (uint32_t row = 1; row <= md_rows(m, MD_TYPEDEF); row++) {
        uint32_t flags = md_get(m, MD_TYPEDEF, row, MD_TYPEDEF_FLAGS);
        if ((flags & tdVisibilityMask) >= tdNestedPublic ||
            strcmp(md_string(m, md_get(m, MD_TYPEDEF, row, MD_TYPEDEF_NAME)), name) != 0)
            continue;
        const char *ns = md_string(m, md_get(m, MD_TYPEDEF, row, MD_TYPEDEF_NAMESPACE));
        if (strlen(ns) == ns_len && !strncmp(ns, full_name, ns_len))
            return md_token(MD_TYPEDEF, row);
    }
    return 0;
}

mdMethodDef mdplace_find_method(const struct md *m, mdTypeDef type, const char *name,
                                int (*accept)(const uint8_t *sig, uint32_t len, void *ctx),
                                void *ctx)
{
    uint32_t row = type & 0xffffff;
    uint32_t types = md_rows(m, MD_TYPEDEF), methods = md_rows(m, MD_METHODDEF);
    if ((type >> 24) != MD_TYPEDEF || !row || row > types)
        return 0;
    uint32_t first = md_get(m, MD_TYPEDEF, row, MD_TYPEDEF_METHODLIST);
    uint32_t end = methods + 1; /* the last type's list runs to the table's end */
    if (row < types)
        end = md_get(m, MD_TYPEDEF, row + 1, MD_TYPEDEF_METHODLIST);
    if (end > methods + 1)
        end = methods + 1;
    for (uint32_t i = first; i && i < end; i++) {
        if (strcmp(md_string(m, md_get(m, MD_METHODDEF, i, MD_METHODDEF_NAME)), name))
            continue;
        const uint8_t *sig;
        uint32_t len;
        if (!accept || (md_blob(m, md_get(m, MD_METHODDEF, i, MD_METHODDEF_SIGNATURE), &sig,
                                &len) == 0 &&
                        accept(sig, len, ctx)))
            return md_token(MD_METHODDEF, i);
    }
    return 0;
}

mdTypeDef mdplace_find_nested(const struct md *m, mdTypeDef outer, const char *name)
{
    uint32_t outer_row = outer & 0xffffff;
    if ((outer >> 24) != MD_TYPEDEF || !outer_row)
        return 0;
    for (uint32_t i = 1; i <= md_rows(m, MD_NESTEDCLASS); i++) {
        if (md_get(m, MD_NESTEDCLASS, i, MD_NESTEDCLASS_ENCLOSING) != outer_row)
            continue;
        uint32_t row = md_get(m, MD_NESTEDCLASS, i, MD_NESTEDCLASS_NESTED);
        if (row && row <= md_rows(m, MD_TYPEDEF) &&
            !strcmp(md_string(m, md_get(m, MD_TYPEDEF, row, MD_TYPEDEF_NAME)), name))
            return md_token(MD_TYPEDEF, row);
    }
    return 0;
}

const char *mdplace_field_name(const struct md *m, mdFieldDef field)
{
    uint32_t row = field & 0xffffff;
    if ((field >> 24) != MD_FIELD || !row || row > md_rows(m, MD_FIELD))
        return "";
    return md_string(m, md_get(m, MD_FIELD, row, MD_FIELD_NAME));
}
