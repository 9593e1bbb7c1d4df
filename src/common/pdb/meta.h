/*
 * meta: the ECMA-335 metadata (partition II, chapter 24) of an assembly or
 * of a portable PDB, which uses the same physical layout: a root that
 * lists streams, the #Strings, #Blob, #GUID and #US heaps, and the tables
 * stream (#~, or the unoptimized #-), whose rows have columns of sizes
 * that depend on the heaps' sizes and on the row counts of the tables they
 * point into.
 *
 * Every table's schema is here (0x00..0x2C of the type system, 0x30..0x37
 * of portable PDBs), because a table's position depends on the sizes of
 * all before it.  Columns are read by number: md_get(m, MD_METHODDEF, row,
 * MD_METHODDEF_NAME).  Coded indexes are decoded with md_coded().  A
 * portable PDB's #Pdb stream holds the row counts of the type system
 * tables its columns point into (II.24.2.6 with those counts).
 *
 * Pure: reads the bytes it is given, checks every size against them,
 * allocates nothing.  Rows are 1-based as in the spec; row 0 is "nil".
 */
#ifndef CORSCOPE_META_H
#define CORSCOPE_META_H

#include <stddef.h>
#include <stdint.h>

#include "common/visibility.h"

enum md_table {
    MD_MODULE = 0x00, MD_TYPEREF = 0x01, MD_TYPEDEF = 0x02, MD_FIELDPTR = 0x03, MD_FIELD = 0x04,
    MD_METHODPTR = 0x05, MD_METHODDEF = 0x06, MD_PARAMPTR = 0x07, MD_PARAM = 0x08,
    MD_INTERFACEIMPL = 0x09, MD_MEMBERREF = 0x0a, MD_CONSTANT = 0x0b, MD_CUSTOMATTRIBUTE = 0x0c,
    MD_FIELDMARSHAL = 0x0d, MD_DECLSECURITY = 0x0e, MD_CLASSLAYOUT = 0x0f, MD_FIELDLAYOUT = 0x10,
    MD_STANDALONESIG = 0x11, MD_EVENTMAP = 0x12, MD_EVENTPTR = 0x13, MD_EVENT = 0x14,
    MD_PROPERTYMAP = 0x15, MD_PROPERTYPTR = 0x16, MD_PROPERTY = 0x17, MD_METHODSEMANTICS = 0x18,
    MD_METHODIMPL = 0x19, MD_MODULEREF = 0x1a, MD_TYPESPEC = 0x1b, MD_IMPLMAP = 0x1c,
    MD_FIELDRVA = 0x1d, MD_ENCLOG = 0x1e, MD_ENCMAP = 0x1f, MD_ASSEMBLY = 0x20,
    MD_ASSEMBLYPROCESSOR = 0x21, MD_ASSEMBLYOS = 0x22, MD_ASSEMBLYREF = 0x23,
    MD_ASSEMBLYREFPROCESSOR = 0x24, MD_ASSEMBLYREFOS = 0x25, MD_FILE = 0x26,
    MD_EXPORTEDTYPE = 0x27, MD_MANIFESTRESOURCE = 0x28, MD_NESTEDCLASS = 0x29,
    MD_GENERICPARAM = 0x2a, MD_METHODSPEC = 0x2b, MD_GENERICPARAMCONSTRAINT = 0x2c,
    /* portable PDB (PortablePdb-Metadata.md) */
    MD_DOCUMENT = 0x30, MD_METHODDEBUGINFORMATION = 0x31, MD_LOCALSCOPE = 0x32,
    MD_LOCALVARIABLE = 0x33, MD_LOCALCONSTANT = 0x34, MD_IMPORTSCOPE = 0x35,
    MD_STATEMACHINEMETHOD = 0x36, MD_CUSTOMDEBUGINFORMATION = 0x37,
    MD_TABLE_COUNT = 64
};

/* The columns read by name (by position in the table's schema). */
enum {
    MD_MODULE_NAME = 1, MD_MODULE_MVID = 2,
    MD_TYPEREF_SCOPE = 0, MD_TYPEREF_NAME = 1, MD_TYPEREF_NAMESPACE = 2,
    MD_TYPEDEF_FLAGS = 0, MD_TYPEDEF_NAME = 1, MD_TYPEDEF_NAMESPACE = 2, MD_TYPEDEF_EXTENDS = 3,
    MD_TYPEDEF_FIELDLIST = 4, MD_TYPEDEF_METHODLIST = 5,
    MD_FIELD_FLAGS = 0, MD_FIELD_NAME = 1, MD_FIELD_SIGNATURE = 2,
    MD_METHODDEF_RVA = 0, MD_METHODDEF_IMPLFLAGS = 1, MD_METHODDEF_FLAGS = 2, MD_METHODDEF_NAME = 3,
    MD_METHODDEF_SIGNATURE = 4, MD_METHODDEF_PARAMLIST = 5,
    MD_INTERFACEIMPL_CLASS = 0, MD_INTERFACEIMPL_INTERFACE = 1,
    MD_MEMBERREF_CLASS = 0, MD_MEMBERREF_NAME = 1, MD_MEMBERREF_SIGNATURE = 2,
    MD_CUSTOMATTRIBUTE_PARENT = 0, MD_CUSTOMATTRIBUTE_TYPE = 1, MD_CUSTOMATTRIBUTE_VALUE = 2,
    MD_PROPERTYMAP_PARENT = 0, MD_PROPERTYMAP_LIST = 1,
    MD_METHODSEMANTICS_SEMANTICS = 0, MD_METHODSEMANTICS_METHOD = 1,
    MD_METHODSEMANTICS_ASSOCIATION = 2,
    MD_TYPESPEC_SIGNATURE = 0,
    MD_ASSEMBLY_NAME = 7,
    MD_ASSEMBLYREF_NAME = 6,
    MD_NESTEDCLASS_NESTED = 0, MD_NESTEDCLASS_ENCLOSING = 1,
    MD_METHODSPEC_METHOD = 0,
    MD_DOCUMENT_NAME = 0, MD_DOCUMENT_HASHALGORITHM = 1, MD_DOCUMENT_HASH = 2,
    MD_DOCUMENT_LANGUAGE = 3,
    MD_METHODDEBUGINFORMATION_DOCUMENT = 0, MD_METHODDEBUGINFORMATION_SEQUENCEPOINTS = 1,
    MD_STATEMACHINEMETHOD_MOVENEXT = 0, MD_STATEMACHINEMETHOD_KICKOFF = 1,
};

/* Coded index kinds (II.24.2.6). */
enum md_coded {
    MD_CODED_TYPEDEFORREF, MD_CODED_HASCONSTANT, MD_CODED_HASCUSTOMATTRIBUTE,
    MD_CODED_HASFIELDMARSHAL, MD_CODED_HASDECLSECURITY, MD_CODED_MEMBERREFPARENT,
    MD_CODED_HASSEMANTICS, MD_CODED_METHODDEFORREF, MD_CODED_MEMBERFORWARDED,
    MD_CODED_IMPLEMENTATION, MD_CODED_CUSTOMATTRIBUTETYPE, MD_CODED_RESOLUTIONSCOPE,
    MD_CODED_TYPEORMETHODDEF, MD_CODED_HASCUSTOMDEBUGINFORMATION, MD_CODED_COUNT
};

#define MD_MAX_COLUMNS 9

struct md_heap {
    const uint8_t *p;
    uint32_t len;
};

struct md_table_info {
    uint32_t rows;
    uint32_t row_size;
    const uint8_t *base; /* the first row */
    uint8_t cols;
    uint8_t col_off[MD_MAX_COLUMNS];
    uint8_t col_size[MD_MAX_COLUMNS];
};

struct md {
    const char *version;       /* the root's version string ("v4.0.30319", "PDB v1.0") */
    struct md_heap strings, blob, guid, us;
    const uint8_t *pdb;        /* the #Pdb stream (portable PDBs), pdb_len bytes */
    uint32_t pdb_len;
    int uncompressed;          /* #- rather than #~ */
    struct md_table_info t[MD_TABLE_COUNT];
    /* the row counts index sizes are computed from: t[].rows, or for a
     * portable PDB the type system's counts from #Pdb */
    uint32_t size_rows[MD_TABLE_COUNT];
};

/* Opens the metadata whose root is at data[0..size).  Returns 0, or -1
 * with a static reason in *why. */
HIDDEN int md_open(struct md *m, const uint8_t *data, size_t size, const char **why);

/* Column `col` of row `row` (1-based) of a table; 0 for a row or column
 * that does not exist. */
HIDDEN uint32_t md_get(const struct md *m, enum md_table table, uint32_t row, unsigned col);
/* Rows in a table. */
static inline uint32_t md_rows(const struct md *m, enum md_table table)
{
    return m->t[table].rows;
}

/* A NUL-terminated UTF-8 string of #Strings; "" for index 0 or an index
 * past the heap or a string not terminated inside it. */
HIDDEN const char *md_string(const struct md *m, uint32_t index);
/* A blob of #Blob: its bytes and length.  Returns 0, or -1 for a bad index
 * (index 0 is the empty blob: 0 with *len 0). */
HIDDEN int md_blob(const struct md *m, uint32_t index, const uint8_t **p, uint32_t *len);
/* A GUID of #GUID (1-based), or NULL. */
HIDDEN const uint8_t *md_guid(const struct md *m, uint32_t index);
/* Splits a coded index into its table and row.  Returns 0, or -1 when the
 * tag names no table. */
HIDDEN int md_coded(enum md_coded kind, uint32_t value, enum md_table *table, uint32_t *row);

/* ECMA-335 II.23.2 compressed integers, from *p (advanced) below end.
 * Return 0, or -1 when malformed or past end. */
HIDDEN int md_uncompress(const uint8_t **p, const uint8_t *end, uint32_t *out);
HIDDEN int md_uncompress_signed(const uint8_t **p, const uint8_t *end, int32_t *out);

/* A token (table << 24 | row) of a row. */
static inline uint32_t md_token(enum md_table table, uint32_t row)
{
    return (uint32_t)table << 24 | row;
}

#endif
