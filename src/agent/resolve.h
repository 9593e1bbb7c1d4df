/*
 * resolve: instruction pointers to frames, for the signal sampler's
 * collector (never in a signal handler).
 *
 * An address is, in this order: managed code the JIT callbacks told us
 * about (codemap, no runtime call); native code of a loaded ELF object
 * (`libc.so.6!qsort`, named from the library's full symbol table or its
 * debug file when there is one, else from its exports; the runtime's own
 * libraries marked as runtime frames; `libfoo.so!+0x1a2b` when no symbol
 * covers it); managed code
 * found by asking the runtime (GetFunctionFromIP: ReadyToRun code, which
 * is never JIT-compiled, then remembered in the codemap); or `[unknown]`,
 * counted as an unresolved frame.  Answers are cached per address; the
 * cache is dropped when code may have been unloaded.
 */
#ifndef CORSCOPE_RESOLVE_H
#define CORSCOPE_RESOLVE_H

#include <stdint.h>

#include "agent/agent.h"
#include "agent/codemap.h"
#include "agent/elfsym.h"
#include "common/map.h"
#include "common/strtab.h"
#include "common/visibility.h"

struct resolver {
    struct agent *a;
    struct map64 native_of_ip;   /* lookup address -> frame id, native code */
    struct map64 managed_of_ip;  /* idem, managed code or nothing known */
    struct strtab native_keys;   /* "module\nsymbol" -> index into native_frame */
    uint32_t *native_frame;
    size_t native_cap;
    struct strtab symbol_files;  /* module path -> index into symbols */
    struct elfsym **symbols;     /* full symbol tables, NULL when none */
    size_t symbols_cap;
};

HIDDEN void resolve_init(struct resolver *r, struct agent *a);
HIDDEN void resolve_free(struct resolver *r);
/* Forgets every address not in a native library (managed code was
 * unloaded, and its addresses will be reused). */
HIDDEN void resolve_forget(struct resolver *r);

/* Frame id of the code at `address` (a return address is looked up one
 * byte before, inside the call).  Never 0 unless the recording failed. */
HIDDEN uint32_t resolve_ip(struct resolver *r, uintptr_t address, int is_return);
/* The managed method range holding `address`, or NULL (after resolve_ip,
 * which teaches the codemap about ReadyToRun methods). */
HIDDEN const struct code_range *resolve_managed(uintptr_t address);

/* Is this module basename part of the runtime (coreclr, clrjit, the host)? */
HIDDEN int resolve_is_runtime_module(const char *basename);

#endif
