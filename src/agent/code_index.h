/*
 * code_index: the loop's index of managed code: which method (its
 * FunctionID, module and recording frame) owns a code address.  What goes
 * in and when it leaves is codemap.h's policy; this is the structure.
 *
 * Lookups are binary searches (signal/ranges.h) over a large sorted array
 * and a small sorted one that takes insertions (merged into the large one
 * when it outgrows the square root of the whole), so a new method costs
 * O(sqrt n) and a lookup O(log n).  Code that can be unloaded is also
 * listed by its owner (its collectible module, or the DynamicMethod
 * itself), so an unload finds its own k ranges in O(k log n) and leaves
 * tombstones, cleared at the next merge or when they reach a quarter of
 * the map (bench/codemap.sh).
 *
 * Everything here runs on the loop thread (tests and benchmarks: one
 * thread); no lock.
 */
#ifndef CORSCOPE_CODE_INDEX_H
#define CORSCOPE_CODE_INDEX_H

#include <stddef.h>
#include <stdint.h>

#include "clr/clr_interfaces.h"
#include "common/visibility.h"

struct code_range {
    uintptr_t start, end;   /* [start, end) */
    uintptr_t method_start; /* first byte of the code version this part belongs to */
    FunctionID function;
    ModuleID module;        /* 0 when not known */
    uint32_t frame;         /* the recording's frame for it when named at JIT time, else 0 */
    int permanent;          /* its ids are never freed (not from a collectible module) */
};

HIDDEN void code_index_init(void);
HIDDEN void code_index_free(void);
/* Adds a range; a newer report of code at the same start takes the older
 * one's place. */
HIDDEN void code_index_insert(const struct code_range *r);
/* The range holding address, or NULL. */
HIDDEN const struct code_range *code_index_find(uintptr_t address);
/* Ranges known. */
HIDDEN size_t code_index_count(void);
/* Removes the ranges of code that can be unloaded (not permanent) of a
 * module (function 0) or of a DynamicMethod, calling gone(ctx, r) for each
 * range just before it goes. */
HIDDEN void code_index_remove(ModuleID module, FunctionID function,
                              void (*gone)(void *ctx, const struct code_range *r), void *ctx);

#endif
