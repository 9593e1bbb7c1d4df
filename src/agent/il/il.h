/*
 * il: the IL rewriting engine.  Pure functions on bytes: no runtime calls,
 * no agent state, no I/O; every input is untrusted.  Its users: coverage
 * (sources/cover.c), live probes (sources/watch_il.c) and logical async
 * stacks (async/rewrite.c).
 *
 * Three steps:
 *
 *   1. il_parse: a method body (ECMA-335 II.25.4) as the runtime or the
 *      file holds it -- tiny or fat header, the code, exception-handling
 *      sections small or fat -- into instructions (every opcode of
 *      III.1.2, prefixes and switch included) and clauses.  A body the
 *      engine cannot rewrite safely is refused with a reason: a branch or
 *      a clause boundary inside an instruction or outside the code, an
 *      unknown opcode, a prefix with nothing after it.
 *
 *   2. il_edit_*: what to insert, as a list of snippets of straight-line
 *      IL (checked: no branch, return, throw or prefix may be in one), each
 *      anchored to an original instruction:
 *        IL_BEFORE  before the instruction; every branch to it runs the
 *                   snippet first (a sequence point's probe; code before a
 *                   `ret`, whose value is on the stack);
 *        IL_ENTRY   before the instruction, on the way in by falling
 *                   through only: branches to it skip the snippet (code at
 *                   method entry, anchored at instruction 0);
 *        IL_EDGE    on one way out of a conditional branch (brtrue ...
 *                   switch): path 0 is falling through, path k its k-th
 *                   target (a branch probe).
 *      and what else changes: il_edit_set_locals gives the body a new
 *      local signature token (more locals, made by the caller through the
 *      metadata emitter); il_edit_reserve_stack adds to max stack.
 *
 *   3. il_rewrite: the new body.  Each original instruction keeps its
 *      bytes, except branches, whose targets are moved (a short form whose
 *      target drifted out of reach is widened; the layout is redone until
 *      every one fits); edge snippets taken by a branch go into trampolines
 *      (snippet, then `br` to the original target) at the end of the
 *      innermost region holding the branch -- a try block, a handler, a
 *      filter, or the method -- where nothing falls through (control never
 *      falls out of a region, nor off the end of a method); clauses are
 *      moved so that a snippet before a region's first instruction is
 *      inside it (a handler's probe runs in the handler) and a region's
 *      trampolines too.  The header is always fat; EH sections are always
 *      written in the fat format (small ones widened); max stack grows by
 *      the largest snippet's need.  It also returns the old-to-new offset
 *      map for ICorProfilerInfo::SetILInstrumentedCodeMap, and where each
 *      original instruction went.
 *
 * il_check verifies a rewrite structurally -- the new body parses, every
 * original instruction is there with its operands, every path between
 * them (branch, edge, fall through, handler entry) reaches the same
 * original instruction as before through nothing but the snippets meant
 * for that path -- and is run by the unit tests over a corpus of real
 * method bodies and by the fuzzer over anything.
 *
 * For issue 22 (live probes), beyond coverage:
 *   - entry code: IL_ENTRY at instruction 0;
 *   - exit code: IL_BEFORE at each `ret` (il_returns lists them; a ret
 *     after a `tail.` call refuses: the call must stay last);
 *   - locals for captured values: il_edit_set_locals with the token of a
 *     signature that appends to the old one (il_body.local_sig);
 *   - wrapping the body in a new outermost try/finally or try/fault:
 *     il_edit_wrap (logical async stacks use a finally to put back what
 *     their entry code published; a fault sees throws).
 *
 * il_edit_wrap's shape: the try block starts after instruction 0's
 * IL_ENTRY snippets (entry code runs before it, outside) and ends after the
 * body's last code (its trampolines included); each `ret` becomes
 * `stloc result; leave EPILOGUE` (`leave EPILOGUE` for a method returning
 * nothing), after its IL_BEFORE snippets; then come the handler (the
 * snippet, then endfinally/endfault) and `EPILOGUE: ldloc result; ret`.
 * The new clause is the last of the EH section, after the body's own (an
 * enclosing clause comes after those it encloses).
 */
#ifndef CORSCOPE_IL_H
#define CORSCOPE_IL_H

#include <stddef.h>
#include <stdint.h>

#include "common/visibility.h"

/* ---- opcodes ------------------------------------------------------------------- */

enum il_operand {
    IL_OPERAND_NONE,
    IL_OPERAND_U8,     /* ShortInlineVar, unaligned., no. */
    IL_OPERAND_I8,     /* ShortInlineI */
    IL_OPERAND_U16,    /* InlineVar */
    IL_OPERAND_I32,    /* InlineI */
    IL_OPERAND_I64,    /* InlineI8 */
    IL_OPERAND_R32,    /* ShortInlineR */
    IL_OPERAND_R64,    /* InlineR */
    IL_OPERAND_TOKEN,  /* InlineMethod, Field, Type, String, Sig, Tok */
    IL_OPERAND_BR8,    /* ShortInlineBrTarget */
    IL_OPERAND_BR32,   /* InlineBrTarget */
    IL_OPERAND_SWITCH, /* InlineSwitch */
};

/* What an instruction does to the flow of control. */
enum il_flow {
    IL_FLOW_NEXT,      /* goes on to the next instruction (calls included) */
    IL_FLOW_BRANCH,    /* br, leave: always jumps */
    IL_FLOW_COND,      /* conditional branches and switch: jumps or goes on */
    IL_FLOW_RETURN,    /* ret, jmp */
    IL_FLOW_THROW,     /* throw, rethrow */
    IL_FLOW_END,       /* endfinally, endfilter: back to the runtime */
    IL_FLOW_PREFIX,    /* unaligned., volatile., tail., constrained., readonly., no. */
};

struct il_opcode {
    const char *name;  /* NULL: not an opcode */
    uint8_t operand;   /* enum il_operand */
    uint8_t flow;      /* enum il_flow */
};

/* The opcode op (0x00..0xff, or 0xfe00 | second byte); NULL if none. */
HIDDEN const struct il_opcode *il_opcode(uint16_t op);

/* ---- parsed bodies --------------------------------------------------------------- */

enum {
    IL_INSTR_PREFIXED = 1, /* follows a prefix: nothing may be inserted before it */
    IL_INSTR_TAIL_RET = 2, /* a ret right after a tail. call */
};

struct il_instr {
    uint32_t offset;
    uint32_t size;         /* bytes, operand included */
    uint16_t op;
    uint8_t operand;       /* enum il_operand */
    uint8_t flags;
    int64_t value;         /* immediate, token, or a branch's target offset */
    uint32_t first_target; /* switch: its targets' offsets in il_body.targets */
    uint32_t target_count; /* 1 for other branches, the case count for switch */
};

enum il_clause_kind {
    IL_CLAUSE_CATCH = 0, IL_CLAUSE_FILTER = 1, IL_CLAUSE_FINALLY = 2, IL_CLAUSE_FAULT = 4,
};

struct il_clause {
    uint32_t flags;
    uint32_t try_offset, try_length;
    uint32_t handler_offset, handler_length;
    uint32_t token_or_filter; /* catch: the class token; filter: the filter's offset */
};

struct il_body {
    int tiny;                 /* the header was tiny */
    int init_locals;
    uint32_t header_size;
    uint32_t max_stack;
    uint32_t code_size;
    uint32_t local_sig;       /* StandAloneSig token, 0 */
    const uint8_t *code;      /* inside the bytes given to il_parse */
    size_t total_size;        /* header, code and sections */
    struct il_instr *instrs;
    uint32_t count;
    uint32_t *targets;        /* switch targets (absolute offsets) */
    uint32_t target_count;
    struct il_clause *clauses;
    uint32_t clause_count;
};

/* Parses the method body at bytes[0..size).  Returns 0, or -1 with a
 * reason in why (the engine refuses the body, or out of memory).  On
 * success free with il_body_free. */
HIDDEN int il_parse(const uint8_t *bytes, size_t size, struct il_body *out, char *why,
                    size_t why_size);
HIDDEN void il_body_free(struct il_body *b);
/* The index of the instruction at offset, or -1 when none starts there. */
HIDDEN long il_index_at(const struct il_body *b, uint32_t offset);
/* The target offset of path k (1-based) of a branch instruction. */
HIDDEN uint32_t il_target(const struct il_body *b, const struct il_instr *in, uint32_t k);

/* ---- edits --------------------------------------------------------------------- */

enum il_where { IL_BEFORE, IL_ENTRY, IL_EDGE };

struct il_insert {
    uint32_t at;     /* instruction index */
    uint8_t where;   /* enum il_where */
    uint32_t path;   /* IL_EDGE: 0 falls through, k >= 1 the k-th target */
    uint32_t code;   /* offset of its bytes in il_edit.pool */
    uint32_t len;
    uint32_t stack;  /* how deep its own stack use goes */
};

struct il_edit {
    struct il_insert *inserts;
    uint32_t count;
    size_t cap;
    uint8_t *pool;
    size_t pool_len, pool_cap;
    uint32_t stack;        /* the most any snippet needs */
    uint32_t extra_stack;  /* il_edit_reserve_stack */
    uint32_t local_sig;    /* il_edit_set_locals */
    int set_locals;
    int wrap;              /* il_edit_wrap: the clause's kind, handler and result local */
    uint32_t wrap_kind, wrap_code, wrap_len, wrap_result;
};

HIDDEN void il_edit_init(struct il_edit *e);
HIDDEN void il_edit_free(struct il_edit *e);
/* Adds a snippet (copied) at instruction `at` of b.  Returns 0, or -1 with
 * a reason: a bad anchor (a prefixed instruction, a ret after a tail call,
 * an edge of an instruction that is not a conditional branch, a path it
 * does not have, falling through off the end), a snippet that is not
 * straight-line IL, or out of memory. */
HIDDEN int il_edit_add(struct il_edit *e, const struct il_body *b, uint32_t at, enum il_where where,
                       uint32_t path, const uint8_t *code, uint32_t len, uint32_t stack, char *why,
                       size_t why_size);
HIDDEN void il_edit_set_locals(struct il_edit *e, uint32_t local_sig_token);

#define IL_NO_RESULT UINT32_MAX
/* Wraps the whole body in a new outermost clause of `kind` (IL_CLAUSE_FINALLY
 * or IL_CLAUSE_FAULT) whose handler is the straight-line snippet `code`
 * (copied; the engine ends it with endfinally/endfault), as described at
 * the top.  result_local: the index of a local (made by the caller, of the
 * method's return type) that carries the return value past the handler, or
 * IL_NO_RESULT for a method returning nothing -- the engine cannot tell
 * which from the body: a wrong answer makes IL the runtime rejects.  Once
 * per edit.  Returns 0, or -1 with a reason: a body with a `jmp` (it
 * leaves without the handler), a tail call (none may be in a try block), a
 * `ret` inside an exception clause (invalid IL), an empty body, a snippet
 * that is not straight-line IL, a second wrap, or out of memory. */
HIDDEN int il_edit_wrap(struct il_edit *e, const struct il_body *b, enum il_clause_kind kind,
                        const uint8_t *code, uint32_t len, uint32_t stack, uint32_t result_local,
                        char *why, size_t why_size);
HIDDEN void il_edit_reserve_stack(struct il_edit *e, uint32_t slots);

/* ---- the new body ---------------------------------------------------------------- */

struct il_map_entry {
    uint32_t old_offset, new_offset; /* COR_IL_MAP's first two fields */
};

struct il_rewritten {
    uint8_t *body;          /* header, code and EH section: for SetILFunctionBody */
    size_t size;
    uint32_t code_size, max_stack;
    struct il_map_entry *map; /* one per original instruction: its old offset and where
                               * branches to it now land (increasing) */
    uint32_t map_count;
    uint32_t *landing;      /* [i]: where branches to instruction i land */
    uint32_t *placed;       /* [i]: where instruction i itself is */
};

/* Rewrites b with e.  Returns 0, or -1 with a reason (too big, out of
 * memory).  Free with il_rewritten_free. */
HIDDEN int il_rewrite(const struct il_body *b, const struct il_edit *e, struct il_rewritten *out,
                      char *why, size_t why_size);
HIDDEN void il_rewritten_free(struct il_rewritten *r);

/* Checks a rewrite of b with e (see the top).  Returns 0, or -1 with the
 * first difference found. */
HIDDEN int il_check(const struct il_body *b, const struct il_edit *e, const struct il_rewritten *r,
                    char *why, size_t why_size);

/* The engine's way of saying why: formats into why (when not NULL) and
 * returns -1. */
HIDDEN int il_why(char *why, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* ---- snippets ---------------------------------------------------------------------- */

#define IL_COUNTER_PROBE_SIZE 16
#define IL_COUNTER_PROBE_STACK 3
/* Adds 1 to the 64-bit counter at `address` (no metadata needed: the
 * address is a constant): ldc.i8 address; conv.u; dup; ldind.i8;
 * ldc.i4.1; conv.i8; add; stind.i8.  Writes IL_COUNTER_PROBE_SIZE bytes. */
HIDDEN void il_counter_probe(uint8_t out[IL_COUNTER_PROBE_SIZE], uint64_t address);

#define IL_ATOMIC_COUNTER_PROBE_SIZE 18
#define IL_ATOMIC_COUNTER_PROBE_STACK 2
/* Adds 1 to the 64-bit counter at `address` atomically, through
 * `add_method`, the module's token (MemberRef or MethodDef) of
 * System.Threading.Interlocked.Add(ref long, long), which the JIT turns
 * into one locked add: ldc.i8 address; conv.u; ldc.i4.1; conv.i8; call
 * add_method; pop.  Writes IL_ATOMIC_COUNTER_PROBE_SIZE bytes. */
HIDDEN void il_atomic_counter_probe(uint8_t out[IL_ATOMIC_COUNTER_PROBE_SIZE], uint64_t address,
                                    uint32_t add_method);

#endif
