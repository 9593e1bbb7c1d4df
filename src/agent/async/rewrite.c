/*
 * rewrite: see rewrite.h.
 */
#include "agent/async/rewrite.h"

#include <stdatomic.h>
#include <string.h>

#include "agent/async/enter.h"
#include "agent/async/ilwrap.h"
#include "agent/log.h"
#include "agent/mdplace.h"
#include "common/pdb/meta.h"
#include "common/utf.h"

struct target {
    const char *outer;  /* the enclosing type, or NULL */
    const char *type;
    const char *method;
    uint32_t params;    /* its parameter count (overloads differ by it) */
};

static const struct target targets[] = {
    {"System.Runtime.CompilerServices.AsyncTaskMethodBuilder`1", "AsyncStateMachineBox`1",
     "MoveNext", 1},
    {"System.Runtime.CompilerServices.PoolingAsyncValueTaskMethodBuilder`1", "StateMachineBox`1",
     "MoveNext", 0},
    {NULL, "System.Threading.Tasks.Task", "ExecuteWithThreadLocal", 2},
};
#define TARGETS (sizeof targets / sizeof targets[0])

/* What was made for each target; read by GetReJITParameters on any thread
 * once `ready` says so, never changed afterwards (until a detach). */
static struct made {
    mdMethodDef token;
    uint8_t *body;
    size_t size;
    _Atomic int failed;
} made[TARGETS];
static ModuleID made_module;
static _Atomic int ready;
static int requested;

int rewrite_is_corelib(ICorProfilerInfo15 *info, ModuleID module)
{
    WCHAR wname[1024];
    ULONG len = 0;
    LPCBYTE base = NULL;
    AssemblyID assembly = 0;
    DWORD flags = 0;
    if (info->lpVtbl->GetModuleInfo2(info, module, &base, 1024, &len, wname, &assembly,
                                     &flags) < 0)
        return 0;
    char name[1024];
    utf16_to_utf8(wname, len, name, sizeof name);
    const char *slash = strrchr(name, '/');
    return !strcmp(slash ? slash + 1 : name, "System.Private.CoreLib.dll");
}

ModuleID rewrite_find_corelib(ICorProfilerInfo15 *info)
{
    ICorProfilerModuleEnum *modules = NULL;
    if (info->lpVtbl->EnumModules(info, &modules) < 0 || !modules)
        return 0;
    ModuleID found = 0, ids[64];
    ULONG got = 0;
    while (!found && modules->lpVtbl->Next(modules, 64, ids, &got) >= 0 && got)
        for (ULONG i = 0; i < got && !found; i++)
            if (rewrite_is_corelib(info, ids[i]))
                found = ids[i];
    modules->lpVtbl->Release(modules);
    return found;
}

/* A target's signature: an instance method (its `this` is what it runs)
 * returning nothing, with the target's parameter count. */
static int instance_void_with_params(const uint8_t *sig, uint32_t len, void *ctx)
{
    const struct target *t = ctx;
    if (len < 3 || !(sig[0] & 0x20) || (sig[0] & 0x10)) /* HASTHIS; not generic */
        return 0;
    return sig[1] == t->params && sig[2] == ELEMENT_TYPE_VOID;
}

static mdTypeDef find_type(const struct md *md, const struct target *t)
{
    if (!t->outer)
        return mdplace_find_type(md, t->type);
    mdTypeDef outer = mdplace_find_type(md, t->outer);
    return outer ? mdplace_find_nested(md, outer, t->type) : 0;
}

static mdMethodDef find_method(const struct md *md, const struct target *t)
{
    mdTypeDef type = find_type(md, t);
    return type ? mdplace_find_method(md, type, t->method, instance_void_with_params,
                                      (void *)t)
                : 0;
}

size_t rewrite_box_types(ICorProfilerInfo15 *info, ModuleID corelib, mdTypeDef *out,
                         size_t room)
{
    /* read in place: an importer would slow the runtime's own reading of
     * CoreLib's metadata for the rest of the process (mdplace.h), in
     * every process, even one whose async methods never yield */
    struct md md;
    if (mdplace_open(info, corelib, &md) < 0)
        return 0; /* then it could not be rewritten either */
    size_t n = 0;
    for (size_t i = 0; i < TARGETS && n < room; i++) {
        mdTypeDef type = targets[i].outer ? find_type(&md, &targets[i]) : 0;
        if (type)
            out[n++] = type;
    }
    return n;
}

/* The calli's signature: one CoreLib has, for an unmanaged call the
 * wrapper can make (ilwrap_calli_fits), the best of them: one with
 * CallConvSuppressGCTransition if CoreLib has one (async_enter neither
 * blocks nor calls the runtime, so the call needs no GC transition; none
 * of .NET 8 to 10 has one), else a plain one (.NET 8 to 10: `unmanaged int
 * (nint)`), whose call goes through a GC transition.  Emitting our own
 * would mean opening CoreLib's metadata for writing (ilwrap.h says why
 * not). */
/* The answer for the CoreLib whose blob heap is at calli_of: its
 * signatures never change (CoreLib is never unloaded), and the scan costs
 * 150 us, mostly first touches of its pages; the unhandled probe asks at
 * every start, the async rewrite after the first yield. */
static const void *calli_of;
static int calli_found;
static struct ilwrap_calli calli_best;

static int scan_calli(const struct md *md, struct ilwrap_calli *best);

int rewrite_find_calli(const struct md *md, struct ilwrap_calli *best)
{
    if (calli_of != md->blob.p) {
        calli_found = scan_calli(md, &calli_best);
        calli_of = md->blob.p;
    }
    *best = calli_best;
    return calli_found;
}

static int scan_calli(const struct md *md, struct ilwrap_calli *best)
{
    mdTypeDef suppress =
        mdplace_find_type(md, "System.Runtime.CompilerServices.CallConvSuppressGCTransition");
    int found = 0;
    for (uint32_t row = 1; row <= md_rows(md, MD_STANDALONESIG); row++) {
        const uint8_t *blob;
        uint32_t len;
        struct ilwrap_calli c;
        if (md_blob(md, md_get(md, MD_STANDALONESIG, row, 0), &blob, &len) < 0 ||
            !ilwrap_calli_fits(blob, len, suppress, &c))
            continue;
        c.token = md_token(MD_STANDALONESIG, row);
        if (!found || ilwrap_calli_better(&c, best))
            *best = c;
        found = 1;
    }
    return found;
}

int rewrite_wrap(ICorProfilerInfo15 *info, ModuleID module, mdMethodDef method,
                 const struct ilwrap_calli *calli, uint64_t fn, int entry_only, uint8_t **body,
                 size_t *size, char *why, size_t why_size)
{
    LPCBYTE il = NULL;
    ULONG il_size = 0;
    if (info->lpVtbl->GetILFunctionBody(info, module, method, &il, &il_size) < 0 || !il ||
        il_size < 1)
        return il_why(why, why_size, "its IL cannot be read");
    struct ilwrap_in in = {il, il_size, *calli, fn, entry_only};
    struct il_rewritten out;
    if (ilwrap_publish(&in, &out, why, why_size) < 0)
        return -1;
    *body = out.body; /* the caller's; the rest of out goes */
    *size = out.size;
    out.body = NULL;
    il_rewritten_free(&out);
    return 0;
}

/* The new body of one target into made[i]; 0 or -1 (logged). */
static int make(ICorProfilerInfo15 *info, ModuleID module, const struct md *md,
                const struct ilwrap_calli *calli, size_t i)
{
    const struct target *t = &targets[i];
    mdMethodDef method = find_method(md, t);
    if (!method) {
        log_info("async: %s%s%s.%s not found in this runtime", t->outer ? t->outer : "",
                 t->outer ? "+" : "", t->type, t->method);
        return -1;
    }
    char why[160];
    if (rewrite_wrap(info, module, method, calli, (uint64_t)(uintptr_t)async_enter, 0,
                     &made[i].body, &made[i].size, why, sizeof why) < 0) {
        log_warn("async: %s.%s could not be rewritten (%s); async code it runs has no logical "
                 "stack", t->type, t->method, why);
        return -1;
    }
    made[i].token = method;
    atomic_store(&made[i].failed, 0);
    return 0;
}

int rewrite_request(ICorProfilerInfo15 *info, ModuleID corelib)
{
    if (requested)
        return 0;
    requested = 1;
    struct md md;
    if (mdplace_open(info, corelib, &md) < 0) {
        log_warn("async: System.Private.CoreLib's metadata cannot be read in place; no logical "
                 "async stacks");
        return 0;
    }
    struct ilwrap_calli calli;
    if (!rewrite_find_calli(&md, &calli)) {
        log_warn("async: System.Private.CoreLib has no unmanaged call signature the rewrite can "
                 "use; no logical async stacks");
        return 0;
    }
    int asked = 0;
    ModuleID modules[TARGETS];
    mdMethodDef methods[TARGETS];
    for (size_t i = 0; i < TARGETS; i++) {
        if (make(info, corelib, &md, &calli, i) == 0) {
            modules[asked] = corelib;
            methods[asked] = made[i].token;
            asked++;
        }
    }
    if (!asked)
        return 0;
    made_module = corelib;
    atomic_store(&ready, 1);
    HRESULT hr = info->lpVtbl->RequestReJITWithInliners(info, COR_PRF_REJIT_BLOCK_INLINING,
                                                        (ULONG)asked, modules, methods);
    if (hr < 0) {
        log_warn("async: the runtime refused to recompile its async methods (0x%08x); no "
                 "logical async stacks", (unsigned)hr);
        atomic_store(&ready, 0);
        return 0;
    }
    log_debug("async: %d runtime methods recompiled to publish what they run (a call %s a GC "
              "transition)", asked, calli.suppress ? "without" : "with");
    return asked;
}

HRESULT rewrite_parameters(ModuleID module, mdMethodDef method,
                           ICorProfilerFunctionControl *control)
{
    if (!atomic_load(&ready) || module != made_module)
        return E_FAIL;
    for (size_t i = 0; i < TARGETS; i++) {
        if (made[i].body && made[i].token == method)
            return control->lpVtbl->SetILFunctionBody(control, (ULONG)made[i].size,
                                                      made[i].body);
    }
    return E_FAIL;
}

void rewrite_failed(ModuleID module, mdMethodDef method, HRESULT status)
{
    if (module != made_module)
        return;
    for (size_t i = 0; i < TARGETS; i++) {
        if (made[i].body && made[i].token == method && !atomic_exchange(&made[i].failed, 1))
            log_warn("async: the runtime could not recompile %s.%s (0x%08x)", targets[i].type,
                     targets[i].method, (unsigned)status);
    }
}

int rewrite_active(void)
{
    int n = 0;
    for (size_t i = 0; i < TARGETS; i++)
        n += made[i].body && !atomic_load(&made[i].failed);
    return atomic_load(&ready) ? n : 0;
}

void rewrite_revert(ICorProfilerInfo15 *info)
{
    if (!atomic_load(&ready))
        return;
    ModuleID modules[TARGETS];
    mdMethodDef methods[TARGETS];
    HRESULT status[TARGETS];
    ULONG n = 0;
    for (size_t i = 0; i < TARGETS; i++) {
        if (made[i].body) {
            modules[n] = made_module;
            methods[n++] = made[i].token;
        }
    }
    if (n && info->lpVtbl->RequestRevert(info, n, modules, methods, status) < 0)
        log_warn("async: the runtime's async methods could not be put back; they keep "
                 "publishing what they run (harmless)");
}
