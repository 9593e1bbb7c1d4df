/*
 * mcode: the signal handler's map of managed code.  For an address it says
 * whether managed code lies there, where that function (or funclet) begins
 * and ends, and the shape of its frame (mshape.h), so the walker can step
 * every managed frame exactly, whether or not it set RBP.
 *
 * Two sources feed it, on the loop thread:
 *   - JIT-compiled code: each code range the JIT callbacks reported, with
 *     the shape decoded from its prologue in the callback (the code is
 *     certainly valid there), added when the loop applies the code map's
 *     queue and removed when the code is unloaded;
 *   - ReadyToRun images: when a module that is never unloaded is loaded,
 *     its image's RUNTIME_FUNCTIONS table (every precompiled function and
 *     funclet, with Windows-x64 unwind codes) is located once; the handler
 *     binary-searches it in place and decodes the one entry it needs.
 *
 * The handler reads an immutable snapshot: a large sorted array, a small
 * sorted one with the latest additions (copied at each publication, and
 * merged into the large one once those copies would cost as much as the
 * merge), and the images.  Replaced snapshots and
 * arrays go to the reclaimer (thread_rings.h), so a handler never reads freed
 * memory.
 */
#ifndef CORSCOPE_MCODE_H
#define CORSCOPE_MCODE_H

#include <stddef.h>
#include <stdint.h>

#include "agent/signal/arch.h"
#include "common/visibility.h"

struct mcode_entry {
    uintptr_t start;    /* the part [start, start + len) */
    uintptr_t fn_start; /* where its function's prologue is; 0: this part has none */
    uint32_t len;
    uint8_t known;      /* the shape was decoded */
    uint8_t permanent;  /* never freed while the process runs */
    arch_shape shape;
};

/* Any thread (the JIT callbacks): code was just compiled.  It goes into a
 * small ring of the latest methods, which handlers search when the
 * published table does not have an address yet, so a method is walked
 * exactly from its first instruction, not only once the loop has
 * published it; mcode_add, through the loop, makes it permanent. */
HIDDEN void mcode_fresh(const struct mcode_entry *e);

/* Loop: adds (or replaces, by start) a range of JIT-compiled code. */
HIDDEN void mcode_add(const struct mcode_entry *e);
/* Loop: the code at start was unloaded. */
HIDDEN void mcode_remove(uintptr_t start);
/* Loop: a module image that stays mapped for the life of the process was
 * loaded at base; its ReadyToRun functions, if it has any, become known.
 * *image_size is its extent from its headers (SizeOfImage; 0 when base
 * holds no PE image), read here with the function table, so that the
 * headers are read once for both.  Returns the number of functions found. */
HIDDEN size_t mcode_add_image(uintptr_t base, size_t *image_size);
/* Loop: makes what was added or removed since the last call visible to
 * handlers.  Cheap when nothing changed. */
HIDDEN void mcode_publish(void);
HIDDEN void mcode_shutdown(void);
/* Loop: entries copied by publications so far (their cost, for tests). */
HIDDEN uint64_t mcode_copied(void);
/* Loop: rebuilds written into a retired array instead of new memory. */
HIDDEN uint64_t mcode_spare_reuses(void);
/* Loop: additions that changed nothing (the same entry at the same start). */
HIDDEN uint64_t mcode_unchanged_reports(void);
/* Loop: JIT-compiled ranges and ReadyToRun images known (log, tests). */
HIDDEN size_t mcode_ranges(void);
HIDDEN size_t mcode_images(void);

enum mcode_found {
    MCODE_NONE,      /* not managed code we know */
    MCODE_FOUND,     /* managed code with a decoded shape */
    MCODE_NO_SHAPE,  /* managed code whose frame we could not decode */
    MCODE_IMAGE,     /* inside a ReadyToRun image, in no function (a thunk) */
};

struct mcode_hit {
    uintptr_t lo, hi;   /* the function or part holding the address */
    uintptr_t fn_start; /* its prologue's start, 0: none in this part */
    int permanent;      /* its bytes may be read at any time */
    arch_shape shape;
};

/* Handler (async-signal-safe, between thread_rings_handler_enter/leave or
 * thread_rings_walker_enter/leave): the published table. */
HIDDEN enum mcode_found mcode_find(uintptr_t at, struct mcode_hit *hit);
/* Handler: the ring of just-compiled code (MCODE_NONE when not there);
 * asked last, for code no other table knows. */
HIDDEN enum mcode_found mcode_find_fresh(uintptr_t at, struct mcode_hit *hit);

#endif
