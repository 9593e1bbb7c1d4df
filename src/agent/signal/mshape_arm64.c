/*
 * mshape_arm64: see mshape_arm64.h.  The A64 encodings the decoders know:
 *
 *   load/store pair  [31:30] opc [29:27] 101 [26] V [25:23] mode [22] L
 *                    [21:15] imm7 [14:10] Rt2 [9:5] Rn [4:0] Rt
 *                    mode 001 post-index, 010 offset, 011 pre-index
 *   load/store one   [29:27] 111 [25:24] 01: unsigned offset (imm12 << size)
 *                    [25:24] 00, [21] 0, [11:10] 01 post / 11 pre (imm9)
 *   add/sub imm      [31:23] 100100010 add / 110100010 sub, [22] lsl 12
 *   ret  D65F0000|Rn<<5 (retaa D65F0BFF, retab D65F0FFF)
 *   b    14000000|imm26      br  D61F0000|Rn<<5 (braaz, braa ...)
 *   bl   94000000|imm26      blr D63F0000|Rn<<5 (blraaz D63F081F, blraa D73F0800 ...)
 *   hints D503201F|op<<5: nop, paciasp, autiasp, bti ...
 * and for frames beyond an immediate's reach (the JIT's large frames):
 *   movz D2800000, movn 92800000, movk F2800000 (xN = a constant)
 *   sub/add sp, sp, xN (extended register: CB2063FF/8B2063FF|Rm<<16)
 *   ldr wzr, [sp, xN] (the stack probe: B8606BFF|Rm<<16)
 */
#include "agent/signal/mshape_arm64.h"

#include <string.h>

#define SP 31
#define FP 29
#define LR 30

static uint32_t word(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static int is_hint(uint32_t w)
{
    return (w & 0xFFFFF01Fu) == 0xD503201Fu;
}

enum mode { MODE_NONE, MODE_POST, MODE_OFFSET, MODE_PRE };

struct access {
    enum mode mode;
    int load;
    int record;      /* the pair x29, x30 (64-bit registers) */
    unsigned rn;
    int64_t offset;  /* bytes */
};

/* A load or store (pair or single register) with an immediate offset. */
static int decode_access(uint32_t w, struct access *a)
{
    memset(a, 0, sizeof *a);
    a->rn = (w >> 5) & 31;
    if (((w >> 27) & 7) == 5 && !((w >> 25) & 1)) {
        unsigned opc = w >> 30, v = (w >> 26) & 1, mode = (w >> 23) & 3;
        if (opc == 3 || (v && opc > 2))
            return 0;
        int64_t scale = v ? 4 << opc : opc == 2 ? 8 : 4;
        int64_t imm7 = (int64_t)((w >> 15) & 0x7F);
        if (imm7 & 0x40)
            imm7 -= 0x80;
        a->mode = mode == 1 ? MODE_POST : mode == 3 ? MODE_PRE : MODE_OFFSET;
        a->load = (w >> 22) & 1;
        a->offset = imm7 * scale;
        a->record = !v && opc == 2 && (w & 31) == FP && ((w >> 10) & 31) == LR;
        return 1;
    }
    if (((w >> 27) & 7) == 7 && ((w >> 24) & 3) == 1) {
        unsigned size = w >> 30, v = (w >> 26) & 1, opc = (w >> 22) & 3;
        if (v && (opc & 2))
            size += 4; /* 128-bit q registers */
        a->mode = MODE_OFFSET;
        a->load = opc & 1;
        a->offset = (int64_t)((w >> 10) & 0xFFF) << size;
        return 1;
    }
    if (((w >> 27) & 7) == 7 && ((w >> 24) & 3) == 0 && !((w >> 21) & 1) &&
        (((w >> 10) & 3) == 1 || ((w >> 10) & 3) == 3)) {
        int64_t imm9 = (int64_t)((w >> 12) & 0x1FF);
        if (imm9 & 0x100)
            imm9 -= 0x200;
        a->mode = ((w >> 10) & 3) == 1 ? MODE_POST : MODE_PRE;
        a->load = ((w >> 22) & 3) == 1 || ((w >> 22) & 3) == 3;
        a->offset = imm9;
        return 1;
    }
    return 0;
}

/* add/sub (immediate), 64-bit: Rd = Rn +/- imm. */
static int decode_addsub(uint32_t w, unsigned *rd, unsigned *rn, int64_t *imm)
{
    uint32_t top = w & 0xFF800000u;
    *rd = *rn = 0;
    *imm = 0;
    if (top != 0x91000000u && top != 0xD1000000u)
        return 0;
    *rd = w & 31;
    *rn = (w >> 5) & 31;
    *imm = (int64_t)((w >> 10) & 0xFFF) << ((w >> 22) & 1 ? 12 : 0);
    if (top == 0xD1000000u)
        *imm = -*imm;
    return 1;
}

/* Constants the code put in registers (movz, movn, movk), for SP moved
 * by a register. */
struct consts {
    uint32_t known; /* bit n: x[n] is known */
    uint64_t x[32];
};

static int track_constant(uint32_t w, struct consts *c)
{
    unsigned rd = w & 31, shift = 16 * ((w >> 21) & 3);
    uint64_t imm = (uint64_t)((w >> 5) & 0xFFFF) << shift;
    switch (w & 0xFF800000u) {
    case 0xD2800000u: c->x[rd] = imm; break;                                /* movz */
    case 0x92800000u: c->x[rd] = ~imm; break;                               /* movn */
    case 0xF2800000u:                                                       /* movk */
        if (!(c->known & 1u << rd))
            return 1; /* a register we do not know stays unknown */
        c->x[rd] = (c->x[rd] & ~((uint64_t)0xFFFF << shift)) | imm;
        break;
    default: return 0;
    }
    c->known |= 1u << rd;
    return 1;
}

/* sub sp, sp, xN (sign -1) or add sp, sp, xN (+1) with a known xN: the
 * move, 0 otherwise (*ok says whether it was such an instruction). */
static int64_t sp_by_register(uint32_t w, const struct consts *c, int *ok)
{
    unsigned rm = (w >> 16) & 31;
    int sign = (w & 0xFFE0FFFFu) == 0xCB2063FFu ? -1 : (w & 0xFFE0FFFFu) == 0x8B2063FFu ? 1 : 0;
    *ok = sign && (c->known & 1u << rm) && c->x[rm] < (1u << 30);
    return *ok ? sign * (int64_t)c->x[rm] : 0;
}

/* The stack probe: a load into the zero register from SP plus a register. */
static int is_probe(uint32_t w)
{
    return (w & 0xFFE0FFFFu) == 0xB8606BFFu || (w & 0xFFE0FFFFu) == 0xF8606BFFu;
}

/* Any add or sub (immediate, shifted or extended register) writing SP. */
static int writes_sp(uint32_t w)
{
    return (w & 31) == SP && ((w & 0x1F000000u) == 0x11000000u || (w & 0x1F200000u) == 0x0B200000u);
}

int mshape_arm64_is_call(uint32_t w)
{
    return (w & 0xFC000000u) == 0x94000000u || (w & 0xFFFFFC1Fu) == 0xD63F0000u ||
           (w & 0xFFFFFA1Fu) == 0xD63F081Fu || (w & 0xFFFFF800u) == 0xD73F0800u;
}

int mshape_arm64_is_ret(uint32_t w)
{
    return w == 0xD65F03C0u || w == 0xD65F0BFFu || w == 0xD65F0FFFu;
}

static int is_branch_register(uint32_t w)
{
    return (w & 0xFFFFFC1Fu) == 0xD61F0000u || (w & 0xFFFFFA1Fu) == 0xD61F081Fu ||
           (w & 0xFFFFF800u) == 0xD71F0800u;
}

static int add_step(struct mshape_arm64 *s, size_t end, int64_t depth)
{
    if (s->nsteps == MSHAPE_ARM64_STEPS || end > UINT16_MAX || depth < 0 || depth > INT32_MAX)
        return -1;
    s->end[s->nsteps] = (uint16_t)end;
    s->depth[s->nsteps] = (uint32_t)depth;
    return s->nsteps++;
}

int mshape_arm64_from_code(const uint8_t *code, size_t n, struct mshape_arm64 *s)
{
    memset(s, 0, sizeof *s);
    int64_t depth = 0;
    struct consts consts;
    consts.known = 0;
    for (size_t at = 0; at + 4 <= n && at < 4 * 24; at += 4) {
        uint32_t w = word(code + at);
        size_t end = at + 4;
        struct access a;
        unsigned rd, rn;
        int64_t imm;
        int by_register;
        if (is_hint(w) || is_probe(w) || track_constant(w, &consts))
            continue;
        imm = sp_by_register(w, &consts, &by_register);
        if (by_register && imm < 0) {
            if (add_step(s, end, depth - imm) < 0)
                return -1;
            depth -= imm;
            continue;
        }
        if (decode_access(w, &a) && !a.load && a.rn == SP) {
            if (a.mode == MODE_POST || (a.mode == MODE_PRE && a.offset >= 0))
                return -1; /* SP moving up in a prologue: not one we know */
            int64_t nd = a.mode == MODE_PRE ? depth - a.offset : depth;
            if (a.record && !s->ra_step) {
                int64_t record = a.mode == MODE_PRE ? 0 : a.offset; /* from the new SP */
                if (record < 0 || record + 16 > nd)
                    return -1;
                int k = add_step(s, end, nd);
                if (k < 0)
                    return -1;
                s->ra_step = (uint8_t)(k + 1);
                s->ra_save = (uint32_t)(nd - record - 8);
            } else if (a.mode == MODE_PRE && add_step(s, end, nd) < 0) {
                return -1;
            }
            depth = nd;
            continue;
        }
        if (decode_addsub(w, &rd, &rn, &imm) && rd == SP && rn == SP && imm <= 0) {
            if (add_step(s, end, depth - imm) < 0)
                return -1;
            depth -= imm;
            continue;
        }
        if (decode_addsub(w, &rd, &rn, &imm) && rd == FP && rn == SP && imm >= 0) {
            if (imm > depth || !s->ra_step)
                return -1;
            int k = add_step(s, end, depth);
            if (k < 0)
                return -1;
            s->fp_step = (uint8_t)(k + 1);
            s->fp_to_cfa = (uint32_t)(depth - imm);
            break; /* the record is built: the body's rule holds from here */
        }
        if (writes_sp(w))
            return -1;
        break;
    }
    return s->ra_step ? 0 : -1;
}

/* Is w an instruction only an epilogue has (what makes a branch after it a
 * tail call rather than a jump to cold code)? */
static int epilogue_only(uint32_t w)
{
    struct access a;
    unsigned rd, rn;
    int64_t imm;
    if (decode_access(w, &a) && a.load && a.rn == SP && (a.record || a.mode == MODE_POST))
        return 1;
    if ((w & 0xFFE0FFFFu) == 0x8B2063FFu)
        return 1; /* add sp, sp, xN */
    return decode_addsub(w, &rd, &rn, &imm) && rd == SP && (rn == SP || rn == FP);
}

void mshape_arm64_epilogue(const uint8_t *c, size_t n, uintptr_t pc, uintptr_t lo, uintptr_t hi,
                           uint32_t before, struct mshape_arm64_epilogue *e)
{
    memset(e, 0, sizeof *e);
    int seen = before && epilogue_only(before);
    int64_t sp = 0; /* SP's move so far */
    struct consts consts;
    consts.known = 0;
    if (before)
        track_constant(before, &consts); /* the size of a large frame, set just before */
    for (size_t at = 0; at + 4 <= n && at < 4 * 16; at += 4) {
        uint32_t w = word(c + at);
        struct access a;
        unsigned rd, rn;
        int64_t imm;
        int by_register;
        if (is_hint(w) || track_constant(w, &consts))
            continue;
        imm = sp_by_register(w, &consts, &by_register);
        if (by_register && imm > 0) {
            sp += imm;
            seen = 1;
            continue;
        }
        if (decode_access(w, &a) && a.load && a.rn == SP && a.mode != MODE_PRE) {
            if (a.record) {
                if (e->record)
                    return;
                e->record = 1;
                e->record_at = sp + (a.mode == MODE_OFFSET ? a.offset : 0);
            }
            if (a.mode == MODE_POST)
                sp += a.offset;
            seen |= a.record || a.mode == MODE_POST;
            continue;
        }
        if (decode_addsub(w, &rd, &rn, &imm) && rd == SP && rn == SP && imm >= 0) {
            sp += imm;
            seen = 1;
            continue;
        }
        if (decode_addsub(w, &rd, &rn, &imm) && rd == SP && rn == FP) {
            if (sp || e->record || e->from_fp)
                return;
            e->from_fp = 1;
            e->fp_adjust = imm;
            seen = 1;
            continue;
        }
        if (mshape_arm64_is_ret(w)) {
            e->found = 1;
        } else if ((w & 0xFC000000u) == 0x14000000u) {
            int64_t imm26 = (int64_t)(w & 0x3FFFFFF);
            if (imm26 & 0x2000000)
                imm26 -= 0x4000000;
            uintptr_t target = pc + at + (uintptr_t)(imm26 * 4);
            e->found = seen && (target < lo || target >= hi || target == lo);
        } else if (is_branch_register(w)) {
            e->found = seen;
        }
        break;
    }
    e->sp_adjust = sp;
}

uint32_t mshape_arm64_rf_end(const uint8_t *image, const uint32_t *f)
{
    uint32_t words = (f[1] & 3) ? (f[1] >> 2) & 0x7FF : word(image + f[1]) & 0x3FFFF;
    return f[0] + 4 * words;
}

NO_ASAN static int read_word(uintptr_t addr, uintptr_t lo, uintptr_t hi, uintptr_t *out)
{
    if (addr < lo || addr > hi - 8 || (addr & 7))
        return 0;
    *out = *(const uintptr_t *)addr;
    return 1;
}

int mshape_arm64_step(const struct mshape_arm64 *s, const struct mshape_arm64_where *w, int leaf,
                      struct walk_regs *r, uintptr_t *ra_slot, uintptr_t lo, uintptr_t hi)
{
    int done = s->nsteps;
    if (w->fn_start && r->pc >= w->fn_start) {
        uintptr_t off = r->pc - w->fn_start;
        done = 0;
        while (done < s->nsteps && s->end[done] <= off)
            done++;
    }
    uintptr_t cfa, slot = 0, ra = 0, fp = r->fp;
    *ra_slot = 0;
    struct mshape_arm64_epilogue e;
    e.found = 0;
    if (leaf && done == s->nsteps && w->code && w->code_len >= 4)
        mshape_arm64_epilogue(w->code, w->code_len, r->pc, w->lo, w->hi, w->before, &e);
    if (e.found) {
        uintptr_t base = e.from_fp ? r->fp + (uintptr_t)e.fp_adjust : r->sp;
        if (e.record)
            slot = base + (uintptr_t)e.record_at + 8;
        cfa = base + (uintptr_t)e.sp_adjust;
    } else {
        if (s->fp_step && done >= s->fp_step)
            cfa = r->fp + s->fp_to_cfa;
        else
            cfa = r->sp + (done ? s->depth[done - 1] : 0);
        if (s->ra_step && done >= s->ra_step)
            slot = cfa - s->ra_save;
    }
    if (slot) {
        if (!read_word(slot, lo, hi, &ra) || !read_word(slot - 8, lo, hi, &fp))
            return -1;
    } else if (leaf && r->lr) {
        ra = r->lr;
    } else {
        return -1;
    }
    if (cfa < r->sp || cfa > hi)
        return -1;
    *ra_slot = slot;
    r->pc = ra;
    r->sp = cfa;
    r->fp = fp;
    r->lr = 0;
    return 0;
}
