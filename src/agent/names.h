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
 * Every result is cached (FunctionID -> frame id; ModuleID -> metadata
 * import; type token -> name), so a method costs runtime calls once.  The
 * runtime reuses the ids of unloaded code, so an unload makes names_forget
 * drop them.  Callers hold the agent's ids_lock (agent.h), outside any
 * runtime suspension; the calls made here only read runtime data.
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

struct names_module;

struct names {
    ICorProfilerInfo15 *info;
    int info_version;
    struct recorder *rec;
    struct map64 frame_of;  /* FunctionID -> frame id */
    struct map64 module_of; /* ModuleID -> index into modules */
    struct names_module *modules;
    size_t module_count, module_cap;
    struct map64 type_of;   /* (module index << 32 | typedef token) -> type name id */
    struct strtab types;    /* type names, by id */
};

HIDDEN int names_init(struct names *n, ICorProfilerInfo15 *info, int info_version,
                      struct recorder *rec);
/* Frame id of a managed function; a function that cannot be named becomes
 * the [unknown] frame and is counted as unresolved. */
HIDDEN uint32_t names_function(struct names *n, FunctionID function);
/* The runtime is about to unload a module (module != 0: its metadata
 * interface is released, and every FunctionID forgotten, since any may
 * have been one of its methods) or a dynamic method (function != 0); both
 * 0: everything. */
HIDDEN void names_forget(struct names *n, ModuleID module, FunctionID function);
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
