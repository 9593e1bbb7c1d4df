/*
 * sig: see sig.h.  Element types of ECMA-335 II.23.1.16.
 */
#include "common/pdb/sig.h"

#include <string.h>

#include "common/pdb/meta.h"

enum {
    ET_VOID = 0x01, ET_BOOLEAN = 0x02, ET_CHAR = 0x03, ET_I1 = 0x04, ET_U1 = 0x05, ET_I2 = 0x06,
    ET_U2 = 0x07, ET_I4 = 0x08, ET_U4 = 0x09, ET_I8 = 0x0a, ET_U8 = 0x0b, ET_R4 = 0x0c,
    ET_R8 = 0x0d, ET_STRING = 0x0e, ET_PTR = 0x0f, ET_BYREF = 0x10, ET_VALUETYPE = 0x11,
    ET_CLASS = 0x12, ET_VAR = 0x13, ET_ARRAY = 0x14, ET_GENERICINST = 0x15,
    ET_TYPEDBYREF = 0x16, ET_I = 0x18, ET_U = 0x19, ET_FNPTR = 0x1b, ET_OBJECT = 0x1c,
    ET_SZARRAY = 0x1d, ET_MVAR = 0x1e, ET_CMOD_REQD = 0x1f, ET_CMOD_OPT = 0x20,
    ET_SENTINEL = 0x41, ET_PINNED = 0x45,
};

#define MAX_NESTING 64

/* A TypeDefOrRefOrSpecEncoded token. */
static int read_type_token(const uint8_t **p, const uint8_t *end, uint32_t *token)
{
    uint32_t coded;
    if (md_uncompress(p, end, &coded) < 0)
        return -1;
    static const uint8_t tables[3] = {MD_TYPEDEF, MD_TYPEREF, MD_TYPESPEC};
    if ((coded & 3) == 3)
        return -1;
    *token = md_token((enum md_table)tables[coded & 3], coded >> 2);
    return 0;
}

static int type_at(const uint8_t **p, const uint8_t *end, struct sig_type *out, int depth);

static int skip_type(const uint8_t **p, const uint8_t *end, int depth)
{
    struct sig_type t;
    return type_at(p, end, &t, depth);
}

/* The rest of a method signature after its calling convention byte. */
static int skip_method_rest(const uint8_t **p, const uint8_t *end, int generic, int depth)
{
    uint32_t n, count;
    if (generic && md_uncompress(p, end, &n) < 0)
        return -1;
    if (md_uncompress(p, end, &count) < 0)
        return -1;
    if (skip_type(p, end, depth + 1) < 0) /* return */
        return -1;
    for (uint32_t i = 0; i < count; i++) {
        if (*p < end && **p == ET_SENTINEL)
            (*p)++;
        if (skip_type(p, end, depth + 1) < 0)
            return -1;
    }
    return 0;
}

static int type_at(const uint8_t **p, const uint8_t *end, struct sig_type *out, int depth)
{
    if (depth > MAX_NESTING)
        return -1;
    const uint8_t *start = *p;
    memset(out, 0, sizeof *out);
    uint32_t token, n;
    /* custom modifiers and pinned come first and belong to the type */
    while (*p < end && (**p == ET_CMOD_REQD || **p == ET_CMOD_OPT || **p == ET_PINNED)) {
        uint8_t b = *(*p)++;
        if (b != ET_PINNED && read_type_token(p, end, &token) < 0)
            return -1;
    }
    if (*p >= end)
        return -1;
    uint8_t et = *(*p)++;
    struct sig_type inner;
    switch (et) {
    case ET_VOID: out->kind = SIG_VOID; break;
    case ET_BOOLEAN: out->kind = SIG_BOOL; break;
    case ET_CHAR: out->kind = SIG_CHAR; break;
    case ET_I1: out->kind = SIG_I1; break;
    case ET_U1: out->kind = SIG_U1; break;
    case ET_I2: out->kind = SIG_I2; break;
    case ET_U2: out->kind = SIG_U2; break;
    case ET_I4: out->kind = SIG_I4; break;
    case ET_U4: out->kind = SIG_U4; break;
    case ET_I8: out->kind = SIG_I8; break;
    case ET_U8: out->kind = SIG_U8; break;
    case ET_R4: out->kind = SIG_R4; break;
    case ET_R8: out->kind = SIG_R8; break;
    case ET_I: out->kind = SIG_I; break;
    case ET_U: out->kind = SIG_U; break;
    case ET_STRING: out->kind = SIG_STRING; break;
    case ET_OBJECT: out->kind = SIG_OBJECT; break;
    case ET_TYPEDBYREF: out->kind = SIG_OTHER; break;
    case ET_CLASS:
    case ET_VALUETYPE:
        if (read_type_token(p, end, &out->token) < 0)
            return -1;
        out->kind = et == ET_CLASS ? SIG_OBJECT : SIG_VALUETYPE;
        break;
    case ET_VAR:
    case ET_MVAR:
        if (md_uncompress(p, end, &n) < 0)
            return -1;
        out->kind = SIG_GENERIC;
        break;
    case ET_PTR:
        if (type_at(p, end, &inner, depth + 1) < 0)
            return -1;
        out->kind = SIG_POINTER;
        break;
    case ET_BYREF:
        if (type_at(p, end, &inner, depth + 1) < 0)
            return -1;
        out->kind = SIG_BYREF;
        break;
    case ET_SZARRAY:
        if (type_at(p, end, &inner, depth + 1) < 0)
            return -1;
        out->kind = SIG_OBJECT;
        out->array = 1;
        break;
    case ET_ARRAY: {
        uint32_t rank, sizes, bounds, v;
        int32_t lo;
        if (type_at(p, end, &inner, depth + 1) < 0 || md_uncompress(p, end, &rank) < 0 ||
            md_uncompress(p, end, &sizes) < 0)
            return -1;
        for (uint32_t i = 0; i < sizes; i++)
            if (md_uncompress(p, end, &v) < 0)
                return -1;
        if (md_uncompress(p, end, &bounds) < 0)
            return -1;
        for (uint32_t i = 0; i < bounds; i++)
            if (md_uncompress_signed(p, end, &lo) < 0)
                return -1;
        out->kind = SIG_OBJECT;
        out->array = 1;
        break;
    }
    case ET_GENERICINST: {
        if (*p >= end)
            return -1;
        uint8_t which = *(*p)++;
        if ((which != ET_CLASS && which != ET_VALUETYPE) || read_type_token(p, end, &out->token) < 0 ||
            md_uncompress(p, end, &n) < 0 || n == 0)
            return -1;
        for (uint32_t i = 0; i < n; i++)
            if (type_at(p, end, &inner, depth + 1) < 0)
                return -1;
        out->kind = which == ET_CLASS ? SIG_OBJECT : SIG_VALUETYPE;
        break;
    }
    case ET_FNPTR: {
        if (*p >= end)
            return -1;
        uint8_t cc = *(*p)++;
        if (skip_method_rest(p, end, cc & 0x10, depth) < 0)
            return -1;
        out->kind = SIG_POINTER;
        break;
    }
    default:
        return -1;
    }
    out->bytes = start;
    out->len = (uint32_t)(*p - start);
    return 0;
}

int sig_type(const uint8_t **p, const uint8_t *end, struct sig_type *out)
{
    return type_at(p, end, out, 0);
}

int sig_method(const uint8_t *blob, size_t len, struct sig_method *out)
{
    memset(out, 0, sizeof *out);
    const uint8_t *p = blob, *end = blob + len;
    if (!blob || len < 3)
        return -1;
    uint8_t cc = *p++;
    if ((cc & 0x0f) > 0x05) /* default, C, stdcall, thiscall, fastcall, vararg */
        return -1;
    out->has_this = (cc & 0x20) != 0;
    out->vararg = (cc & 0x0f) == 0x05;
    if ((cc & 0x10) && md_uncompress(&p, end, &out->generic_count) < 0)
        return -1;
    if (md_uncompress(&p, end, &out->param_count) < 0 || out->param_count > 0xffff)
        return -1;
    if (sig_type(&p, end, &out->ret) < 0)
        return -1;
    for (uint32_t i = 0; i < out->param_count; i++) {
        struct sig_type t;
        if (p < end && *p == ET_SENTINEL)
            return -1; /* only in call sites */
        if (sig_type(&p, end, &t) < 0 || t.kind == SIG_VOID)
            return -1;
        if (i < SIG_MAX_PARAMS)
            out->params[i] = t;
    }
    return 0;
}

size_t sig_compress(uint32_t n, uint8_t out[4])
{
    if (n <= 0x7f) {
        out[0] = (uint8_t)n;
        return 1;
    }
    if (n <= 0x3fff) {
        out[0] = (uint8_t)(0x80 | n >> 8);
        out[1] = (uint8_t)n;
        return 2;
    }
    if (n <= 0x1fffffff) {
        out[0] = (uint8_t)(0xc0 | n >> 24);
        out[1] = (uint8_t)(n >> 16);
        out[2] = (uint8_t)(n >> 8);
        out[3] = (uint8_t)n;
        return 4;
    }
    return 0;
}

long sig_locals_append(const uint8_t *blob, size_t len, const struct sig_type *add,
                       uint32_t add_count, uint8_t *out, size_t out_size, size_t *out_len)
{
    uint32_t count = 0;
    const uint8_t *types = NULL, *end = blob ? blob + len : NULL;
    if (blob && len) {
        const uint8_t *p = blob;
        if (*p++ != 0x07 || md_uncompress(&p, end, &count) < 0)
            return -1;
        types = p;
        for (uint32_t i = 0; i < count; i++) {
            struct sig_type t;
            if (sig_type(&p, end, &t) < 0)
                return -1;
        }
        end = p; /* what follows the last local is not ours to copy */
    }
    uint8_t head[5];
    head[0] = 0x07;
    size_t hn = sig_compress(count + add_count, head + 1);
    if (!hn || count + add_count > 0xfffe)
        return -1;
    size_t need = 1 + hn + (types ? (size_t)(end - types) : 0);
    for (uint32_t i = 0; i < add_count; i++)
        need += add[i].len;
    if (need > out_size)
        return -1;
    size_t o = 0;
    memcpy(out, head, 1 + hn);
    o = 1 + hn;
    if (types) {
        memcpy(out + o, types, (size_t)(end - types));
        o += (size_t)(end - types);
    }
    for (uint32_t i = 0; i < add_count; i++) {
        memcpy(out + o, add[i].bytes, add[i].len);
        o += add[i].len;
    }
    *out_len = o;
    return (long)count;
}
