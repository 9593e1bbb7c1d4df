/*
 * il_body: parsing a method body (ECMA-335 II.25.4).
 *
 *   tiny header  1 byte: code size << 2 | 2.  Max stack 8, no locals, no
 *                exception handling.
 *   fat header   12 bytes, 4-aligned: flags (12 bits: 3 fat, 8 more
 *                sections, 0x10 init locals) and size in dwords (4 bits),
 *                max stack (u16), code size (u32), local signature token.
 *   sections     after the code, 4-aligned, while "more sections" is set:
 *                kind (1 EH table, 0x40 fat, 0x80 more), data size (u8
 *                small, u24 fat, header included), then clauses of 12
 *                (small: u16 flags, u16 try offset, u8 try length, u16
 *                handler offset, u8 handler length, u32 token/filter) or
 *                24 bytes (fat: six u32).
 *
 * Everything a rewrite leans on is checked here, once: instructions end
 * inside the code, branch targets and clause boundaries fall on
 * instruction starts, clauses are not empty, a prefix has an instruction
 * after it.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/il/il.h"
#include "common/mem.h"

/* Far beyond any compiler's output; keeps every size computation small. */
#define IL_CODE_MAX (64u << 20)

static uint16_t rd16(const uint8_t *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t rd32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

int il_why(char *why, size_t size, const char *fmt, ...)
{
    if (why && size) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(why, size, fmt, ap);
        va_end(ap);
    }
    return -1;
}

static int add_clause(struct il_body *b, size_t *cap, const struct il_clause *c)
{
    if (b->clause_count == *cap) {
        struct il_clause *grown = mem_grow(b->clauses, cap, b->clause_count + 1, sizeof *grown);
        if (!grown)
            return -1;
        b->clauses = grown;
    }
    b->clauses[b->clause_count++] = *c;
    return 0;
}

/* The sections after the code, from `at`. */
static int parse_sections(struct il_body *b, const uint8_t *bytes, size_t size, size_t at,
                          char *why, size_t why_size)
{
    size_t cap = 0;
    for (int more = 1, n = 0; more; n++) {
        at = (at + 3) & ~(size_t)3;
        if (n > 64 || at > size || size - at < 4)
            return il_why(why, why_size, "exception sections past the end of the body (at %u)",
                          (unsigned)at);
        uint8_t kind = bytes[at];
        int fat = kind & 0x40;
        more = kind & 0x80;
        uint32_t data = fat ? (uint32_t)bytes[at + 1] | (uint32_t)bytes[at + 2] << 8 |
                                  (uint32_t)bytes[at + 3] << 16
                            : bytes[at + 1];
        if (data < 4 || size - at < data)
            return il_why(why, why_size, "a malformed section (data size %u)", data);
        if ((kind & 0x3f) != 1) { /* not an EH table: skip it */
            at += data;
            continue;
        }
        uint32_t each = fat ? 24 : 12;
        uint32_t count = (data - 4) / each;
        const uint8_t *c = bytes + at + 4;
        for (uint32_t i = 0; i < count; i++, c += each) {
            struct il_clause cl;
            if (fat) {
                cl = (struct il_clause){rd32(c), rd32(c + 4), rd32(c + 8), rd32(c + 12), rd32(c + 16),
                                        rd32(c + 20)};
            } else {
                cl = (struct il_clause){rd16(c), rd16(c + 2), c[4], rd16(c + 5), c[7], rd32(c + 8)};
            }
            if (add_clause(b, &cap, &cl) < 0)
                return il_why(why, why_size, "out of memory");
        }
        at += data;
    }
    b->total_size = at;
    return 0;
}

static int add_target(struct il_body *b, size_t *cap, uint32_t target)
{
    if (b->target_count == *cap) {
        uint32_t *grown = mem_grow(b->targets, cap, b->target_count + 1, sizeof *grown);
        if (!grown)
            return -1;
        b->targets = grown;
    }
    b->targets[b->target_count++] = target;
    return 0;
}

/* The instructions of the code. */
static int decode(struct il_body *b, char *why, size_t why_size)
{
    const uint8_t *code = b->code;
    uint32_t size = b->code_size;
    /* at most one instruction per byte */
    b->instrs = mem_alloc((size_t)(size ? size : 1) * sizeof *b->instrs);
    if (!b->instrs)
        return il_why(why, why_size, "out of memory");
    size_t target_cap = 0;
    uint32_t pc = 0;
    int prefixed = 0, tail_prefix = 0, after_tail_call = 0;
    while (pc < size) {
        struct il_instr *in = &b->instrs[b->count];
        memset(in, 0, sizeof *in);
        in->offset = pc;
        uint16_t op = code[pc];
        uint32_t len = 1;
        if (op == 0xfe) {
            if (size - pc < 2)
                return il_why(why, why_size, "a two-byte opcode cut at the end (at IL_%04x)", pc);
            op = (uint16_t)(0xfe00 | code[pc + 1]);
            len = 2;
        }
        const struct il_opcode *o = il_opcode(op);
        if (!o)
            return il_why(why, why_size, "an unknown opcode (at IL_%04x)", pc);
        in->op = op;
        in->operand = o->operand;
        uint32_t left = size - pc - len;
        const uint8_t *arg = code + pc + len;
        uint32_t need = 0;
        switch (o->operand) {
        case IL_OPERAND_NONE: break;
        case IL_OPERAND_U8: need = 1; break;
        case IL_OPERAND_I8: need = 1; break;
        case IL_OPERAND_BR8: need = 1; break;
        case IL_OPERAND_U16: need = 2; break;
        case IL_OPERAND_I32: case IL_OPERAND_R32: case IL_OPERAND_TOKEN: case IL_OPERAND_BR32:
            need = 4; break;
        case IL_OPERAND_I64: case IL_OPERAND_R64: need = 8; break;
        case IL_OPERAND_SWITCH:
            if (left < 4)
                return il_why(why, why_size, "a switch cut at the end (at IL_%04x)", pc);
            uint32_t n = rd32(arg);
            if (n > (left - 4) / 4)
                return il_why(why, why_size, "a switch with more cases than bytes (at IL_%04x)", pc);
            need = 4 + 4 * n;
            break;
        }
        if (left < need)
            return il_why(why, why_size, "an operand cut at the end (at IL_%04x)", pc);
        len += need;
        in->size = len;
        switch (o->operand) {
        case IL_OPERAND_U8: in->value = arg[0]; break;
        case IL_OPERAND_I8: in->value = (int8_t)arg[0]; break;
        case IL_OPERAND_U16: in->value = rd16(arg); break;
        case IL_OPERAND_I32: in->value = (int32_t)rd32(arg); break;
        case IL_OPERAND_R32: case IL_OPERAND_TOKEN: in->value = rd32(arg); break;
        case IL_OPERAND_I64: case IL_OPERAND_R64:
            in->value = (int64_t)((uint64_t)rd32(arg) | (uint64_t)rd32(arg + 4) << 32);
            break;
        case IL_OPERAND_BR8:
            in->value = (int64_t)pc + len + (int8_t)arg[0];
            in->target_count = 1;
            break;
        case IL_OPERAND_BR32:
            in->value = (int64_t)pc + len + (int32_t)rd32(arg);
            in->target_count = 1;
            break;
        case IL_OPERAND_SWITCH: {
            uint32_t n = rd32(arg);
            in->value = n;
            in->first_target = b->target_count;
            in->target_count = n;
            for (uint32_t k = 0; k < n; k++)
                if (add_target(b, &target_cap, (uint32_t)((int64_t)pc + len + (int32_t)rd32(arg + 4 + 4 * k))) < 0)
                    return il_why(why, why_size, "out of memory");
            break;
        }
        default: break;
        }
        if (prefixed)
            in->flags |= IL_INSTR_PREFIXED;
        if (after_tail_call && op == 0x2a)
            in->flags |= IL_INSTR_TAIL_RET;
        after_tail_call = tail_prefix && (op == 0x28 || op == 0x29 || op == 0x6f);
        if (op == 0xfe14)
            tail_prefix = 1;
        else if (o->flow != IL_FLOW_PREFIX)
            tail_prefix = 0;
        prefixed = o->flow == IL_FLOW_PREFIX;
        pc += len;
        b->count++;
    }
    if (prefixed)
        return il_why(why, why_size, "a prefix with no instruction after it");
    return 0;
}

long il_index_at(const struct il_body *b, uint32_t offset)
{
    uint32_t lo = 0, hi = b->count;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (b->instrs[mid].offset < offset)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < b->count && b->instrs[lo].offset == offset ? (long)lo : -1;
}

uint32_t il_target(const struct il_body *b, const struct il_instr *in, uint32_t k)
{
    if (in->operand == IL_OPERAND_SWITCH)
        return k >= 1 && k <= in->target_count ? b->targets[in->first_target + k - 1] : 0;
    return (uint32_t)in->value;
}

/* Is offset the start of an instruction (or, when end_ok, the code's end)? */
static int boundary(const struct il_body *b, uint64_t offset, int end_ok)
{
    if (offset == b->code_size)
        return end_ok;
    return offset < b->code_size && il_index_at(b, (uint32_t)offset) >= 0;
}

/* Does the instruction ending at `end` go on to whatever follows it? */
static int falls_into(const struct il_body *b, uint64_t end)
{
    long i = end == b->code_size ? (long)b->count - 1 : il_index_at(b, (uint32_t)end) - 1;
    if (i < 0)
        return 0;
    uint8_t flow = il_opcode(b->instrs[i].op)->flow;
    return flow == IL_FLOW_NEXT || flow == IL_FLOW_COND || flow == IL_FLOW_PREFIX;
}

static int check(struct il_body *b, char *why, size_t why_size)
{
    /* control never falls off the end of a method or out of a region: the
     * runtime rejects such code, and the rewrite puts code there */
    if (b->count && falls_into(b, b->code_size))
        return il_why(why, why_size, "the last instruction falls off the end of the method "
                                     "(at IL_%04x)", b->instrs[b->count - 1].offset);
    for (uint32_t i = 0; i < b->count; i++) {
        const struct il_instr *in = &b->instrs[i];
        if (in->operand == IL_OPERAND_BR8 || in->operand == IL_OPERAND_BR32) {
            if (in->value < 0 || !boundary(b, (uint64_t)in->value, 0))
                return il_why(why, why_size, "a branch into the middle of an instruction or out "
                                             "of the code (at IL_%04x)", in->offset);
        }
        for (uint32_t k = 0; in->operand == IL_OPERAND_SWITCH && k < in->target_count; k++)
            if (!boundary(b, b->targets[in->first_target + k], 0))
                return il_why(why, why_size, "a switch case into the middle of an instruction or "
                                             "out of the code (at IL_%04x)", in->offset);
    }
    for (uint32_t i = 0; i < b->clause_count; i++) {
        const struct il_clause *c = &b->clauses[i];
        uint64_t try_end = (uint64_t)c->try_offset + c->try_length;
        uint64_t handler_end = (uint64_t)c->handler_offset + c->handler_length;
        if (!c->try_length || !c->handler_length || !boundary(b, c->try_offset, 0) ||
            !boundary(b, try_end, 1) || !boundary(b, c->handler_offset, 0) ||
            !boundary(b, handler_end, 1))
            return il_why(why, why_size, "exception clause %u is empty or not on instruction "
                                         "boundaries", i);
        if (c->flags & IL_CLAUSE_FILTER) {
            if (!boundary(b, c->token_or_filter, 0) || c->token_or_filter >= c->handler_offset)
                return il_why(why, why_size, "exception clause %u has a filter not before its "
                                             "handler", i);
            if (falls_into(b, c->handler_offset))
                return il_why(why, why_size, "the filter of exception clause %u falls into its "
                                             "handler", i);
        }
        if (falls_into(b, try_end) || falls_into(b, handler_end))
            return il_why(why, why_size, "control falls out of a block of exception clause %u", i);
    }
    return 0;
}

int il_parse(const uint8_t *bytes, size_t size, struct il_body *out, char *why, size_t why_size)
{
    memset(out, 0, sizeof *out);
    if (size < 1)
        return il_why(why, why_size, "an empty body");
    size_t at;
    int more = 0;
    if ((bytes[0] & 3) == 2) {
        out->tiny = 1;
        out->header_size = 1;
        out->max_stack = 8;
        out->code_size = bytes[0] >> 2;
        at = 1;
    } else if ((bytes[0] & 3) == 3) {
        if (size < 12)
            return il_why(why, why_size, "a fat header cut short (%u bytes)", (unsigned)size);
        uint16_t flags = rd16(bytes);
        out->header_size = 4u * (flags >> 12);
        if (out->header_size < 12 || out->header_size > size)
            return il_why(why, why_size, "a fat header of a bad size (%u)", out->header_size);
        more = flags & 0x8;
        out->init_locals = !!(flags & 0x10);
        out->max_stack = rd16(bytes + 2);
        out->code_size = rd32(bytes + 4);
        out->local_sig = rd32(bytes + 8);
        at = out->header_size;
    } else {
        return il_why(why, why_size, "not a method header (0x%02x)", bytes[0]);
    }
    if (out->code_size > IL_CODE_MAX || out->code_size > size - at)
        return il_why(why, why_size, "code past the end of the body (%u bytes)", out->code_size);
    out->code = bytes + at;
    at += out->code_size;
    out->total_size = at;
    int rc = (more ? parse_sections(out, bytes, size, at, why, why_size) : 0) == 0 &&
                     decode(out, why, why_size) == 0 && check(out, why, why_size) == 0
                 ? 0
                 : -1;
    if (rc < 0)
        il_body_free(out);
    return rc;
}

void il_body_free(struct il_body *b)
{
    mem_free(b->instrs);
    mem_free(b->targets);
    mem_free(b->clauses);
    memset(b, 0, sizeof *b);
}
