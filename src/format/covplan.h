/*
 * covplan: where coverage puts its probes in a method, decided the same
 * way by the agent (which instruments by it) and by the CLI (which lists
 * the lines and branches of methods that never ran by it, and checks the
 * agent's probes against it).
 *
 *   lines     a probe before every visible sequence point of the PDB (a
 *             hidden one, line 0xfeefee, owns no line), except points
 *             inside the source span of an excluded method (its lambdas);
 *   branches  a probe on every way out of every conditional branch (two
 *             for brtrue and the like, one per case plus falling through
 *             for switch), reported on the line of the closest visible
 *             sequence point at or before it -- except the branches the
 *             compiler makes for its own machinery, which coverlet leaves
 *             out too: the state dispatch of an async or iterator
 *             MoveNext, the awaiter's IsCompleted test, the test of a
 *             cached lambda or method-group delegate, the branches of a
 *             filter or of a finally block with no source line, the
 *             `isinst Exception` of an async rethrow, an async
 *             iterator's state switch and disposal tests, the dispatch
 *             after an async method's catch, `await foreach` and
 *             `await using`'s tests;
 *   entry     an assembly without PDB, when asked for: one probe at entry.
 *
 * A probe whose count is exactly another's gets no counter of its own
 * (same_as names the probe that counts for it; the agent does not insert
 * it, the CLI reads that probe's counter): a line reached only by falling
 * from the line before through instructions that can neither branch nor
 * throw (`i++;` after `s += i;`), and a branch's way out that is the only
 * way into a line (the body a loop's condition jumps back to, the
 * statement after an `if` that nothing else reaches).  A loop then runs a
 * probe or two per iteration, not one per statement and edge.
 */
#ifndef CORSCOPE_COVPLAN_H
#define CORSCOPE_COVPLAN_H

#include <stddef.h>
#include <stdint.h>

#include "agent/il/il.h"
#include "common/pdb/assembly.h"
#include "common/visibility.h"
#include "format/covfile.h"

struct covplan_probe {
    uint32_t il_offset;   /* the sequence point's, or the branch instruction's */
    uint32_t instr;       /* its instruction index */
    uint16_t kind;        /* enum covfile_probe */
    uint16_t path;
    uint32_t point;       /* LINE: index of its sequence point; BRANCH: of the point it is
                           * reported on */
    int32_t same_as;      /* -1, or the index of the LINE probe whose count this branch
                           * probe's is (no probe of its own: see below) */
};

struct covplan {
    struct covplan_probe *probes;
    uint32_t count;
    struct ppdb_point *points; /* the method's sequence points (hidden ones too) */
    uint32_t point_count;
};

/* --include / --exclude: globs (fnmatch) over assembly names and the full
 * names of the user types ("Namespace.Outer+Inner"), comma-separated. */
#define COVPLAN_MAX_FILTERS 64
struct covplan_filters {
    char *text; /* the setting, split in place */
    const char *globs[COVPLAN_MAX_FILTERS];
    uint32_t count;
};
HIDDEN int covplan_filters_parse(struct covplan_filters *f, const char *text);
HIDDEN void covplan_filters_free(struct covplan_filters *f);
HIDDEN int covplan_filters_match(const struct covplan_filters *f, const char *name);

/* Whether MethodDef row `row` is covered: it has IL, is not excluded
 * (by attribute, or as a [CompilerGenerated] constructor), its user type
 * passes the filters (`named`: the assembly's own name matched an
 * --include, which takes all its types), and, unless methods_only, the PDB
 * gives it sequence points. */
HIDDEN int covplan_candidate(const struct assembly *a, uint32_t row, int methods_only,
                             const struct covplan_filters *include,
                             const struct covplan_filters *exclude, int named);

/* The probes of MethodDef row `method` whose parsed body is b.
 * methods_only: one entry probe (no PDB).  Returns 0 (count 0: nothing to
 * cover), or -1 with a reason (sequence points unreadable, out of
 * memory). */
HIDDEN int covplan_method(const struct assembly *a, uint32_t method, const struct il_body *b,
                          int methods_only, struct covplan *out, char *why, size_t why_size);
HIDDEN void covplan_free(struct covplan *p);

#endif
