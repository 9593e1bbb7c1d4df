/*
 * covplan: see covplan.h.  The compiler-machinery rules follow the
 * patterns coverlet documents in its CecilSymbolHelper (coverlet-coverage/
 * coverlet, MIT), rewritten here over our own IL and metadata readers.
 */
#include "format/covplan.h"

#include <fnmatch.h>
#include <stdio.h>
#include <string.h>

#include "common/mem.h"

static int fail(char *why, size_t size, const char *what)
{
    if (why && size)
        snprintf(why, size, "%s", what);
    return -1;
}

static int add(struct covplan *p, size_t *cap, struct covplan_probe probe)
{
    if (p->count == *cap) {
        struct covplan_probe *grown = mem_grow(p->probes, cap, p->count + 1, sizeof *grown);
        if (!grown)
            return -1;
        p->probes = grown;
    }
    p->probes[p->count++] = probe;
    return 0;
}

static int visible(const struct ppdb_point *pt)
{
    return pt->start_line != PPDB_HIDDEN_LINE;
}

/* ---- which methods ---------------------------------------------------------------- */

int covplan_filters_parse(struct covplan_filters *f, const char *text)
{
    memset(f, 0, sizeof *f);
    if (!text || !text[0])
        return 0;
    f->text = mem_strdup(text);
    if (!f->text)
        return -1;
    char *save = NULL;
    for (char *p = f->text, *g; (g = strtok_r(p, ",", &save)) && f->count < COVPLAN_MAX_FILTERS;
         p = NULL)
        if (g[0])
            f->globs[f->count++] = g;
    return 0;
}

void covplan_filters_free(struct covplan_filters *f)
{
    mem_free(f->text);
    memset(f, 0, sizeof *f);
}

int covplan_filters_match(const struct covplan_filters *f, const char *name)
{
    for (uint32_t i = 0; i < f->count; i++)
        if (fnmatch(f->globs[i], name, 0) == 0)
            return 1;
    return 0;
}

int covplan_candidate(const struct assembly *a, uint32_t row, int methods_only,
                      const struct covplan_filters *include, const struct covplan_filters *exclude,
                      int named)
{
    if (!row || row > a->method_count)
        return 0;
    const struct assembly_method *am = &a->methods[row - 1];
    const char *name = assembly_method_name(a, row);
    int ctor = !strcmp(name, ".ctor") || !strcmp(name, ".cctor");
    if (!md_get(&a->md, MD_METHODDEF, row, MD_METHODDEF_RVA) || am->excluded ||
        (ctor && am->generated && am->owner == row))
        return 0;
    if (am->type && (exclude->count || (!named && include->count))) {
        char type[1024];
        assembly_type_name(a, a->types[am->type - 1].user, type, sizeof type);
        if (covplan_filters_match(exclude, type) ||
            (!named && include->count && !covplan_filters_match(include, type)))
            return 0;
    }
    return methods_only ||
           (assembly_has_pdb(a) && md_get(&a->pdb.md, MD_METHODDEBUGINFORMATION, row,
                                          MD_METHODDEBUGINFORMATION_SEQUENCEPOINTS) != 0);
}

/* ---- the compiler's own branches -------------------------------------------------- */

struct context {
    const struct assembly *a;
    const struct il_body *b;
    const struct covplan *plan;
    int async_move_next, iterator_move_next, async_iterator_move_next, state_prologue;
};

static int is_ldloc0(const struct il_instr *in)
{
    return in->op == 0x06 || ((in->op == 0x11 || in->op == 0xfe0c) && in->value == 0);
}

static int is_ldc1(const struct il_instr *in)
{
    return in->op == 0x17 || ((in->op == 0x1f || in->op == 0x20) && in->value == 1);
}

/* A MoveNext's state dispatch: a branch on local 0 (the state, loaded in
 * the prologue) among the three instructions before it. */
static int state_dispatch(const struct context *c, uint32_t i)
{
    if (!c->state_prologue)
        return 0;
    for (uint32_t k = 1; k <= 3 && k <= i; k++)
        if (is_ldloc0(&c->b->instrs[i - k]))
            return 1;
    return 0;
}

/* `call get_IsCompleted` of an awaiter just before the branch. */
static int awaiter_test(const struct context *c, uint32_t i)
{
    if (i == 0)
        return 0;
    const struct il_instr *prev = &c->b->instrs[i - 1];
    if (prev->op != 0x28 && prev->op != 0x6f)
        return 0;
    char type[256];
    const char *name = assembly_member(c->a, (uint32_t)prev->value, type, sizeof type);
    if (strcmp(name, "get_IsCompleted") != 0)
        return 0;
    /* coverlet's list (Task, ValueTask and their configured awaitables),
     * and any other awaiter (Task.Yield's YieldAwaiter) */
    size_t n = strlen(type);
    return !strncmp(type, "System.Runtime.CompilerServices.TaskAwaiter", 43) ||
           !strncmp(type, "System.Runtime.CompilerServices.ValueTaskAwaiter", 48) ||
           !strncmp(type, "System.Runtime.CompilerServices.ConfiguredTaskAwaitable", 55) ||
           !strncmp(type, "System.Runtime.CompilerServices.ConfiguredValueTaskAwaitable", 60) ||
           (n >= 7 && !strcmp(type + n - 7, "Awaiter")) ||
           (n >= 9 && strstr(type, "Awaiter`"));
}

/* `ldsfld` of a cached delegate (a lambda's "<>9__..." or a method
 * group's "<0>__...", both in compiler-generated types) within the two
 * instructions before the branch. */
static int cached_delegate(const struct context *c, uint32_t i)
{
    for (uint32_t k = 1; k <= 2 && k <= i; k++) {
        const struct il_instr *in = &c->b->instrs[i - k];
        if (in->op != 0x7e)
            continue;
        const char *name = assembly_member(c->a, (uint32_t)in->value, NULL, 0);
        int lambda = !strncmp(name, "<>9_", 4);
        int group = name[0] == '<' && name[1] >= '0' && name[1] <= '9' && strstr(name, ">__");
        if ((lambda || group) && assembly_field_generated(c->a, (uint32_t)in->value))
            return 1;
    }
    return 0;
}

/* `isinst System.Exception` two or three instructions before, and
 * `ldarg; ldfld; throw` after: an async method's rethrow. */
static int async_rethrow(const struct context *c, uint32_t i)
{
    const struct il_body *b = c->b;
    int isinst = 0;
    for (uint32_t k = 2; k <= 3 && k <= i; k++) {
        const struct il_instr *in = &b->instrs[i - k];
        char type[256];
        if (in->op == 0x75) {
            assembly_member(c->a, (uint32_t)in->value, type, sizeof type);
            /* isinst's operand is a type: name it as a TypeRef */
            uint32_t tok = (uint32_t)in->value;
            if ((tok >> 24) == MD_TYPEREF) {
                const char *ns = md_string(&c->a->md, md_get(&c->a->md, MD_TYPEREF, tok & 0xffffff,
                                                             MD_TYPEREF_NAMESPACE));
                const char *n = md_string(&c->a->md, md_get(&c->a->md, MD_TYPEREF, tok & 0xffffff,
                                                            MD_TYPEREF_NAME));
                isinst |= !strcmp(ns, "System") && !strcmp(n, "Exception");
            }
        }
    }
    if (!isinst || i + 3 >= b->count)
        return 0;
    uint16_t a1 = b->instrs[i + 1].op;
    return (a1 == 0x02 || a1 == 0x0e || a1 == 0xfe09) && b->instrs[i + 2].op == 0x7b &&
           b->instrs[i + 3].op == 0x7a;
}

/* `ldarg.0; ldfld <generated field named ...suffix>` just before
 * instruction i (within `within` instructions for the ldfld). */
static int loads_generated_field(const struct context *c, uint32_t i, uint32_t within,
                                 const char *suffix)
{
    for (uint32_t k = 1; k <= within && k < i; k++) {
        const struct il_instr *in = &c->b->instrs[i - k];
        const struct il_instr *before = &c->b->instrs[i - k - 1];
        if (in->op != 0x7b || (before->op != 0x02 && before->op != 0x0e && before->op != 0xfe09))
            continue;
        const char *name = assembly_member(c->a, (uint32_t)in->value, NULL, 0);
        size_t n = strlen(name), s = strlen(suffix);
        if (n >= s && !strcmp(name + n - s, suffix) && assembly_field_generated(c->a, (uint32_t)in->value))
            return 1;
    }
    return 0;
}

/* An async iterator's MoveNext: its state switch, and its tests of
 * whether it was disposed or has a combined cancellation token. */
static int async_iterator_machinery(const struct context *c, uint32_t i)
{
    const struct il_instr *in = &c->b->instrs[i];
    if (in->op == 0x45)
        return loads_generated_field(c, i, 5, "__state");
    if (in->op == 0x2c || in->op == 0x39) /* brfalse */
        return loads_generated_field(c, i, 1, "__disposeMode") ||
               loads_generated_field(c, i, 1, "x__combinedTokens");
    return 0;
}

static int is_ldloc(const struct il_instr *in)
{
    return (in->op >= 0x06 && in->op <= 0x09) || in->op == 0x11 || in->op == 0xfe0c;
}

static int is_ldc_i4(const struct il_instr *in)
{
    return (in->op >= 0x15 && in->op <= 0x1e) || in->op == 0x1f || in->op == 0x20;
}

static int is_ldarg0(const struct il_instr *in)
{
    return in->op == 0x02 || ((in->op == 0x0e || in->op == 0xfe09) && in->value == 0);
}

/* Is instruction k a `call`/`callvirt` of type::name (type by prefix and
 * substring when `contains` is given)? */
static int calls(const struct context *c, uint32_t k, const char *type_prefix, const char *contains,
                 const char *name)
{
    const struct il_instr *in = &c->b->instrs[k];
    if (in->op != 0x28 && in->op != 0x6f)
        return 0;
    char type[256];
    const char *n = assembly_member(c->a, (uint32_t)in->value, type, sizeof type);
    return !strcmp(n, name) && !strncmp(type, type_prefix, strlen(type_prefix)) &&
           (!contains || strstr(type, contains));
}

/* A `ldfld` of a field of a compiler-generated type. */
static int ldfld_generated(const struct context *c, uint32_t k)
{
    const struct il_instr *in = &c->b->instrs[k];
    return in->op == 0x7b && assembly_field_generated(c->a, (uint32_t)in->value);
}

static int field_type_is(const struct context *c, uint32_t k, const char *prefix)
{
    char type[256];
    assembly_field_type(c->a, (uint32_t)c->b->instrs[k].value, type, sizeof type);
    return !strncmp(type, prefix, strlen(prefix));
}

/* An async MoveNext's dispatch after a catch block: `ldloc; ldc.i4 N;
 * beq/bne.un` within five instructions after each handler's end (the
 * catch sets a local or field to say which handler ran). */
static int catch_dispatch(const struct context *c, uint32_t i)
{
    const struct il_body *b = c->b;
    const struct il_instr *in = &b->instrs[i];
    if (in->op != 0x3b && in->op != 0x2e && in->op != 0x40 && in->op != 0x33)
        return 0;
    if (i < 2 || !is_ldc_i4(&b->instrs[i - 1]) || !is_ldloc(&b->instrs[i - 2]))
        return 0;
    for (uint32_t k = 0; k < b->clause_count; k++) {
        long end = il_index_at(b, b->clauses[k].handler_offset + b->clauses[k].handler_length);
        if (end >= 0 && (long)i > end && (long)i <= end + 5 + 4 * (long)b->clause_count)
            return 1;
    }
    return 0;
}

/* An async MoveNext's `await foreach`: the enumerator's null test, the
 * test of an exception caught while disposing it, and its type test. */
static int await_foreach(const struct context *c, uint32_t i)
{
    const struct il_body *b = c->b;
    uint16_t op = b->instrs[i].op;
    if (op == 0x2c || op == 0x39) { /* brfalse */
        if (i >= 2 && is_ldarg0(&b->instrs[i - 2]) && ldfld_generated(c, i - 1) &&
            field_type_is(c, i - 1, "System.Collections.Generic.IAsyncEnumerator"))
            return 1;
        for (uint32_t k = 1; k <= 3 && k <= i; k++) {
            uint32_t f = i - k;
            if (!ldfld_generated(c, f) || !field_type_is(c, f, "System.Object"))
                continue;
            for (uint32_t j = 1; j <= 4 && j <= f; j++)
                if (calls(c, f - j, "System.Runtime.CompilerServices", "TaskAwait", "GetResult"))
                    return 1;
        }
    }
    if (op == 0x2d || op == 0x3a) { /* brtrue */
        for (uint32_t k = 1; k <= 3 && k + 1 <= i; k++) {
            const struct il_instr *t = &b->instrs[i - k];
            if (t->op == 0x75 && is_ldloc(&b->instrs[i - k - 1])) {
                char type[256];
                type[0] = '\0';
                if (((uint32_t)t->value >> 24) == MD_TYPEREF) {
                    const struct md *md = &c->a->md;
                    snprintf(type, sizeof type, "%s.%s",
                             md_string(md, md_get(md, MD_TYPEREF, (uint32_t)t->value & 0xffffff,
                                                  MD_TYPEREF_NAMESPACE)),
                             md_string(md, md_get(md, MD_TYPEREF, (uint32_t)t->value & 0xffffff,
                                                  MD_TYPEREF_NAME)));
                }
                if (!strcmp(type, "System.Exception"))
                    return 1;
            }
        }
    }
    return 0;
}

/* An async MoveNext's `await using`: the test whether there is something
 * to dispose, and the rethrow after disposing. */
static int await_using(const struct context *c, uint32_t i)
{
    const struct il_body *b = c->b;
    uint16_t op = b->instrs[i].op;
    if ((op == 0x2c || op == 0x39) && i >= 1 && i + 2 < b->count) {
        int disposes = 0;
        if (ldfld_generated(c, i - 1)) {
            for (uint32_t k = i + 1; k <= i + 2 && k + 1 < b->count; k++)
                if (b->instrs[k].op == 0x7b && b->instrs[k].value == b->instrs[i - 1].value &&
                    calls(c, k + 1, "", NULL, "DisposeAsync"))
                    disposes = 1;
        } else if (is_ldloc(&b->instrs[i - 1]) && is_ldloc(&b->instrs[i + 1]) &&
                   calls(c, i + 2, "", NULL, "DisposeAsync")) {
            disposes = 1;
        }
        /* coverlet also wants a `stfld; leave` before it, which release
         * builds do not always have: the disposal test is the compiler's
         * either way */
        if (disposes)
            return 1;
    }
    if ((op == 0x3b || op == 0x2e || op == 0x40 || op == 0x33) && i >= 2 &&
        is_ldc_i4(&b->instrs[i - 1])) {
        for (uint32_t k = 2; k <= 5 && k <= i; k++) {
            uint32_t f = i - k;
            if (!ldfld_generated(c, f))
                continue;
            for (uint32_t j = 1; j <= 4 && j <= f; j++)
                if (calls(c, f - j, "System.Runtime.ExceptionServices.ExceptionDispatchInfo", NULL,
                          "Throw"))
                    return 1;
        }
    }
    return 0;
}

/* Inside a filter block, or inside a finally block with no visible
 * sequence point (using, foreach, lock: the compiler's). */
static int in_generated_handler(const struct context *c, uint32_t offset)
{
    const struct il_body *b = c->b;
    for (uint32_t k = 0; k < b->clause_count; k++) {
        const struct il_clause *cl = &b->clauses[k];
        if ((cl->flags & IL_CLAUSE_FILTER) && offset >= cl->token_or_filter &&
            offset < cl->handler_offset)
            return 1;
        if ((cl->flags & IL_CLAUSE_FINALLY) && offset >= cl->handler_offset &&
            offset < cl->handler_offset + cl->handler_length) {
            int has_line = 0;
            for (uint32_t p = 0; p < c->plan->point_count; p++) {
                const struct ppdb_point *pt = &c->plan->points[p];
                has_line |= visible(pt) && pt->il_offset >= cl->handler_offset &&
                            pt->il_offset < cl->handler_offset + cl->handler_length;
            }
            if (!has_line)
                return 1;
        }
    }
    return 0;
}

/* How many ways control reaches each instruction other than by falling
 * into it: branch and switch targets, leave targets, handler and filter
 * starts (and the method's entry, for instruction 0). */
static uint32_t *ways_in(const struct il_body *b)
{
    uint32_t *n = mem_calloc((size_t)b->count + 1, sizeof *n);
    if (!n)
        return NULL;
    if (b->count)
        n[0]++;
    for (uint32_t i = 0; i < b->count; i++) {
        const struct il_instr *in = &b->instrs[i];
        for (uint32_t k = 1; k <= in->target_count; k++) {
            long t = il_index_at(b, il_target(b, in, k));
            if (t >= 0)
                n[t]++;
        }
    }
    for (uint32_t c = 0; c < b->clause_count; c++) {
        long h = il_index_at(b, b->clauses[c].handler_offset);
        if (h >= 0)
            n[h]++;
        long f = (b->clauses[c].flags & IL_CLAUSE_FILTER) ? il_index_at(b, b->clauses[c].token_or_filter) : -1;
        if (f >= 0)
            n[f]++;
    }
    return n;
}

/* Instructions that cannot throw (nor leave): an out-of-memory aside,
 * control goes on to the next one. */
static int cannot_throw(uint16_t op)
{
    if (op <= 0x1e) /* nop, break, ldarg/ldloc/stloc short forms, ldnull, ldc.i4.* */
        return op != 0x01;
    switch (op) {
    case 0x1f: case 0x20: case 0x21: case 0x22: case 0x23: /* ldc */
    case 0x25: case 0x26:                                   /* dup, pop */
    case 0x58: case 0x59: case 0x5a:                        /* add, sub, mul */
    case 0x5f: case 0x60: case 0x61: case 0x62: case 0x63: case 0x64: case 0x65: case 0x66:
    case 0x67: case 0x68: case 0x69: case 0x6a: case 0x6b: case 0x6c: case 0x6d: case 0x6e:
    case 0x76: case 0xd1: case 0xd2: case 0xd3: case 0xe0: /* and..not, conv without checks */
    case 0x72:                                              /* ldstr */
    case 0xfe01: case 0xfe02: case 0xfe03: case 0xfe04: case 0xfe05: /* ceq, cgt, clt */
    case 0xfe09: case 0xfe0a: case 0xfe0b: case 0xfe0c: case 0xfe0d: case 0xfe0e: /* long args, locals */
        return 1;
    default:
        return 0;
    }
}

/* Gives each probe whose count is exactly another's that other probe's
 * count (same_as), so that it needs no counter of its own:
 *   - a line probe reached only by falling from the previous line probe
 *     through instructions that can neither branch nor throw (`i++;` after
 *     `s += i;`);
 *   - a branch's way out that is the only way into an instruction with a
 *     line probe. */
static int share_counts(struct covplan *p, const struct il_body *b)
{
    uint32_t *in = ways_in(b);
    long *line_at = mem_alloc(((size_t)b->count + 1) * sizeof *line_at);
    if (!in || !line_at) {
        mem_free(in);
        mem_free(line_at);
        return -1;
    }
    for (uint32_t i = 0; i < b->count; i++)
        line_at[i] = -1;
    for (uint32_t k = 0; k < p->count; k++)
        if (p->probes[k].kind == COVFILE_PROBE_LINE)
            line_at[p->probes[k].instr] = (long)k;
    /* lines, in IL order (each one's root already known when it is met) */
    long last_line = -1;
    int straight = 0;
    for (uint32_t i = 0; i < b->count; i++) {
        if (in[i])
            straight = 0;
        if (line_at[i] >= 0) {
            struct covplan_probe *pr = &p->probes[line_at[i]];
            if (straight && last_line >= 0) {
                long root = last_line;
                if (p->probes[root].same_as >= 0)
                    root = p->probes[root].same_as;
                pr->same_as = (int32_t)root;
            }
            last_line = line_at[i];
            straight = 1;
        }
        if (!cannot_throw(b->instrs[i].op))
            straight = 0;
    }
    for (uint32_t k = 0; k < p->count; k++) {
        struct covplan_probe *pr = &p->probes[k];
        if (pr->kind != COVFILE_PROBE_BRANCH)
            continue;
        const struct il_instr *br = &b->instrs[pr->instr];
        long target;
        int only_way;
        if (pr->path == 0) { /* falling through: nothing else may jump there */
            target = (long)pr->instr + 1;
            only_way = target < (long)b->count && in[target] == 0;
        } else {
            target = il_index_at(b, il_target(b, br, pr->path));
            uint8_t flow = target > 0 ? il_opcode(b->instrs[target - 1].op)->flow : IL_FLOW_NEXT;
            /* reached by this path alone, never by falling into it */
            only_way = target > 0 && in[target] == 1 && flow != IL_FLOW_NEXT &&
                       flow != IL_FLOW_COND && flow != IL_FLOW_PREFIX;
        }
        if (only_way && target >= 0 && line_at[target] >= 0) {
            long root = line_at[target];
            if (p->probes[root].same_as >= 0)
                root = p->probes[root].same_as;
            pr->same_as = (int32_t)root;
        }
    }
    mem_free(in);
    mem_free(line_at);
    return 0;
}

/* The closest visible sequence point at or before offset (the first
 * visible one when none is before): the line a branch is reported on.
 * Returns its index, or -1 when the method has none. */
static long reporting_point(const struct covplan *p, uint32_t offset)
{
    long best = -1, first = -1;
    for (uint32_t k = 0; k < p->point_count; k++) {
        if (!visible(&p->points[k]))
            continue;
        if (first < 0)
            first = k;
        if (p->points[k].il_offset <= offset)
            best = k;
    }
    return best >= 0 ? best : first;
}

int covplan_method(const struct assembly *a, uint32_t method, const struct il_body *b,
                   int methods_only, struct covplan *out, char *why, size_t why_size)
{
    memset(out, 0, sizeof *out);
    size_t cap = 0;
    if (methods_only) {
        if (b->count && add(out, &cap, (struct covplan_probe){.il_offset = 0, .instr = 0,
                                                             .kind = COVFILE_PROBE_ENTRY,
                                                             .same_as = -1}) < 0)
            return fail(why, why_size, "out of memory");
        return 0;
    }
    const char *reason;
    if (ppdb_sequence_points(&a->pdb, method, &out->points, &out->point_count, &reason) < 0)
        return fail(why, why_size, reason);
    /* lines */
    for (uint32_t k = 0; k < out->point_count; k++) {
        const struct ppdb_point *pt = &out->points[k];
        if (!visible(pt) || assembly_line_excluded(a, pt->document, pt->start_line))
            continue;
        long i = il_index_at(b, pt->il_offset);
        if (i < 0 || (b->instrs[i].flags & (IL_INSTR_PREFIXED | IL_INSTR_TAIL_RET)))
            continue;
        if (add(out, &cap, (struct covplan_probe){.il_offset = pt->il_offset, .instr = (uint32_t)i,
                                                  .kind = COVFILE_PROBE_LINE, .point = k,
                                                  .same_as = -1}) < 0)
            goto oom;
    }
    /* branches */
    const struct assembly_method *am = &a->methods[method - 1];
    const struct assembly_type *at = am->type ? &a->types[am->type - 1] : NULL;
    int move_next = !strcmp(assembly_method_name(a, method), "MoveNext") && at && at->generated;
    struct context c = {.a = a, .b = b, .plan = out,
                        .async_move_next = move_next && (at->machine & ASSEMBLY_MACHINE_ASYNC),
                        .iterator_move_next = move_next && (at->machine & ASSEMBLY_MACHINE_ITERATOR),
                        .async_iterator_move_next =
                            move_next && (at->machine & ASSEMBLY_MACHINE_ASYNC_ITERATOR)};
    /* int num = <>1__state; */
    if (c.async_move_next && b->count >= 3) {
        const struct il_instr *in = b->instrs;
        c.state_prologue = (in[0].op == 0x02) && in[1].op == 0x7b &&
                           !strcmp(assembly_member(a, (uint32_t)in[1].value, NULL, 0), "<>1__state") &&
                           (in[2].op == 0x0a || ((in[2].op == 0x13 || in[2].op == 0xfe0e) &&
                                                 in[2].value == 0));
    }
    int skip_first = c.iterator_move_next, skip_second = 0;
    for (uint32_t i = 0; i < b->count; i++) {
        const struct il_instr *in = &b->instrs[i];
        if (il_opcode(in->op)->flow != IL_FLOW_COND || i + 1 >= b->count || in->target_count > 4096)
            continue;
        /* an iterator's MoveNext: the state dispatch is its first branch
         * (a switch), or its first two */
        if (skip_first) {
            skip_first = 0;
            skip_second = in->op != 0x45;
            continue;
        }
        if (skip_second) {
            skip_second = 0;
            continue;
        }
        if ((c.state_prologue && (state_dispatch(&c, i) || awaiter_test(&c, i))) ||
            (i > 0 && is_ldc1(&b->instrs[i - 1]) && (in->op == 0x2d || in->op == 0x3a) &&
             b->instrs[i + 1].op == 0x00) ||
            (c.async_iterator_move_next && async_iterator_machinery(&c, i)) ||
            cached_delegate(&c, i) ||
            (c.async_move_next && (async_rethrow(&c, i) || catch_dispatch(&c, i) ||
                                   await_foreach(&c, i) || await_using(&c, i))) ||
            in_generated_handler(&c, in->offset))
            continue;
        long point = reporting_point(out, in->offset);
        if (point < 0 || assembly_line_excluded(a, out->points[point].document,
                                                out->points[point].start_line))
            continue;
        for (uint32_t k = 0; k <= in->target_count; k++)
            if (add(out, &cap, (struct covplan_probe){.il_offset = in->offset, .instr = i,
                                                      .kind = COVFILE_PROBE_BRANCH,
                                                      .path = (uint16_t)k,
                                                      .point = (uint32_t)point,
                                                      .same_as = -1}) < 0)
                goto oom;
    }
    if (share_counts(out, b) < 0)
        goto oom;
    return 0;
oom:
    covplan_free(out);
    return fail(why, why_size, "out of memory");
}

void covplan_free(struct covplan *p)
{
    mem_free(p->probes);
    mem_free(p->points);
    memset(p, 0, sizeof *p);
}
