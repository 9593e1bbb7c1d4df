/*
 * names: FunctionID -> a frame of the recording, through the runtime's
 * metadata.
 *
 * For a managed method the agent records facts, not display strings: the
 * module's path, the declaring type's name as metadata spells it (namespace
 * included, nested types joined by '+', generic types with their `N arity)
 * and the method's name and generic arity.  The CLI turns those into
 * "Namespace.Outer+Inner.Method``1" the same way in every report.
 *
 * Two ways in.  names_describe asks the runtime about one function with no
 * state of its own, so any thread may call it: the JIT callbacks describe
 * methods that may be unloaded while their ids are certainly valid
 * (codemap.h), and the loop adds them with names_add.  names_function is
 * the loop's lazy path for every other method, cached (FunctionID -> frame
 * id; ModuleID -> metadata import; type token -> name), so a method costs
 * runtime calls once; the caller brackets it with codemap_ids_begin/end.
 * Modules that can be unloaded are never cached.
 */
#ifndef CORSCOPE_NAMES_H
#define CORSCOPE_NAMES_H

#include <stddef.h>
#include <stdint.h>

#include "agent/recorder.h"
#include "clr/clr_interfaces.h"
#include "common/map.h"
#include "common/strtab.h"
#include "common/visibility.h"

#define NAMES_CHARS 512
/* Methods described at JIT time whose frames are remembered by their facts,
 * so that code compiled again and again under the same name (a compiled
 * Regex, an expression tree built in a loop) shares one frame. */
#define NAMES_FACTS_MAX 16384

/* What a method is, as the recording names it. */
struct method_desc {
    char module[NAMES_CHARS];     /* path, or "[dynamic]" for a DynamicMethod or IL stub */
    char type[2 * NAMES_CHARS];
    char method[NAMES_CHARS];
    uint32_t arity;
};

struct names_module;

struct names {
    ICorProfilerInfo15 *info;
    int info_version;
    struct recorder *out;
    struct map64 frame_of;  /* FunctionID -> frame id */
    struct map64 frame_of_facts; /* hash of a described method's facts -> frame id
                                  * (bounded: forgotten past NAMES_FACTS_MAX) */
    struct map64 module_of; /* ModuleID -> index into modules */
    struct names_module *modules;
    size_t module_count, module_cap;
    struct map64 type_of;   /* (module index << 32 | typedef token) -> type name id */
    struct strtab types;    /* type names, by id */
};

HIDDEN int names_init(struct names *n, ICorProfilerInfo15 *info, int info_version,
                      struct recorder *out);
/* Any thread, no caches: describes a function.  Returns 0, or -1 when the
 * runtime could not say. */
HIDDEN int names_describe(ICorProfilerInfo15 *info, int info_version, FunctionID function,
                          struct method_desc *d);
/* A TypeDef's name as names_type_def spells it, read in place
 * (mdplace.h), through the runtime's importer only for a module that
 * cannot be read so.  Returns 0, or -1 when neither way answers. */
HIDDEN int names_type_of(ICorProfilerInfo15 *info, ModuleID module, mdTypeDef type, char *out,
                         size_t size);
/* Any thread, no caches: a type's name as the runtime writes it
 * ("System.Collections.Generic.List`1[System.Int32]", "System.Byte[]").
 * Returns 0, or -1 when the runtime could not say. */
HIDDEN int names_describe_class(ICorProfilerInfo15 *info, ClassID klass, char *out, size_t size);
/* Any thread: an assembly's or a module's name (the file's base name). */
HIDDEN int names_describe_assembly(ICorProfilerInfo15 *info, AssemblyID assembly, char *out,
                                   size_t size);
HIDDEN int names_describe_module(ICorProfilerInfo15 *info, ModuleID module, char *out,
                                 size_t size);
/* Any thread: the file a module was loaded from, an absolute path, for a
 * module that is neither dynamic nor a resource.  Returns 0, or -1 when it
 * has no such file (or the runtime could not say). */
HIDDEN int names_module_file(ICorProfilerInfo15 *info, ModuleID module, char *path, size_t size);
/* Any thread: a type definition's name as the recording spells it
 * (namespace, enclosing types joined by '+'); "" when unknown. */
HIDDEN void names_type_def(IMetaDataImport *import, mdTypeDef type, char *out, size_t size);
/* Any thread: the offsets of fields a class itself declares (not its
 * ancestors'), by name (GetClassLayout and the module's metadata):
 * offsets[i] for wanted[i], -1 when it has none; from the object's start
 * for a class, from the first field for a value type.  Returns how many
 * were found. */
HIDDEN int names_field_offsets(ICorProfilerInfo15 *info, ClassID klass, ModuleID module,
                               const char *const *wanted, int32_t *offsets, size_t count);
/* Loop: the frame of a method described elsewhere, remembered for f. */
HIDDEN uint32_t names_add(struct names *n, FunctionID function, const struct method_desc *d);
/* Loop: frame id of a managed function (within codemap_ids_begin/end); a
 * function that cannot be named becomes the [unknown] frame and is counted
 * as unresolved.  0 only when the recording failed. */
HIDDEN uint32_t names_function(struct names *n, FunctionID function);
/* Loop: the frame already known for f, or 0 (no runtime call). */
HIDDEN uint32_t names_known(const struct names *n, FunctionID function);
/* Loop: forget a function's id (its code was unloaded; the id will be
 * reused), or a module's (its metadata interface is released). */
HIDDEN void names_forget(struct names *n, FunctionID function);
HIDDEN void names_forget_module(struct names *n, ModuleID module);
/* Releases the metadata interfaces.  Call before the runtime is gone. */
HIDDEN void names_free(struct names *n);

/* Pure helpers, unit tested. */
/* Generic parameter count of a method from its signature blob (0 when not
 * generic or malformed). */
HIDDEN uint32_t names_generic_arity(const uint8_t *sig, size_t len);
/* Joins a type and the types enclosing it, outermost first, with '+'. */
HIDDEN void names_join_nested(const char *const *outermost_first, size_t count, char *out,
                              size_t size);

#endif
