/*
 * pdefs: the definitions a recording's stream has given (strings, frames,
 * stacks, threads), kept for as long as they may be needed and no longer:
 * the memory of a stream read for a week stays under a budget.
 *
 * The agent refers to a definition by its id for as long as it likes (it
 * caches a method's frame, an exception type's string, a call path's
 * stack), so nothing can be dropped because it is old; but a program that
 * makes code under new names for ever (expression trees, regexes) defines
 * new ones for ever.  Each definition remembers the last window that
 * needed it (`used`); when the tables pass the budget, those no window
 * needed in the last PDEFS_KEEP_WINDOWS windows are forgotten, together
 * with the texts only they used.  A later reference to a forgotten one is
 * not an error: it is counted (forgotten_refs) and shown as the frame
 * "[forgotten]" (pwindow.h).  Texts are kept once however often the agent
 * writes them again (it forgets its own tables too), stacks' frames once
 * per distinct stack.
 */
#ifndef CORSCOPE_CLI_PDEFS_H
#define CORSCOPE_CLI_PDEFS_H

#include <stddef.h>
#include <stdint.h>

#include "common/map.h"
#include "common/strtab.h"
#include "common/visibility.h"

#define PDEFS_BUDGET_DEFAULT (64ull << 20)
#define PDEFS_KEEP_WINDOWS 4

/* One definition.  string: a = its text; frame: a, b, c = the texts of its
 * module, type and name, x = a label's subject (a frame id) or the extra,
 * kind; stack: a = offset into the pool, b = depth; thread: a = its name's
 * text, x = the OS thread id. */
struct pdef {
    uint32_t id;
    uint32_t used;
    uint32_t a, b, c;
    uint8_t kind;
    uint64_t x;
};

struct ptable {
    struct pdef *defs;
    size_t count, cap;
    struct map64 index; /* id -> index into defs */
    uint64_t next;      /* strings, frames, stacks: the next id expected; threads: the
                         * highest id defined + 1 */
};

struct pdefs {
    struct strtab texts;
    uint64_t text_bytes;
    struct ptable strings, frames, stacks, threads;
    uint32_t *pool; /* the frames of the distinct stacks, leaf first */
    size_t pool_count, pool_cap;
    struct map64 stack_by_content; /* hash -> index into stacks of the first with it */
    uint32_t now;                  /* the window being read (used marks) */
    uint64_t budget, threshold;
    uint64_t compactions, forgotten, forgotten_refs;
};

HIDDEN int pdefs_init(struct pdefs *d, uint64_t budget);
HIDDEN void pdefs_free(struct pdefs *d);
/* The definitions, in the order of the stream; each returns NULL or why
 * the record is bad. */
HIDDEN const char *pdefs_string(struct pdefs *d, uint64_t id, const void *text, size_t n);
HIDDEN const char *pdefs_frame(struct pdefs *d, uint64_t id, uint8_t kind, uint64_t module,
                               uint64_t type, uint64_t name, uint64_t extra);
HIDDEN const char *pdefs_stack(struct pdefs *d, uint64_t id, const uint32_t *frames, uint32_t depth);
HIDDEN const char *pdefs_thread(struct pdefs *d, uint64_t id, uint64_t os_tid, uint64_t name);
/* Has id been defined (forgotten since, or not)? */
HIDDEN int pdefs_defined(const struct ptable *t, uint64_t id);
/* The definition, marked as needed now; NULL when undefined or forgotten. */
HIDDEN struct pdef *pdefs_find(struct pdefs *d, struct ptable *t, uint64_t id);
/* A text's bytes. */
HIDDEN const char *pdefs_text(const struct pdefs *d, uint32_t text, uint32_t *len);
/* What the tables take, roughly, in bytes. */
HIDDEN uint64_t pdefs_bytes(const struct pdefs *d);
/* Over the budget: forgets what no window needed since window
 * `keep_since`.  Returns 0, or -1 when out of memory (nothing lost). */
HIDDEN int pdefs_compact(struct pdefs *d, uint32_t keep_since);

#endif
