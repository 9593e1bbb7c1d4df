/*
 * il_rewrite: edits and the new body (see il.h for the contract).
 *
 * The layout, at each original instruction i in order (and once more at
 * the end of the code):
 *
 *   trampolines of the regions that end here, innermost region first
 *   IL_ENTRY snippets of i, and edge snippets of i-1 falling through
 *   <- landing[i]: where branches to i now go
 *   IL_BEFORE snippets of i
 *   <- placed[i]: instruction i, its branch operands moved
 *
 * A region (try block, handler, filter) that started at i now starts at
 * landing[i], and ends after its trampolines.  A wrap (il_edit_wrap) adds
 * its try block from landing[0] to the end of that, then the handler and
 * the epilogue; each ret is then `[stloc result;] leave EPILOGUE`.  Positions depend on the
 * branches' sizes and the sizes on positions: the layout starts with every
 * branch in its original form and widens the short ones whose target moved
 * out of reach, until none does (sizes only grow, so it ends).
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/il/il.h"
#include "common/mem.h"

#define NEW_CODE_MAX (256u << 20)

static int fail(char *why, size_t size, const char *what)
{
    if (why && size)
        snprintf(why, size, "%s", what);
    return -1;
}

static void wr16(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

static void wr32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* ---- edits ------------------------------------------------------------------------ */

void il_edit_init(struct il_edit *e)
{
    memset(e, 0, sizeof *e);
}

void il_edit_free(struct il_edit *e)
{
    mem_free(e->inserts);
    mem_free(e->pool);
    memset(e, 0, sizeof *e);
}

void il_edit_set_locals(struct il_edit *e, uint32_t local_sig_token)
{
    e->local_sig = local_sig_token;
    e->set_locals = 1;
}

void il_edit_reserve_stack(struct il_edit *e, uint32_t slots)
{
    e->extra_stack += slots;
}

/* Is code[0..len) whole instructions that each go on to the next? */
static int straight_line(const uint8_t *code, uint32_t len)
{
    uint32_t pc = 0;
    while (pc < len) {
        uint16_t op = code[pc];
        uint32_t size = 1;
        if (op == 0xfe) {
            if (len - pc < 2)
                return 0;
            op = (uint16_t)(0xfe00 | code[pc + 1]);
            size = 2;
        }
        const struct il_opcode *o = il_opcode(op);
        if (!o || o->flow != IL_FLOW_NEXT)
            return 0;
        static const uint8_t operand_size[] = {
            [IL_OPERAND_NONE] = 0, [IL_OPERAND_U8] = 1,  [IL_OPERAND_I8] = 1,
            [IL_OPERAND_U16] = 2,  [IL_OPERAND_I32] = 4, [IL_OPERAND_I64] = 8,
            [IL_OPERAND_R32] = 4,  [IL_OPERAND_R64] = 8, [IL_OPERAND_TOKEN] = 4,
        };
        if (o->operand > IL_OPERAND_TOKEN)
            return 0;
        size += operand_size[o->operand];
        if (len - pc < size)
            return 0;
        pc += size;
    }
    return 1;
}

/* A snippet's checks, and room for it in the pool. */
static int pool_check(struct il_edit *e, const uint8_t *code, uint32_t len, uint32_t stack,
                      char *why, size_t why_size)
{
    if (!straight_line(code, len))
        return fail(why, why_size, "a snippet that is not straight-line IL");
    if (len > NEW_CODE_MAX || stack > 0xffff)
        return fail(why, why_size, "a snippet too big");
    if (e->pool_len + len > e->pool_cap) {
        uint8_t *grown = mem_grow(e->pool, &e->pool_cap, e->pool_len + len, 1);
        if (!grown)
            return fail(why, why_size, "out of memory");
        e->pool = grown;
    }
    return 0;
}

static void pool_put(struct il_edit *e, const uint8_t *code, uint32_t len, uint32_t stack)
{
    if (len)
        memcpy(e->pool + e->pool_len, code, len);
    e->pool_len += len;
    if (stack > e->stack)
        e->stack = stack;
}

int il_edit_add(struct il_edit *e, const struct il_body *b, uint32_t at, enum il_where where,
                uint32_t path, const uint8_t *code, uint32_t len, uint32_t stack, char *why,
                size_t why_size)
{
    if (at >= b->count)
        return fail(why, why_size, "no such instruction");
    const struct il_instr *in = &b->instrs[at];
    switch (where) {
    case IL_BEFORE:
    case IL_ENTRY:
        if (in->flags & IL_INSTR_PREFIXED)
            return fail(why, why_size, "an instruction after a prefix");
        if (where == IL_BEFORE && (in->flags & IL_INSTR_TAIL_RET))
            return fail(why, why_size, "the ret after a tail call");
        break;
    case IL_EDGE:
        if (il_opcode(in->op)->flow != IL_FLOW_COND)
            return fail(why, why_size, "an edge of an instruction that is not a conditional branch");
        if (path > in->target_count)
            return fail(why, why_size, "a path the branch does not have");
        if (path == 0 && at + 1 >= b->count)
            return fail(why, why_size, "falling through off the end");
        if (path == 0 && (b->instrs[at + 1].flags & IL_INSTR_PREFIXED))
            return fail(why, why_size, "an instruction after a prefix");
        break;
    default:
        return fail(why, why_size, "no such place");
    }
    if (pool_check(e, code, len, stack, why, why_size) < 0)
        return -1;
    if (e->count == e->cap) {
        struct il_insert *grown = mem_grow(e->inserts, &e->cap, e->count + 1, sizeof *grown);
        if (!grown)
            return fail(why, why_size, "out of memory");
        e->inserts = grown;
    }
    e->inserts[e->count++] = (struct il_insert){.at = at, .where = (uint8_t)where, .path = path,
                                                .code = (uint32_t)e->pool_len, .len = len,
                                                .stack = stack};
    pool_put(e, code, len, stack);
    return 0;
}

int il_edit_wrap(struct il_edit *e, const struct il_body *b, enum il_clause_kind kind,
                 const uint8_t *code, uint32_t len, uint32_t stack, uint32_t result_local,
                 char *why, size_t why_size)
{
    if (e->wrap)
        return fail(why, why_size, "a second wrap");
    if (kind != IL_CLAUSE_FINALLY && kind != IL_CLAUSE_FAULT)
        return fail(why, why_size, "a wrap that is neither finally nor fault");
    if (result_local != IL_NO_RESULT && result_local > 0xfffe)
        return fail(why, why_size, "no such local");
    if (!b->count)
        return fail(why, why_size, "an empty body");
    for (uint32_t i = 0; i < b->count; i++) {
        const struct il_instr *in = &b->instrs[i];
        if (in->op == 0x27)
            return fail(why, why_size, "a jmp (it would leave without the handler)");
        if (in->op == 0xfe14 || (in->flags & IL_INSTR_TAIL_RET))
            return fail(why, why_size, "a tail call (none may be in a try block)");
        if (in->op != 0x2a)
            continue;
        for (uint32_t c = 0; c < b->clause_count; c++) {
            const struct il_clause *k = &b->clauses[c];
            uint32_t from = k->flags & IL_CLAUSE_FILTER ? k->token_or_filter : k->handler_offset;
            if ((in->offset >= k->try_offset && in->offset - k->try_offset < k->try_length) ||
                (in->offset >= from && in->offset < k->handler_offset + k->handler_length))
                return fail(why, why_size, "a ret inside an exception clause");
        }
    }
    if (pool_check(e, code, len, stack, why, why_size) < 0)
        return -1;
    e->wrap = 1;
    e->wrap_kind = kind;
    e->wrap_code = (uint32_t)e->pool_len;
    e->wrap_len = len;
    e->wrap_result = result_local;
    pool_put(e, code, len, stack);
    return 0;
}

void il_counter_probe(uint8_t out[IL_COUNTER_PROBE_SIZE], uint64_t address)
{
    out[0] = 0x21; /* ldc.i8 */
    for (int i = 0; i < 8; i++)
        out[1 + i] = (uint8_t)(address >> (8 * i));
    out[9] = 0xe0;  /* conv.u */
    out[10] = 0x25; /* dup */
    out[11] = 0x4c; /* ldind.i8 */
    out[12] = 0x17; /* ldc.i4.1 */
    out[13] = 0x6a; /* conv.i8 */
    out[14] = 0x58; /* add */
    out[15] = 0x55; /* stind.i8 */
}

void il_atomic_counter_probe(uint8_t out[IL_ATOMIC_COUNTER_PROBE_SIZE], uint64_t address,
                             uint32_t add_method)
{
    out[0] = 0x21; /* ldc.i8 */
    for (int i = 0; i < 8; i++)
        out[1 + i] = (uint8_t)(address >> (8 * i));
    out[9] = 0xe0;  /* conv.u */
    out[10] = 0x17; /* ldc.i4.1 */
    out[11] = 0x6a; /* conv.i8 */
    out[12] = 0x28; /* call */
    for (int i = 0; i < 4; i++)
        out[13 + i] = (uint8_t)(add_method >> (8 * i));
    out[17] = 0x26; /* pop */
}

/* ---- layout ----------------------------------------------------------------------- */

struct region {
    uint32_t start, end;
    uint32_t first_tramp, tramp_count;
    uint32_t new_end;
};

struct tramp {
    uint32_t region;
    uint32_t branch, path;
    uint32_t insert;  /* index in e->inserts */
    uint32_t target;  /* instruction index it goes to */
    uint32_t pos;
    uint8_t wide;
};

struct layout {
    const struct il_body *b;
    const struct il_edit *e;
    struct region *regions;  /* sorted by end, then size; the body last */
    uint32_t region_count;
    struct tramp *tramps;    /* grouped by region */
    uint32_t tramp_count;
    uint32_t *entry_len, *before_len; /* per instruction */
    uint32_t *order;         /* inserts by (instruction, entry before before, added) */
    uint32_t *first_insert;  /* per instruction + 1: its run in order[] */
    uint32_t *edge_tramp;    /* per instruction: its first trampoline + 1, 0 */
    uint8_t *wide;           /* per instruction: a short branch widened */
    uint32_t *landing, *placed;
    uint32_t try_end, epilogue; /* a wrap's: where its try block ends, where its epilogue is */
    uint32_t code_size;
};

static uint32_t region_size(const struct region *r)
{
    return r->end - r->start;
}

static int cmp_region(const void *x, const void *y)
{
    const struct region *a = x, *b = y;
    if (a->end != b->end)
        return a->end < b->end ? -1 : 1;
    uint32_t sa = region_size(a), sb = region_size(b);
    return sa < sb ? -1 : sa > sb;
}

/* The innermost region holding offset (the body, last, holds all). */
static uint32_t innermost(const struct layout *l, uint32_t offset)
{
    uint32_t best = l->region_count - 1;
    for (uint32_t r = 0; r + 1 < l->region_count; r++) {
        const struct region *g = &l->regions[r];
        if (offset >= g->start && offset < g->end &&
            region_size(g) < region_size(&l->regions[best]))
            best = r;
    }
    return best;
}

/* Where an insert goes: 0 entry (or an edge falling through) of the
 * instruction it runs before, 1 before; trampolines apart. */
static uint32_t insert_anchor(const struct il_insert *in)
{
    return in->where == IL_EDGE ? in->at + 1 : in->at;
}

/* An inline insert's place in the order: by instruction, entry snippets
 * before the others, then as added. */
struct insert_key {
    uint32_t anchor;
    uint32_t before;
    uint32_t index;
};

static int cmp_insert(const void *x, const void *y)
{
    const struct insert_key *a = x, *b = y;
    if (a->anchor != b->anchor)
        return a->anchor < b->anchor ? -1 : 1;
    if (a->before != b->before)
        return a->before < b->before ? -1 : 1;
    return a->index < b->index ? -1 : a->index > b->index;
}

static int cmp_tramp(const void *x, const void *y)
{
    const struct tramp *a = x, *b = y;
    if (a->region != b->region)
        return a->region < b->region ? -1 : 1;
    if (a->branch != b->branch)
        return a->branch < b->branch ? -1 : 1;
    return a->path < b->path ? -1 : a->path > b->path;
}

static void layout_free(struct layout *l)
{
    mem_free(l->regions);
    mem_free(l->tramps);
    mem_free(l->entry_len);
    mem_free(l->before_len);
    mem_free(l->order);
    mem_free(l->first_insert);
    mem_free(l->edge_tramp);
    mem_free(l->wide);
}

static int add_region(struct region *v, uint32_t *n, uint32_t start, uint32_t end)
{
    for (uint32_t i = 0; i < *n; i++)
        if (v[i].start == start && v[i].end == end)
            return 0;
    v[(*n)++] = (struct region){.start = start, .end = end};
    return 0;
}

static uint32_t region_of(const struct layout *l, uint32_t start, uint32_t end)
{
    for (uint32_t r = 0; r < l->region_count; r++)
        if (l->regions[r].start == start && l->regions[r].end == end)
            return r;
    return l->region_count - 1;
}

static int plan(struct layout *l, const struct il_body *b, const struct il_edit *e)
{
    memset(l, 0, sizeof *l);
    l->b = b;
    l->e = e;
    uint32_t n = b->count;
    l->regions = mem_calloc((size_t)b->clause_count * 3 + 1, sizeof *l->regions);
    l->entry_len = mem_calloc((size_t)n + 1, sizeof *l->entry_len);
    l->before_len = mem_calloc((size_t)n + 1, sizeof *l->before_len);
    l->order = mem_calloc((size_t)e->count + 1, sizeof *l->order);
    l->first_insert = mem_calloc((size_t)n + 2, sizeof *l->first_insert);
    l->edge_tramp = mem_calloc((size_t)n + 1, sizeof *l->edge_tramp);
    l->wide = mem_calloc((size_t)n + 1, 1);
    l->tramps = mem_calloc((size_t)e->count + 1, sizeof *l->tramps);
    if (!l->regions || !l->entry_len || !l->before_len || !l->order || !l->first_insert ||
        !l->edge_tramp || !l->wide || !l->tramps)
        return -1;
    for (uint32_t i = 0; i < b->clause_count; i++) {
        const struct il_clause *c = &b->clauses[i];
        add_region(l->regions, &l->region_count, c->try_offset, c->try_offset + c->try_length);
        add_region(l->regions, &l->region_count, c->handler_offset,
                   c->handler_offset + c->handler_length);
        if (c->flags & IL_CLAUSE_FILTER)
            add_region(l->regions, &l->region_count, c->token_or_filter, c->handler_offset);
    }
    if (l->region_count > 1)
        qsort(l->regions, l->region_count, sizeof *l->regions, cmp_region);
    l->regions[l->region_count++] = (struct region){.start = 0, .end = b->code_size};

    /* inserts: inline ones in layout order, edges taken by a branch into
     * trampolines of the branch's innermost region */
    uint32_t inline_count = 0;
    struct insert_key *keys = mem_alloc(((size_t)e->count + 1) * sizeof *keys);
    if (!keys)
        return -1;
    for (uint32_t k = 0; k < e->count; k++) {
        const struct il_insert *in = &e->inserts[k];
        if (in->where == IL_EDGE && in->path > 0) {
            const struct il_instr *br = &b->instrs[in->at];
            long target = il_index_at(b, il_target(b, br, in->path));
            l->tramps[l->tramp_count++] = (struct tramp){
                .region = innermost(l, br->offset), .branch = in->at, .path = in->path,
                .insert = k, .target = target < 0 ? 0 : (uint32_t)target};
            continue;
        }
        uint32_t anchor = insert_anchor(in);
        keys[inline_count++] = (struct insert_key){anchor, in->where == IL_BEFORE, k};
        if (in->where == IL_BEFORE)
            l->before_len[anchor] += in->len;
        else
            l->entry_len[anchor] += in->len;
    }
    if (inline_count > 1)
        qsort(keys, inline_count, sizeof *keys, cmp_insert);
    for (uint32_t k = 0; k < inline_count; k++)
        l->order[k] = keys[k].index;
    mem_free(keys);
    for (uint32_t k = 0, i = 0; i <= n; i++) {
        l->first_insert[i] = k;
        while (k < inline_count && insert_anchor(&e->inserts[l->order[k]]) == i)
            k++;
    }
    l->first_insert[n + 1] = inline_count;
    if (l->tramp_count > 1)
        qsort(l->tramps, l->tramp_count, sizeof *l->tramps, cmp_tramp);
    for (uint32_t t = 0; t < l->tramp_count; t++) {
        struct region *r = &l->regions[l->tramps[t].region];
        if (!r->tramp_count)
            r->first_tramp = t;
        r->tramp_count++;
    }
    /* a branch's trampoline for path k: find it by scanning from its first */
    for (uint32_t t = l->tramp_count; t-- > 0;)
        l->edge_tramp[l->tramps[t].branch] = t + 1;
    return 0;
}

/* The trampoline of branch i's path k, or NULL. */
static struct tramp *tramp_of(const struct layout *l, uint32_t i, uint32_t k)
{
    if (!l->edge_tramp[i])
        return NULL;
    /* a branch's trampolines are together (sorted by branch within a region) */
    for (uint32_t t = l->edge_tramp[i] - 1; t < l->tramp_count && l->tramps[t].branch == i; t++)
        if (l->tramps[t].path == k)
            return &l->tramps[t];
    return NULL;
}

static int is_short_branch(uint16_t op)
{
    return (op >= 0x2b && op <= 0x37) || op == 0xde;
}

static uint16_t widened(uint16_t op)
{
    return op == 0xde ? 0xdd : (uint16_t)(op + 0x0d);
}

/* What a ret becomes in a wrapped body: [stloc result;] leave EPILOGUE. */
static uint32_t wrapped_ret_size(const struct il_edit *e)
{
    return (e->wrap_result != IL_NO_RESULT ? 4u : 0u) + 5u;
}

static int wrapped_ret(const struct layout *l, const struct il_instr *in)
{
    return l->e->wrap && in->op == 0x2a;
}

static uint32_t instr_size(const struct layout *l, uint32_t i)
{
    const struct il_instr *in = &l->b->instrs[i];
    if (wrapped_ret(l, in))
        return wrapped_ret_size(l->e);
    return l->wide[i] ? 5 : in->size;
}

static uint32_t tramp_size(const struct layout *l, const struct tramp *t)
{
    return l->e->inserts[t->insert].len + (t->wide ? 5u : 2u);
}

/* Positions for the current branch forms.  Returns -1 when too big. */
static int place(struct layout *l)
{
    const struct il_body *b = l->b;
    uint64_t pos = 0;
    uint32_t r = 0;
    for (uint32_t i = 0; i <= b->count; i++) {
        uint32_t offset = i < b->count ? b->instrs[i].offset : b->code_size;
        for (; r < l->region_count && l->regions[r].end == offset; r++) {
            struct region *g = &l->regions[r];
            for (uint32_t t = 0; t < g->tramp_count; t++) {
                struct tramp *tr = &l->tramps[g->first_tramp + t];
                tr->pos = (uint32_t)pos;
                pos += tramp_size(l, tr);
            }
            g->new_end = (uint32_t)pos;
            if (pos > NEW_CODE_MAX)
                return -1;
        }
        if (i == b->count)
            break;
        pos += l->entry_len[i];
        l->landing[i] = (uint32_t)pos;
        pos += l->before_len[i];
        l->placed[i] = (uint32_t)pos;
        pos += instr_size(l, i);
        if (pos > NEW_CODE_MAX)
            return -1;
    }
    if (l->e->wrap) {
        l->try_end = (uint32_t)pos;
        pos += l->e->wrap_len + 1; /* the handler, endfinally */
        l->epilogue = (uint32_t)pos;
        pos += l->e->wrap_result != IL_NO_RESULT ? 5 : 1; /* [ldloc result;] ret */
        if (pos > NEW_CODE_MAX)
            return -1;
    }
    l->code_size = (uint32_t)pos;
    return 0;
}

/* Where branch i's path k now goes. */
static uint32_t new_target(const struct layout *l, uint32_t i, uint32_t k)
{
    struct tramp *t = tramp_of(l, i, k);
    if (t)
        return t->pos;
    long j = il_index_at(l->b, il_target(l->b, &l->b->instrs[i], k));
    return l->landing[j < 0 ? 0 : j];
}

static int fits8(int64_t d)
{
    return d >= -128 && d <= 127;
}

/* Widens the short branches that no longer reach.  Returns how many. */
static uint32_t widen(struct layout *l)
{
    uint32_t changed = 0;
    for (uint32_t i = 0; i < l->b->count; i++) {
        const struct il_instr *in = &l->b->instrs[i];
        if (l->wide[i] || !is_short_branch(in->op))
            continue;
        int64_t from = (int64_t)l->placed[i] + instr_size(l, i);
        if (!fits8((int64_t)new_target(l, i, 1) - from)) {
            l->wide[i] = 1;
            changed++;
        }
    }
    for (uint32_t t = 0; t < l->tramp_count; t++) {
        struct tramp *tr = &l->tramps[t];
        if (tr->wide)
            continue;
        int64_t from = (int64_t)tr->pos + tramp_size(l, tr);
        if (!fits8((int64_t)l->landing[tr->target] - from)) {
            tr->wide = 1;
            changed++;
        }
    }
    return changed;
}

/* ---- emitting ---------------------------------------------------------------------- */

static void emit_branch(uint8_t *p, uint16_t op, int wide, int64_t disp)
{
    if (wide) {
        p[0] = (uint8_t)op;
        wr32(p + 1, (uint32_t)(int32_t)disp);
    } else {
        p[0] = (uint8_t)op;
        p[1] = (uint8_t)(int8_t)disp;
    }
}

static uint32_t emit_local(uint8_t *p, uint8_t op, uint32_t index)
{
    p[0] = 0xfe;
    p[1] = op;
    wr16(p + 2, index);
    return 4;
}

static void emit_code(const struct layout *l, uint8_t *code)
{
    const struct il_body *b = l->b;
    const struct il_edit *e = l->e;
    uint32_t r = 0;
    for (uint32_t i = 0; i <= b->count; i++) {
        uint32_t offset = i < b->count ? b->instrs[i].offset : b->code_size;
        for (; r < l->region_count && l->regions[r].end == offset; r++) {
            const struct region *g = &l->regions[r];
            for (uint32_t t = 0; t < g->tramp_count; t++) {
                const struct tramp *tr = &l->tramps[g->first_tramp + t];
                const struct il_insert *in = &e->inserts[tr->insert];
                memcpy(code + tr->pos, e->pool + in->code, in->len);
                uint32_t at = tr->pos + in->len;
                uint32_t size = tr->wide ? 5 : 2;
                emit_branch(code + at, tr->wide ? 0x38 : 0x2b, tr->wide,
                            (int64_t)l->landing[tr->target] - (at + size));
            }
        }
        if (i == b->count)
            break;
        uint32_t pos = l->landing[i] - l->entry_len[i];
        for (uint32_t k = l->first_insert[i]; k < l->first_insert[i + 1]; k++) {
            const struct il_insert *in = &e->inserts[l->order[k]];
            memcpy(code + pos, e->pool + in->code, in->len);
            pos += in->len;
        }
        const struct il_instr *in = &b->instrs[i];
        uint8_t *p = code + l->placed[i];
        const uint8_t *orig = b->code + in->offset;
        uint32_t end = l->placed[i] + instr_size(l, i);
        if (wrapped_ret(l, in)) {
            if (e->wrap_result != IL_NO_RESULT)
                p += emit_local(p, 0x0e, e->wrap_result); /* stloc */
            emit_branch(p, 0xdd, 1, (int64_t)l->epilogue - end); /* leave */
        } else if (in->operand == IL_OPERAND_BR8 || in->operand == IL_OPERAND_BR32) {
            int wide = l->wide[i] || in->operand == IL_OPERAND_BR32;
            uint16_t op = l->wide[i] ? widened(in->op) : in->op;
            emit_branch(p, op, wide, (int64_t)new_target(l, i, 1) - end);
        } else if (in->operand == IL_OPERAND_SWITCH) {
            p[0] = 0x45;
            wr32(p + 1, in->target_count);
            for (uint32_t k = 1; k <= in->target_count; k++)
                wr32(p + 1 + 4 * k, (uint32_t)(int32_t)((int64_t)new_target(l, i, k) - end));
        } else {
            memcpy(p, orig, in->size);
        }
    }
    if (e->wrap) {
        memcpy(code + l->try_end, e->pool + e->wrap_code, e->wrap_len);
        code[l->try_end + e->wrap_len] = 0xdc; /* endfinally, endfault */
        uint8_t *p = code + l->epilogue;
        if (e->wrap_result != IL_NO_RESULT)
            p += emit_local(p, 0x0c, e->wrap_result); /* ldloc */
        *p = 0x2a;
    }
}

static uint32_t new_offset_of(const struct layout *l, uint32_t offset)
{
    long j = il_index_at(l->b, offset);
    return j < 0 ? l->code_size : l->landing[j];
}

static uint32_t new_end_of(const struct layout *l, uint32_t start, uint32_t end)
{
    return l->regions[region_of(l, start, end)].new_end;
}

int il_rewrite(const struct il_body *b, const struct il_edit *e, struct il_rewritten *out,
               char *why, size_t why_size)
{
    memset(out, 0, sizeof *out);
    struct layout l;
    memset(&l, 0, sizeof l);
    uint32_t n = b->count;
    out->landing = mem_calloc((size_t)n + 1, sizeof *out->landing);
    out->placed = mem_calloc((size_t)n + 1, sizeof *out->placed);
    if (!out->landing || !out->placed || plan(&l, b, e) < 0) {
        layout_free(&l);
        il_rewritten_free(out);
        return fail(why, why_size, "out of memory");
    }
    l.landing = out->landing;
    l.placed = out->placed;
    for (;;) {
        if (place(&l) < 0) {
            layout_free(&l);
            il_rewritten_free(out);
            return fail(why, why_size, "the new body is too big");
        }
        if (!widen(&l))
            break;
    }
    uint32_t max_stack = b->max_stack + e->stack + e->extra_stack;
    if (e->wrap && e->wrap_result != IL_NO_RESULT && max_stack < 1)
        max_stack = 1; /* the epilogue's ldloc */
    if (max_stack > 0xffff) {
        layout_free(&l);
        il_rewritten_free(out);
        return fail(why, why_size, "the new body needs too deep a stack");
    }
    size_t code_at = 12;
    size_t eh_at = (code_at + l.code_size + 3) & ~(size_t)3;
    uint32_t clauses = b->clause_count + (e->wrap ? 1 : 0);
    size_t eh_size = clauses ? 4 + 24 * (size_t)clauses : 0;
    if (eh_size > 0xffffff) {
        layout_free(&l);
        il_rewritten_free(out);
        return fail(why, why_size, "too many exception clauses");
    }
    size_t total = clauses ? eh_at + eh_size : code_at + l.code_size;
    out->body = mem_calloc(total, 1);
    out->map = mem_alloc(((size_t)n + 1) * sizeof *out->map);
    if (!out->body || !out->map) {
        layout_free(&l);
        il_rewritten_free(out);
        return fail(why, why_size, "out of memory");
    }
    uint8_t *h = out->body;
    uint16_t flags = 0x3003 | (b->init_locals ? 0x10 : 0) | (clauses ? 0x8 : 0);
    wr16(h, flags);
    wr16(h + 2, max_stack);
    wr32(h + 4, l.code_size);
    wr32(h + 8, e->set_locals ? e->local_sig : b->local_sig);
    emit_code(&l, h + code_at);
    if (clauses) {
        uint8_t *s = h + eh_at;
        s[0] = 0x41; /* EH table, fat */
        s[1] = (uint8_t)eh_size;
        s[2] = (uint8_t)(eh_size >> 8);
        s[3] = (uint8_t)(eh_size >> 16);
        for (uint32_t i = 0; i < b->clause_count; i++) {
            const struct il_clause *c = &b->clauses[i];
            uint8_t *p = s + 4 + 24 * i;
            uint32_t try_at = new_offset_of(&l, c->try_offset);
            uint32_t handler_at = new_offset_of(&l, c->handler_offset);
            wr32(p, c->flags);
            wr32(p + 4, try_at);
            wr32(p + 8, new_end_of(&l, c->try_offset, c->try_offset + c->try_length) - try_at);
            wr32(p + 12, handler_at);
            wr32(p + 16, new_end_of(&l, c->handler_offset, c->handler_offset + c->handler_length) -
                             handler_at);
            wr32(p + 20, c->flags & IL_CLAUSE_FILTER ? new_offset_of(&l, c->token_or_filter)
                                                      : c->token_or_filter);
        }
        if (e->wrap) {
            uint8_t *p = s + 4 + 24 * (size_t)b->clause_count;
            wr32(p, e->wrap_kind);
            wr32(p + 4, l.landing[0]);
            wr32(p + 8, l.try_end - l.landing[0]);
            wr32(p + 12, l.try_end);
            wr32(p + 16, e->wrap_len + 1);
            wr32(p + 20, 0);
        }
    }
    for (uint32_t i = 0; i < n; i++)
        out->map[i] = (struct il_map_entry){b->instrs[i].offset, out->landing[i]};
    out->map_count = n;
    out->size = total;
    out->code_size = l.code_size;
    out->max_stack = max_stack;
    layout_free(&l);
    return 0;
}

void il_rewritten_free(struct il_rewritten *r)
{
    mem_free(r->body);
    mem_free(r->map);
    mem_free(r->landing);
    mem_free(r->placed);
    memset(r, 0, sizeof *r);
}
