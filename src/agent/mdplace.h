/*
 * mdplace: a module's metadata read in place, in the image the runtime
 * loaded, instead of through the runtime's IMetaDataImport.
 *
 * Why: GetModuleMetaData opens the module's public importer, and the
 * runtime first converts that module's metadata from its read-only form
 * to the read-write one (PEAssembly::OpenImporter ->
 * ConvertMDInternalToReadWrite); every later type load, method lookup and
 * signature read of that module, by the program's own threads, goes
 * through the slower read-write reader and its lock for the rest of the
 * process.  Measured on Memory exact 200 (a 60 ms program): naming its
 * four samples' frames through importers put 7-9 ms of work in the
 * runtime on the main thread (perf, 20 kHz), and the process ran 5 ms
 * longer.  Reading the tables in place (common/pdb/meta.h, the same
 * reader coverage uses on files) changes nothing in the runtime.
 *
 * Only for modules with an image the runtime mapped (GetModuleInfo2's
 * base; flat or mapped layout): dynamic modules, resources and images
 * whose tables use the unoptimized pointer tables are refused, and the
 * caller falls back to the importer.  The image must stay loaded while
 * the md is used: callers keep one only for modules that cannot be
 * unloaded, or use it within the call that opened it while the module's
 * id is known valid.  Collector code, never in a signal handler.
 */
#ifndef CORSCOPE_MDPLACE_H
#define CORSCOPE_MDPLACE_H

#include <stddef.h>
#include <stdint.h>

#include "clr/clr_interfaces.h"
#include "common/pdb/meta.h"
#include "common/visibility.h"

/* Opens the module's metadata in place.  Returns 0, or -1 when it cannot
 * be read so (then ask the runtime). */
HIDDEN int mdplace_open(ICorProfilerInfo15 *info, ModuleID module, struct md *md);
/* The same, from GetModuleInfo2's answers the caller already has. */
HIDDEN int mdplace_open_image(const uint8_t *base, DWORD module_flags, struct md *md);
/* A TypeDef's name as GetTypeDefProps spells it ("Namespace.Name", a
 * nested type's own name), its enclosing types first and joined by '+'
 * ("Namespace.Outer+Inner"), into out. */
HIDDEN void mdplace_type_name(const struct md *m, mdTypeDef type, char *out, size_t size);
/* A MethodDef's name, its generic arity and its declaring TypeDef.
 * Returns 0, or -1 for a token that names no method. */
HIDDEN int mdplace_method(const struct md *m, mdMethodDef method, char *name, size_t size,
                          uint32_t *arity, mdTypeDef *type);
/* A top-level TypeDef by its full name ("Namespace.Name"), 0 when absent. */
HIDDEN mdTypeDef mdplace_find_type(const struct md *m, const char *full_name);
/* The first method of a TypeDef with that name whose signature blob
 * accept takes (NULL: any), 0 when none. */
HIDDEN mdMethodDef mdplace_find_method(const struct md *m, mdTypeDef type, const char *name,
                                       int (*accept)(const uint8_t *sig, uint32_t len,
                                                     void *ctx),
                                       void *ctx);
/* A type nested in `outer` by its own name, 0 when absent. */
HIDDEN mdTypeDef mdplace_find_nested(const struct md *m, mdTypeDef outer, const char *name);
/* The runtime's own metadata interface of a module (GetModuleMetaData),
 * for what cannot be read in place (a dynamic module, writing new
 * tokens); counted, as each call converts the module's metadata (the
 * recording's metadata_opens). */
HIDDEN HRESULT mdplace_runtime_metadata(ICorProfilerInfo15 *info, ModuleID module, DWORD flags,
                                        REFIID riid, IUnknown **out);
/* How many times mdplace_runtime_metadata was called. */
HIDDEN uint64_t mdplace_runtime_opens(void);
/* A FieldDef's name, "" for a bad token. */
HIDDEN const char *mdplace_field_name(const struct md *m, mdFieldDef field);

#endif
