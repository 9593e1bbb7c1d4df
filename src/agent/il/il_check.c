/*
 * il_check: verifies a rewrite against the original body and the edit,
 * without trusting the layout that made it (il.h).
 *
 * The new body is parsed afresh.  Every original instruction must be at
 * its place with the same opcode (a short branch may have become long) and
 * the same operand bytes (branch targets apart).  Then every way control
 * leaves an original instruction -- falling through, each branch target,
 * each switch case -- is followed through the new code: it may pass only
 * through straight-line snippet code (and one `br` of a trampoline), must
 * arrive at the same original instruction as before, and must pass through
 * exactly the snippet bytes the edit put on that path.  Exception clauses
 * must cover the same original instructions, starting where branches to
 * their first instruction land.  The method's entry reaches the first
 * instruction through its IL_ENTRY and IL_BEFORE snippets.
 *
 * A wrap (il_edit_wrap) is checked as its shape says: one more clause,
 * last, of its kind; its try block from where branches to the first
 * instruction land to the handler, which is the snippet and
 * endfinally/endfault; after it the epilogue ([ldloc result;] ret), the
 * code's end; every ret became [stloc result;] leave to the epilogue.
 */
#include <stdio.h>
#include <string.h>

#include "agent/il/il.h"
#include "common/mem.h"


struct checker {
    const struct il_body *b;
    const struct il_edit *e;
    const struct il_rewritten *r;
    struct il_body nb;
    uint32_t *orig_of; /* per new instruction: original index + 1, or 0 for snippet code */
};

/* Follows control from new position pos to the first original
 * instruction, counting the snippet bytes passed.  Returns its index, or
 * -1 when the path leaves snippet code any other way. */
static long follow(const struct checker *c, uint32_t pos, uint64_t *snippet_bytes)
{
    int jumps = 1;
    for (uint32_t steps = 0; steps <= c->nb.count; steps++) {
        long j = il_index_at(&c->nb, pos);
        if (j < 0)
            return -1;
        if (c->orig_of[j])
            return (long)c->orig_of[j] - 1;
        const struct il_instr *in = &c->nb.instrs[j];
        const struct il_opcode *o = il_opcode(in->op);
        if (o->flow == IL_FLOW_NEXT) {
            *snippet_bytes += in->size;
            pos += in->size;
        } else if ((in->op == 0x38 || in->op == 0x2b) && jumps-- > 0) {
            pos = (uint32_t)in->value;
        } else {
            return -1;
        }
    }
    return -1;
}

/* Snippet bytes the edit puts before instruction i (IL_BEFORE: on every
 * way in), on the way in by falling through (IL_ENTRY, and the edge 0 of
 * the instruction before), and on path k of a branch: summed once. */
struct expected {
    uint64_t *before, *falling, *edge; /* edge: [first_edge[i] + k] */
    uint32_t *first_edge;
};

static int expected_sums(struct expected *x, const struct il_body *b, const struct il_edit *e)
{
    size_t edges = 0;
    x->first_edge = mem_alloc(((size_t)b->count + 1) * sizeof *x->first_edge);
    for (uint32_t i = 0; x->first_edge && i < b->count; i++) {
        x->first_edge[i] = (uint32_t)edges;
        edges += (size_t)b->instrs[i].target_count + 1;
    }
    x->before = mem_calloc((size_t)b->count + 1, sizeof *x->before);
    x->falling = mem_calloc((size_t)b->count + 1, sizeof *x->falling);
    x->edge = mem_calloc(edges + 1, sizeof *x->edge);
    if (!x->first_edge || !x->before || !x->falling || !x->edge)
        return -1;
    for (uint32_t k = 0; k < e->count; k++) {
        const struct il_insert *in = &e->inserts[k];
        if (in->at >= b->count)
            continue;
        if (in->where == IL_BEFORE) {
            x->before[in->at] += in->len;
            x->falling[in->at] += in->len;
        } else if (in->where == IL_ENTRY) {
            x->falling[in->at] += in->len;
        } else if (in->path == 0) {
            x->falling[in->at + 1] += in->len;
        } else if (in->path <= b->instrs[in->at].target_count) {
            x->edge[x->first_edge[in->at] + in->path] += in->len;
        }
    }
    return 0;
}

static void expected_free(struct expected *x)
{
    mem_free(x->before);
    mem_free(x->falling);
    mem_free(x->edge);
    mem_free(x->first_edge);
}

static int same_instruction(const struct il_body *b, const struct il_instr *o,
                            const struct il_body *nb, const struct il_instr *n, int wrapped)
{
    if (o->op == 0x2a && wrapped)
        return 1; /* what a ret became: check_wrap looks at it */
    if (o->operand == IL_OPERAND_BR8 || o->operand == IL_OPERAND_BR32) {
        uint16_t wide = o->op == 0xde ? 0xdd : (o->op >= 0x2b && o->op <= 0x37 ? o->op + 0x0d : o->op);
        return n->op == o->op || n->op == wide;
    }
    if (o->operand == IL_OPERAND_SWITCH)
        return n->op == o->op && n->target_count == o->target_count;
    return n->op == o->op && n->size == o->size &&
           !memcmp(b->code + o->offset, nb->code + n->offset, o->size);
}

/* The clause's block [start, end) in new code: it must start where
 * branches to its first instruction land, and hold the same original
 * instructions. */
static int check_block(const struct checker *c, uint32_t start, uint32_t end, uint32_t new_start,
                       uint32_t new_end)
{
    long first = il_index_at(c->b, start);
    long after = end == c->b->code_size ? (long)c->b->count : il_index_at(c->b, end);
    if (first < 0 || after <= first || new_start != c->r->landing[first])
        return -1;
    uint32_t last_end = c->r->placed[after - 1];
    long j = il_index_at(&c->nb, last_end);
    if (j < 0)
        return -1;
    last_end += c->nb.instrs[j].size;
    uint32_t limit = after < (long)c->b->count ? c->r->landing[after] : c->nb.code_size;
    return new_end >= last_end && new_end <= limit ? 0 : -1;
}

/* The wrap's clause (the last), handler, epilogue and rets. */
static int check_wrap(const struct checker *c, char *why, size_t why_size)
{
    const struct il_edit *e = c->e;
    const struct il_clause *w = &c->nb.clauses[c->b->clause_count];
    uint32_t try_end = w->try_offset + w->try_length;
    uint32_t epilogue = w->handler_offset + w->handler_length;
    int result = e->wrap_result != IL_NO_RESULT;
    if (w->flags != e->wrap_kind || w->try_offset != c->r->landing[0] ||
        try_end != w->handler_offset || w->handler_length != e->wrap_len + 1 ||
        epilogue + (result ? 5u : 1u) != c->nb.code_size)
        return il_why(why, why_size, "the wrap's clause is not where it should be");
    if (memcmp(c->nb.code + w->handler_offset, e->pool + e->wrap_code, e->wrap_len) ||
        c->nb.code[try_end + e->wrap_len] != 0xdc)
        return il_why(why, why_size, "the wrap's handler is not its snippet");
    long j = il_index_at(&c->nb, epilogue);
    if (j < 0 || (result && (c->nb.instrs[j].op != 0xfe0c ||
                             c->nb.instrs[j].value != (int64_t)e->wrap_result)))
        return il_why(why, why_size, "the wrap's epilogue does not load the result");
    if ((uint32_t)(j + result) >= c->nb.count || c->nb.instrs[j + result].op != 0x2a)
        return il_why(why, why_size, "the wrap's epilogue does not return");
    for (uint32_t i = 0; i < c->b->count; i++) {
        if (c->r->placed[i] < w->try_offset || c->r->placed[i] >= try_end)
            return il_why(why, why_size, "IL_%04x is not in the wrap's try block",
                          c->b->instrs[i].offset);
        if (c->b->instrs[i].op != 0x2a)
            continue;
        j = il_index_at(&c->nb, c->r->placed[i]);
        if (result && (c->nb.instrs[j].op != 0xfe0e ||
                       c->nb.instrs[j].value != (int64_t)e->wrap_result))
            return il_why(why, why_size, "the ret at IL_%04x does not keep the result",
                          c->b->instrs[i].offset);
        if ((uint32_t)(j + result) >= c->nb.count || c->nb.instrs[j + result].op != 0xdd ||
            c->nb.instrs[j + result].value != (int64_t)epilogue)
            return il_why(why, why_size, "the ret at IL_%04x does not leave for the epilogue",
                          c->b->instrs[i].offset);
    }
    return 0;
}

int il_check(const struct il_body *b, const struct il_edit *e, const struct il_rewritten *r,
             char *why, size_t why_size)
{
    struct checker c = {.b = b, .e = e, .r = r};
    struct expected x = {0};
    char inner[160];
    if (il_parse(r->body, r->size, &c.nb, inner, sizeof inner) < 0) {
        if (why && why_size)
            snprintf(why, why_size, "the new body does not parse: %s", inner);
        return -1;
    }
    int rc = -1;
    c.orig_of = mem_calloc((size_t)c.nb.count + 1, sizeof *c.orig_of);
    if (!c.orig_of || expected_sums(&x, b, e) < 0) {
        il_why(why, why_size, "out of memory");
        goto out;
    }
    if (c.nb.max_stack < b->max_stack + e->stack) {
        il_why(why, why_size, "max stack %u, less than %u", c.nb.max_stack, b->max_stack + e->stack);
        goto out;
    }
    for (uint32_t i = 0; i < b->count; i++) {
        long j = il_index_at(&c.nb, r->placed[i]);
        if (j < 0 || !same_instruction(b, &b->instrs[i], &c.nb, &c.nb.instrs[j], e->wrap)) {
            il_why(why, why_size, "IL_%04x is not at its place (IL_%04x)", b->instrs[i].offset,
                r->placed[i]);
            goto out;
        }
        c.orig_of[j] = i + 1;
    }
    if (b->count) {
        uint64_t bytes = 0;
        if (follow(&c, 0, &bytes) != 0 || bytes != x.falling[0]) {
            il_why(why, why_size, "the method's entry does not reach IL_0000 through its "
                                  "snippets");
            goto out;
        }
    }
    for (uint32_t i = 0; i < b->count; i++) {
        const struct il_instr *o = &b->instrs[i];
        const struct il_instr *n = &c.nb.instrs[il_index_at(&c.nb, r->placed[i])];
        uint64_t bytes = 0;
        if (follow(&c, r->landing[i], &bytes) != (long)i || bytes != x.before[i]) {
            il_why(why, why_size, "a branch to IL_%04x does not reach it through its own "
                               "snippets", o->offset);
            goto out;
        }
        uint8_t flow = il_opcode(o->op)->flow;
        if ((flow == IL_FLOW_NEXT || flow == IL_FLOW_COND || flow == IL_FLOW_PREFIX) &&
            i + 1 < b->count) {
            bytes = 0;
            if (follow(&c, r->placed[i] + n->size, &bytes) != (long)i + 1 ||
                bytes != x.falling[i + 1]) {
                il_why(why, why_size, "falling through from IL_%04x does not reach IL_%04x as it "
                                   "should", o->offset, b->instrs[i + 1].offset);
                goto out;
            }
        }
        for (uint32_t k = 1; k <= o->target_count; k++) {
            long want = il_index_at(b, il_target(b, o, k));
            uint32_t at = il_target(&c.nb, n, k);
            bytes = 0;
            if (want < 0 || follow(&c, at, &bytes) != want ||
                bytes != x.edge[x.first_edge[i] + k] + x.before[want]) {
                il_why(why, why_size, "path %u of IL_%04x does not reach its target as it should",
                    k, o->offset);
                goto out;
            }
        }
    }
    if (c.nb.clause_count != b->clause_count + (e->wrap ? 1 : 0)) {
        il_why(why, why_size, "%u exception clauses, not %u", c.nb.clause_count,
               b->clause_count + (e->wrap ? 1 : 0));
        goto out;
    }
    if (e->wrap && check_wrap(&c, why, why_size) < 0)
        goto out;
    for (uint32_t i = 0; i < b->clause_count; i++) {
        const struct il_clause *o = &b->clauses[i], *n = &c.nb.clauses[i];
        int filter = o->flags & IL_CLAUSE_FILTER;
        if (n->flags != o->flags || (!filter && n->token_or_filter != o->token_or_filter) ||
            check_block(&c, o->try_offset, o->try_offset + o->try_length, n->try_offset,
                        n->try_offset + n->try_length) < 0 ||
            check_block(&c, o->handler_offset, o->handler_offset + o->handler_length,
                        n->handler_offset, n->handler_offset + n->handler_length) < 0 ||
            (filter && check_block(&c, o->token_or_filter, o->handler_offset, n->token_or_filter,
                                   n->handler_offset) < 0)) {
            il_why(why, why_size, "exception clause %u does not cover what it did", i);
            goto out;
        }
    }
    rc = 0;
out:
    expected_free(&x);
    mem_free(c.orig_of);
    il_body_free(&c.nb);
    return rc;
}
