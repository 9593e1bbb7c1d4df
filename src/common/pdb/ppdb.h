/*
 * ppdb: a portable PDB (dotnet/runtime docs/design/specs/
 * PortablePdb-Metadata.md): ECMA-335 metadata (meta.h) holding the
 * debugging tables.  What coverage reads from it:
 *   - Document (0x30): source file paths (a name blob: a separator and
 *     the parts, each a blob of UTF-8);
 *   - MethodDebugInformation (0x31), one row per MethodDef: the method's
 *     sequence points, each an IL offset and the source span (lines and
 *     columns) it starts; a hidden point (line 0xfeefee) marks code no
 *     source line owns;
 *   - StateMachineMethod (0x36): the MoveNext of an async or iterator
 *     state machine, and the user's method it belongs to (the kickoff).
 *
 * The #Pdb stream's id (20 bytes) must equal the assembly's CodeView id
 * for the PDB to be the assembly's.
 *
 * Pure; ppdb_sequence_points is the only function that allocates.
 */
#ifndef CORSCOPE_PPDB_H
#define CORSCOPE_PPDB_H

#include <stddef.h>
#include <stdint.h>

#include "common/pdb/meta.h"
#include "common/visibility.h"

#define PPDB_HIDDEN_LINE 0xfeefeeu

struct ppdb {
    struct md md;
    uint8_t id[20];
    uint32_t entry_point;
};

struct ppdb_point {
    uint32_t il_offset;
    uint32_t start_line, end_line;     /* PPDB_HIDDEN_LINE for a hidden point */
    uint16_t start_column, end_column;
    uint32_t document;                 /* Document row */
};

/* Opens a portable PDB from its bytes.  Returns 0, or -1 with a static
 * reason (not metadata, no #Pdb stream: a Windows PDB is not metadata). */
HIDDEN int ppdb_open(struct ppdb *p, const uint8_t *data, size_t size, const char **why);

/* The sequence points of MethodDef row `method` (1-based), in IL order,
 * into *out (mem_alloc'd; the caller frees with mem_free) and *count.
 * Returns 0 (a method without points: *out NULL, *count 0), or -1 with a
 * reason for a malformed blob or an allocation that failed. */
HIDDEN int ppdb_sequence_points(const struct ppdb *p, uint32_t method, struct ppdb_point **out,
                                uint32_t *count, const char **why);

/* The path of Document row `doc` into out (NUL-terminated, truncated to
 * size).  Returns its length, or -1 for a bad row or name blob. */
HIDDEN long ppdb_document_name(const struct ppdb *p, uint32_t doc, char *out, size_t size);

/* The kickoff method (MethodDef row) of a state machine's MoveNext, or 0. */
HIDDEN uint32_t ppdb_kickoff(const struct ppdb *p, uint32_t move_next);

#endif
