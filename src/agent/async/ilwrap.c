/*
 * ilwrap: see ilwrap.h.  Opcodes and encodings from ECMA-335 partition III
 * (instructions) and partition II 25.4 (method headers and sections).
 */
#include "agent/async/ilwrap.h"

#include <string.h>

#include "common/mem.h"

#define CODE_MAX (1u << 16) /* bodies this rewrite takes: far above any it wraps */
#define CLAUSES_MAX 256

/* What follows an opcode. */
enum operand {
    OP_BAD = -1,
    OP_NONE = 0,
    OP_I1 = 1,      /* one byte */
    OP_I2 = 2,      /* two */
    OP_I4 = 4,      /* four (tokens, int32) */
    OP_I8 = 8,      /* eight */
    OP_BR1 = 16,    /* a one-byte branch offset */
    OP_BR4 = 17,    /* a four-byte branch offset */
    OP_SWITCH = 18, /* a count and that many four-byte offsets */
};

static enum operand one_byte(uint8_t op)
{
    if (op <= 0x0D)
        return OP_NONE; /* nop, break, ldarg.0-3, ldloc.0-3, stloc.0-3 */
    if (op <= 0x13)
        return OP_I1; /* ldarg.s, ldarga.s, starg.s, ldloc.s, ldloca.s, stloc.s */
    if (op <= 0x1E)
        return OP_NONE; /* ldnull, ldc.i4.m1 .. ldc.i4.8 */
    switch (op) {
    case 0x1F: return OP_I1;  /* ldc.i4.s */
    case 0x20: return OP_I4;  /* ldc.i4 */
    case 0x21: return OP_I8;  /* ldc.i8 */
    case 0x22: return OP_I4;  /* ldc.r4 */
    case 0x23: return OP_I8;  /* ldc.r8 */
    case 0x25: case 0x26: return OP_NONE; /* dup, pop */
    case 0x27: case 0x28: case 0x29: return OP_I4; /* jmp, call, calli */
    case 0x2A: return OP_NONE; /* ret */
    case 0x45: return OP_SWITCH;
    default: break;
    }
    if (op >= 0x2B && op <= 0x37)
        return OP_BR1; /* br.s .. blt.un.s */
    if (op >= 0x38 && op <= 0x44)
        return OP_BR4; /* br .. blt.un */
    if (op >= 0x46 && op <= 0x6E)
        return OP_NONE; /* ldind.*, stind.*, arithmetic, conv.* */
    if (op >= 0x6F && op <= 0x75)
        return OP_I4; /* callvirt, cpobj, ldobj, ldstr, newobj, castclass, isinst */
    if (op == 0x76 || op == 0x7A)
        return OP_NONE; /* conv.r.un, throw */
    if (op == 0x79 || (op >= 0x7B && op <= 0x81))
        return OP_I4; /* unbox, ldfld .. stobj */
    if (op >= 0x82 && op <= 0x8B)
        return OP_NONE; /* conv.ovf.*.un */
    if (op == 0x8C || op == 0x8D || op == 0x8F)
        return OP_I4; /* box, newarr, ldelema */
    if (op == 0x8E || (op >= 0x90 && op <= 0xA2))
        return OP_NONE; /* ldlen, ldelem.*, stelem.* */
    if (op >= 0xA3 && op <= 0xA5)
        return OP_I4; /* ldelem, stelem, unbox.any */
    if (op >= 0xB3 && op <= 0xBA)
        return OP_NONE; /* conv.ovf.* */
    if (op == 0xC2 || op == 0xC6 || op == 0xD0)
        return OP_I4; /* refanyval, mkrefany, ldtoken */
    if (op == 0xC3 || (op >= 0xD1 && op <= 0xDC) || op == 0xDF || op == 0xE0)
        return OP_NONE; /* ckfinite, conv.*, *.ovf, endfinally, stind.i, conv.u */
    if (op == 0xDD)
        return OP_BR4; /* leave */
    if (op == 0xDE)
        return OP_BR1; /* leave.s */
    return OP_BAD;
}

static enum operand two_byte(uint8_t op)
{
    switch (op) {
    case 0x00: case 0x01: case 0x02: case 0x03: case 0x04: case 0x05: /* arglist, ceq .. clt.un */
    case 0x0F: case 0x11: case 0x13: case 0x17: case 0x18: /* localloc, endfilter, volatile., cpblk, initblk */
    case 0x1A: case 0x1D: case 0x1E: /* rethrow, refanytype, readonly. */
        return OP_NONE;
    case 0x06: case 0x07: case 0x15: case 0x16: case 0x1C: /* ldftn, ldvirtftn, initobj, constrained., sizeof */
        return OP_I4;
    case 0x09: case 0x0A: case 0x0B: case 0x0C: case 0x0D: case 0x0E: /* ldarg .. stloc */
        return OP_I2;
    case 0x12: case 0x19: /* unaligned., no. */
        return OP_I1;
    default:
        return OP_BAD; /* including tail. (0x14): a tail call cannot sit in a try */
    }
}

static uint32_t get32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

/* The operand kind and the instruction's size at code[0]; 0 when unknown. */
static size_t decode(const uint8_t *code, size_t len, enum operand *kind)
{
    if (len == 0)
        return 0;
    size_t op_len = 1;
    enum operand k;
    if (code[0] == 0xFE) {
        if (len < 2)
            return 0;
        op_len = 2;
        k = two_byte(code[1]);
    } else {
        k = one_byte(code[0]);
    }
    size_t operand;
    switch (k) {
    case OP_BAD: return 0;
    case OP_NONE: operand = 0; break;
    case OP_I1: case OP_BR1: operand = 1; break;
    case OP_I2: operand = 2; break;
    case OP_I4: case OP_BR4: operand = 4; break;
    case OP_I8: operand = 8; break;
    case OP_SWITCH: {
        if (len < op_len + 4)
            return 0;
        uint32_t n = get32(code + op_len);
        if (n > (len - op_len - 4) / 4)
            return 0;
        operand = 4 + (size_t)n * 4;
        break;
    }
    default: return 0;
    }
    if (op_len + operand > len)
        return 0;
    *kind = k;
    return op_len + operand;
}

size_t ilwrap_insn_size(const uint8_t *code, size_t len)
{
    enum operand k;
    return decode(code, len, &k);
}

/* ECMA-335 II.23.2 compressed unsigned integers. */
static size_t read_compressed(const uint8_t *p, size_t len, uint32_t *out)
{
    if (len >= 1 && (p[0] & 0x80) == 0) {
        *out = p[0];
        return 1;
    }
    if (len >= 2 && (p[0] & 0xC0) == 0x80) {
        *out = (uint32_t)(p[0] & 0x3F) << 8 | p[1];
        return 2;
    }
    if (len >= 4 && (p[0] & 0xE0) == 0xC0) {
        *out = (uint32_t)(p[0] & 0x1F) << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
        return 4;
    }
    return 0;
}

static size_t write_compressed(uint8_t *p, uint32_t v)
{
    if (v < 0x80) {
        p[0] = (uint8_t)v;
        return 1;
    }
    if (v < 0x4000) {
        p[0] = (uint8_t)(0x80 | v >> 8);
        p[1] = (uint8_t)v;
        return 2;
    }
    p[0] = (uint8_t)(0xC0 | v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
    return 4;
}

size_t ilwrap_locals_sig(const uint8_t *sig, size_t len, const uint8_t *extra, size_t extra_len,
                         uint8_t *out, size_t cap, uint32_t *count)
{
    uint32_t n = 0;
    size_t at = 0;
    if (len) {
        if (sig[0] != 0x07)
            return 0;
        size_t used = read_compressed(sig + 1, len - 1, &n);
        if (!used)
            return 0;
        at = 1 + used;
    }
    if (n > 0xFFFF - extra_len || cap < 5 + (len - at) + extra_len)
        return 0;
    out[0] = 0x07;
    size_t w = 1 + write_compressed(out + 1, n + (uint32_t)extra_len);
    if (len > at)
        memcpy(out + w, sig + at, len - at);
    w += len - at;
    memcpy(out + w, extra, extra_len);
    *count = n;
    return w + extra_len;
}

/* ---- the method ------------------------------------------------------------- */

struct clause {
    uint32_t flags, try_off, try_len, handler_off, handler_len, extra;
};

struct body {
    const uint8_t *code;
    uint32_t code_size;
    uint16_t max_stack;
    uint16_t header_flags; /* fat header flags, kept (InitLocals) */
    struct clause clauses[CLAUSES_MAX];
    uint32_t clause_count;
};

#define FAT_FORMAT 0x3
#define MORE_SECTS 0x8
#define INIT_LOCALS 0x10
#define SECT_EHTABLE 0x1
#define SECT_FAT 0x40
#define SECT_MORE 0x80

static enum ilwrap_status read_sections(const uint8_t *m, size_t size, size_t at, struct body *b)
{
    for (;;) {
        at = (at + 3) & ~(size_t)3;
        if (at + 4 > size)
            return ILWRAP_MALFORMED;
        uint8_t kind = m[at];
        int fat = (kind & SECT_FAT) != 0;
        uint32_t data = fat ? (m[at + 1] | (uint32_t)m[at + 2] << 8 | (uint32_t)m[at + 3] << 16)
                            : m[at + 1];
        if (data < 4 || at + data > size)
            return ILWRAP_MALFORMED;
        if (kind & SECT_EHTABLE) {
            uint32_t each = fat ? 24 : 12;
            uint32_t n = (data - 4) / each;
            if (b->clause_count + n > CLAUSES_MAX)
                return ILWRAP_UNSUPPORTED;
            for (uint32_t i = 0; i < n; i++) {
                const uint8_t *c = m + at + 4 + (size_t)i * each;
                struct clause *out = &b->clauses[b->clause_count++];
                if (fat) {
                    *out = (struct clause){get32(c), get32(c + 4), get32(c + 8), get32(c + 12),
                                           get32(c + 16), get32(c + 20)};
                } else {
                    *out = (struct clause){(uint32_t)(c[0] | c[1] << 8),
                                           (uint32_t)(c[2] | c[3] << 8), c[4],
                                           (uint32_t)(c[5] | c[6] << 8), c[7], get32(c + 8)};
                }
            }
        }
        at += data;
        if (!(kind & SECT_MORE))
            return ILWRAP_OK;
    }
}

static enum ilwrap_status read_body(const uint8_t *m, size_t size, struct body *b)
{
    memset(b, 0, sizeof *b);
    if (size < 1)
        return ILWRAP_MALFORMED;
    if ((m[0] & 3) == 2) { /* tiny: code size in the upper six bits */
        b->code_size = m[0] >> 2;
        b->max_stack = 8;
        b->code = m + 1;
        return 1 + (size_t)b->code_size <= size ? ILWRAP_OK : ILWRAP_MALFORMED;
    }
    if ((m[0] & 3) != FAT_FORMAT || size < 12)
        return ILWRAP_MALFORMED;
    uint16_t flags = (uint16_t)(m[0] | (m[1] & 0x0F) << 8);
    size_t header = (size_t)(m[1] >> 4) * 4;
    if (header < 12)
        return ILWRAP_MALFORMED;
    b->header_flags = flags;
    b->max_stack = (uint16_t)(m[2] | m[3] << 8);
    b->code_size = get32(m + 4);
    if (b->code_size > CODE_MAX || header + b->code_size > size)
        return ILWRAP_MALFORMED;
    b->code = m + header;
    if (flags & MORE_SECTS)
        return read_sections(m, size, header + b->code_size, b);
    return ILWRAP_OK;
}

/* The prologue's and the finally's instructions, with the new locals. */
static size_t emit_local(uint8_t *p, uint8_t op2, uint32_t index)
{
    p[0] = 0xFE;
    p[1] = op2;
    p[2] = (uint8_t)index;
    p[3] = (uint8_t)(index >> 8);
    return 4;
}
#define LDLOC 0x0C
#define LDLOCA 0x0D
#define STLOC 0x0E

static size_t emit_prologue(uint8_t *p, const struct ilwrap_in *in)
{
    uint32_t s = in->locals, prev = in->locals + 1, box = in->locals + 2;
    size_t n = 0;
    p[n++] = 0x21; /* ldc.i8 */
    for (int i = 0; i < 8; i++)
        p[n++] = (uint8_t)(in->slot_fn >> (8 * i));
    p[n++] = 0xD3; /* conv.i */
    p[n++] = 0x29; /* calli */
    put32(p + n, in->calli_token);
    n += 4;
    n += emit_local(p + n, STLOC, s);
    n += emit_local(p + n, LDLOC, s);
    p[n++] = 0x4D; /* ldind.i */
    n += emit_local(p + n, STLOC, prev);
    p[n++] = 0x02; /* ldarg.0 */
    n += emit_local(p + n, STLOC, box);
    n += emit_local(p + n, LDLOC, s);
    n += emit_local(p + n, LDLOCA, box);
    p[n++] = 0xE0; /* conv.u */
    p[n++] = 0xDF; /* stind.i */
    return n;
}

static size_t emit_finally(uint8_t *p, const struct ilwrap_in *in)
{
    size_t n = 0;
    n += emit_local(p + n, LDLOC, in->locals);
    n += emit_local(p + n, LDLOC, in->locals + 1);
    p[n++] = 0xDF; /* stind.i */
    p[n++] = 0xDC; /* endfinally */
    return n;
}

#define PROLOGUE_MAX 64
#define FINALLY_MAX 16

/* The new offset of an old one: an instruction's start or the code's end. */
static int moved(const uint32_t *map, const uint8_t *starts, uint32_t size, uint32_t old,
                 uint32_t *out)
{
    if (old > size || (old < size && !starts[old]))
        return 0;
    *out = map[old];
    return 1;
}

/* map[old offset] = new offset (relative to the new code's start), for
 * every instruction start and the end; starts[] marks the starts. */
static enum ilwrap_status rewrite(const struct ilwrap_in *in, const struct body *bp,
                                  uint32_t *map, uint8_t *starts, uint8_t *out, size_t cap,
                                  size_t *out_size);

enum ilwrap_status ilwrap_publish(const struct ilwrap_in *in, uint8_t *out, size_t cap,
                                  size_t *out_size)
{
    struct body *b = mem_calloc(1, sizeof *b);
    if (!b)
        return ILWRAP_TOO_BIG;
    enum ilwrap_status st = read_body(in->method, in->size, b);
    if (st == ILWRAP_OK && in->locals > 0xFFFF - 3)
        st = ILWRAP_UNSUPPORTED;
    uint32_t *map = NULL;
    uint8_t *starts = NULL;
    if (st == ILWRAP_OK) {
        map = mem_calloc((size_t)b->code_size + 1, sizeof *map);
        starts = mem_calloc((size_t)b->code_size + 1, 1);
        st = map && starts ? rewrite(in, b, map, starts, out, cap, out_size) : ILWRAP_TOO_BIG;
    }
    mem_free(map);
    mem_free(starts);
    mem_free(b);
    return st;
}

static enum ilwrap_status rewrite(const struct ilwrap_in *in, const struct body *bp,
                                  uint32_t *map, uint8_t *starts, uint8_t *out, size_t cap,
                                  size_t *out_size)
{
    const struct body *b = bp;
    uint32_t size = b->code_size;
    uint8_t prologue[PROLOGUE_MAX], fin[FINALLY_MAX];
    size_t pro_len = emit_prologue(prologue, in), fin_len = emit_finally(fin, in);
    uint32_t at = 0, now = (uint32_t)pro_len;
    while (at < size) {
        enum operand k;
        size_t len = decode(b->code + at, size - at, &k);
        if (!len)
            return ILWRAP_UNSUPPORTED;
        starts[at] = 1;
        map[at] = now;
        if (b->code[at] == 0x2A || k == OP_BR1)
            now += 5; /* ret becomes leave; a short branch its long form */
        else
            now += (uint32_t)len;
        if (b->code[at] == 0x27)
            return ILWRAP_UNSUPPORTED; /* jmp leaves the frame without the finally */
        at += (uint32_t)len;
    }
    map[size] = now;
    uint32_t try_end = now, end = try_end + (uint32_t)fin_len;
    uint32_t code_size = end + 1; /* and the final ret */
    size_t header = 12;
    size_t sect_at = (header + code_size + 3) & ~(size_t)3;
    size_t sect_len = 4 + (size_t)(b->clause_count + 1) * 24;
    size_t total = sect_at + sect_len;
    if (total > cap)
        return ILWRAP_TOO_BIG;
    memset(out, 0, total);

    uint16_t flags = (uint16_t)((b->header_flags & INIT_LOCALS) | FAT_FORMAT | MORE_SECTS);
    out[0] = (uint8_t)flags;
    out[1] = (uint8_t)(flags >> 8 | 3 << 4);
    uint16_t stack = b->max_stack < 3 ? 3 : b->max_stack;
    out[2] = (uint8_t)stack;
    out[3] = (uint8_t)(stack >> 8);
    put32(out + 4, code_size);
    put32(out + 8, in->locals_token);

    uint8_t *code = out + header;
    memcpy(code, prologue, pro_len);
    for (at = 0; at < size;) {
        enum operand k;
        size_t len = decode(b->code + at, size - at, &k);
        const uint8_t *src = b->code + at;
        uint8_t *dst = code + map[at];
        uint32_t next_old = at + (uint32_t)len;
        if (src[0] == 0x2A) {
            dst[0] = 0xDD; /* leave END */
            put32(dst + 1, end - (map[at] + 5));
        } else if (k == OP_BR1 || k == OP_BR4) {
            size_t op_len = src[0] == 0xFE ? 2 : 1;
            int32_t rel = k == OP_BR1 ? (int8_t)src[op_len] : (int32_t)get32(src + op_len);
            int64_t target_old = (int64_t)next_old + rel;
            uint32_t target;
            if (target_old < 0 || !moved(map, starts, size, (uint32_t)target_old, &target))
                return ILWRAP_MALFORMED;
            uint8_t op = src[0];
            if (k == OP_BR1)
                op = op == 0xDE ? 0xDD : (uint8_t)(op + 0x0D);
            dst[0] = op;
            put32(dst + 1, (uint32_t)((int64_t)target - (int64_t)(map[at] + 5)));
        } else if (k == OP_SWITCH) {
            uint32_t n = get32(src + 1);
            memcpy(dst, src, len);
            for (uint32_t i = 0; i < n; i++) {
                int32_t rel = (int32_t)get32(src + 5 + 4 * i);
                int64_t target_old = (int64_t)next_old + rel;
                uint32_t target;
                if (target_old < 0 || !moved(map, starts, size, (uint32_t)target_old, &target))
                    return ILWRAP_MALFORMED;
                put32(dst + 5 + 4 * i, (uint32_t)((int64_t)target - (int64_t)(map[at] + len)));
            }
        } else {
            memcpy(dst, src, len);
        }
        at = next_old;
    }
    memcpy(code + try_end, fin, fin_len);
    code[end] = 0x2A; /* ret */

    uint8_t *s = out + sect_at;
    s[0] = SECT_EHTABLE | SECT_FAT;
    s[1] = (uint8_t)sect_len;
    s[2] = (uint8_t)(sect_len >> 8);
    s[3] = (uint8_t)(sect_len >> 16);
    for (uint32_t i = 0; i < b->clause_count; i++) {
        const struct clause *c = &b->clauses[i];
        uint32_t t0, t1, h0, h1, extra = c->extra;
        if (!moved(map, starts, size, c->try_off, &t0) ||
            !moved(map, starts, size, c->try_off + c->try_len, &t1) ||
            !moved(map, starts, size, c->handler_off, &h0) ||
            !moved(map, starts, size, c->handler_off + c->handler_len, &h1))
            return ILWRAP_MALFORMED;
        if ((c->flags & 1) && !moved(map, starts, size, c->extra, &extra))
            return ILWRAP_MALFORMED; /* a filter's offset */
        uint8_t *o = s + 4 + (size_t)i * 24;
        put32(o, c->flags);
        put32(o + 4, t0);
        put32(o + 8, t1 - t0);
        put32(o + 12, h0);
        put32(o + 16, h1 - h0);
        put32(o + 20, extra);
    }
    uint8_t *o = s + 4 + (size_t)b->clause_count * 24;
    put32(o, 2); /* COR_ILEXCEPTION_CLAUSE_FINALLY */
    put32(o + 4, (uint32_t)pro_len);
    put32(o + 8, try_end - (uint32_t)pro_len);
    put32(o + 12, try_end);
    put32(o + 16, (uint32_t)fin_len);
    put32(o + 20, 0);
    *out_size = total;
    return ILWRAP_OK;
}
