/*
 * cfi: see cfi.h.  A reader over the section checks every byte it takes;
 * CIEs are parsed when an FDE refers to them (a CIE is small, and parsing
 * it again for each FDE keeps the code free of a cache); each FDE's
 * instructions run on a small state machine that emits a row whenever the
 * location advances, and a CFI_NONE row where the FDE's range ends.
 */
#include "agent/signal/cfi.h"

#include <stdlib.h>
#include <string.h>

#include "common/mem.h"

/* DWARF register numbers: x86-64's, or arm64's frame pointer (x29), stack
 * pointer and link register (x30, its return address column) */
#if defined(__aarch64__)
#define REG_RBP 29
#define REG_RSP 31
#define REG_RA 30
#else
#define REG_RBP 6
#define REG_RSP 7
#define REG_RA 16
#endif

#define DW_EH_PE_omit 0xff
#define DW_EH_PE_absptr 0x00
#define DW_EH_PE_uleb128 0x01
#define DW_EH_PE_udata2 0x02
#define DW_EH_PE_udata4 0x03
#define DW_EH_PE_udata8 0x04
#define DW_EH_PE_sleb128 0x09
#define DW_EH_PE_sdata2 0x0a
#define DW_EH_PE_sdata4 0x0b
#define DW_EH_PE_sdata8 0x0c
#define DW_EH_PE_pcrel 0x10
#define DW_EH_PE_datarel 0x30
#define DW_EH_PE_indirect 0x80

#define STATE_STACK 16
/* The longest CIE accepted.  A CIE is parsed, and its initial instructions
 * run, again for each FDE that refers to it, so its length multiplies the
 * work: one CIE of 256 KiB shared by the 40,000 FDEs of a 1 MiB section
 * took 7 to 11 s (found by review; the fuzzer's inputs are too small to
 * show it), during which the agent holds the dynamic loader's lock (it
 * parses from dl_iterate_phdr).  The longest CIE of the ~1,100 libraries of
 * the test machine is 40 bytes; a CIE beyond this one is refused, and its
 * FDEs with it, so the work stays linear in the section's size. */
#define CIE_MAX_BYTES 512
/* The longest FDE cfi_index_row_copied takes: it copies the FDE and its CIE
 * onto the stack of a signal handler (an interrupted thread's own). */
#define COPIED_FDE_MAX 512

struct reader {
    const uint8_t *p, *end;
    const uint8_t *start;
    uint64_t address; /* of start */
    int bad;
};

static uint8_t u8(struct reader *r)
{
    if (r->p >= r->end) {
        r->bad = 1;
        return 0;
    }
    return *r->p++;
}

static uint64_t fixed(struct reader *r, int bytes)
{
    if (r->end - r->p < bytes) {
        r->bad = 1;
        r->p = r->end;
        return 0;
    }
    uint64_t v = 0;
    for (int i = 0; i < bytes; i++)
        v |= (uint64_t)r->p[i] << (8 * i);
    r->p += bytes;
    return v;
}

static uint64_t uleb(struct reader *r)
{
    uint64_t v = 0;
    for (int shift = 0;; shift += 7) {
        uint8_t b = u8(r);
        if (shift < 64)
            v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80) || r->bad)
            return v;
    }
}

/* Built unsigned, sign-extended without shifting a signed value: a tenth
 * byte extends from bit 63, where 1 << 63 overflows int64_t (found by
 * fuzz_cfi, tests/fuzz/corpus/cfi/crash-sleb-shift-63). */
static int64_t sleb(struct reader *r)
{
    uint64_t v = 0;
    int shift = 0;
    uint8_t b;
    do {
        b = u8(r);
        if (shift < 64)
            v |= (uint64_t)(b & 0x7f) << shift;
        shift += 7;
    } while ((b & 0x80) && !r->bad);
    if (shift < 64 && (b & 0x40))
        v |= ~(uint64_t)0 << shift;
    return (int64_t)v;
}

/* value * factor, a factored offset (CIE's data alignment times an
 * operand).  A product that does not fit, which no compiler emits but any
 * bytes can ask for, is INT64_MAX: beyond every range a row can hold, so
 * emit() makes the row unsupported; so is INT64_MIN, so that the result can
 * be negated.  (It was a plain multiplication, whose overflow is undefined:
 * found by fuzz_cfi, tests/fuzz/corpus/cfi/crash-offset-overflow.) */
static int64_t scale_u(uint64_t value, int64_t factor)
{
    int64_t v;
    return __builtin_mul_overflow(value, factor, &v) || v == INT64_MIN ? INT64_MAX : v;
}

static int64_t scale_s(int64_t value, int64_t factor)
{
    int64_t v;
    return __builtin_mul_overflow(value, factor, &v) || v == INT64_MIN ? INT64_MAX : v;
}

/* An encoded pointer.  Indirect pointers (to a GOT slot) and data-relative
 * ones appear only in personality and LSDA fields, which we skip: they are
 * read for their size only. */
static uint64_t pointer(struct reader *r, uint8_t enc)
{
    if (enc == DW_EH_PE_omit)
        return 0;
    uint64_t at = r->address + (uint64_t)(r->p - r->start);
    uint64_t v;
    switch (enc & 0x0f) {
    case DW_EH_PE_absptr: v = fixed(r, 8); break;
    case DW_EH_PE_uleb128: v = uleb(r); break;
    case DW_EH_PE_udata2: v = fixed(r, 2); break;
    case DW_EH_PE_udata4: v = fixed(r, 4); break;
    case DW_EH_PE_udata8: v = fixed(r, 8); break;
    case DW_EH_PE_sleb128: v = (uint64_t)sleb(r); break;
    case DW_EH_PE_sdata2: v = (uint64_t)(int64_t)(int16_t)fixed(r, 2); break;
    case DW_EH_PE_sdata4: v = (uint64_t)(int64_t)(int32_t)fixed(r, 4); break;
    case DW_EH_PE_sdata8: v = fixed(r, 8); break;
    default: r->bad = 1; return 0;
    }
    if ((enc & 0x70) == DW_EH_PE_pcrel)
        v += at;
    return v;
}

struct cie {
    uint64_t code_align;
    int64_t data_align;
    uint64_t ra_reg;
    uint8_t fde_enc;
    int has_aug_data;
    int signal_frame; /* 'S': the FDEs are signal frames */
    const uint8_t *insns, *insns_end;
};

/* Why parse_cie or parse_fde refused an entry. */
enum { REFUSED_MALFORMED = -1, REFUSED_AUGMENTATION = -2,
       REFUSED_EMPTY = -3 /* no code (a linker's leftover): not a function */ };

static int parse_cie(struct reader *section, const uint8_t *at, struct cie *c)
{
    struct reader r = *section;
    r.p = at;
    r.bad = 0;
    uint64_t len = fixed(&r, 4);
    if (len == 0xffffffffu)
        len = fixed(&r, 8);
    if (r.bad || len > (uint64_t)(r.end - r.p) || len > CIE_MAX_BYTES)
        return -1;
    r.end = r.p + len;
    if (fixed(&r, 4) != 0) /* CIE id */
        return -1;
    uint8_t version = u8(&r);
    const char *aug = (const char *)r.p;
    while (u8(&r) != 0 && !r.bad) {
    }
    if (r.bad)
        return -1;
    if (version >= 4) {
        u8(&r); /* address size */
        u8(&r); /* segment selector size */
    }
    c->code_align = uleb(&r);
    c->data_align = sleb(&r);
    c->ra_reg = version == 1 ? u8(&r) : uleb(&r);
    c->fde_enc = DW_EH_PE_absptr;
    c->has_aug_data = 0;
    c->signal_frame = 0;
    if (aug[0] == 'z') {
        c->has_aug_data = 1;
        uint64_t aug_len = uleb(&r);
        const uint8_t *aug_end = r.p + aug_len;
        if (aug_len > (uint64_t)(r.end - r.p))
            return -1;
        for (const char *a = aug + 1; *a && !r.bad; a++) {
            switch (*a) {
            case 'R': c->fde_enc = u8(&r); break;
            case 'L': u8(&r); break;
            case 'P': {
                uint8_t enc = u8(&r);
                pointer(&r, (uint8_t)(enc & ~DW_EH_PE_indirect));
                break;
            }
            case 'S': c->signal_frame = 1; break;
            case 'B': case 'G': break;
            default: goto done; /* unknown: the length lets us skip the rest */
            }
        }
    done:
        r.p = aug_end;
    } else if (aug[0]) {
        return REFUSED_AUGMENTATION; /* an augmentation we cannot skip */
    }
    if (r.bad)
        return -1;
    c->insns = r.p;
    c->insns_end = r.end;
    return 0;
}

/* The PLT's CFA expression: rsp + 8 + ((rip & 15) >= N) << 3, that is
 * breg7 8; breg16 0; lit15; and; litN; ge; lit3; shl; plus. */
static int plt_expression(const uint8_t *p, uint64_t n)
{
    static const uint8_t head[] = {0x77, 0x08, 0x80, 0x00, 0x3f, 0x1a};
    static const uint8_t tail[] = {0x2a, 0x33, 0x24, 0x22};
    if (n != 11 || memcmp(p, head, sizeof head) != 0 || memcmp(p + 7, tail, sizeof tail) != 0)
        return CFI_UNSUPPORTED;
    return p[6] == 0x3a ? CFI_PLT10 : p[6] == 0x3b ? CFI_PLT11 : CFI_UNSUPPORTED;
}

/* The signal trampoline's CFA: the interrupted RSP, saved in the
 * ucontext at RSP + 160 (breg7 160; deref). */
static int sigframe_expression(const uint8_t *p, uint64_t n)
{
    static const uint8_t expr[] = {0x77, 0xa0, 0x01, 0x06};
    return n == sizeof expr && memcmp(p, expr, sizeof expr) == 0;
}

/* The unwind state at one location. */
struct state {
    int cfa;            /* enum cfi_cfa */
    int64_t cfa_offset;
    int rbp_saved;      /* 1: at CFA + rbp_offset */
    int64_t rbp_offset;
    int rbp_unsupported;
    int ra_undefined;
    int ra_saved;       /* 1: at CFA + ra_offset (arm64; x86-64's is always at CFA - 8) */
    int64_t ra_offset;
    int cfa_gap;        /* enum cfi_gap, when cfa is CFI_UNSUPPORTED */
    int rbp_gap;        /* enum cfi_gap, when rbp_unsupported */
};

struct rows {
    struct cfi_row *v;
    size_t count, cap;
    size_t floor; /* first row of the FDE being parsed: emit replaces none below */
    int oom;
    uint32_t gaps; /* 1 << enum cfi_gap met by the FDE being parsed */
    int signal_frame; /* the FDE being parsed is a signal frame's ('S') */
    /* one row only, kept on the stack (cfi_index_row: no allocation, and
     * the FDE's program run no further than needed): the last row at or
     * before `target` */
    int find;
    uint64_t target;
    struct cfi_row found;
    int have;
};

/* The rows of one FDE, a sorted run. */
struct run {
    size_t first, count;
    uint64_t pc;
};

static void emit(struct rows *rows, uint64_t pc, const struct state *s)
{
    struct cfi_row row;
    memset(&row, 0, sizeof row);
    row.pc = pc;
    row.cfa = (uint8_t)s->cfa;
    /* a signal frame's register rules are expressions into the ucontext:
     * the row's kind says all */
    if (s->cfa == CFI_UNSUPPORTED) {
        rows->gaps |= 1u << s->cfa_gap;
    } else if (s->cfa != CFI_NONE && s->cfa != CFI_SIGFRAME) {
        if (s->rbp_unsupported) {
            row.cfa = CFI_UNSUPPORTED;
            rows->gaps |= 1u << s->rbp_gap;
        } else if (s->cfa_offset < INT32_MIN || s->cfa_offset > INT32_MAX ||
                   (s->rbp_saved &&
                    (s->rbp_offset < INT16_MIN || s->rbp_offset > INT16_MAX || !s->rbp_offset))) {
            row.cfa = CFI_UNSUPPORTED;
            rows->gaps |= 1u << CFI_GAP_OFFSET_RANGE;
        }
    }
#if defined(__aarch64__)
    /* the kernel's trampoline: its rules lead through the frame record the
     * kernel pushed, past the interrupted pc; the ucontext has it all */
    if (rows->signal_frame && s->cfa != CFI_NONE)
        row.cfa = CFI_SIGFRAME;
    if (row.cfa == CFI_RSP || row.cfa == CFI_RBP) {
        if (s->ra_saved && (s->ra_offset < INT16_MIN || s->ra_offset > INT16_MAX || !s->ra_offset)) {
            row.cfa = CFI_UNSUPPORTED;
            rows->gaps |= 1u << CFI_GAP_OFFSET_RANGE;
        }
        row.ra_offset = s->ra_saved ? (int16_t)s->ra_offset : 0;
    }
#endif
    row.cfa_offset = (int32_t)s->cfa_offset;
    row.rbp_offset = s->rbp_saved ? (int16_t)s->rbp_offset : 0;
    row.outermost = (uint8_t)s->ra_undefined;
    if (rows->find) {
        if (pc <= rows->target) {
            rows->found = row;
            rows->have = 1;
        }
        return;
    }
    /* a row at the same pc replaces the one before (several ops at one
     * location) */
    if (rows->count > rows->floor && rows->v[rows->count - 1].pc == pc) {
        rows->v[rows->count - 1] = row;
        return;
    }
    struct cfi_row *grown = mem_grow(rows->v, &rows->cap, rows->count + 1, sizeof *grown);
    if (!grown) {
        rows->oom = 1;
        return;
    }
    rows->v = grown;
    rows->v[rows->count++] = row;
}

/* `gap`: -1 for a rule the walker follows, or why RBP's is not. */
static void set_reg_rule(struct state *s, uint64_t reg, int saved, int64_t offset, int gap)
{
    if (reg == REG_RBP) {
        s->rbp_saved = saved;
        s->rbp_offset = offset;
        s->rbp_unsupported = gap >= 0;
        s->rbp_gap = gap >= 0 ? gap : 0;
    } else if (reg == REG_RA) {
        s->ra_undefined = 0;
        s->ra_saved = saved;
        s->ra_offset = offset;
    }
}

static void set_cfa_register(struct state *s, uint64_t reg)
{
    s->cfa = reg == REG_RSP ? CFI_RSP : reg == REG_RBP ? CFI_RBP : CFI_UNSUPPORTED;
    s->cfa_gap = CFI_GAP_CFA_REGISTER;
}

/* Runs CFA instructions from [p, end), emitting rows from `loc` on.  The
 * CIE's initial instructions run with rows == NULL. */
static int run(struct reader *section, const uint8_t *p, const uint8_t *end, const struct cie *c,
               struct state *s, const struct state *initial, uint64_t loc, uint64_t loc_end,
               uintptr_t bias, struct rows *rows)
{
    struct reader r = *section;
    r.p = p;
    r.end = end;
    r.bad = 0;
    struct state stack[STATE_STACK];
    int depth = 0;
    while (r.p < r.end && !r.bad) {
        uint8_t op = u8(&r);
        uint64_t advance = 0, reg;
        switch (op & 0xc0) {
        case 0x40: advance = (op & 0x3f) * c->code_align; goto advance;
        case 0x80:
            set_reg_rule(s, op & 0x3f, 1, scale_u(uleb(&r), c->data_align), -1);
            continue;
        case 0xc0:
            reg = op & 0x3f;
            goto restore;
        default: break;
        }
        switch (op) {
        case 0x00: break; /* nop */
        case 0x01: {      /* set_loc */
            uint64_t to = pointer(&r, c->fde_enc);
            if (to > loc) {
                advance = to - loc;
                goto advance;
            }
            break;
        }
        case 0x02: advance = fixed(&r, 1) * c->code_align; goto advance;
        case 0x03: advance = fixed(&r, 2) * c->code_align; goto advance;
        case 0x04: advance = fixed(&r, 4) * c->code_align; goto advance;
        case 0x05: reg = uleb(&r); set_reg_rule(s, reg, 1, scale_u(uleb(&r), c->data_align), -1); break;
        case 0x06: reg = uleb(&r); goto restore;
        case 0x07: /* undefined */
            reg = uleb(&r);
            if (reg == REG_RA)
                s->ra_undefined = 1;
            else
                set_reg_rule(s, reg, 0, 0, -1);
            break;
        case 0x08: set_reg_rule(s, uleb(&r), 0, 0, -1); break; /* same_value */
        case 0x09: /* register: saved in another register */
            reg = uleb(&r);
            uleb(&r);
            set_reg_rule(s, reg, 0, 0, reg == REG_RBP ? CFI_GAP_RBP_REGISTER : -1);
            break;
        case 0x0a: /* remember_state */
            if (depth < STATE_STACK)
                stack[depth] = *s;
            depth++;
            break;
        case 0x0b: /* restore_state */
            if (depth > 0 && --depth < STATE_STACK) {
                int ra = s->ra_undefined;
                *s = stack[depth];
                s->ra_undefined = ra && s->ra_undefined;
            }
            break;
        case 0x0c: /* def_cfa */
            reg = uleb(&r);
            set_cfa_register(s, reg);
            s->cfa_offset = (int64_t)uleb(&r);
            break;
        case 0x0d: /* def_cfa_register */
            reg = uleb(&r);
            set_cfa_register(s, reg);
            break;
        case 0x0e: s->cfa_offset = (int64_t)uleb(&r); break; /* def_cfa_offset */
        case 0x0f: { /* def_cfa_expression */
            uint64_t n = uleb(&r);
            if (n > (uint64_t)(r.end - r.p)) {
                r.bad = 1;
                break;
            }
            s->cfa = sigframe_expression(r.p, n) ? CFI_SIGFRAME : plt_expression(r.p, n);
            s->cfa_gap = c->signal_frame ? CFI_GAP_SIGNAL_FRAME : CFI_GAP_CFA_EXPRESSION;
            r.p += n;
            break;
        }
        case 0x10: case 0x16: { /* expression, val_expression */
            reg = uleb(&r);
            uint64_t n = uleb(&r);
            if (n > (uint64_t)(r.end - r.p)) {
                r.bad = 1;
                break;
            }
            r.p += n;
            set_reg_rule(s, reg, 0, 0, reg == REG_RBP ? CFI_GAP_RBP_EXPRESSION : -1);
            break;
        }
        case 0x11: reg = uleb(&r); set_reg_rule(s, reg, 1, scale_s(sleb(&r), c->data_align), -1); break;
        case 0x12: /* def_cfa_sf */
            reg = uleb(&r);
            set_cfa_register(s, reg);
            s->cfa_offset = scale_s(sleb(&r), c->data_align);
            break;
        case 0x13: s->cfa_offset = scale_s(sleb(&r), c->data_align); break;
        case 0x14: /* val_offset: the value itself, not a slot */
            reg = uleb(&r);
            uleb(&r);
            set_reg_rule(s, reg, 0, 0, reg == REG_RBP ? CFI_GAP_RBP_REGISTER : -1);
            break;
        case 0x15: /* val_offset_sf */
            reg = uleb(&r);
            sleb(&r);
            set_reg_rule(s, reg, 0, 0, reg == REG_RBP ? CFI_GAP_RBP_REGISTER : -1);
            break;
        case 0x2e: uleb(&r); break; /* GNU_args_size */
#if defined(__aarch64__)
        case 0x2d: break; /* AARCH64_negate_ra_state: the saved x30 is signed (the
                           * walker strips every return address) */
#endif
        case 0x2f: /* GNU_negative_offset_extended */
            reg = uleb(&r);
            set_reg_rule(s, reg, 1, -scale_u(uleb(&r), c->data_align), -1);
            break;
        default: r.bad = 1; break; /* unknown opcode: its operands are unknown too */
        }
        continue;
    advance:
        if (rows && loc < loc_end)
            emit(rows, loc - bias, s);
        if (advance > UINT64_MAX - loc) {
            r.bad = 1; /* past the end of the address space */
            break;
        }
        loc += advance;
        if (rows && rows->find && loc - bias > rows->target)
            return r.bad ? -1 : 0; /* past the row sought */
        continue;
    restore:
        if (initial) {
            if (reg == REG_RBP) {
                s->rbp_saved = initial->rbp_saved;
                s->rbp_offset = initial->rbp_offset;
                s->rbp_unsupported = initial->rbp_unsupported;
                s->rbp_gap = initial->rbp_gap;
            } else if (reg == REG_RA) {
                s->ra_undefined = initial->ra_undefined;
                s->ra_saved = initial->ra_saved;
                s->ra_offset = initial->ra_offset;
            }
        }
    }
    if (rows && loc < loc_end)
        emit(rows, loc - bias, s);
    return r.bad ? -1 : 0;
}

/* The rows of an FDE from just past its CIE pointer (p) to its end, its CIE
 * c parsed from cie_section (the FDE's own section, or a copy of the CIE). */
static int fde_rows(struct reader *section, const uint8_t *p, const uint8_t *end,
                    struct reader *cie_section, const struct cie *c, uintptr_t bias,
                    struct rows *rows)
{
    struct reader r = *section;
    r.p = p;
    r.end = end;
    r.bad = 0;
    uint64_t pc_begin = pointer(&r, c->fde_enc);
    uint64_t pc_range = pointer(&r, (uint8_t)(c->fde_enc & 0x0f));
    if (c->has_aug_data) {
        uint64_t n = uleb(&r);
        if (n > (uint64_t)(r.end - r.p))
            return -1;
        r.p += n;
    }
    if (r.bad || pc_begin < bias)
        return -1;
    if (pc_begin == 0 || pc_range == 0)
        return REFUSED_EMPTY;
    if (pc_range > UINT64_MAX - pc_begin)
        return REFUSED_MALFORMED; /* a range past the end of the address space */
    struct state initial;
    memset(&initial, 0, sizeof initial);
    initial.cfa = CFI_RSP;
    initial.cfa_offset = 8;
    rows->signal_frame = c->signal_frame;
    int bad = run(cie_section, c->insns, c->insns_end, c, &initial, NULL, 0, 0, 0, NULL) < 0;
    struct state s = initial;
    bad |= run(section, r.p, r.end, c, &s, &initial, pc_begin, pc_begin + pc_range, bias, rows) < 0;
    if (bad) /* the rows up to the bad instruction are kept */
        rows->gaps |= 1u << CFI_GAP_MALFORMED;
    /* the end of the range: no CFI until another FDE says otherwise */
    struct state none;
    memset(&none, 0, sizeof none);
    emit(rows, pc_begin + pc_range - bias, &none);
    return 0;
}

static int parse_fde(struct reader *section, const uint8_t *body, const uint8_t *end,
                     uintptr_t bias, struct rows *rows)
{
    struct reader r = *section;
    r.p = body;
    r.end = end;
    r.bad = 0;
    const uint8_t *cie_field = r.p;
    uint32_t cie_delta = (uint32_t)fixed(&r, 4);
    if (r.bad || cie_delta > (uint64_t)(cie_field - section->start))
        return -1;
    struct cie c;
    int refused = parse_cie(section, cie_field - cie_delta, &c);
    if (refused < 0)
        return refused;
    return fde_rows(section, r.p, end, section, &c, bias, rows);
}

static int by_pc(const void *a, const void *b)
{
    const struct cfi_row *x = a, *y = b;
    if (x->pc != y->pc)
        return x->pc < y->pc ? -1 : 1;
    /* at one pc, the end marker of the FDE before sorts first, so the
     * real row, kept as the last of its pc, wins */
    int xn = x->cfa == CFI_NONE, yn = y->cfa == CFI_NONE;
    return yn - xn;
}

static int by_run_pc(const void *a, const void *b)
{
    const struct run *x = a, *y = b;
    return x->pc < y->pc ? -1 : x->pc > y->pc;
}

/* Puts the rows in address order and keeps one per pc (one FDE's end
 * marker shares its pc with the next FDE's first row).  Each FDE's rows
 * are already in order, so whole FDEs are ordered (17,000 of them for
 * libcoreclr, not 96,000 rows); FDEs that overlap, which well-formed
 * objects do not have, fall back to sorting every row. */
static int finish(struct rows *rows, struct run *runs, size_t run_count, struct cfi_table *out)
{
    int ordered = 1;
    for (size_t i = 1; i < run_count && ordered; i++)
        ordered = runs[i - 1].pc <= runs[i].pc;
    if (!ordered) {
        qsort(runs, run_count, sizeof *runs, by_run_pc);
        struct cfi_row *v = mem_alloc((rows->count ? rows->count : 1) * sizeof *v);
        if (!v)
            return -1;
        size_t at = 0;
        for (size_t i = 0; i < run_count; i++) {
            memcpy(v + at, rows->v + runs[i].first, runs[i].count * sizeof *v);
            at += runs[i].count;
        }
        mem_free(rows->v);
        rows->v = v;
        rows->count = at;
        rows->cap = at;
    }
    int sorted = 1;
    for (size_t i = 1; i < rows->count && sorted; i++)
        sorted = by_pc(&rows->v[i - 1], &rows->v[i]) <= 0;
    if (!sorted)
        qsort(rows->v, rows->count, sizeof *rows->v, by_pc);
    size_t kept = 0;
    for (size_t i = 0; i < rows->count; i++) {
        if (kept && rows->v[kept - 1].pc == rows->v[i].pc) {
            rows->v[kept - 1] = rows->v[i]; /* the last of a pc: a real row sorts last */
            continue;
        }
        rows->v[kept++] = rows->v[i];
    }
    out->rows = rows->v;
    out->count = kept;
    return 0;
}

int cfi_parse_section(const uint8_t *eh_frame, size_t size, uint64_t address, uintptr_t bias,
                      struct cfi_table *out)
{
    struct reader section = {eh_frame, eh_frame + size, eh_frame, address, 0};
    memset(out, 0, sizeof *out);
    struct rows rows;
    memset(&rows, 0, sizeof rows);
    struct run *runs = NULL;
    size_t run_count = 0, run_cap = 0;
    const uint8_t *p = eh_frame;
    while (p + 4 <= section.end) {
        struct reader r = section;
        r.p = p;
        uint64_t len = fixed(&r, 4);
        if (len == 0)
            break; /* the terminator */
        if (len == 0xffffffffu)
            len = fixed(&r, 8);
        if (r.bad || len < 4 || len > (uint64_t)(section.end - r.p))
            break;
        const uint8_t *body = r.p, *end = r.p + len;
        uint32_t id = (uint32_t)fixed(&r, 4);
        if (id != 0) {
            rows.floor = rows.count;
            rows.gaps = 0;
            /* a bad FDE is skipped, and counted */
            int refused = parse_fde(&section, body, end, bias, &rows);
            if (refused == REFUSED_AUGMENTATION)
                rows.gaps |= 1u << CFI_GAP_AUGMENTATION;
            else if (refused == REFUSED_MALFORMED)
                rows.gaps |= 1u << CFI_GAP_MALFORMED;
            if (refused != REFUSED_EMPTY)
                out->gaps.functions++;
            for (int g = 0; g < CFI_GAP_COUNT; g++)
                if (rows.gaps & (1u << g))
                    out->gaps.n[g]++;
            if (rows.count > rows.floor) {
                struct run *grown = mem_grow(runs, &run_cap, run_count + 1, sizeof *runs);
                if (!grown) {
                    rows.oom = 1;
                    break;
                }
                runs = grown;
                runs[run_count++] = (struct run){rows.floor, rows.count - rows.floor,
                                                 rows.v[rows.floor].pc};
            }
        }
        if (rows.oom)
            break;
        p = end;
    }
    if (rows.oom || finish(&rows, runs, run_count, out) < 0) {
        mem_free(rows.v);
        mem_free(runs);
        memset(out, 0, sizeof *out);
        return -1;
    }
    mem_free(runs);
    return 0;
}

int cfi_parse_hdr(const uint8_t *hdr, const uint8_t *lo, const uint8_t *hi, uintptr_t bias,
                  struct cfi_table *out)
{
    memset(out, 0, sizeof *out);
    if (hdr < lo || hi - hdr < 4 || hdr[0] != 1)
        return 0;
    struct reader r = {hdr + 4, hi, hdr, (uint64_t)(uintptr_t)hdr, 0};
    uint64_t eh_frame = pointer(&r, hdr[1]);
    if (r.bad || eh_frame < (uintptr_t)lo || eh_frame >= (uintptr_t)hi)
        return 0;
    const uint8_t *start = (const uint8_t *)(uintptr_t)eh_frame;
    return cfi_parse_section(start, (size_t)(hi - start), eh_frame, bias, out);
}

void cfi_free(struct cfi_table *t)
{
    mem_free(t->rows);
    t->rows = NULL;
    t->count = 0;
}

const struct cfi_row *cfi_find(const struct cfi_table *t, uint64_t pc)
{
    size_t a = 0, b = t->count;
    while (a < b) { /* first row with row.pc > pc */
        size_t m = a + (b - a) / 2;
        if (t->rows[m].pc <= pc)
            a = m + 1;
        else
            b = m;
    }
    if (a == 0)
        return NULL;
    const struct cfi_row *row = &t->rows[a - 1];
    return row->cfa == CFI_NONE ? NULL : row;
}

/* ---- one function at a time, through .eh_frame_hdr's search table ----------- */

/* The table's encoding every linker writes (GNU ld, gold, lld, mold):
 * signed 32-bit offsets from the start of .eh_frame_hdr. */
#define HDR_TABLE_ENC (DW_EH_PE_datarel | DW_EH_PE_sdata4)

int cfi_index_open(const uint8_t *hdr, const uint8_t *lo, const uint8_t *hi, uintptr_t bias,
                   struct cfi_index *out)
{
    memset(out, 0, sizeof *out);
    if (!hdr || hdr < lo || hdr >= hi || hi - hdr < 4 || hdr[0] != 1)
        return 0;
    uint8_t count_enc = hdr[2], table_enc = hdr[3];
    struct reader r = {hdr + 4, hi, hdr, (uint64_t)(uintptr_t)hdr, 0};
    uint64_t eh_frame = pointer(&r, hdr[1]);
    if (r.bad || eh_frame < (uintptr_t)lo || eh_frame >= (uintptr_t)hi)
        return 0;
    if (count_enc == DW_EH_PE_omit || (count_enc & 0x70) != 0 || table_enc != HDR_TABLE_ENC)
        return 0; /* no search table (or one no linker writes): whole tables only */
    uint64_t count = pointer(&r, count_enc);
    if (r.bad || count == 0 || count > (uint64_t)(hi - r.p) / 8)
        return 0;
    out->hdr = hdr;
    out->table = r.p;
    out->count = (size_t)count;
    out->eh_frame = (const uint8_t *)(uintptr_t)eh_frame;
    out->hi = hi;
    out->bias = bias;
    return 1;
}

static int64_t s32_at(const uint8_t *p)
{
    uint32_t v = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
    return (int64_t)(int32_t)v;
}

int cfi_index_open_copied(uint64_t hdr, uint64_t lo, uint64_t hi, uintptr_t bias,
                          cfi_copy_fn copy, struct cfi_index *out)
{
    memset(out, 0, sizeof *out);
    uint8_t head[12];
    if (hdr < lo || hdr >= hi || hi - hdr < sizeof head || copy(head, hdr, sizeof head) < 0 ||
        head[0] != 1)
        return 0;
    /* what linkers write: the section's address pcrel sdata4, the count
     * udata4, the table datarel sdata4 pairs (cfi_index_open takes more
     * encodings of the first two; an object with others is guessed at until
     * it is listed) */
    if (head[1] != 0x1b || head[2] != DW_EH_PE_udata4 || head[3] != HDR_TABLE_ENC)
        return 0;
    uint64_t eh_frame = hdr + 4 + (uint64_t)s32_at(head + 4);
    uint64_t count = (uint32_t)s32_at(head + 8);
    if (eh_frame < lo || eh_frame >= hi || count == 0 || count > (hi - hdr - sizeof head) / 8)
        return 0;
    out->hdr = (const uint8_t *)(uintptr_t)hdr;
    out->table = (const uint8_t *)(uintptr_t)(hdr + sizeof head);
    out->count = (size_t)count;
    out->eh_frame = (const uint8_t *)(uintptr_t)eh_frame;
    out->hi = (const uint8_t *)(uintptr_t)hi;
    out->bias = bias;
    return 1;
}

/* The i-th entry's initial location, a run-time address. */
static uint64_t entry_pc(const struct cfi_index *ix, size_t i)
{
    return (uint64_t)(uintptr_t)ix->hdr + (uint64_t)s32_at(ix->table + 8 * i);
}

/* The last entry whose function starts at or before run-time address a;
 * ix->count when none does. */
static size_t entry_before(const struct cfi_index *ix, uint64_t a)
{
    size_t lo = 0, hi = ix->count;
    while (lo < hi) { /* first entry starting after a */
        size_t m = lo + (hi - lo) / 2;
        if (entry_pc(ix, m) <= a)
            lo = m + 1;
        else
            hi = m;
    }
    return lo == 0 ? ix->count : lo - 1;
}

/* The FDE of entry i: its body and end, checked to lie in .eh_frame's
 * segment.  Returns 0 when it does not (a damaged table). */
static int entry_fde(const struct cfi_index *ix, size_t i, const uint8_t **fde,
                     const uint8_t **body, const uint8_t **end)
{
    uint64_t at = (uint64_t)(uintptr_t)ix->hdr + (uint64_t)s32_at(ix->table + 8 * i + 4);
    if (at < (uintptr_t)ix->eh_frame || at >= (uintptr_t)ix->hi)
        return 0;
    struct reader r = {(const uint8_t *)(uintptr_t)at, ix->hi, ix->eh_frame, 0, 0};
    uint64_t len = fixed(&r, 4);
    if (len == 0xffffffffu)
        len = fixed(&r, 8);
    if (r.bad || len < 4 || len > (uint64_t)(r.end - r.p))
        return 0;
    *fde = (const uint8_t *)(uintptr_t)at;
    *body = r.p;
    *end = r.p + len;
    return s32_at(r.p) != 0; /* a CIE where an FDE should be */
}

static struct reader index_section(const struct cfi_index *ix)
{
    struct reader section = {ix->eh_frame, ix->hi, ix->eh_frame,
                             (uint64_t)(uintptr_t)ix->eh_frame, 0};
    return section;
}

int cfi_index_row(const struct cfi_index *ix, uint64_t pc, size_t max_fde_bytes,
                  struct cfi_row *row)
{
    uint64_t a = pc + ix->bias;
    size_t i = entry_before(ix, a);
    const uint8_t *fde, *body, *end;
    if (i == ix->count || !entry_fde(ix, i, &fde, &body, &end))
        return 0;
    if ((size_t)(end - body) > max_fde_bytes)
        return -1;
    struct reader section = index_section(ix);
    struct rows rows;
    memset(&rows, 0, sizeof rows);
    rows.find = 1;
    rows.target = pc;
    if (parse_fde(&section, body, end, ix->bias, &rows) < 0 || !rows.have ||
        rows.found.cfa == CFI_NONE)
        return 0;
    *row = rows.found;
    return 1;
}

int cfi_index_row_copied(const struct cfi_index *ix, uint64_t pc, cfi_copy_fn copy,
                         struct cfi_row *row)
{
    uint64_t a = pc + ix->bias, hdr = (uint64_t)(uintptr_t)ix->hdr;
    uint64_t table = (uint64_t)(uintptr_t)ix->table;
    size_t lo = 0, hi = ix->count;
    uint8_t word[4];
    while (lo < hi) { /* first entry starting after a */
        size_t m = lo + (hi - lo) / 2;
        if (copy(word, table + 8 * m, 4) < 0)
            return -1;
        if (hdr + (uint64_t)s32_at(word) <= a)
            lo = m + 1;
        else
            hi = m;
    }
    if (lo == 0 || copy(word, table + 8 * (lo - 1) + 4, 4) < 0)
        return lo == 0 ? 0 : -1;
    uint64_t at = hdr + (uint64_t)s32_at(word);
    uint64_t eh_frame = (uint64_t)(uintptr_t)ix->eh_frame, end = (uint64_t)(uintptr_t)ix->hi;
    if (at < eh_frame || at >= end || end - at < 8)
        return 0;
    uint8_t fde[4 + COPIED_FDE_MAX];
    if (copy(fde, at, 4) < 0)
        return -1;
    uint32_t len = (uint32_t)s32_at(fde);
    if (len == 0xffffffffu)
        return -1; /* a 64-bit length: the collector's */
    if (len < 8 || len > end - at - 4)
        return 0; /* not an FDE of this section (a damaged table) */
    if (len > COPIED_FDE_MAX)
        return -1; /* long: the collector's */
    if (copy(fde + 4, at + 4, len) < 0)
        return -1;
    uint32_t cie_delta = (uint32_t)s32_at(fde + 4);
    if (cie_delta == 0 || cie_delta > at + 4 - eh_frame)
        return 0; /* a CIE where an FDE should be, or one outside the section */
    uint64_t cie_at = at + 4 - cie_delta;
    uint8_t cie[4 + CIE_MAX_BYTES];
    if (copy(cie, cie_at, 4) < 0)
        return -1;
    uint32_t cie_len = (uint32_t)s32_at(cie);
    if (cie_len > CIE_MAX_BYTES || cie_len > end - cie_at - 4)
        return 0; /* refused in place too */
    if (copy(cie + 4, cie_at + 4, cie_len) < 0)
        return -1;
    struct reader fde_section = {fde, fde + 4 + len, fde, at, 0};
    struct reader cie_section = {cie, cie + 4 + cie_len, cie, cie_at, 0};
    struct cie c;
    if (parse_cie(&cie_section, cie, &c) < 0)
        return 0;
    struct rows rows;
    memset(&rows, 0, sizeof rows);
    rows.find = 1;
    rows.target = pc;
    if (fde_rows(&fde_section, fde + 8, fde + 4 + len, &cie_section, &c, ix->bias, &rows) < 0 ||
        !rows.have || rows.found.cfa == CFI_NONE)
        return 0;
    *row = rows.found;
    return 1;
}

int cfi_index_function(const struct cfi_index *ix, uint64_t pc, struct cfi_function *out)
{
    memset(out, 0, sizeof *out);
    uint64_t a = pc + ix->bias;
    size_t i = entry_before(ix, a);
    /* where no function covers pc, the gap reaches the next one's start */
    size_t next = i == ix->count ? 0 : i + 1;
    out->lo = i == ix->count ? 0 : entry_pc(ix, i) - ix->bias;
    out->hi = next < ix->count ? entry_pc(ix, next) - ix->bias : UINT64_MAX;
    if (out->lo > pc || out->hi <= pc) { /* an unsorted table: this pc alone */
        out->lo = pc;
        out->hi = pc + 1;
    }
    const uint8_t *fde, *body, *end;
    if (i == ix->count || !entry_fde(ix, i, &fde, &body, &end))
        return 0;
    struct reader section = index_section(ix);
    struct rows rows;
    memset(&rows, 0, sizeof rows);
    int refused = parse_fde(&section, body, end, ix->bias, &rows);
    if (rows.oom) {
        mem_free(rows.v);
        memset(out, 0, sizeof *out);
        return -1;
    }
    out->counted = refused != REFUSED_EMPTY;
    out->gaps = rows.gaps | (refused == REFUSED_AUGMENTATION ? 1u << CFI_GAP_AUGMENTATION
                             : refused == REFUSED_MALFORMED  ? 1u << CFI_GAP_MALFORMED
                                                             : 0);
    /* rows from the function's start; the last is its end marker */
    if (rows.count >= 2 && rows.v[0].pc <= pc && pc < rows.v[rows.count - 1].pc) {
        out->lo = rows.v[0].pc;
        out->hi = rows.v[rows.count - 1].pc;
        out->rows = rows.v;
        out->count = rows.count - 1;
        return 1;
    }
    /* past its end, or before its real start (a damaged table): the gap
     * around pc, up to the function's rows */
    if (rows.count >= 2 && rows.v[rows.count - 1].pc <= pc && rows.v[rows.count - 1].pc > out->lo)
        out->lo = rows.v[rows.count - 1].pc;
    if (rows.count >= 2 && rows.v[0].pc > pc && rows.v[0].pc < out->hi)
        out->hi = rows.v[0].pc;
    mem_free(rows.v);
    return 0;
}

void cfi_function_free(struct cfi_function *f)
{
    mem_free(f->rows);
    f->rows = NULL;
    f->count = 0;
}
