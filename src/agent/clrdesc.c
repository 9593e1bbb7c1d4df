/*
 * clrdesc: see clrdesc.h.  The JSON is the runtime's own, compact and
 * well formed, but it is read as untrusted text all the same: every step
 * is bounded by its length and a nesting limit, and anything unexpected
 * leaves the layout unusable.
 */

#include "agent/clrdesc.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#define MAX_NESTING 32
#define MAX_JSON (4u << 20)
#define DESCRIPTOR_MAGIC 0x0043414443434e44ull /* "DNCCDAC\0" */

/* The exported descriptor (.NET 10): its first fields. */
struct contract_descriptor {
    uint64_t magic;
    uint32_t flags;
    uint32_t descriptor_size;
    const char *descriptor;
};

static const char *skip_ws(const char *p, const char *end)
{
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
        p++;
    return p;
}

/* Past a string starting at p ('"'), or NULL. */
static const char *skip_string(const char *p, const char *end)
{
    if (p >= end || *p != '"')
        return NULL;
    for (p++; p < end; p++) {
        if (*p == '\\')
            p++;
        else if (*p == '"')
            return p + 1;
    }
    return NULL;
}

/* Past the value starting at p, or NULL. */
static const char *skip_value(const char *p, const char *end, int depth)
{
    p = skip_ws(p, end);
    if (p >= end || depth > MAX_NESTING)
        return NULL;
    if (*p == '"')
        return skip_string(p, end);
    if (*p == '{' || *p == '[') {
        char close = *p == '{' ? '}' : ']';
        p = skip_ws(p + 1, end);
        if (p < end && *p == close)
            return p + 1;
        for (;;) {
            if (close == '}') {
                p = skip_string(skip_ws(p, end), end);
                if (!p)
                    return NULL;
                p = skip_ws(p, end);
                if (p >= end || *p != ':')
                    return NULL;
                p++;
            }
            p = skip_value(p, end, depth + 1);
            if (!p)
                return NULL;
            p = skip_ws(p, end);
            if (p < end && *p == ',') {
                p++;
                continue;
            }
            if (p < end && *p == close)
                return p + 1;
            return NULL;
        }
    }
    /* number, true, false, null */
    const char *start = p;
    while (p < end && *p != ',' && *p != '}' && *p != ']' && *p != ' ' && *p != '\n')
        p++;
    return p > start ? p : NULL;
}

/* The value of `key` in the object starting at p, or NULL. */
static const char *object_get(const char *p, const char *end, const char *key)
{
    p = skip_ws(p, end);
    if (!p || p >= end || *p != '{')
        return NULL;
    size_t klen = strlen(key);
    p = skip_ws(p + 1, end);
    while (p < end && *p == '"') {
        const char *name = p + 1;
        const char *after = skip_string(p, end);
        if (!after)
            return NULL;
        int match = (size_t)(after - 1 - name) == klen && memcmp(name, key, klen) == 0;
        p = skip_ws(after, end);
        if (p >= end || *p != ':')
            return NULL;
        p = skip_ws(p + 1, end);
        if (match)
            return p;
        p = skip_value(p, end, 1);
        if (!p)
            return NULL;
        p = skip_ws(p, end);
        if (p < end && *p == ',')
            p = skip_ws(p + 1, end);
    }
    return NULL;
}

/* A number: 16, "0x10", or either as the first element of an array
 * ([16, "pointer"], ["0x9", "nuint"]).  Returns 0 or -1. */
static int number_at(const char *p, const char *end, uint64_t *out)
{
    p = skip_ws(p, end);
    if (p < end && *p == '[')
        p = skip_ws(p + 1, end);
    if (p >= end)
        return -1;
    int quoted = *p == '"';
    if (quoted)
        p++;
    char digits[32];
    size_t n = 0;
    while (p < end && n + 1 < sizeof digits &&
           ((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f') || (*p >= 'A' && *p <= 'F') ||
            *p == 'x' || *p == 'X'))
        digits[n++] = *p++;
    digits[n] = 0;
    if (!n || (quoted && (p >= end || *p != '"')))
        return -1;
    char *stop;
    unsigned long long v = strtoull(digits, &stop, 0);
    if (*stop)
        return -1;
    *out = v;
    return 0;
}

/* TYPE.FIELD of the descriptor's "types" object (at `types`, NULL when it
 * has none) as a number. */
static int type_field(const char *types, const char *end, const char *type, const char *field,
                      uint32_t *out)
{
    const char *t = types ? object_get(types, end, type) : NULL;
    const char *f = t ? object_get(t, end, field) : NULL;
    uint64_t v;
    if (!f || number_at(f, end, &v) < 0 || v > 1u << 20)
        return -1;
    *out = (uint32_t)v;
    return 0;
}

/* NAME of the descriptor's "globals" object (at `globals`, or NULL). */
static int global_value(const char *globals, const char *end, const char *name, uint64_t *out)
{
    const char *g = globals ? object_get(globals, end, name) : NULL;
    return g ? number_at(g, end, out) : -1;
}

int clrdesc_parse_frames(const char *json, size_t len, struct clrdesc_frames *out)
{
    memset(out, 0, sizeof *out);
    const char *end = json + len;
    /* found once: each lookup from the document's start skipped the whole
     * types object again (a third of a millisecond of every process) */
    const char *types = object_get(json, end, "types");
    const char *globals = object_get(json, end, "globals");
    uint32_t fmf_size, next, coop;
    out->thread_coop = type_field(types, end, "Thread", "PreemptiveGCDisabled", &coop) == 0 &&
                               !(coop & 3)
                           ? (int32_t)coop
                           : -1;
    if (type_field(types, end, "Thread", "Frame", &out->thread_frame) < 0 ||
        type_field(types, end, "Thread", "OSId", &out->thread_os_id) < 0 ||
        type_field(types, end, "Frame", "Next", &next) < 0 ||
        type_field(types, end, "FramedMethodFrame", "TransitionBlockPtr", &out->fmf_transition) < 0 ||
        type_field(types, end, "FramedMethodFrame", "!", &fmf_size) < 0 ||
        type_field(types, end, "TransitionBlock", "ReturnAddress", &out->tb_return) < 0)
        return -1;
    /* the identifier is the word before m_Next; the method, the last word
     * of a FramedMethodFrame, follows its transition block */
    out->fmf_method = out->fmf_transition + 8;
    if (next != 8 || out->fmf_method + 8 != fmf_size || (out->thread_frame & 7) ||
        (out->thread_os_id & 3) ||
        (out->tb_return & 7))
        return -1;
    static const struct {
        const char *global;
        uint8_t kind, transition;
        const char *ret_type, *ret_field;
    } known[] = {
        {"PrestubMethodFrameIdentifier", CLR_FRAME_PRESTUB, 1, NULL, NULL},
        {"CallCountingHelperFrameIdentifier", CLR_FRAME_CALL_COUNTING, 1, NULL, NULL},
        {"StubDispatchFrameIdentifier", CLR_FRAME_DISPATCH, 1, NULL, NULL},
        {"ExternalMethodFrameIdentifier", CLR_FRAME_EXTERNAL, 1, NULL, NULL},
        {"DynamicHelperFrameIdentifier", CLR_FRAME_FIXUP, 1, NULL, NULL},
        {"HijackFrameIdentifier", CLR_FRAME_SUSPENDED, 0, "HijackFrame", "ReturnAddress"},
        {"ResumableFrameIdentifier", CLR_FRAME_SUSPENDED, 0, NULL, NULL},
        {"RedirectedThreadFrameIdentifier", CLR_FRAME_SUSPENDED, 0, NULL, NULL},
        {"SoftwareExceptionFrameIdentifier", CLR_FRAME_EXCEPTION, 0, "SoftwareExceptionFrame",
         "ReturnAddress"},
        {"FaultingExceptionFrameIdentifier", CLR_FRAME_EXCEPTION, 0, NULL, NULL},
        {"InlinedCallFrameIdentifier", CLR_FRAME_PINVOKE, 0, "InlinedCallFrame",
         "CallerReturnAddress"},
    };
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
        uint64_t id;
        uint32_t ret = 0;
        if (global_value(globals, end, known[i].global, &id) < 0 || id == 0)
            continue;
        if (known[i].ret_type &&
            (type_field(types, end, known[i].ret_type, known[i].ret_field, &ret) < 0 || (ret & 7)))
            ret = 0;
        if (known[i].kind == CLR_FRAME_PINVOKE && !ret)
            continue; /* an inactive one cannot be told from an active one */
        struct clrdesc_frame_id *f = &out->ids[out->id_count++];
        f->id = id;
        f->kind = known[i].kind;
        f->transition = known[i].transition;
        f->ret = ret;
    }
    if (out->id_count == 0)
        return -1;
    out->usable = 1;
    return 0;
}

int clrdesc_read_frames(struct clrdesc_frames *out)
{
    memset(out, 0, sizeof *out);
    out->thread_coop = -1;
    void *lib = dlopen("libcoreclr.so", RTLD_LAZY | RTLD_NOLOAD);
    if (!lib)
        return -1;
    const struct contract_descriptor *d = dlsym(lib, "DotNetRuntimeContractDescriptor");
    int rc = -1;
    if (d && d->magic == DESCRIPTOR_MAGIC && d->descriptor && d->descriptor_size > 0 &&
        d->descriptor_size < MAX_JSON)
        rc = clrdesc_parse_frames(d->descriptor, d->descriptor_size, out);
    dlclose(lib);
    return rc;
}
