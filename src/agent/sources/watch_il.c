/*
 * watch_il: the body of a watched method with its probes (see watch.h for
 * the code added): the original IL from the runtime, rewritten by the IL
 * engine (agent/il) and checked; the new locals' signature and the
 * probes' calli signatures made with the module's metadata emitter.
 */
#include <stdio.h>
#include <string.h>

#include "agent/il/il.h"
#include "agent/log.h"
#include "agent/mdplace.h"
#include "agent/sources/watch.h"
#include "clr/clr_guids.h"
#include "common/pdb/meta.h"

static IMetaDataEmit *emitter(ICorProfilerInfo15 *info, ModuleID module)
{
    IUnknown *unk = NULL;
    if (mdplace_runtime_metadata(info, module, ofRead | ofWrite, &IID_IMetaDataEmit, &unk) < 0 ||
        !unk)
        return NULL;
    return (IMetaDataEmit *)unk;
}

/* The AssemblyRef of the core library a module references, 0 when none. */
static uint32_t core_library(const struct assembly *a)
{
    static const char *const names[] = {"System.Runtime", "System.Private.CoreLib", "netstandard",
                                         "mscorlib"};
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++)
        for (uint32_t row = 1; row <= md_rows(&a->md, MD_ASSEMBLYREF); row++)
            if (!strcmp(md_string(&a->md, md_get(&a->md, MD_ASSEMBLYREF, row, MD_ASSEMBLYREF_NAME)),
                        names[k]))
                return md_token(MD_ASSEMBLYREF, row);
    return 0;
}

/* A type of the core library ("System.X") as a TypeDefOrRef coded index
 * in the module: a TypeRef to it, or in CoreLib itself its TypeDef; 0 when
 * the module references no core library (or the emitter refused). */
static uint32_t core_type_ref(const struct assembly *asm_, IMetaDataEmit *emit, const char *name)
{
    if (asm_->name && !strcmp(asm_->name, "System.Private.CoreLib")) {
        const char *dot = strrchr(name, '.');
        for (uint32_t r = 1; dot && r <= md_rows(&asm_->md, MD_TYPEDEF); r++)
            if (!strcmp(md_string(&asm_->md, md_get(&asm_->md, MD_TYPEDEF, r, MD_TYPEDEF_NAME)), dot + 1) &&
                strlen(md_string(&asm_->md, md_get(&asm_->md, MD_TYPEDEF, r, MD_TYPEDEF_NAMESPACE))) ==
                    (size_t)(dot - name) &&
                !strncmp(md_string(&asm_->md, md_get(&asm_->md, MD_TYPEDEF, r, MD_TYPEDEF_NAMESPACE)),
                         name, (size_t)(dot - name)))
                return r << 2; /* TypeDef */
        return 0;
    }
    uint32_t scope = core_library(asm_);
    WCHAR wname[96];
    size_t n = strlen(name);
    if (!scope || n >= sizeof wname / sizeof wname[0])
        return 0;
    for (size_t i = 0; i <= n; i++)
        wname[i] = (WCHAR)name[i];
    mdTypeRef type_ref = 0;
    if (emit->lpVtbl->DefineTypeRefByName(emit, scope, wname, &type_ref) < 0 ||
        (type_ref >> 24) != MD_TYPEREF)
        return 0;
    return (type_ref & 0xffffff) << 2 | 1; /* TypeRef */
}

/* The probes' calli signatures in a module: unmanaged, with
 * modopt(CallConvSuppressGCTransition) on the return type when the module
 * references a core library to name it from -- the thread then stays in
 * cooperative mode (no transition frame: a probe costs tens of
 * nanoseconds less, and no collection can move an object the probe
 * reads); else plain cdecl, with the transition. */
static int probe_sigs(const struct assembly *asm_, uint32_t sigs[2], IMetaDataEmit *emit)
{
    if (sigs[0] && sigs[1])
        return 0;
    uint8_t modopt[8];
    size_t mod_len = 0;
    uint32_t type_ref = core_type_ref(asm_, emit, "System.Runtime.CompilerServices.CallConvSuppressGCTransition");
    if (type_ref) {
        modopt[0] = 0x20; /* CMOD_OPT */
        mod_len = 1 + sig_compress(type_ref, modopt + 1);
        if (mod_len == 1)
            mod_len = 0;
    }
    uint8_t cc = mod_len ? 0x09 : 0x01; /* unmanaged (with modifiers), or C */
    /* int64 (int32, native int x WATCH_ARGS) */
    uint8_t enter[16 + WATCH_ARGS];
    size_t n = 0;
    enter[n++] = cc;
    enter[n++] = 1 + WATCH_ARGS;
    memcpy(enter + n, modopt, mod_len);
    n += mod_len;
    enter[n++] = 0x0a;
    enter[n++] = 0x08;
    for (int i = 0; i < WATCH_ARGS; i++)
        enter[n++] = 0x18;
    /* void (int32, int64, native int, native int) */
    uint8_t leave[16];
    size_t m = 0;
    leave[m++] = cc;
    leave[m++] = 4;
    memcpy(leave + m, modopt, mod_len);
    m += mod_len;
    leave[m++] = 0x01;
    leave[m++] = 0x08;
    leave[m++] = 0x0a;
    leave[m++] = 0x18;
    leave[m++] = 0x18;
    mdSignature a = 0, b = 0;
    if (emit->lpVtbl->GetTokenFromSig(emit, enter, (ULONG)n, &a) < 0 ||
        emit->lpVtbl->GetTokenFromSig(emit, leave, (ULONG)m, &b) < 0)
        return -1;
    sigs[0] = a;
    sigs[1] = b;
    log_debug("watch: %s: probes called %s", asm_->name,
              mod_len ? "without a GC transition" : "with a GC transition (no core library reference)");
    return 0;
}

static size_t put_u16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    return 2;
}

static size_t put_u32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
    return 4;
}

static size_t put_u64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
    return 8;
}

/* The signature bytes of `valuetype System.RuntimeTypeHandle` in the
 * module (a TypeRef on its core library), length first.  Returns 0, or
 * -1 when the module references no core library. */
static int runtime_type_handle(const struct assembly *asm_, IMetaDataEmit *emit, uint8_t out[8])
{
    uint32_t type_ref = core_type_ref(asm_, emit, "System.RuntimeTypeHandle");
    if (!type_ref)
        return -1;
    out[1] = 0x11; /* VALUETYPE */
    size_t len = sig_compress(type_ref, out + 2);
    if (!len)
        return -1;
    out[0] = (uint8_t)(1 + len);
    return 0;
}

/* The rewritten body of watched method `index`, into out (free with
 * il_rewritten_free).  Returns 0, or -1 with why. */
int watch_rewrite(ICorProfilerInfo15 *info, ModuleID module, const struct assembly *asm_,
                  uint32_t sigs[2], mdMethodDef token, uint32_t index, int attached,
                  struct il_rewritten *out, char *why, size_t why_size)
{
    const struct watch_method *m = &watch_methods[index];
    memset(out, 0, sizeof *out);
    LPCBYTE old = NULL;
    ULONG old_size = 0;
    if (info->lpVtbl->GetILFunctionBody(info, module, token, &old, &old_size) < 0 || !old)
        return snprintf(why, why_size, "the runtime gave no IL body"), -1;
    struct il_body body;
    if (il_parse(old, old_size, &body, why, why_size) < 0)
        return -1;
    int rc = -1;
    struct il_edit edit;
    il_edit_init(&edit);
    IMetaDataEmit *emit = emitter(info, module);
    if (!emit) {
        snprintf(why, why_size, "no metadata emitter for the module");
        goto done;
    }
    if (probe_sigs(asm_, sigs, emit) < 0) {
        snprintf(why, why_size, "the probes' signatures could not be made");
        goto done;
    }
    /* the locals: the old ones, the token (int64), the result */
    const uint8_t *old_locals = NULL;
    uint32_t old_len = 0;
    if (body.local_sig) {
        uint32_t row = body.local_sig & 0xffffff;
        if ((body.local_sig >> 24) != MD_STANDALONESIG ||
            md_blob(&asm_->md, md_get(&asm_->md, MD_STANDALONESIG, row, 0), &old_locals, &old_len) < 0) {
            snprintf(why, why_size, "its locals' signature could not be read");
            goto done;
        }
    }
    const uint8_t *blob;
    uint32_t len;
    struct sig_method sig;
    uint32_t row = token & 0xffffff;
    if (md_blob(&asm_->md, md_get(&asm_->md, MD_METHODDEF, row, MD_METHODDEF_SIGNATURE), &blob, &len) < 0 ||
        sig_method(blob, len, &sig) < 0) {
        snprintf(why, why_size, "its signature could not be read");
        goto done;
    }
    static const uint8_t i8[] = {0x0a};
    struct sig_type add[2 + WATCH_HANDLES] = {{.kind = SIG_I8, .bytes = i8, .len = 1}, sig.ret};
    uint32_t add_count = sig.ret.kind == SIG_VOID ? 1 : 2;
    /* values of T: a RuntimeTypeHandle local per type parameter, set by
     * `ldtoken !n` at entry (the probe reads the instantiation from it) */
    uint32_t handles = 0, handle_specs[WATCH_HANDLES];
    uint8_t handle_type[8];
    if (m->handles && runtime_type_handle(asm_, emit, handle_type) == 0) {
        for (uint32_t k = 0; k < m->handles && k < WATCH_HANDLES; k++)
            if (emit->lpVtbl->GetTokenFromTypeSpec(emit, m->handle_sig[k], 2, &handle_specs[k]) < 0)
                break;
            else
                handles++;
        if (handles < m->handles)
            handles = 0;
        for (uint32_t k = 0; k < handles; k++)
            add[add_count++] = (struct sig_type){.kind = SIG_VALUETYPE, .bytes = handle_type + 1,
                                                 .len = handle_type[0]};
    }
    uint8_t locals[4096];
    size_t locals_len;
    long first = sig_locals_append(old_locals, old_len, add, add_count, locals, sizeof locals,
                                   &locals_len);
    mdSignature locals_token = 0;
    if (first < 0 || emit->lpVtbl->GetTokenFromSig(emit, locals, (ULONG)locals_len, &locals_token) < 0) {
        snprintf(why, why_size, "its new locals' signature could not be made");
        goto done;
    }
    uint16_t token_local = (uint16_t)first, result_local = (uint16_t)(first + 1);
    uint16_t handle_local = (uint16_t)(first + (sig.ret.kind == SIG_VOID ? 1 : 2));
    il_edit_set_locals(&edit, locals_token);

    uint8_t s[160];
    size_t n = 0;
    for (uint32_t k = 0; k < handles; k++) {
        s[n++] = 0xd0; /* ldtoken !n */
        n += put_u32(s + n, handle_specs[k]);
        s[n++] = 0xfe; /* stloc handle k */
        s[n++] = 0x0e;
        n += put_u16(s + n, (uint16_t)(handle_local + k));
    }
    s[n++] = 0x20; /* ldc.i4 index */
    n += put_u32(s + n, index);
    /* the probe's addresses: `this`'s home first for an instance method
     * (argument 0), then the parameters' (their argument numbers follow) */
    uint32_t homes = m->taken + (m->has_this ? 1 : 0);
    for (uint32_t i = 0; i < WATCH_ARGS; i++) {
        if (i < homes) {
            s[n++] = 0xfe; /* ldarga */
            s[n++] = 0x0a;
            n += put_u16(s + n, (uint16_t)i);
        } else if (i < homes + handles) {
            s[n++] = 0xfe; /* ldloca handle */
            s[n++] = 0x0d;
            n += put_u16(s + n, (uint16_t)(handle_local + (i - homes)));
        } else {
            s[n++] = 0x16; /* ldc.i4.0 */
        }
        s[n++] = 0xe0; /* conv.u */
    }
    s[n++] = 0x21; /* ldc.i8 */
    n += put_u64(s + n, (uint64_t)(uintptr_t)&watch_enter);
    s[n++] = 0xd3; /* conv.i */
    s[n++] = 0x29; /* calli */
    n += put_u32(s + n, sigs[0]);
    s[n++] = 0xfe; /* stloc token */
    s[n++] = 0x0e;
    n += put_u16(s + n, token_local);
    if (il_edit_add(&edit, &body, 0, IL_ENTRY, 0, s, (uint32_t)n, 2 + WATCH_ARGS, why, why_size) < 0)
        goto done;

    n = 0;
    int has_result = sig.ret.kind != SIG_VOID;
    if (has_result) {
        s[n++] = 0xfe; /* stloc result */
        s[n++] = 0x0e;
        n += put_u16(s + n, result_local);
    }
    s[n++] = 0x20;
    n += put_u32(s + n, index);
    s[n++] = 0xfe; /* ldloc token */
    s[n++] = 0x0c;
    n += put_u16(s + n, token_local);
    if (has_result) {
        s[n++] = 0xfe; /* ldloca result */
        s[n++] = 0x0d;
        n += put_u16(s + n, result_local);
    } else {
        s[n++] = 0x16;
    }
    s[n++] = 0xe0;
    if (m->ret.handle && m->ret.handle <= handles) {
        s[n++] = 0xfe; /* ldloca the result's handle */
        s[n++] = 0x0d;
        n += put_u16(s + n, (uint16_t)(handle_local + m->ret.handle - 1));
    } else {
        s[n++] = 0x16;
    }
    s[n++] = 0xe0;
    s[n++] = 0x21;
    n += put_u64(s + n, (uint64_t)(uintptr_t)&watch_exit);
    s[n++] = 0xd3;
    s[n++] = 0x29;
    n += put_u32(s + n, sigs[1]);
    if (has_result) {
        s[n++] = 0xfe; /* ldloc result */
        s[n++] = 0x0c;
        n += put_u16(s + n, result_local);
    }
    for (uint32_t i = 0; i < body.count; i++) {
        if (body.instrs[i].op != 0x2a) /* ret */
            continue;
        if (il_edit_add(&edit, &body, i, IL_BEFORE, 0, s, (uint32_t)n, 6, why, why_size) < 0)
            goto done;
    }
    if (il_rewrite(&body, &edit, out, why, why_size) < 0 ||
        il_check(&body, &edit, out, why, why_size) < 0) {
        il_rewritten_free(out);
        memset(out, 0, sizeof *out);
        goto done;
    }
    rc = 0;
done:
    if (emit) {
        if (attached)
            info->lpVtbl->ApplyMetaData(info, module); /* the new signatures, after an attach */
        emit->lpVtbl->Release(emit);
    }
    il_edit_free(&edit);
    il_body_free(&body);
    return rc;
}
