/*
 * leaf: see leaf.h.  The decoder knows only these x86-64 forms (REX.W
 * where 64-bit), which are what CoreCLR emits in prologues and epilogues:
 *   50+r / 41 50+r          push r64
 *   58+r / 41 58+r          pop r64   (5D is pop rbp)
 *   48 83 EC ib / 48 81 EC id   sub rsp, imm
 *   48 83 C4 ib / 48 81 C4 id   add rsp, imm
 *   48 89 E5 / 48 8B EC     mov rbp, rsp
 *   48 8D 6C 24 ib / 48 8D AC 24 id   lea rbp, [rsp+disp]
 *   48 8D 65 ib / 48 8D A5 id   lea rsp, [rbp+disp]   (epilogue start)
 *   C3                      ret
 * Anything else ends the prologue (the body begins) or means "not an
 * epilogue".
 */
#include "agent/signal/leaf.h"

#include <string.h>

static int32_t imm32(const uint8_t *p)
{
    uint32_t v = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
    return (int32_t)v;
}

enum op { OP_OTHER, OP_PUSH, OP_PUSH_RBP, OP_POP, OP_POP_RBP, OP_SUB_RSP, OP_ADD_RSP,
          OP_SET_RBP, OP_LEA_RSP_RBP, OP_RET };

/* Decodes one instruction: its kind, length and immediate (for sub/add). */
static enum op decode(const uint8_t *p, size_t n, size_t *len, int32_t *imm)
{
    *imm = 0;
    if (n >= 1 && p[0] == 0x55) { *len = 1; return OP_PUSH_RBP; }
    if (n >= 1 && p[0] >= 0x50 && p[0] <= 0x57) { *len = 1; return OP_PUSH; }
    if (n >= 2 && p[0] == 0x41 && p[1] >= 0x50 && p[1] <= 0x57) { *len = 2; return OP_PUSH; }
    if (n >= 1 && p[0] == 0x5D) { *len = 1; return OP_POP_RBP; }
    if (n >= 1 && p[0] >= 0x58 && p[0] <= 0x5F) { *len = 1; return OP_POP; }
    if (n >= 2 && p[0] == 0x41 && p[1] >= 0x58 && p[1] <= 0x5F) { *len = 2; return OP_POP; }
    if (n >= 1 && p[0] == 0xC3) { *len = 1; return OP_RET; }
    if (n >= 3 && p[0] == 0x48) {
        if (p[1] == 0x83 && (p[2] == 0xEC || p[2] == 0xC4) && n >= 4) {
            *len = 4;
            *imm = (int8_t)p[3];
            return p[2] == 0xEC ? OP_SUB_RSP : OP_ADD_RSP;
        }
        if (p[1] == 0x81 && (p[2] == 0xEC || p[2] == 0xC4) && n >= 7) {
            *len = 7;
            *imm = imm32(p + 3);
            return p[2] == 0xEC ? OP_SUB_RSP : OP_ADD_RSP;
        }
        if ((p[1] == 0x89 && p[2] == 0xE5) || (p[1] == 0x8B && p[2] == 0xEC)) {
            *len = 3;
            return OP_SET_RBP;
        }
        if (p[1] == 0x8D && p[2] == 0x6C && n >= 5 && p[3] == 0x24) { *len = 5; return OP_SET_RBP; }
        if (p[1] == 0x8D && p[2] == 0xAC && n >= 8 && p[3] == 0x24) { *len = 8; return OP_SET_RBP; }
        if (p[1] == 0x8D && p[2] == 0x65 && n >= 4) { *len = 4; return OP_LEA_RSP_RBP; }
        if (p[1] == 0x8D && p[2] == 0xA5 && n >= 7) { *len = 7; return OP_LEA_RSP_RBP; }
    }
    *len = 0;
    return OP_OTHER;
}

/* From pc forward: pops ending in ret?  Sets *pops_before_ret, *adjust (an
 * add rsp first) and *pops_rbp.  Returns 1 when the bytes are such an
 * epilogue tail. */
static int epilogue_tail(const uint8_t *p, size_t n, uint32_t *ra_offset, int *pops_rbp)
{
    size_t at = 0;
    uint32_t off = 0;
    *pops_rbp = 0;
    for (int steps = 0; steps < 16 && at < n; steps++) {
        size_t len;
        int32_t imm;
        enum op op = decode(p + at, n - at, &len, &imm);
        switch (op) {
        case OP_RET: *ra_offset = off; return 1;
        case OP_POP_RBP: *pops_rbp = 1; /* fall through */
        case OP_POP: off += 8; break;
        case OP_ADD_RSP:
            if (steps != 0 || imm < 0)
                return 0;
            off += (uint32_t)imm;
            break;
        case OP_LEA_RSP_RBP: *pops_rbp = 1; *ra_offset = 0; return 1; /* rbp still ours */
        default: return 0;
        }
        at += len;
    }
    return 0;
}

enum leaf_answer leaf_analyze(const uint8_t *prologue, size_t prologue_len, const uint8_t *at_pc,
                              size_t at_pc_len, size_t pc_offset, uint32_t *offset)
{
    uint32_t ra = 0;
    int pops_rbp = 0;
    if (epilogue_tail(at_pc, at_pc_len, &ra, &pops_rbp)) {
        if (pops_rbp)
            return LEAF_OWN_FRAME; /* rbp is popped later: it is still the leaf's */
        *offset = ra;
        return LEAF_RA_AT;
    }
    /* simulate the prologue up to pc, or to its first body instruction */
    size_t at = 0;
    uint32_t pushed = 0;
    int rbp_set = 0;
    while (at < pc_offset && at < prologue_len) {
        size_t len;
        int32_t imm;
        enum op op = decode(prologue + at, prologue_len - at, &len, &imm);
        if (op == OP_PUSH || op == OP_PUSH_RBP)
            pushed += 8;
        else if (op == OP_SUB_RSP && imm >= 0)
            pushed += (uint32_t)imm;
        else if (op == OP_SET_RBP)
            rbp_set = 1;
        else
            break; /* the body */
        at += len;
    }
    if (at < pc_offset && at >= prologue_len)
        return LEAF_UNKNOWN; /* the prologue runs past what we could read */
    if (rbp_set)
        return LEAF_OWN_FRAME;
    *offset = pushed;
    return LEAF_RA_AT;
}
