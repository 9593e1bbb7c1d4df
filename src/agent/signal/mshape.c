/*
 * mshape: see mshape.h.  The instruction forms the decoders know (x86-64,
 * what CoreCLR's JIT and crossgen2 emit in prologues and epilogues):
 *
 *   prologue                               epilogue
 *   55            push rbp                 48 83 C4 ib / 48 81 C4 id   add rsp, imm
 *   50+r, 41 50+r push r64 (50: push rax,  48 8D 65 ib / 48 8D A5 id   lea rsp, [rbp+disp]
 *                 an 8-byte allocation)    58+r, 41 58+r               pop r64
 *   48 83 EC ib / 48 81 EC id  sub rsp     C3, C2 iw, F3 C3            ret
 *   85 04 24      test [rsp], eax (probe)  E9 rel32, EB rel8           jmp out of the function
 *   4C 8D 5C 24 ib / 4C 8D 9C 24 id        FF 25 disp32                jmp [rip+disp]
 *                 lea r11, [rsp-size]      48 FF /4                    jmp through a register
 *   E8 rel32, FF 15 disp32                   (REX.W marks a tail call, as on Windows)
 *                 call the stack probe
 *   49 8B E3      mov rsp, r11
 *   C5 F8 77      vzeroupper
 *   48 8B EC / 48 89 E5        mov rbp, rsp
 *   48 8D 6C 24 ib / 48 8D AC 24 id        lea rbp, [rsp+disp]
 *   48 8B 45 00   mov rax, [rbp]   (first instruction of OSR code, which
 *                 then pushes it and may store callee-saved registers
 *                 with mov [rsp+disp], r64 before setting RBP)
 */
#include "agent/signal/mshape.h"

#include <string.h>

static int32_t rd32(const uint8_t *p)
{
    uint32_t v = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
    return (int32_t)v;
}

static uint16_t rd16(const uint8_t *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}

static int add_step(struct mshape *s, size_t end, uint32_t depth)
{
    /* steps in code order: unwind codes out of order (no compiler writes
     * them; found by fuzz_leaf, tests/fuzz/corpus/leaf/crash-steps-order)
     * describe no prologue */
    if (s->nsteps == MSHAPE_STEPS || end > UINT16_MAX ||
        (s->nsteps && end < s->end[s->nsteps - 1]))
        return -1;
    s->end[s->nsteps] = (uint16_t)end;
    s->depth[s->nsteps] = depth;
    s->nsteps++;
    return s->nsteps - 1;
}

/* mov [rsp+disp], r64 (REX.W 89 with a SIB on rsp): its length, or 0 */
static size_t store_to_rsp(const uint8_t *p, size_t left)
{
    if (left < 5 || (p[0] != 0x48 && p[0] != 0x4C) || p[1] != 0x89 || p[3] != 0x24)
        return 0;
    if ((p[2] & 0xC7) == 0x44)
        return 5;
    if ((p[2] & 0xC7) == 0x84 && left >= 8)
        return 8;
    return 0;
}

int mshape_from_code(const uint8_t *c, size_t n, struct mshape *s)
{
    memset(s, 0, sizeof *s);
    size_t at = 0;
    uint32_t depth = 0;
    int64_t r11 = -1; /* depth after mov rsp,r11 (a stack probe in progress) */
    int osr = 0;
    for (int guard = 0; guard < 40 && at < n; guard++) {
        const uint8_t *p = c + at;
        size_t left = n - at, len = 0;
        int step = 0, saves_rbp = 0, sets_fp = 0;
        int64_t nd = depth, fp_disp = 0;
        if (at == 0 && left >= 4 && p[0] == 0x48 && p[1] == 0x8B && p[2] == 0x45 && p[3] == 0) {
            osr = 1;
            len = 4;
        } else if (p[0] == 0x55) {
            len = 1, nd += 8, step = 1, saves_rbp = 1;
        } else if (p[0] >= 0x50 && p[0] <= 0x57 && p[0] != 0x54) {
            len = 1, nd += 8, step = 1;
            saves_rbp = osr && p[0] == 0x50 && s->nsteps == 0; /* OSR: the caller's RBP, copied */
        } else if (left >= 2 && p[0] == 0x41 && p[1] >= 0x50 && p[1] <= 0x57) {
            len = 2, nd += 8, step = 1;
        } else if (left >= 4 && p[0] == 0x48 && p[1] == 0x83 && p[2] == 0xEC && p[3] < 0x80) {
            len = 4, nd += p[3], step = 1;
        } else if (left >= 7 && p[0] == 0x48 && p[1] == 0x81 && p[2] == 0xEC && rd32(p + 3) >= 0) {
            len = 7, nd += rd32(p + 3), step = 1;
        } else if (left >= 3 && p[0] == 0x85 && p[1] == 0x04 && p[2] == 0x24) {
            len = 3;
        } else if (left >= 5 && p[0] == 0x4C && p[1] == 0x8D && p[2] == 0x5C && p[3] == 0x24 &&
                   p[4] >= 0x80) {
            len = 5, r11 = (int64_t)depth - (int8_t)p[4];
        } else if (left >= 8 && p[0] == 0x4C && p[1] == 0x8D && p[2] == 0x9C && p[3] == 0x24 &&
                   rd32(p + 4) < 0) {
            len = 8, r11 = (int64_t)depth - rd32(p + 4);
        } else if (left >= 5 && p[0] == 0xE8 && r11 >= 0) {
            len = 5; /* the stack probe; RSP is unchanged across it */
        } else if (left >= 6 && p[0] == 0xFF && p[1] == 0x15 && r11 >= 0) {
            len = 6; /* ... called through an indirection cell (ReadyToRun) */
        } else if (left >= 3 && p[0] == 0x49 && p[1] == 0x8B && p[2] == 0xE3 && r11 >= 0) {
            len = 3, nd = r11, step = 1, r11 = -1;
        } else if (left >= 3 && p[0] == 0xC5 && p[1] == 0xF8 && p[2] == 0x77) {
            len = 3;
        } else if (left >= 3 && p[0] == 0x48 &&
                   ((p[1] == 0x8B && p[2] == 0xEC) || (p[1] == 0x89 && p[2] == 0xE5))) {
            len = 3, step = 1, sets_fp = 1;
        } else if (left >= 5 && p[0] == 0x48 && p[1] == 0x8D && p[2] == 0x6C && p[3] == 0x24) {
            len = 5, step = 1, sets_fp = 1, fp_disp = (int8_t)p[4];
        } else if (left >= 8 && p[0] == 0x48 && p[1] == 0x8D && p[2] == 0xAC && p[3] == 0x24) {
            len = 8, step = 1, sets_fp = 1, fp_disp = rd32(p + 4);
        } else if (osr && (len = store_to_rsp(p, left)) != 0) {
            /* OSR: callee-saved registers stored into the frame */
        } else {
            break; /* the body */
        }
        if (nd > INT32_MAX || (sets_fp && (fp_disp < 0 || fp_disp > depth)))
            return -1;
        at += len;
        if (!step)
            continue;
        int k = add_step(s, at, (uint32_t)nd);
        if (k < 0)
            return -1;
        depth = (uint32_t)nd;
        if (saves_rbp && !s->rbp_step) {
            s->rbp_step = (uint8_t)(k + 1);
            s->rbp_save = depth;
        }
        if (sets_fp) {
            /* RBP = RSP + disp, the slot is at RSP + depth */
            s->fp_step = (uint8_t)(k + 1);
            s->fp_to_ra = (int32_t)(depth - fp_disp);
            s->flags |= MSHAPE_FP;
            break; /* what follows (zero-init, arg homing) never moves RSP or RBP */
        }
    }
    if (r11 >= 0)
        return -1; /* a probe sequence we did not see end */
    if (osr) {
        if (!(s->flags & MSHAPE_FP) || !s->rbp_step)
            return -1;
        s->flags |= MSHAPE_OSR;
    }
    return 0;
}

/* ---- Windows-x64 unwind codes ------------------------------------------- */

enum {
    UWOP_PUSH_NONVOL = 0,
    UWOP_ALLOC_LARGE = 1,
    UWOP_ALLOC_SMALL = 2,
    UWOP_SET_FPREG = 3,
    UWOP_SAVE_NONVOL = 4,
    UWOP_SAVE_NONVOL_FAR = 5,
    UWOP_EPILOG = 6,
    UWOP_SPARE_CODE = 7,
    UWOP_SAVE_XMM128 = 8,
    UWOP_SAVE_XMM128_FAR = 9,
    UWOP_PUSH_MACHFRAME = 10,
    UWOP_SET_FPREG_LARGE = 11, /* Unix: a 32-bit frame offset in the next two slots */
};
#define UNW_FLAG_CHAININFO 4
#define REG_RBP_NUM 5

/* Slots an unwind code takes (itself included), 0: unknown. */
static int code_slots(uint8_t op, uint8_t info)
{
    switch (op) {
    case UWOP_PUSH_NONVOL: case UWOP_ALLOC_SMALL: case UWOP_SET_FPREG: case UWOP_PUSH_MACHFRAME:
        return 1;
    case UWOP_ALLOC_LARGE: return info == 0 ? 2 : 3;
    case UWOP_SAVE_NONVOL: case UWOP_SAVE_XMM128: case UWOP_EPILOG: return 2;
    case UWOP_SAVE_NONVOL_FAR: case UWOP_SAVE_XMM128_FAR: case UWOP_SPARE_CODE:
    case UWOP_SET_FPREG_LARGE:
        return 3;
    default: return 0;
    }
}

int mshape_from_unwind(const uint8_t *ui, size_t n, struct mshape *s)
{
    memset(s, 0, sizeof *s);
    if (n < 4)
        return -1;
    uint8_t version = ui[0] & 7, flags = ui[0] >> 3, count = ui[2];
    uint8_t frame_reg = ui[3] & 15;
    uint32_t frame_off = (uint32_t)(ui[3] >> 4) * 16;
    if ((version != 1 && version != 2) || (flags & UNW_FLAG_CHAININFO) ||
        (frame_reg && frame_reg != REG_RBP_NUM) || 4 + 2 * (size_t)count > n)
        return -1;
    const uint8_t *codes = ui + 4;
    /* the codes run from the last prologue instruction to the first: find
     * where each begins, then apply them in prologue order */
    uint8_t at[256];
    int ncodes = 0;
    for (int i = 0; i < count;) {
        int slots = code_slots(codes[2 * i + 1] & 15, codes[2 * i + 1] >> 4);
        if (!slots || i + slots > count)
            return -1;
        at[ncodes++] = (uint8_t)i;
        i += slots;
    }
    uint32_t depth = 0;
    int32_t save_rbp_off = -1; /* UWOP_SAVE_NONVOL of RBP: offset from the body's RSP */
    for (int j = ncodes - 1; j >= 0; j--) {
        const uint8_t *c = codes + 2 * at[j];
        uint8_t offset = c[0], op = c[1] & 15, info = c[1] >> 4;
        int64_t nd = depth;
        int saves_rbp = 0, sets_fp = 0;
        switch (op) {
        case UWOP_PUSH_NONVOL: nd += 8, saves_rbp = info == REG_RBP_NUM; break;
        case UWOP_ALLOC_SMALL: nd += (uint32_t)info * 8 + 8; break;
        case UWOP_ALLOC_LARGE:
            nd += info == 0 ? (uint32_t)rd16(c + 2) * 8 : (uint32_t)rd16(c + 2) | (uint32_t)rd16(c + 4) << 16;
            break;
        case UWOP_SET_FPREG: sets_fp = 1; break;
        case UWOP_SET_FPREG_LARGE:
            frame_off = ((uint32_t)rd16(c + 2) | (uint32_t)rd16(c + 4) << 16) * 16u;
            sets_fp = 1;
            break;
        case UWOP_SAVE_NONVOL:
            if (info == REG_RBP_NUM)
                save_rbp_off = (int32_t)rd16(c + 2) * 8;
            continue;
        case UWOP_SAVE_NONVOL_FAR:
            if (info == REG_RBP_NUM)
                save_rbp_off = (int32_t)((uint32_t)rd16(c + 2) | (uint32_t)rd16(c + 4) << 16);
            continue;
        case UWOP_SAVE_XMM128: case UWOP_SAVE_XMM128_FAR: case UWOP_EPILOG: case UWOP_SPARE_CODE:
            continue;
        default: return -1; /* a machine frame */
        }
        if (nd > INT32_MAX || (sets_fp && (!frame_reg || frame_off > depth)))
            return -1;
        int k = add_step(s, offset, (uint32_t)nd);
        if (k < 0)
            return -1;
        depth = (uint32_t)nd;
        if (saves_rbp && !s->rbp_step) {
            s->rbp_step = (uint8_t)(k + 1);
            s->rbp_save = depth;
        }
        if (sets_fp && !s->fp_step) {
            s->fp_step = (uint8_t)(k + 1);
            s->fp_to_ra = (int32_t)(depth - frame_off);
            s->flags |= MSHAPE_FP;
        }
    }
    if (save_rbp_off >= 0 && !s->rbp_step && (uint32_t)save_rbp_off < depth && s->nsteps) {
        /* saved with a mov once the frame is allocated: valid in the body */
        s->rbp_step = s->nsteps;
        s->rbp_save = depth - (uint32_t)save_rbp_off;
    }
    return 0;
}

/* ---- one step ------------------------------------------------------------ */

void mshape_epilogue(const uint8_t *c, size_t n, uintptr_t pc, uintptr_t lo, uintptr_t hi,
                     struct mshape_epilogue *e)
{
    memset(e, 0, sizeof *e);
    e->rbp_pop = -1;
    size_t i = 0;
    if (n >= 4 && c[0] == 0x48 && c[1] == 0x83 && c[2] == 0xC4) {
        e->adjust = (int8_t)c[3];
        i = 4;
    } else if (n >= 7 && c[0] == 0x48 && c[1] == 0x81 && c[2] == 0xC4) {
        e->adjust = rd32(c + 3);
        i = 7;
    } else if (n >= 4 && c[0] == 0x48 && c[1] == 0x8D && c[2] == 0x65) {
        e->adjust = (int8_t)c[3];
        e->lea_rbp = 1;
        i = 4;
    } else if (n >= 7 && c[0] == 0x48 && c[1] == 0x8D && c[2] == 0xA5) {
        e->adjust = rd32(c + 3);
        e->lea_rbp = 1;
        i = 7;
    }
    for (int k = 0; k < 8; k++) {
        if (i < n && (c[i] & 0xF8) == 0x58) {
            if (c[i] == 0x5D)
                e->rbp_pop = (int8_t)e->pops;
            e->pops++;
            i += 1;
        } else if (i + 1 < n && (c[i] & 0xF0) == 0x40 && (c[i + 1] & 0xF8) == 0x58) {
            if (!(c[i] & 1) && c[i + 1] == 0x5D)
                e->rbp_pop = (int8_t)e->pops;
            e->pops++;
            i += 2;
        } else {
            break;
        }
    }
    if (i < n && c[i] == 0xF2)
        i++; /* a REPNE prefix may precede the control transfer */
    if (i >= n)
        return;
    if (c[i] == 0xC3 || c[i] == 0xC2 || (c[i] == 0xF3 && i + 1 < n && c[i + 1] == 0xC3)) {
        e->found = 1;
    } else if (c[i] == 0xEB || c[i] == 0xE9) {
        /* a jump out of the function, or to its start, is a tail call */
        if ((c[i] == 0xEB && i + 2 > n) || (c[i] == 0xE9 && i + 5 > n))
            return;
        uintptr_t next = pc + i + (c[i] == 0xEB ? 2 : 5);
        uintptr_t target = next + (uintptr_t)(intptr_t)(c[i] == 0xEB ? (int8_t)c[i + 1] : rd32(c + i + 1));
        e->found = target < lo || target >= hi || target == lo;
    } else if (c[i] == 0xFF && i + 1 < n && c[i + 1] == 0x25) {
        e->found = 1;
    } else if ((c[i] & 0xF8) == 0x48 && i + 2 < n && c[i + 1] == 0xFF && (c[i + 2] & 0x38) == 0x20) {
        e->found = 1;
    }
}

NO_ASAN static int read_word(uintptr_t addr, uintptr_t lo, uintptr_t hi, uintptr_t *out)
{
    if (addr < lo || addr > hi - 8 || (addr & 7))
        return 0;
    *out = *(const uintptr_t *)addr;
    return 1;
}

uint32_t mshape_body_depth(const struct mshape *s)
{
    return s->nsteps ? s->depth[s->nsteps - 1] : 0;
}

enum mshape_status mshape_step(const struct mshape *s, const struct mshape_where *w, int leaf,
                               uintptr_t *pc, uintptr_t *sp, uintptr_t *fp, uintptr_t lo,
                               uintptr_t hi)
{
    /* how much of the prologue is done at pc */
    int done = s->nsteps;
    if (w->fn_start && *pc >= w->fn_start) {
        uintptr_t off = *pc - w->fn_start;
        done = 0;
        while (done < s->nsteps && s->end[done] <= off)
            done++;
    }
    int fp_set = s->fp_step && done >= s->fp_step;
    int rbp_saved = s->rbp_step && done >= s->rbp_step;
    uintptr_t slot, caller_fp = *fp;
    int osr = 0;
    if (leaf && done == s->nsteps && w->code && w->code_len > 1) {
        struct mshape_epilogue e;
        mshape_epilogue(w->code + 1, w->code_len - 1, *pc, w->lo, w->hi, &e);
        if (e.found && fp_set) {
            /* RBP stays the frame's until pop rbp: only right after it (at
             * the ret or tail jump) is the return address at RSP.  A frame
             * set on RBP whose epilogue pops no RBP is a funclet's, which
             * runs on its parent's RBP: the body's rule holds. */
            if (!e.lea_rbp && e.rbp_pop < 0 && e.adjust == 0 && e.pops == 0 &&
                w->code[0] == 0x5D) {
                slot = *sp;
                goto out;
            }
        } else if (e.found) {
            uintptr_t at = *sp + (uintptr_t)(intptr_t)e.adjust;
            if (e.lea_rbp)
                at = *fp + (uintptr_t)(intptr_t)e.adjust;
            for (int k = 0; k < e.pops; k++, at += 8)
                if (k == e.rbp_pop && !read_word(at, lo, hi, &caller_fp))
                    return MSHAPE_BOUNDS;
            slot = at;
            goto out;
        }
    }
    if (fp_set) {
        slot = *fp + (uintptr_t)(intptr_t)s->fp_to_ra;
        osr = (s->flags & MSHAPE_OSR) != 0;
    } else {
        slot = *sp + (done ? s->depth[done - 1] : 0);
    }
    if (rbp_saved && !read_word(slot - s->rbp_save, lo, hi, &caller_fp))
        return MSHAPE_BOUNDS;
out:;
    uintptr_t ret;
    if (!read_word(slot, lo, hi, &ret))
        return MSHAPE_BOUNDS;
    *pc = ret;
    *sp = slot + 8;
    *fp = caller_fp;
    return osr ? MSHAPE_OSR_PSEUDO : MSHAPE_OK;
}
