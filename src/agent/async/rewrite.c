/*
 * rewrite: see rewrite.h.
 */
#include "agent/async/rewrite.h"

#include <stdatomic.h>
#include <string.h>

#include "agent/async/ilwrap.h"
#include "agent/log.h"
#include "agent/mdplace.h"
#include "agent/signal/achain.h"
#include "clr/clr_guids.h"
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

static void to_wide(const char *s, WCHAR *w, size_t room)
{
    size_t i = 0;
    for (; s[i] && i + 1 < room; i++)
        w[i] = (WCHAR)(unsigned char)s[i];
    w[i] = 0;
}

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

/* A signature's parameter count and whether it returns nothing. */
static int void_with_params(PCCOR_SIGNATURE sig, ULONG len, uint32_t params)
{
    if (len < 3 || (sig[0] & 0x10)) /* generic methods have an arity first */
        return 0;
    return sig[1] == params && sig[2] == ELEMENT_TYPE_VOID;
}

static mdTypeDef find_type(IMetaDataImport *import, const struct target *t)
{
    WCHAR w[256];
    mdTypeDef type = 0, outer = 0;
    if (t->outer) {
        to_wide(t->outer, w, 256);
        if (import->lpVtbl->FindTypeDefByName(import, w, 0, &outer) < 0)
            return 0;
    }
    to_wide(t->type, w, 256);
    if (import->lpVtbl->FindTypeDefByName(import, w, outer, &type) < 0)
        return 0;
    return type;
}

static mdMethodDef find_method(IMetaDataImport *import, const struct target *t)
{
    WCHAR w[256];
    mdTypeDef type = find_type(import, t);
    if (!type)
        return 0;
    to_wide(t->method, w, 256);
    HCORENUM e = NULL;
    mdMethodDef methods[8];
    ULONG n = 0;
    mdMethodDef found = 0;
    if (import->lpVtbl->EnumMethodsWithName(import, &e, type, w, methods, 8, &n) >= 0) {
        for (ULONG i = 0; i < n && !found; i++) {
            PCCOR_SIGNATURE sig = NULL;
            ULONG sig_len = 0, rva = 0;
            DWORD attrs = 0, impl = 0;
            mdTypeDef owner;
            ULONG name_len = 0;
            if (import->lpVtbl->GetMethodProps(import, methods[i], &owner, NULL, 0, &name_len,
                                               &attrs, &sig, &sig_len, &rva, &impl) >= 0 &&
                void_with_params(sig, sig_len, t->params))
                found = methods[i];
        }
    }
    if (e)
        import->lpVtbl->CloseEnum(import, e);
    return found;
}

size_t rewrite_box_types(ICorProfilerInfo15 *info, ModuleID corelib, mdTypeDef *out,
                         size_t room)
{
    /* read in place: an importer would slow the runtime's own reading of
     * CoreLib's metadata for the rest of the process (mdplace.h), in
     * every process, even one whose async methods never yield */
    struct md md;
    if (mdplace_open(info, corelib, &md) == 0) {
        size_t n = 0;
        for (size_t i = 0; i < TARGETS && n < room; i++) {
            mdTypeDef outer = targets[i].outer ? mdplace_find_type(&md, targets[i].outer) : 0;
            mdTypeDef type = outer ? mdplace_find_nested(&md, outer, targets[i].type) : 0;
            if (type)
                out[n++] = type;
        }
        return n;
    }
    IUnknown *unk = NULL;
    if (mdplace_runtime_metadata(info, corelib, ofRead, &IID_IMetaDataImport, &unk) < 0 || !unk)
        return 0;
    IMetaDataImport *import = (IMetaDataImport *)unk;
    size_t n = 0;
    for (size_t i = 0; i < TARGETS && n < room; i++) {
        mdTypeDef type = targets[i].outer ? find_type(import, &targets[i]) : 0;
        if (type)
            out[n++] = type;
    }
    import->lpVtbl->Release(import);
    return n;
}

/* The calli's signature: unmanaged, no parameters, native int back; with
 * CallConvSuppressGCTransition when CoreLib has it (.NET 5 and later): the
 * slot function is a leaf that neither blocks nor calls the runtime. */
static mdSignature calli_signature(IMetaDataImport *import, IMetaDataEmit *emit)
{
    uint8_t sig[16];
    size_t n = 0;
    mdTypeDef suppress = 0;
    WCHAR w[128];
    to_wide("System.Runtime.CompilerServices.CallConvSuppressGCTransition", w, 128);
    if (import->lpVtbl->FindTypeDefByName(import, w, 0, &suppress) >= 0 && suppress) {
        uint32_t coded = (suppress & 0x00FFFFFFu) << 2; /* TypeDefOrRefEncoded, a TypeDef */
        sig[n++] = 0x09; /* IMAGE_CEE_CS_CALLCONV_UNMANAGED: the convention from modopts */
        sig[n++] = 0;
        sig[n++] = 0x20; /* ELEMENT_TYPE_CMOD_OPT */
        if (coded < 0x80) {
            sig[n++] = (uint8_t)coded;
        } else if (coded < 0x4000) {
            sig[n++] = (uint8_t)(0x80 | coded >> 8);
            sig[n++] = (uint8_t)coded;
        } else {
            sig[n++] = (uint8_t)(0xC0 | coded >> 24);
            sig[n++] = (uint8_t)(coded >> 16);
            sig[n++] = (uint8_t)(coded >> 8);
            sig[n++] = (uint8_t)coded;
        }
        sig[n++] = ELEMENT_TYPE_I;
    } else {
        sig[n++] = 0x01; /* IMAGE_CEE_CS_CALLCONV_C */
        sig[n++] = 0;
        sig[n++] = ELEMENT_TYPE_I;
    }
    mdSignature token = 0;
    if (emit->lpVtbl->GetTokenFromSig(emit, sig, (ULONG)n, &token) < 0)
        return 0;
    return token;
}

/* The new body of one target into made[i]; 0 or -1 (logged). */
static int make(ICorProfilerInfo15 *info, ModuleID module, IMetaDataImport *import,
                IMetaDataEmit *emit, mdSignature calli, size_t i)
{
    const struct target *t = &targets[i];
    mdMethodDef method = find_method(import, t);
    if (!method) {
        log_info("async: %s%s%s.%s not found in this runtime", t->outer ? t->outer : "",
                 t->outer ? "+" : "", t->type, t->method);
        return -1;
    }
    LPCBYTE body = NULL;
    ULONG size = 0;
    if (info->lpVtbl->GetILFunctionBody(info, module, method, &body, &size) < 0 || !body ||
        size < 1)
        return -1;
    /* the local signature: the fat header's token (a tiny header has none) */
    PCCOR_SIGNATURE locals = NULL;
    ULONG locals_len = 0;
    if ((body[0] & 3) == 3 && size >= 12) {
        mdSignature tok = (mdSignature)(body[8] | body[9] << 8 | body[10] << 16 |
                                        (uint32_t)body[11] << 24);
        if (tok && import->lpVtbl->GetSigFromToken(import, tok, &locals, &locals_len) < 0)
            return -1;
    }
    uint8_t sig[1024];
    size_t sig_len = 0;
    long first = ilwrap_locals(locals, locals_len, sig, sizeof sig, &sig_len);
    mdSignature locals_token = 0;
    if (first < 0 || emit->lpVtbl->GetTokenFromSig(emit, sig, (ULONG)sig_len, &locals_token) < 0)
        return -1;
    struct ilwrap_in in = {body, size, (uint32_t)first, locals_token, calli,
                           (uint64_t)(uintptr_t)achain_slot};
    struct il_rewritten out;
    char why[160];
    if (ilwrap_publish(&in, &out, why, sizeof why) < 0) {
        log_warn("async: %s.%s could not be rewritten (%s); async code it runs has no logical "
                 "stack", t->type, t->method, why);
        return -1;
    }
    made[i].token = method;
    made[i].body = out.body; /* kept; the rest of out goes */
    made[i].size = out.size;
    out.body = NULL;
    il_rewritten_free(&out);
    atomic_store(&made[i].failed, 0);
    return 0;
}

int rewrite_request(ICorProfilerInfo15 *info, ModuleID corelib)
{
    if (requested)
        return 0;
    requested = 1;
    IUnknown *unk = NULL;
    if (mdplace_runtime_metadata(info, corelib, ofRead | ofWrite, &IID_IMetaDataEmit, &unk) < 0 ||
        !unk) {
        log_warn("async: System.Private.CoreLib's metadata cannot be extended; no logical async "
                 "stacks");
        return 0;
    }
    IMetaDataEmit *emit = (IMetaDataEmit *)unk;
    IUnknown *iunk = NULL;
    IMetaDataImport *import = NULL;
    if (emit->lpVtbl->QueryInterface(emit, &IID_IMetaDataImport, (void **)&iunk) >= 0 && iunk)
        import = (IMetaDataImport *)iunk;
    int asked = 0;
    ModuleID modules[TARGETS];
    mdMethodDef methods[TARGETS];
    if (import) {
        mdSignature calli = calli_signature(import, emit);
        for (size_t i = 0; calli && i < TARGETS; i++) {
            if (make(info, corelib, import, emit, calli, i) == 0) {
                modules[asked] = corelib;
                methods[asked] = made[i].token;
                asked++;
            }
        }
        import->lpVtbl->Release(import);
    }
    emit->lpVtbl->Release(emit);
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
    log_debug("async: %d runtime methods recompiled to publish what they run", asked);
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
