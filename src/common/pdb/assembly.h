/*
 * assembly: a .NET assembly and its debugging information, as coverage
 * sees them, for the agent (which methods to instrument, where the
 * sequence points are) and the CLI (which lines, classes and methods a
 * report lists).  Both must agree, so both read through here.
 *
 * assembly_open maps the file, reads its metadata (pe.h, meta.h), finds
 * its portable PDB (ppdb.h) -- embedded in the debug directory, beside
 * the file under the name the CodeView entry gives, at that entry's path,
 * or beside it as NAME.pdb -- and checks that the PDB's id is the one the
 * assembly names.  Then one pass over the tables says, for every type and
 * method:
 *   - its name, its declaring and enclosing types;
 *   - whether the compiler generated it (a lambda's closure class, an async
 *     or iterator state machine, a local function, [CompilerGenerated]),
 *     and which user method it belongs to: a state machine's MoveNext to
 *     its kickoff method (StateMachineMethod), a lambda or local function
 *     to the method named between its name's angle brackets;
 *   - whether it is excluded by [ExcludeFromCodeCoverage] (or any
 *     attribute of that name, or ExcludeFromCoverage), on itself, its
 *     property, its type or an enclosing type, or on the user method it
 *     belongs to; and the source lines an excluded method spans, which
 *     exclude whatever else the compiler put there (its lambdas);
 *   - whether the assembly references a test framework (xunit, NUnit,
 *     MSTest, TUnit): a test assembly.
 *
 * A missing, foreign (other build), Windows or malformed PDB leaves the
 * assembly usable without one: pdb_state says which, pdb_problem why.
 */
#ifndef CORSCOPE_ASSEMBLY_H
#define CORSCOPE_ASSEMBLY_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "common/pdb/meta.h"
#include "common/pdb/pe.h"
#include "common/pdb/ppdb.h"
#include "common/visibility.h"

enum assembly_pdb {
    ASSEMBLY_PDB_NONE = 0,   /* no PDB found */
    ASSEMBLY_PDB_FILE,       /* a portable PDB file (pdb_path) */
    ASSEMBLY_PDB_EMBEDDED,   /* embedded in the assembly */
    ASSEMBLY_PDB_WINDOWS,    /* only a Windows (MSF) PDB: not read */
    ASSEMBLY_PDB_MISMATCH,   /* a PDB of another build */
    ASSEMBLY_PDB_BAD,        /* a PDB that could not be read (pdb_problem) */
};

struct assembly_type {
    uint32_t enclosing;      /* TypeDef row of the enclosing type, 0 */
    uint32_t user;           /* the user type it belongs to: itself, or the nearest
                              * enclosing type the compiler did not generate */
    uint32_t first_method;   /* its methods: MethodDef rows [first_method, end_method) */
    uint32_t end_method;
    uint8_t excluded;        /* by attribute, on it or an enclosing type */
    uint8_t generated;       /* [CompilerGenerated], or a name starting with '<' */
    uint8_t machine;         /* a state machine: enum assembly_machine */
};

/* What a compiler-generated state machine type implements. */
enum assembly_machine {
    ASSEMBLY_MACHINE_NONE = 0,
    ASSEMBLY_MACHINE_ASYNC = 1,      /* IAsyncStateMachine */
    ASSEMBLY_MACHINE_ITERATOR = 2,   /* System.Collections.IEnumerator */
    ASSEMBLY_MACHINE_ASYNC_ITERATOR = 4, /* IAsyncEnumerator`1 (with ASYNC) */
};

struct assembly_method {
    uint32_t type;           /* TypeDef row */
    uint32_t owner;          /* the user method it belongs to (MethodDef row): itself
                              * unless compiler-generated and its owner is known */
    uint32_t kickoff;        /* a state machine's MoveNext: its kickoff method, 0 */
    uint8_t excluded;
    uint8_t generated;
    uint8_t accessor;        /* a property's getter or setter */
};

/* Source lines an excluded method spans in one document. */
struct assembly_span {
    uint32_t document;
    uint32_t first_line, last_line;
};

struct assembly {
    const uint8_t *image;     /* the file, image_size bytes */
    size_t image_size;
    int image_mapped;         /* munmap (else mem_free, or not ours) */
    uint8_t *pdb_data;
    size_t pdb_size;
    int pdb_mapped;

    struct pe_image pe;
    struct pe_debug debug;
    struct md md;
    struct ppdb pdb;          /* valid when pdb_state is FILE or EMBEDDED */
    enum assembly_pdb pdb_state;
    char pdb_path[PATH_MAX];
    const char *pdb_problem;  /* static text, NULL when none */

    const char *name;         /* the assembly's simple name */
    uint8_t mvid[16];
    int test_assembly;        /* references a test framework */
    int readytorun;

    uint32_t type_count, method_count;
    struct assembly_type *types;     /* [row - 1] */
    struct assembly_method *methods; /* [row - 1] */
    struct assembly_span *excluded_spans;
    uint32_t excluded_span_count;
};

static inline int assembly_has_pdb(const struct assembly *a)
{
    return a->pdb_state == ASSEMBLY_PDB_FILE || a->pdb_state == ASSEMBLY_PDB_EMBEDDED;
}

/* Opens the assembly at path (and its PDB).  Returns 0, or -1 with the
 * reason in why (not a .NET assembly, unreadable, out of memory). */
HIDDEN int assembly_open(struct assembly *a, const char *path, char *why, size_t why_size);
/* The same from bytes already in memory (not copied: they must outlive
 * the assembly), with the PDB's bytes when the caller has them (NULL: an
 * embedded PDB only).  For tests and fuzzing: no file is opened. */
HIDDEN int assembly_load(struct assembly *a, const uint8_t *image, size_t size,
                         const uint8_t *pdb, size_t pdb_size, char *why, size_t why_size);
HIDDEN void assembly_close(struct assembly *a);

/* "Namespace.Outer+Inner" of a TypeDef row into out (truncated to size). */
HIDDEN void assembly_type_name(const struct assembly *a, uint32_t type, char *out, size_t size);
/* The name of a MethodDef row ("" for a bad row). */
HIDDEN const char *assembly_method_name(const struct assembly *a, uint32_t method);
/* The method's body bytes from the file (header included) and how many
 * bytes follow its start in the file; NULL for a method without IL. */
HIDDEN const uint8_t *assembly_method_body(const struct assembly *a, uint32_t method, size_t *avail);
/* The name of the member a token names (MethodDef, MemberRef, MethodSpec,
 * Field) and its declaring type's full name ("Namespace.Type", generic
 * instances by their generic type's name) into type; "" when unknown. */
HIDDEN const char *assembly_member(const struct assembly *a, uint32_t token, char *type,
                                   size_t type_size);
/* The type of a field (Field or MemberRef token) into out: "Namespace.Name",
 * a generic instance by its generic type ("...IAsyncEnumerator`1"),
 * "System.Object" for object; "" when not a class or value type. */
HIDDEN void assembly_field_type(const struct assembly *a, uint32_t token, char *out, size_t size);
/* Whether a Field or MemberRef token is a field whose declaring type the
 * compiler generated. */
HIDDEN int assembly_field_generated(const struct assembly *a, uint32_t token);
/* Whether a source point of `document` at `line` lies in the span of an
 * excluded method. */
HIDDEN int assembly_line_excluded(const struct assembly *a, uint32_t document, uint32_t line);

#endif
