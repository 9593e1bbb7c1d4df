/*
 * il_install: see il_install.h.
 */
#include "agent/il_install.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int il_install(ICorProfilerInfo15 *info, ModuleID module, mdToken token, FunctionID function,
               const struct il_rewritten *out, char *why, size_t why_size)
{
    IMethodMalloc *alloc = NULL;
    if (info->lpVtbl->GetILFunctionBodyAllocator(info, module, &alloc) < 0 || !alloc) {
        snprintf(why, why_size, "no IL body allocator");
        return -1;
    }
    void *fresh = alloc->lpVtbl->Alloc(alloc, (ULONG)out->size);
    alloc->lpVtbl->Release(alloc);
    if (!fresh) {
        snprintf(why, why_size, "the IL body allocator failed");
        return -1;
    }
    memcpy(fresh, out->body, out->size);
    HRESULT hr = info->lpVtbl->SetILFunctionBody(info, module, token, fresh);
    if (hr < 0) {
        snprintf(why, why_size, "the runtime refused the new body (0x%08x)", (unsigned)hr);
        return -1;
    }
    if (!function)
        return 0;
    /* the runtime takes the map and frees it with CoTaskMemFree, which is
     * free() on Linux: plain malloc, not ours */
    COR_IL_MAP *map = malloc((out->map_count ? out->map_count : 1) * sizeof *map);
    if (!map)
        return 0;
    for (uint32_t i = 0; i < out->map_count; i++)
        map[i] = (COR_IL_MAP){out->map[i].old_offset, out->map[i].new_offset, TRUE};
    /* refused: the method runs as rewritten; the map is not freed (the
     * interface does not say whether a refusal kept it: a few bytes lost
     * beat a double free) */
    (void)info->lpVtbl->SetILInstrumentedCodeMap(info, function, TRUE, out->map_count, map);
    return 0;
}
