/*
 * ilwrap: see ilwrap.h.  The snippets and the choice of signature; the
 * engine does the rest.
 */
#include "agent/async/ilwrap.h"

#include <string.h>

#include "clr/clr_types.h"
#include "common/pdb/meta.h"

/* A parameter: native int or uint, or a pointer to a primitive or void. */
static int pointer_sized(const uint8_t **p, const uint8_t *end)
{
    if (*p >= end)
        return 0;
    uint8_t t = *(*p)++;
    if (t == ELEMENT_TYPE_I || t == ELEMENT_TYPE_U)
        return 1;
    if (t != ELEMENT_TYPE_PTR || *p >= end)
        return 0;
    t = *(*p)++;
    /* void, bool to r8, native int or uint */
    return (t >= ELEMENT_TYPE_VOID && t <= ELEMENT_TYPE_R8) || t == ELEMENT_TYPE_I ||
           t == ELEMENT_TYPE_U;
}

int ilwrap_calli_fits(const uint8_t *blob, size_t len, uint32_t suppress_typedef,
                      struct ilwrap_calli *out)
{
    const uint8_t *p = blob, *end = blob + len;
    if (len < 3)
        return 0;
    uint8_t conv = *p++;
    if (conv != IMAGE_CEE_CS_CALLCONV_C && conv != IMAGE_CEE_CS_CALLCONV_STDCALL &&
        conv != IMAGE_CEE_CS_CALLCONV_UNMANAGED)
        return 0; /* managed, varargs, generic, instance: not a plain C call */
    uint32_t params;
    if (md_uncompress(&p, end, &params) < 0 || params < 1 || params > ILWRAP_MAX_PARAMS)
        return 0;
    int suppress = 0;
    while (p < end && (*p == ELEMENT_TYPE_CMOD_OPT || *p == ELEMENT_TYPE_CMOD_REQD)) {
        uint8_t kind = *p++;
        uint32_t coded;
        if (md_uncompress(&p, end, &coded) < 0)
            return 0;
        /* TypeDefOrRefEncoded: a TypeDef has tag 0 */
        int is_suppress = conv == IMAGE_CEE_CS_CALLCONV_UNMANAGED &&
                          kind == ELEMENT_TYPE_CMOD_OPT && suppress_typedef && (coded & 3) == 0 &&
                          (coded >> 2) == (suppress_typedef & 0xffffff);
        if (!is_suppress)
            return 0; /* another convention, or a modifier of unknown meaning */
        suppress = 1;
    }
    if (p >= end)
        return 0;
    uint8_t ret = *p++;
    if (ret != ELEMENT_TYPE_VOID && ret != ELEMENT_TYPE_I4 && ret != ELEMENT_TYPE_U4 &&
        ret != ELEMENT_TYPE_I && ret != ELEMENT_TYPE_U)
        return 0;
    for (uint32_t i = 0; i < params; i++)
        if (!pointer_sized(&p, end))
            return 0;
    if (p != end)
        return 0;
    out->params = params;
    out->returns = ret != ELEMENT_TYPE_VOID;
    out->suppress = suppress;
    return 1;
}

int ilwrap_calli_better(const struct ilwrap_calli *a, const struct ilwrap_calli *b)
{
    if (a->suppress != b->suppress)
        return a->suppress;
    return a->params < b->params;
}

/* Pushes the call's arguments after the first, then calls async_enter
 * and drops what it returns. */
static size_t call_code(uint8_t *p, const struct ilwrap_in *in)
{
    size_t n = 0;
    for (uint32_t i = 1; i < in->calli.params; i++) {
        p[n++] = 0x16; /* ldc.i4.0 */
        p[n++] = 0xd3; /* conv.i */
    }
    p[n++] = 0x21; /* ldc.i8 */
    for (int i = 0; i < 8; i++)
        p[n++] = (uint8_t)(in->enter_fn >> (8 * i));
    p[n++] = 0xd3; /* conv.i */
    p[n++] = 0x29; /* calli */
    for (int i = 0; i < 4; i++)
        p[n++] = (uint8_t)(in->calli.token >> (8 * i));
    if (in->calli.returns)
        p[n++] = 0x26; /* pop */
    return n;
}

static size_t entry_code(uint8_t *p, const struct ilwrap_in *in)
{
    size_t n = 0;
    p[n++] = 0x0f; /* ldarga.s 0: the home of `this` (or of a static method's first argument) */
    p[n++] = 0x00;
    p[n++] = 0xe0; /* conv.u */
    return n + call_code(p + n, in);
}

static size_t finally_code(uint8_t *p, const struct ilwrap_in *in)
{
    size_t n = 0;
    p[n++] = 0x16; /* ldc.i4.0 */
    p[n++] = 0xd3; /* conv.i */
    return n + call_code(p + n, in);
}

int ilwrap_publish(const struct ilwrap_in *in, struct il_rewritten *out, char *why,
                   size_t why_size)
{
    memset(out, 0, sizeof *out);
    if (!in->calli.token || in->calli.params < 1 || in->calli.params > ILWRAP_MAX_PARAMS)
        return il_why(why, why_size, "no call signature");
    struct il_body body;
    if (il_parse(in->method, in->size, &body, why, why_size) < 0)
        return -1;
    struct il_edit edit;
    il_edit_init(&edit);
    uint8_t entry[64], fin[64];
    size_t entry_len = entry_code(entry, in), fin_len = finally_code(fin, in);
    uint32_t stack = in->calli.params + 1; /* the arguments and the function */
    int rc = -1;
    if (il_edit_add(&edit, &body, 0, IL_ENTRY, 0, entry, (uint32_t)entry_len, stack, why,
                    why_size) == 0 &&
        (in->entry_only ||
         il_edit_wrap(&edit, &body, IL_CLAUSE_FINALLY, fin, (uint32_t)fin_len, stack,
                      IL_NO_RESULT, why, why_size) == 0) &&
        il_rewrite(&body, &edit, out, why, why_size) == 0) {
        rc = il_check(&body, &edit, out, why, why_size);
        if (rc < 0)
            il_rewritten_free(out);
    }
    il_edit_free(&edit);
    il_body_free(&body);
    return rc;
}
