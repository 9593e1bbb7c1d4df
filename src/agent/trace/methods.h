/*
 * methods: which methods are traced, decided once per compilation, and the
 * client ids the hooks carry.
 *
 * The runtime asks the FunctionIDMapper2 (methods_mapper) about every
 * method body it compiles, on the compiling thread, before the code exists:
 * the answer decides whether that code calls the hooks at all, so a method
 * left out costs nothing.  The mapper names the method there
 * (names_describe, while its ids are certainly valid, as the code map does
 * for methods that can be unloaded), matches the display name
 * ("Namespace.Type.Method", as reports print it) against --include and
 * --exclude (POSIX extended regular expressions), and gives a traced method
 * a small client id: an index into a table of names that the loop turns
 * into frames.  The JIT compiles the id into the method's code.  The mapper
 * is idempotent, as the runtime requires (a method is compiled again at
 * tier 1, for OSR, for ReJIT): a FunctionID it has seen maps to the same id
 * as long as the method it names is the same; a FunctionID the runtime
 * reused for another method (code was unloaded) gets a new one.
 *
 * Scope: without --include and --exclude, the program's own code is
 * traced: the methods of assemblies that are neither the framework's nor a
 * package's, by name (System, System.*, Microsoft.*, netstandard, mscorlib)
 * and by location (the dotnet installation's shared/, sdk/ and packs/, the
 * NuGet package cache).  Their methods get no hooks, are inlined as the JIT
 * likes, and their time is their traced callers' self time.  With a filter,
 * every method whose name passes it is traced (`--include .`: all).
 *
 * Inlining: a traced method inlined into its caller would call no hooks,
 * so the JITInlining callback refuses to inline traced callees, and only
 * them (methods_inline); every other method is inlined as without the
 * agent.
 */
#ifndef CORSCOPE_TRACE_METHODS_H
#define CORSCOPE_TRACE_METHODS_H

#include <stddef.h>
#include <stdint.h>

#include "clr/clr_interfaces.h"
#include "common/visibility.h"

struct method_desc;

struct trace_method {
    FunctionID function;
    char *module, *type, *name; /* as names_describe gave them */
    uint32_t arity;
    uint32_t frame; /* the loop's: the recording's frame, 0 until made */
};

/* Initialize: the filters (NULL or "" for none).  Returns 0, or -1 with the
 * reason in err. */
HIDDEN int methods_init(ICorProfilerInfo15 *info, int info_version, const char *include,
                        const char *exclude, char *err, size_t err_size);
/* Does any filter apply (else every method is traced)? */
HIDDEN int methods_filtered(void);
/* Pure but for the location rule's learning: is the module at this path
 * the program's own (not the framework's or a package's)?  Is an assembly
 * file name one of the framework's by name? */
HIDDEN int methods_own_module(const char *path);
HIDDEN int methods_framework_name(const char *file);
/* The default scope as it came out: the program's assemblies traced, and
 * how many of the framework's and packages' were not. */
HIDDEN void methods_scope(char *out, size_t size);
/* The FunctionIDMapper2 (any thread, at JIT time). */
HIDDEN UINT_PTR STDMETHODCALLTYPE methods_mapper(FunctionID function, void *client, BOOL *hook);
/* Any thread, at JIT time: the client id of a traced method, 0 when it is
 * not traced (the mapper's decision, without the hook flag). */
HIDDEN uint32_t methods_decide(FunctionID function);
/* JITInlining (any thread): may callee be inlined?  0 when it is traced. */
HIDDEN int methods_inline(FunctionID caller, FunctionID callee);
/* Any thread: the FunctionID a client id stands for (0 when unknown). */
HIDDEN FunctionID methods_function(uint64_t id);
/* Loop: a client id's entry, NULL when unknown. */
HIDDEN struct trace_method *methods_get(uint64_t id);
/* Counts for the recording: methods traced, left out by the filters, not
 * nameable (not traced), inlinings refused. */
HIDDEN void methods_counts(uint64_t *traced, uint64_t *excluded, uint64_t *unnamed,
                           uint64_t *inlines_refused);
/* Shutdown of the loop: nothing; the table lives as long as the code that
 * carries its ids. */

/* Pure: the display name of a described method, as reports print it
 * ("Namespace.Outer+Inner.Method``1"). */
HIDDEN void methods_display_name(const char *type, const char *method, uint32_t arity, char *out,
                                 size_t size);
/* Tests: a name filter decision without the runtime; a client id for a
 * made-up method. */
HIDDEN int methods_name_traced(const char *display);
HIDDEN uint32_t methods_add_for_test(FunctionID function, const char *type, const char *name);
/* Tests: forgets every method (no hook may still carry their ids). */
HIDDEN void methods_reset_for_test(void);

#endif
