/*
 * watch: live probes (`corscope watch PATTERN`): the methods a pattern
 * names get, at entry and before each return, a call to a native probe
 * (watch.h, watch_probe.c) that reads their arguments, return value and
 * time; the loop pairs each return with its entry and sends corscope one
 * line per call over the control socket ("call TID START DURATION TEXT").
 *
 * Finding the methods.  Each module's assembly is read from its file
 * (common/pdb/assembly.h, no runtime call) and every method with a body
 * whose "Namespace.Type.Method" matches the pattern (fnmatch; a pattern
 * may leave out leading namespaces) is taken, overloads all; compiler-
 * generated methods only when named exactly.  The framework's assemblies
 * are looked at only when the pattern starts with System. or Microsoft.
 * Past --max-methods nothing is rewritten and corscope is told; when
 * nothing matches, it is told the nearest names.
 *
 * Rewriting.  Launched: the new IL is given at the method's first
 * JITCompilationStarted (SetILFunctionBody, as coverage does), its
 * ReadyToRun code and inlining into callers refused, so every call is
 * seen.  Attached: RequestReJITWithInliners (callers that inlined it are
 * rejitted too) from the loop thread, the IL given in GetReJITParameters;
 * at the stop, RequestRevert restores the original code, the probes go
 * quiet (a frame still inside the old code calls a probe that returns at
 * once: the library stays loaded, see watch_init) and the agent detaches.
 * The probes' two StandAloneSigs and each method's new local signature are
 * made with IMetaDataEmit::GetTokenFromSig (ApplyMetaData after attach).
 * A body the engine refuses (il.h) or the runtime rejects is left as it
 * was and said so.
 *
 * Calls that throw have no return: their entries wait in a bounded table
 * and are counted as unfinished (thrown, or still running at the end).
 */
#include <dlfcn.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agent/agent.h"
#include "agent/control_client.h"
#include "agent/evq.h"
#include "agent/il/il.h"
#include "agent/log.h"
#include "agent/sources/watch.h"
#include "clr/clr_guids.h"
#include "common/clock.h"
#include "common/mem.h"
#include "common/pdb/assembly.h"
#include "common/pdb/meta.h"
#include "common/utf.h"

#define MAX_MODULES 512
#define MAX_PENDING 1024
#define NEAR_NAMES 5
#define OUTBOX 1024   /* call lines waiting for room in the control socket */

enum { M_UNKNOWN, M_BUSY, M_DONE, M_LEFT };

struct wmodule {
    ModuleID id;
    struct assembly a;
    int framework;
    uint32_t enter_sig, exit_sig; /* StandAloneSig tokens of the probes' calli, 0 until made */
};

struct wmethod {
    uint32_t module;              /* index in modules */
    mdMethodDef token;
    _Atomic int state;
};

struct pending {
    pid_t tid;
    uint32_t method;
    uint64_t token;
    char text[700];
};

static struct {
    ICorProfilerInfo15 *info;
    int attached;
    char pattern[CONFIG_WATCH_MAX];
    int framework_too;
    uint32_t max_methods;
    struct wmodule *modules[MAX_MODULES];
    _Atomic uint32_t module_count;
    pthread_mutex_t lock;         /* appending modules and methods */
    struct wmethod methods[WATCH_MAX_METHODS];
    _Atomic uint32_t method_count;
    int too_many;                 /* matches past max_methods: nothing more rewritten */
    uint32_t matched_total;
    _Atomic uint64_t rewritten, left;
    /* loop only */
    struct pending pending[MAX_PENDING];
    uint32_t pending_count;
    uint64_t calls, unfinished, unpaired, unsent;
    int reverted;
    char outbox[OUTBOX][CONTROL_MESSAGE_MAX];
    uint16_t outbox_len[OUTBOX];
    uint32_t outbox_head, outbox_count;
    uint64_t again_at[2];         /* attached: when to ask for the ReJIT again */
} W;

/* ---- names ------------------------------------------------------------------------ */

/* strncpy that always terminates (and says nothing of truncation) */
static void copy(char *out, size_t size, const char *in)
{
    size_t n = strlen(in);
    if (n >= size)
        n = size - 1;
    memcpy(out, in, n);
    out[n] = '\0';
}

static const char *last_dot(const char *s)
{
    const char *d = strrchr(s, '.');
    return d ? d + 1 : s;
}

/* A TypeDef/TypeRef/TypeSpec token's short name. */
static void token_name(const struct assembly *a, uint32_t token, char *out, size_t size)
{
    uint32_t row = token & 0xffffff;
    out[0] = '\0';
    if ((token >> 24) == MD_TYPEDEF && row && row <= a->type_count) {
        char full[256];
        assembly_type_name(a, row, full, sizeof full);
        copy(out, size, last_dot(full));
    } else if ((token >> 24) == MD_TYPEREF) {
        snprintf(out, size, "%s", md_string(&a->md, md_get(&a->md, MD_TYPEREF, row, MD_TYPEREF_NAME)));
    }
    char *tick = strchr(out, '`');
    if (tick)
        *tick = '\0';
    if (!out[0])
        snprintf(out, size, "?");
}

static int token_is(const struct assembly *a, uint32_t token, const char *ns, const char *name)
{
    uint32_t row = token & 0xffffff;
    if ((token >> 24) == MD_TYPEREF)
        return !strcmp(md_string(&a->md, md_get(&a->md, MD_TYPEREF, row, MD_TYPEREF_NAMESPACE)), ns) &&
               !strcmp(md_string(&a->md, md_get(&a->md, MD_TYPEREF, row, MD_TYPEREF_NAME)), name);
    if ((token >> 24) == MD_TYPEDEF && row && row <= a->type_count)
        return !strcmp(md_string(&a->md, md_get(&a->md, MD_TYPEDEF, row, MD_TYPEDEF_NAMESPACE)), ns) &&
               !strcmp(md_string(&a->md, md_get(&a->md, MD_TYPEDEF, row, MD_TYPEDEF_NAME)), name);
    return 0;
}

static const char *const keywords[] = {
    [SIG_VOID] = "void", [SIG_BOOL] = "bool", [SIG_CHAR] = "char", [SIG_I1] = "sbyte",
    [SIG_U1] = "byte", [SIG_I2] = "short", [SIG_U2] = "ushort", [SIG_I4] = "int",
    [SIG_U4] = "uint", [SIG_I8] = "long", [SIG_U8] = "ulong", [SIG_R4] = "float",
    [SIG_R8] = "double", [SIG_I] = "nint", [SIG_U] = "nuint", [SIG_STRING] = "string",
};

/* A type's short name for showing ("Order", "int[]", "ref int", "T"). */
static void type_text(const struct assembly *a, const struct sig_type *t, char *out, size_t size)
{
    const uint8_t *p = t->bytes, *end = t->bytes + t->len;
    while (p < end && (*p == 0x1f || *p == 0x20 || *p == 0x45)) { /* modifiers, pinned */
        uint8_t b = *p++;
        uint32_t skip;
        if (b != 0x45 && md_uncompress(&p, end, &skip) < 0)
            break;
    }
    struct sig_type inner;
    const uint8_t *q = p + 1;
    char sub[48];
    if (t->kind < sizeof keywords / sizeof keywords[0] && keywords[t->kind]) {
        snprintf(out, size, "%s", keywords[t->kind]);
    } else if (t->kind == SIG_OBJECT && t->array && p < end && *p == 0x1d &&
               sig_type(&q, end, &inner) == 0) {
        type_text(a, &inner, sub, sizeof sub);
        snprintf(out, size, "%.40s[]", sub);
    } else if (t->kind == SIG_OBJECT && t->array) {
        snprintf(out, size, "Array");
    } else if (t->kind == SIG_OBJECT && !t->token) {
        snprintf(out, size, "object");
    } else if (t->kind == SIG_OBJECT || t->kind == SIG_VALUETYPE) {
        token_name(a, t->token, out, size);
    } else if (t->kind == SIG_BYREF && p < end && sig_type(&q, end, &inner) == 0) {
        type_text(a, &inner, sub, sizeof sub);
        snprintf(out, size, "ref %.40s", sub);
    } else if (t->kind == SIG_GENERIC) {
        snprintf(out, size, "T");
    } else if (t->kind == SIG_POINTER) {
        snprintf(out, size, "pointer");
    } else {
        snprintf(out, size, "?");
    }
}

static void describe(const struct assembly *a, const struct sig_type *t, struct watch_value *v)
{
    static const uint8_t sizes[] = {
        [SIG_BOOL] = 1, [SIG_I1] = 1, [SIG_U1] = 1, [SIG_CHAR] = 2, [SIG_I2] = 2, [SIG_U2] = 2,
        [SIG_I4] = 4, [SIG_U4] = 4, [SIG_R4] = 4, [SIG_I8] = 8, [SIG_U8] = 8, [SIG_R8] = 8,
        [SIG_I] = 8, [SIG_U] = 8, [SIG_POINTER] = 8,
    };
    v->kind = t->kind;
    type_text(a, t, v->type, sizeof v->type);
    if (t->kind < sizeof sizes && sizes[t->kind]) {
        v->read = WATCH_READ_BYTES;
        v->size = sizes[t->kind];
    } else if (t->kind == SIG_STRING) {
        v->read = WATCH_READ_STRING;
    } else if (t->kind == SIG_OBJECT) {
        v->read = t->array ? WATCH_READ_ARRAY : WATCH_READ_REF;
    } else if (t->kind == SIG_VALUETYPE && token_is(a, t->token, "System", "Decimal")) {
        v->read = WATCH_READ_BYTES;
        v->size = 16;
        v->decimal = 1;
    } else {
        v->read = WATCH_READ_NONE;
    }
}

/* "Namespace.Type.Method" of a MethodDef row. */
static void full_name(const struct assembly *a, uint32_t row, char *out, size_t size)
{
    char type[512];
    assembly_type_name(a, a->methods[row - 1].type, type, sizeof type);
    snprintf(out, size, "%s.%s", type, assembly_method_name(a, row));
}

static int pattern_matches(const char *pattern, const char *name)
{
    if (!fnmatch(pattern, name, 0))
        return 1;
    char suffix[CONFIG_WATCH_MAX + 4];
    snprintf(suffix, sizeof suffix, "*.%s", pattern);
    return !fnmatch(suffix, name, 0);
}

/* ---- finding the methods ------------------------------------------------------------ */

static int has_body(const struct assembly *a, uint32_t row)
{
    return md_get(&a->md, MD_METHODDEF, row, MD_METHODDEF_RVA) != 0;
}

/* Fills watch_methods[index] for a MethodDef row.  Returns 0, or -1 with why. */
static int describe_method(const struct assembly *a, uint32_t row, uint32_t index, char *why,
                           size_t why_size)
{
    struct watch_method *m = &watch_methods[index];
    const uint8_t *blob;
    uint32_t len;
    struct sig_method sig;
    if (md_blob(&a->md, md_get(&a->md, MD_METHODDEF, row, MD_METHODDEF_SIGNATURE), &blob, &len) < 0 ||
        sig_method(blob, len, &sig) < 0)
        return snprintf(why, why_size, "its signature could not be read"), -1;
    if (sig.vararg)
        return snprintf(why, why_size, "a varargs method"), -1;
    if (sig.ret.kind == SIG_OTHER)
        return snprintf(why, why_size, "its return type cannot be kept in a local"), -1;
    char type[512];
    assembly_type_name(a, a->methods[row - 1].type, type, sizeof type);
    snprintf(m->display, sizeof m->display, "%.80s.%.70s", last_dot(type), assembly_method_name(a, row));
    m->params = sig.param_count;
    m->taken = sig.param_count < WATCH_ARGS ? sig.param_count : WATCH_ARGS;
    m->has_this = sig.has_this;
    for (uint32_t i = 0; i < m->taken; i++) {
        describe(a, &sig.params[i], &m->args[i]);
        snprintf(m->args[i].name, sizeof m->args[i].name, "arg%u", i + 1);
    }
    describe(a, &sig.ret, &m->ret);
    /* parameter names: Param rows [ParamList, next method's ParamList) */
    uint32_t first = md_get(&a->md, MD_METHODDEF, row, MD_METHODDEF_PARAMLIST);
    uint32_t end = row < md_rows(&a->md, MD_METHODDEF)
                       ? md_get(&a->md, MD_METHODDEF, row + 1, MD_METHODDEF_PARAMLIST)
                       : md_rows(&a->md, MD_PARAM) + 1;
    for (uint32_t p = first; p && p < end && p <= md_rows(&a->md, MD_PARAM); p++) {
        uint32_t seq = md_get(&a->md, MD_PARAM, p, 1);
        if (seq >= 1 && seq <= m->taken)
            snprintf(m->args[seq - 1].name, sizeof m->args[seq - 1].name, "%s",
                     md_string(&a->md, md_get(&a->md, MD_PARAM, p, 2)));
    }
    return 0;
}

/* Takes the methods of module mi the pattern names.  Returns how many. */
static uint32_t match_module(uint32_t mi)
{
    struct wmodule *wm = W.modules[mi];
    const struct assembly *a = &wm->a;
    const char *method_part = last_dot(W.pattern);
    int literal_generated = method_part[0] == '<' || method_part[0] == '.';
    uint32_t found = 0;
    char name[768], why[160];
    for (uint32_t row = 1; row <= a->method_count; row++) {
        full_name(a, row, name, sizeof name);
        if (!pattern_matches(W.pattern, name) || !has_body(a, row))
            continue;
        const char *mname = assembly_method_name(a, row);
        int generated = mname[0] == '<' || mname[0] == '.' || strchr(name, '<');
        if (generated && !literal_generated && strcmp(last_dot(name), method_part))
            continue;
        W.matched_total++;
        if (W.too_many)
            continue;
        uint32_t n = atomic_load(&W.method_count);
        if (n >= W.max_methods) {
            W.too_many = 1;
            continue;
        }
        if (describe_method(a, row, n, why, sizeof why) < 0) {
            log_warn("watch: %s is not watched: %s", name, why);
            continue;
        }
        W.methods[n].module = mi;
        W.methods[n].token = md_token(MD_METHODDEF, row);
        atomic_store(&W.methods[n].state, M_UNKNOWN);
        atomic_store_explicit(&W.method_count, n + 1, memory_order_release);
        found++;
    }
    return found;
}

static void module_loaded(ModuleID id)
{
    LPCBYTE base;
    ULONG len = 0;
    AssemblyID assembly_id;
    DWORD flags = 0;
    WCHAR wname[PATH_MAX];
    if (W.info->lpVtbl->GetModuleInfo2(W.info, id, &base, PATH_MAX, &len, wname, &assembly_id,
                                       &flags) < 0 ||
        (flags & (COR_PRF_MODULE_DYNAMIC | COR_PRF_MODULE_RESOURCE)) || len <= 1)
        return;
    char path[PATH_MAX];
    utf16_to_utf8(wname, len, path, sizeof path);
    if (path[0] != '/')
        return;
    int framework = strstr(path, "/shared/Microsoft.") != NULL;
    if (framework && !W.framework_too)
        return;
    struct wmodule *wm = mem_calloc(1, sizeof *wm);
    char why[256];
    if (!wm)
        return;
    if (assembly_open(&wm->a, path, why, sizeof why) < 0) {
        log_debug("watch: %s: %s", path, why);
        mem_free(wm);
        return;
    }
    wm->id = id;
    wm->framework = framework;
    pthread_mutex_lock(&W.lock);
    uint32_t mi = atomic_load(&W.module_count);
    if (mi >= MAX_MODULES) {
        pthread_mutex_unlock(&W.lock);
        assembly_close(&wm->a);
        mem_free(wm);
        return;
    }
    W.modules[mi] = wm;
    atomic_store_explicit(&W.module_count, mi + 1, memory_order_release);
    int was_too_many = W.too_many;
    uint32_t found = match_module(mi);
    int now_too_many = W.too_many && !was_too_many;
    pthread_mutex_unlock(&W.lock);
    if (found)
        log_debug("watch: %s: %u methods", path, found);
    if (now_too_many)
        control_client_send("watch too-many %u %u", W.matched_total, W.max_methods);
}

/* ---- the new IL -------------------------------------------------------------------- */

static IMetaDataEmit *emitter(ModuleID module)
{
    IUnknown *unk = NULL;
    if (W.info->lpVtbl->GetModuleMetaData(W.info, module, ofRead | ofWrite, &IID_IMetaDataEmit,
                                          &unk) < 0 || !unk)
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

/* The probes' calli signatures in a module: unmanaged, with
 * modopt(CallConvSuppressGCTransition) on the return type when the module
 * references a core library to name it from -- the thread then stays in
 * cooperative mode (no transition frame: a probe costs tens of
 * nanoseconds less, and no collection can move an object the probe
 * reads); else plain cdecl, with the transition. */
static int probe_sigs(struct wmodule *wm, IMetaDataEmit *emit)
{
    if (wm->enter_sig && wm->exit_sig)
        return 0;
    uint8_t modopt[8];
    size_t mod_len = 0;
    uint32_t scope = core_library(&wm->a);
    static const char name[] = "System.Runtime.CompilerServices.CallConvSuppressGCTransition";
    WCHAR wname[sizeof name];
    for (size_t i = 0; i < sizeof name; i++)
        wname[i] = (WCHAR)name[i];
    mdTypeRef type_ref = 0;
    if (scope && emit->lpVtbl->DefineTypeRefByName(emit, scope, wname, &type_ref) >= 0 &&
        (type_ref >> 24) == MD_TYPEREF) {
        modopt[0] = 0x20; /* CMOD_OPT */
        mod_len = 1 + sig_compress((type_ref & 0xffffff) << 2 | 1, modopt + 1);
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
    /* void (int32, int64, native int) */
    uint8_t leave[16];
    size_t m = 0;
    leave[m++] = cc;
    leave[m++] = 3;
    memcpy(leave + m, modopt, mod_len);
    m += mod_len;
    leave[m++] = 0x01;
    leave[m++] = 0x08;
    leave[m++] = 0x0a;
    leave[m++] = 0x18;
    mdSignature a = 0, b = 0;
    if (emit->lpVtbl->GetTokenFromSig(emit, enter, (ULONG)n, &a) < 0 ||
        emit->lpVtbl->GetTokenFromSig(emit, leave, (ULONG)m, &b) < 0)
        return -1;
    wm->enter_sig = a;
    wm->exit_sig = b;
    log_debug("watch: %s: probes called %s", wm->a.name,
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

/* The rewritten body of watched method `index`, into out (free with
 * il_rewritten_free).  Returns 0, or -1 with why. */
static int rewrite(uint32_t index, struct il_rewritten *out, char *why, size_t why_size)
{
    struct wmethod *wmth = &W.methods[index];
    struct wmodule *wm = W.modules[wmth->module];
    const struct watch_method *m = &watch_methods[index];
    memset(out, 0, sizeof *out);
    LPCBYTE old = NULL;
    ULONG old_size = 0;
    if (W.info->lpVtbl->GetILFunctionBody(W.info, wm->id, wmth->token, &old, &old_size) < 0 || !old)
        return snprintf(why, why_size, "the runtime gave no IL body"), -1;
    struct il_body body;
    if (il_parse(old, old_size, &body, why, why_size) < 0)
        return -1;
    int rc = -1;
    struct il_edit edit;
    il_edit_init(&edit);
    IMetaDataEmit *emit = emitter(wm->id);
    if (!emit) {
        snprintf(why, why_size, "no metadata emitter for the module");
        goto done;
    }
    if (probe_sigs(wm, emit) < 0) {
        snprintf(why, why_size, "the probes' signatures could not be made");
        goto done;
    }
    /* the locals: the old ones, the token (int64), the result */
    const uint8_t *old_locals = NULL;
    uint32_t old_len = 0;
    if (body.local_sig) {
        uint32_t row = body.local_sig & 0xffffff;
        if ((body.local_sig >> 24) != MD_STANDALONESIG ||
            md_blob(&wm->a.md, md_get(&wm->a.md, MD_STANDALONESIG, row, 0), &old_locals, &old_len) < 0) {
            snprintf(why, why_size, "its locals' signature could not be read");
            goto done;
        }
    }
    const uint8_t *blob;
    uint32_t len;
    struct sig_method sig;
    uint32_t row = wmth->token & 0xffffff;
    if (md_blob(&wm->a.md, md_get(&wm->a.md, MD_METHODDEF, row, MD_METHODDEF_SIGNATURE), &blob, &len) < 0 ||
        sig_method(blob, len, &sig) < 0) {
        snprintf(why, why_size, "its signature could not be read");
        goto done;
    }
    static const uint8_t i8[] = {0x0a};
    struct sig_type add[2] = {{.kind = SIG_I8, .bytes = i8, .len = 1}, sig.ret};
    uint32_t add_count = sig.ret.kind == SIG_VOID ? 1 : 2;
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
    il_edit_set_locals(&edit, locals_token);

    uint8_t s[128];
    size_t n = 0;
    s[n++] = 0x20; /* ldc.i4 index */
    n += put_u32(s + n, index);
    for (uint32_t i = 0; i < WATCH_ARGS; i++) {
        if (i < m->taken) {
            s[n++] = 0xfe; /* ldarga */
            s[n++] = 0x0a;
            n += put_u16(s + n, (uint16_t)(i + (m->has_this ? 1 : 0)));
        } else {
            s[n++] = 0x16; /* ldc.i4.0 */
        }
        s[n++] = 0xe0; /* conv.u */
    }
    s[n++] = 0x21; /* ldc.i8 */
    n += put_u64(s + n, (uint64_t)(uintptr_t)&watch_enter);
    s[n++] = 0xd3; /* conv.i */
    s[n++] = 0x29; /* calli */
    n += put_u32(s + n, wm->enter_sig);
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
    s[n++] = 0x21;
    n += put_u64(s + n, (uint64_t)(uintptr_t)&watch_exit);
    s[n++] = 0xd3;
    s[n++] = 0x29;
    n += put_u32(s + n, wm->exit_sig);
    if (has_result) {
        s[n++] = 0xfe; /* ldloc result */
        s[n++] = 0x0c;
        n += put_u16(s + n, result_local);
    }
    for (uint32_t i = 0; i < body.count; i++) {
        if (body.instrs[i].op != 0x2a) /* ret */
            continue;
        if (il_edit_add(&edit, &body, i, IL_BEFORE, 0, s, (uint32_t)n, 5, why, why_size) < 0)
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
        if (W.attached)
            W.info->lpVtbl->ApplyMetaData(W.info, wm->id);
        emit->lpVtbl->Release(emit);
    }
    il_edit_free(&edit);
    il_body_free(&body);
    return rc;
}

static void left_alone(uint32_t index, const char *why)
{
    atomic_store(&W.methods[index].state, M_LEFT);
    atomic_fetch_add(&W.left, 1);
    log_warn("watch: %s is not watched: %s", watch_methods[index].display, why);
}

/* Launched: the method's first compilation. */
static long find_method(ModuleID module, mdToken token)
{
    uint32_t n = atomic_load_explicit(&W.method_count, memory_order_acquire);
    for (uint32_t i = 0; i < n; i++)
        if (W.methods[i].token == token && W.modules[W.methods[i].module]->id == module)
            return (long)i;
    return -1;
}

static void jit_started(struct source *s, FunctionID f, int dynamic)
{
    (void)s;
    if (dynamic || W.attached)
        return;
    ClassID klass;
    ModuleID module;
    mdToken token;
    if (W.info->lpVtbl->GetFunctionInfo(W.info, f, &klass, &module, &token) < 0)
        return;
    long i = find_method(module, token);
    if (i < 0)
        return;
    int st = M_UNKNOWN;
    if (!atomic_compare_exchange_strong(&W.methods[i].state, &st, M_BUSY))
        return; /* done: every later compilation reads the new IL (or another instantiation
                 * is at it: one compilation of that instantiation may miss its probes) */
    char why[256];
    struct il_rewritten out;
    if (rewrite((uint32_t)i, &out, why, sizeof why) < 0) {
        left_alone((uint32_t)i, why);
        return;
    }
    IMethodMalloc *alloc = NULL;
    void *fresh = NULL;
    if (W.info->lpVtbl->GetILFunctionBodyAllocator(W.info, module, &alloc) >= 0 && alloc) {
        fresh = alloc->lpVtbl->Alloc(alloc, (ULONG)out.size);
        alloc->lpVtbl->Release(alloc);
    }
    HRESULT hr = E_FAIL;
    if (fresh) {
        memcpy(fresh, out.body, out.size);
        hr = W.info->lpVtbl->SetILFunctionBody(W.info, module, token, fresh);
    }
    il_rewritten_free(&out);
    if (hr < 0) {
        snprintf(why, sizeof why, "the runtime refused the new body (0x%08x)", (unsigned)hr);
        left_alone((uint32_t)i, why);
        return;
    }
    atomic_store(&W.methods[i].state, M_DONE);
    atomic_fetch_add(&W.rewritten, 1);
}

static void jit_inlining(struct source *s, FunctionID caller, FunctionID callee, BOOL *should_inline)
{
    (void)s;
    (void)caller;
    ClassID klass;
    ModuleID module;
    mdToken token;
    if (!W.attached && W.info->lpVtbl->GetFunctionInfo(W.info, callee, &klass, &module, &token) >= 0 &&
        find_method(module, token) >= 0)
        *should_inline = FALSE;
}

static void r2r_lookup(struct source *s, FunctionID f, BOOL *use_cached)
{
    (void)s;
    ClassID klass;
    ModuleID module;
    mdToken token;
    if (W.info->lpVtbl->GetFunctionInfo(W.info, f, &klass, &module, &token) >= 0 &&
        find_method(module, token) >= 0)
        *use_cached = FALSE;
}

/* Attached: GetReJITParameters of a method asked for. */
static void rejit_parameters(struct source *s, ModuleID module, mdMethodDef method,
                             ICorProfilerFunctionControl *control)
{
    (void)s;
    long i = find_method(module, method);
    if (i < 0)
        return;
    char why[256];
    struct il_rewritten out;
    if (rewrite((uint32_t)i, &out, why, sizeof why) < 0) {
        left_alone((uint32_t)i, why);
        return;
    }
    HRESULT hr = control->lpVtbl->SetILFunctionBody(control, (ULONG)out.size, out.body);
    il_rewritten_free(&out);
    if (hr < 0) {
        snprintf(why, sizeof why, "the runtime refused the new body (0x%08x)", (unsigned)hr);
        left_alone((uint32_t)i, why);
        return;
    }
    int st = M_UNKNOWN;
    if (atomic_compare_exchange_strong(&W.methods[i].state, &st, M_DONE))
        atomic_fetch_add(&W.rewritten, 1);
}

static void rejit_error(struct source *s, ModuleID module, mdMethodDef method, HRESULT status)
{
    (void)s;
    long i = find_method(module, method);
    if (i >= 0) {
        char why[64];
        snprintf(why, sizeof why, "ReJIT failed (0x%08x)", (unsigned)status);
        left_alone((uint32_t)i, why);
    }
}

static void load(struct source *s, enum source_load_kind kind, int finished, uintptr_t id,
                 HRESULT status)
{
    (void)s;
    if (!W.attached && kind == SOURCE_LOAD_MODULE && finished && status >= 0)
        module_loaded((ModuleID)id);
}

/* ---- near names ---------------------------------------------------------------------- */

static unsigned distance(const char *a, const char *b)
{
    size_t n = strlen(a), m = strlen(b);
    if (n > 200 || m > 200)
        return 1000;
    unsigned row[201];
    for (size_t j = 0; j <= m; j++)
        row[j] = (unsigned)j;
    for (size_t i = 1; i <= n; i++) {
        unsigned prev = row[0];
        row[0] = (unsigned)i;
        for (size_t j = 1; j <= m; j++) {
            unsigned cur = row[j];
            unsigned cost = a[i - 1] == b[j - 1] ? 0 : 1;
            unsigned best = prev + cost;
            if (row[j] + 1 < best)
                best = row[j] + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            prev = cur;
        }
    }
    return row[m];
}

/* Tells corscope that nothing matched, with the nearest method names. */
static void say_none(void)
{
    struct {
        unsigned d;
        char name[200];
    } best[NEAR_NAMES];
    int count = 0;
    char name[768];
    uint32_t modules = atomic_load(&W.module_count);
    for (uint32_t mi = 0; mi < modules; mi++) {
        const struct assembly *a = &W.modules[mi]->a;
        for (uint32_t row = 1; row <= a->method_count; row++) {
            full_name(a, row, name, sizeof name);
            if (strchr(name, '<') || !has_body(a, row))
                continue;
            /* compare as many trailing parts as the pattern has */
            const char *tail = name;
            int dots = 0;
            for (const char *c = W.pattern; *c; c++)
                dots += *c == '.';
            for (const char *c = name + strlen(name); c > name; c--)
                if (c[-1] == '.' && dots-- == 0) {
                    tail = c;
                    break;
                }
            unsigned d = distance(W.pattern, tail);
            int dup = 0;
            for (int k = 0; k < count; k++)
                dup |= !strcmp(best[k].name, name);
            if (dup)
                continue;
            int at = count;
            while (at > 0 && best[at - 1].d > d)
                at--;
            if (at >= NEAR_NAMES)
                continue;
            if (count < NEAR_NAMES)
                count++;
            memmove(&best[at + 1], &best[at], (size_t)(count - 1 - at) * sizeof best[0]);
            best[at].d = d;
            copy(best[at].name, sizeof best[at].name, name);
        }
    }
    char text[900];
    size_t o = 0;
    for (int k = 0; k < count && o < sizeof text; k++)
        o += (size_t)snprintf(text + o, sizeof text - o, "%s%s", k ? ", " : "", best[k].name);
    text[sizeof text - 1] = '\0';
    control_client_send("watch none %s", count ? text : "-");
}

/* ---- the loop ------------------------------------------------------------------------ */

/* Sends what waits in the outbox, as much as the socket takes now. */
static void flush_outbox(void)
{
    while (W.outbox_count) {
        int rc = control_client_try_send(W.outbox[W.outbox_head], W.outbox_len[W.outbox_head]);
        if (rc < 0)
            return; /* full: corscope reads it, the next cycle tries again */
        if (rc > 0)
            W.unsent++;
        W.outbox_head = (W.outbox_head + 1) % OUTBOX;
        W.outbox_count--;
    }
}

static void send_call(pid_t tid, uint64_t start, uint64_t duration, const char *text)
{
    W.calls++;
    flush_outbox();
    if (W.outbox_count == OUTBOX) {
        W.unsent++; /* corscope is not reading: bounded, counted */
        return;
    }
    uint32_t slot = (W.outbox_head + W.outbox_count) % OUTBOX;
    int n = snprintf(W.outbox[slot], CONTROL_MESSAGE_MAX, "call %d %llu %llu %s", (int)tid,
                     (unsigned long long)start, (unsigned long long)duration, text);
    if (n < 0)
        return;
    W.outbox_len[slot] = (uint16_t)(n < CONTROL_MESSAGE_MAX ? n : CONTROL_MESSAGE_MAX - 1);
    W.outbox_count++;
    flush_outbox();
}

static HRESULT request_rejit(uint32_t n);

static uint64_t cycle(struct agent *a, struct source *s, uint64_t now)
{
    (void)a;
    (void)s;
    flush_outbox();
    for (int k = 0; k < 2; k++)
        if (W.again_at[k] && now >= W.again_at[k]) {
            W.again_at[k] = 0;
            uint32_t n = atomic_load(&W.method_count);
            if (n && atomic_load(&watch_probe.active) && !W.reverted) {
                HRESULT hr = request_rejit(n);
                log_debug("watch: ReJIT asked again (0x%08x)", (unsigned)hr);
            }
        }
    return W.outbox_count ? now + 2000000 : 0;
}

static void on_enter(const struct evq_entry *e, uint32_t method, uint32_t count)
{
    const struct watch_method *m = &watch_methods[method];
    if (W.pending_count == MAX_PENDING) {
        memmove(&W.pending[0], &W.pending[1], (MAX_PENDING - 1) * sizeof W.pending[0]);
        W.pending_count--;
        W.unfinished++;
    }
    struct pending *p = &W.pending[W.pending_count++];
    p->tid = e->tid;
    p->method = method;
    p->token = e->payload[1];
    size_t o = (size_t)snprintf(p->text, sizeof p->text, "%s(", m->display);
    uint32_t pos = 2;
    for (uint32_t i = 0; i < count && i < m->taken; i++) {
        struct watch_decoded d;
        char value[200];
        if (watch_decode_value(e->payload, e->words, &pos, &d) < 0)
            break;
        watch_format_value(&m->args[i], &d, value, sizeof value);
        if (o < sizeof p->text)
            o += (size_t)snprintf(p->text + o, sizeof p->text - o, "%s%s=%s", i ? ", " : "",
                                  m->args[i].name, value);
    }
    if (m->params > m->taken && o < sizeof p->text)
        o += (size_t)snprintf(p->text + o, sizeof p->text - o, ", ...");
    if (o < sizeof p->text)
        snprintf(p->text + o, sizeof p->text - o, ")");
}

static void on_exit_entry(const struct evq_entry *e, uint32_t method)
{
    uint64_t token = e->payload[1];
    for (uint32_t k = W.pending_count; k-- > 0;) {
        struct pending *p = &W.pending[k];
        if (p->tid != e->tid || p->token != token || p->method != method)
            continue;
        const struct watch_method *m = &watch_methods[method];
        char line[1000];
        size_t o = (size_t)snprintf(line, sizeof line, "%s", p->text);
        if (m->ret.kind != SIG_VOID && o < sizeof line) {
            uint32_t pos = 2;
            struct watch_decoded d;
            char value[200];
            if (watch_decode_value(e->payload, e->words, &pos, &d) == 0) {
                watch_format_value(&m->ret, &d, value, sizeof value);
                snprintf(line + o, sizeof line - o, " = %s", value);
            }
        }
        send_call(e->tid, token, e->time > token ? e->time - token : 0, line);
        /* the same thread's later entries never returned (they threw) */
        uint32_t kept = 0;
        for (uint32_t j = 0; j < W.pending_count; j++) {
            if (j == k)
                continue;
            if (j > k && W.pending[j].tid == e->tid) {
                W.unfinished++;
                continue;
            }
            if (kept != j)
                W.pending[kept] = W.pending[j];
            kept++;
        }
        W.pending_count = kept;
        return;
    }
    W.unpaired++;
}

static void entry(struct agent *a, struct source *s, const struct evq_entry *e)
{
    (void)a;
    (void)s;
    if (e->words < 2)
        return;
    uint32_t method = (uint32_t)e->payload[0];
    uint32_t count = (uint32_t)(e->payload[0] >> 32);
    if (method >= atomic_load(&W.method_count))
        return;
    if (e->kind == WATCH_ENTRY_ENTER)
        on_enter(e, method, count);
    else if (e->kind == WATCH_ENTRY_EXIT)
        on_exit_entry(e, method);
}

/* Asks the runtime to rejit the n methods and the methods that inlined
 * them. */
static HRESULT request_rejit(uint32_t n)
{
    static ModuleID mods[WATCH_MAX_METHODS];
    static mdMethodDef toks[WATCH_MAX_METHODS];
    for (uint32_t i = 0; i < n; i++) {
        mods[i] = W.modules[W.methods[i].module]->id;
        toks[i] = W.methods[i].token;
    }
    return W.info->lpVtbl->RequestReJITWithInliners(W.info, COR_PRF_REJIT_BLOCK_INLINING, n, mods,
                                                    toks);
}

/* Attached: the methods of the modules loaded now, rejitted. */
static int start(struct agent *a, struct source *s)
{
    (void)a;
    (void)s;
    if (!W.attached)
        return 0;
    ICorProfilerModuleEnum *modules = NULL;
    if (W.info->lpVtbl->EnumModules(W.info, &modules) >= 0 && modules) {
        ModuleID ids[64];
        ULONG got = 0;
        while (modules->lpVtbl->Next(modules, 64, ids, &got) >= 0 && got)
            for (ULONG i = 0; i < got; i++)
                module_loaded(ids[i]);
        modules->lpVtbl->Release(modules);
    }
    uint32_t n = atomic_load(&W.method_count);
    if (W.too_many)
        return 0; /* said (module_loaded) */
    if (!n) {
        say_none();
        return 0;
    }
    HRESULT hr = request_rejit(n);
    if (hr < 0) {
        log_warn("watch: the runtime refused to rejit the methods (0x%08x)", (unsigned)hr);
        control_client_send("watch failed rejit 0x%08x", (unsigned)hr);
        return 0;
    }
    control_client_send("watch methods %u", n);
    /* a caller being compiled (tier 1) while the request is made can be
     * installed with the original method inlined, after the runtime
     * looked for inliners: ask again a little later (seen on .NET 10: a
     * service attached to as it tiered up showed no call) */
    uint64_t now = clock_now_ns();
    W.again_at[0] = now + 1000000000ull;
    W.again_at[1] = now + 3000000000ull;
    return 0;
}

static void stop(struct agent *a, struct source *s)
{
    (void)a;
    (void)s;
    atomic_store(&watch_probe.active, 0);
    W.again_at[0] = W.again_at[1] = 0;
    uint32_t n = atomic_load(&W.method_count);
    if (W.attached && n && !W.too_many && !W.reverted) {
        ModuleID mods[WATCH_MAX_METHODS];
        mdMethodDef toks[WATCH_MAX_METHODS];
        for (uint32_t i = 0; i < n; i++) {
            mods[i] = W.modules[W.methods[i].module]->id;
            toks[i] = W.methods[i].token;
        }
        HRESULT hr = W.info->lpVtbl->RequestRevert(W.info, n, mods, toks, NULL);
        if (hr < 0)
            log_warn("watch: RequestRevert failed (0x%08x); the probes stay, quiet", (unsigned)hr);
        W.reverted = 1;
    }
    watch_probe_quiesce();
}

static void finish(struct agent *a, struct source *s)
{
    (void)a;
    (void)s;
    if (!W.attached && !W.too_many && !atomic_load(&W.method_count))
        say_none();
    W.unfinished += W.pending_count;
    W.pending_count = 0;
    for (int i = 0; i < 500 && W.outbox_count; i++) { /* at most 1 s for corscope to read */
        flush_outbox();
        if (W.outbox_count) {
            struct timespec ts = {0, 2000000};
            nanosleep(&ts, NULL);
        }
    }
    W.unsent += W.outbox_count;
    W.outbox_count = 0;
    for (int i = 0; i < 100; i++) { /* the last word must arrive */
        char end[256];
        int n = snprintf(end, sizeof end, "watch end %llu %llu %llu %llu %llu %llu %llu %llu",
                         (unsigned long long)W.calls, (unsigned long long)W.unfinished,
                         (unsigned long long)atomic_load(&watch_probe.over_count),
                         (unsigned long long)atomic_load(&watch_probe.over_rate),
                         (unsigned long long)atomic_load(&watch_probe.queue_full),
                         (unsigned long long)atomic_load(&W.rewritten),
                         (unsigned long long)atomic_load(&W.left), (unsigned long long)W.unsent);
        if (control_client_try_send(end, (size_t)n) != -1)
            break;
        struct timespec ts = {0, 10000000};
        nanosleep(&ts, NULL);
    }
    log_info("watch: %llu calls, %llu methods rewritten, %llu left", (unsigned long long)W.calls,
             (unsigned long long)atomic_load(&W.rewritten), (unsigned long long)atomic_load(&W.left));
}

static const struct source_hooks hooks = {
    .jit_started = jit_started,
    .jit_inlining = jit_inlining,
    .r2r_lookup = r2r_lookup,
    .load = load,
    .rejit_parameters = rejit_parameters,
    .rejit_error = rejit_error,
};

static int watch_init(struct agent *a, struct source *s, DWORD *mask, DWORD *high)
{
    (void)high;
    if (W.info) {
        log_error("watch: the agent watched in this process before; attach again after it ends");
        return -1;
    }
    /* rewritten code calls into this library until the process ends (a
     * frame inside an old version after the revert): it is never unloaded */
    Dl_info self;
    if (!dladdr((void *)&watch_enter, &self) || !self.dli_fname ||
        !dlopen(self.dli_fname, RTLD_NOW | RTLD_NODELETE)) {
        log_error("watch: cannot pin the agent's library in memory; not watching");
        return -1;
    }
    pthread_mutex_init(&W.lock, NULL);
    W.info = a->info;
    W.attached = a->attached;
    snprintf(W.pattern, sizeof W.pattern, "%s", a->cfg.watch);
    W.framework_too = !strncmp(W.pattern, "System.", 7) || !strncmp(W.pattern, "Microsoft.", 10);
    W.max_methods = a->cfg.watch_methods ? a->cfg.watch_methods : CONFIG_WATCH_METHODS_DEFAULT;
    if (W.max_methods > WATCH_MAX_METHODS)
        W.max_methods = WATCH_MAX_METHODS;
    watch_probe.source = s->index;
    watch_probe.count_limit = a->cfg.watch_count;
    watch_probe.rate = a->cfg.watch_rate ? a->cfg.watch_rate : CONFIG_WATCH_RATE_DEFAULT;
    atomic_store(&watch_probe.active, 1);
    if (W.attached)
        *mask |= COR_PRF_ENABLE_REJIT;
    else
        *mask |= COR_PRF_MONITOR_JIT_COMPILATION | COR_PRF_MONITOR_MODULE_LOADS |
                 COR_PRF_MONITOR_CACHE_SEARCHES;
    s->state = &W;
    return 0;
}

const struct source_ops source_watch = {
    .name = "watch",
    .init = watch_init,
    .start = start,
    .cycle = cycle,
    .entry = entry,
    .stop = stop,
    .finish = finish,
    .hooks = &hooks,
};
