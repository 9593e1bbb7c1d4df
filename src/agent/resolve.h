/*
 * resolve: instruction pointers to frames, on the loop thread (never in a
 * signal handler).
 *
 * An address is, in this order: managed code the JIT callbacks told us
 * about (codemap, its name known or asked for once); native code of a
 * loaded ELF object (`libc.so.6!qsort`, named from the library's full
 * symbol table or its debug file when there is one, else from its exports;
 * the runtime's own libraries marked as runtime frames; `libfoo.so!+0x1a2b`
 * when no symbol covers it); managed code found by asking the runtime
 * (GetFunctionFromIP: ReadyToRun code, which is never JIT-compiled, then
 * remembered in the codemap); code the runtime generated that is no
 * method, in executable memory of no file (stubcode.h: its stubs), shown
 * as the runtime's `[runtime stub]`; or `[unknown]`, counted as an unresolved
 * frame.  The runtime is asked only under the codemap's rule (no code
 * unloaded since the address was seen).  Answers are cached per address;
 * the cache of managed addresses is dropped when code is unloaded.
 *
 * The resolver also remembers what each frame it handed out is (managed,
 * native, the runtime's, the agent's own), for the stack builder.
 */
#ifndef CORSCOPE_RESOLVE_H
#define CORSCOPE_RESOLVE_H

#include <stdint.h>

#include "agent/dynsym.h"
#include "agent/elfsym.h"
#include "agent/names.h"
#include "agent/recorder.h"
#include "clr/clr_interfaces.h"
#include "common/map.h"
#include "common/strtab.h"
#include "common/visibility.h"

/* The module name of the frames of code that is no method (stubcode.h). */
#define RESOLVE_STUB_MODULE "[runtime stub]"

/* What a frame is, as far as stacks are built (resolve_frame_class). */
enum frame_class {
    FRAME_OTHER = 0,   /* synthetic, labels, unknown */
    FRAME_MANAGED = 1,
    FRAME_NATIVE = 2,  /* a library of the program's */
    FRAME_RUNTIME = 3, /* the runtime's own libraries (coreclr, clrjit, the host) */
    FRAME_AGENT = 4,   /* libcorscope.so itself */
};

struct resolver {
    ICorProfilerInfo15 *info;
    struct names *names;
    struct recorder *out;
    struct map64 native_of_ip;   /* lookup address -> frame id, native code */
    struct map64 managed_of_ip;  /* idem, managed code or nothing known */
    struct strtab native_keys;   /* "module\nsymbol" -> index into native_frame */
    uint32_t *native_frame;
    size_t native_cap;
    struct strtab symbol_files;  /* module path -> index into symbols */
    struct elfsym **symbols;     /* full symbol tables, NULL when none */
    size_t symbols_cap;
    struct dynsym_cache *exports; /* the others' exported symbols (NULL: scanned) */
    struct map64 class_of;       /* frame id -> enum frame_class (bounded: resolve_bound) */
};

/* Frames whose class is remembered before the resolver forgets its caches
 * (resolve_bound): a long run that compiles code under new names makes new
 * frames without end. */
#define RESOLVE_CLASSES_MAX (1u << 16)

HIDDEN void resolve_init(struct resolver *r, ICorProfilerInfo15 *info, struct names *names,
                         struct recorder *out);
HIDDEN void resolve_free(struct resolver *r);
/* Forgets every address not in a native library (managed code was
 * unloaded, and its addresses will be reused). */
HIDDEN void resolve_forget(struct resolver *r);

/* Frame id of the code at `address` (a return address is looked up one
 * byte before, inside the call), seen at `seen_ns` (CLOCK_MONOTONIC).
 * Never 0 unless the recording failed. */
HIDDEN uint32_t resolve_ip(struct resolver *r, uintptr_t address, int is_return, uint64_t seen_ns);
/* The frame of a managed function seen at seen_ns (the stop-the-world
 * sampler's FunctionIDs), under the same rule. */
HIDDEN uint32_t resolve_function(struct resolver *r, FunctionID function, uint64_t seen_ns);
/* What a frame id this resolver handed out is. */
HIDDEN enum frame_class resolve_frame_class(const struct resolver *r, uint32_t frame);
/* Loop, between drains: when more than RESOLVE_CLASSES_MAX frames have a
 * class, forgets the classes and the address caches that hand out those
 * frames (they are resolved again, and classed again, as they come). */
HIDDEN void resolve_bound(struct resolver *r);
/* The managed method range holding `address`, or NULL. */
HIDDEN const struct code_range *resolve_managed(uintptr_t address);

/* Is this module basename part of the runtime (coreclr, clrjit, the host)? */
HIDDEN int resolve_is_runtime_module(const char *basename);

/* Tests: fn runs after each native lookup, before its answer is used
 * (a library unloaded there must not be read). */
HIDDEN void resolve_test_after_lookup(void (*fn)(void));

#endif
