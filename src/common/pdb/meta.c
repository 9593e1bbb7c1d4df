/*
 * meta: see meta.h.
 *
 * A column is one of: a fixed-size integer (1, 2, 4 bytes), an index into
 * a heap (2 or 4 bytes by the heap-size flags), a simple index into a
 * table (2 bytes while that table has fewer than 2^16 rows), or a coded
 * index over several tables (2 bytes while the biggest of them has fewer
 * than 2^(16 - tag bits) rows).
 */
#include "common/pdb/meta.h"

#include <string.h>

static uint16_t rd16(const uint8_t *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t rd32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Column kinds: fixed sizes, heaps, then a table index (COL_INDEX + table)
 * or a coded index (COL_CODED + kind). */
enum {
    COL_END = 0, COL_U8, COL_U16, COL_U32, COL_STRING, COL_GUID, COL_BLOB,
    COL_INDEX = 0x40, COL_CODED = 0x80,
};
#define IDX(t) (COL_INDEX + (t))
#define CODED(k) (COL_CODED + (k))

static const uint8_t schema[MD_TABLE_COUNT][MD_MAX_COLUMNS + 1] = {
    [MD_MODULE] = {COL_U16, COL_STRING, COL_GUID, COL_GUID, COL_GUID},
    [MD_TYPEREF] = {CODED(MD_CODED_RESOLUTIONSCOPE), COL_STRING, COL_STRING},
    [MD_TYPEDEF] = {COL_U32, COL_STRING, COL_STRING, CODED(MD_CODED_TYPEDEFORREF), IDX(MD_FIELD),
                    IDX(MD_METHODDEF)},
    [MD_FIELDPTR] = {IDX(MD_FIELD)},
    [MD_FIELD] = {COL_U16, COL_STRING, COL_BLOB},
    [MD_METHODPTR] = {IDX(MD_METHODDEF)},
    [MD_METHODDEF] = {COL_U32, COL_U16, COL_U16, COL_STRING, COL_BLOB, IDX(MD_PARAM)},
    [MD_PARAMPTR] = {IDX(MD_PARAM)},
    [MD_PARAM] = {COL_U16, COL_U16, COL_STRING},
    [MD_INTERFACEIMPL] = {IDX(MD_TYPEDEF), CODED(MD_CODED_TYPEDEFORREF)},
    [MD_MEMBERREF] = {CODED(MD_CODED_MEMBERREFPARENT), COL_STRING, COL_BLOB},
    [MD_CONSTANT] = {COL_U16, CODED(MD_CODED_HASCONSTANT), COL_BLOB}, /* type byte + padding */
    [MD_CUSTOMATTRIBUTE] = {CODED(MD_CODED_HASCUSTOMATTRIBUTE), CODED(MD_CODED_CUSTOMATTRIBUTETYPE),
                            COL_BLOB},
    [MD_FIELDMARSHAL] = {CODED(MD_CODED_HASFIELDMARSHAL), COL_BLOB},
    [MD_DECLSECURITY] = {COL_U16, CODED(MD_CODED_HASDECLSECURITY), COL_BLOB},
    [MD_CLASSLAYOUT] = {COL_U16, COL_U32, IDX(MD_TYPEDEF)},
    [MD_FIELDLAYOUT] = {COL_U32, IDX(MD_FIELD)},
    [MD_STANDALONESIG] = {COL_BLOB},
    [MD_EVENTMAP] = {IDX(MD_TYPEDEF), IDX(MD_EVENT)},
    [MD_EVENTPTR] = {IDX(MD_EVENT)},
    [MD_EVENT] = {COL_U16, COL_STRING, CODED(MD_CODED_TYPEDEFORREF)},
    [MD_PROPERTYMAP] = {IDX(MD_TYPEDEF), IDX(MD_PROPERTY)},
    [MD_PROPERTYPTR] = {IDX(MD_PROPERTY)},
    [MD_PROPERTY] = {COL_U16, COL_STRING, COL_BLOB},
    [MD_METHODSEMANTICS] = {COL_U16, IDX(MD_METHODDEF), CODED(MD_CODED_HASSEMANTICS)},
    [MD_METHODIMPL] = {IDX(MD_TYPEDEF), CODED(MD_CODED_METHODDEFORREF), CODED(MD_CODED_METHODDEFORREF)},
    [MD_MODULEREF] = {COL_STRING},
    [MD_TYPESPEC] = {COL_BLOB},
    [MD_IMPLMAP] = {COL_U16, CODED(MD_CODED_MEMBERFORWARDED), COL_STRING, IDX(MD_MODULEREF)},
    [MD_FIELDRVA] = {COL_U32, IDX(MD_FIELD)},
    [MD_ENCLOG] = {COL_U32, COL_U32},
    [MD_ENCMAP] = {COL_U32},
    [MD_ASSEMBLY] = {COL_U32, COL_U16, COL_U16, COL_U16, COL_U16, COL_U32, COL_BLOB, COL_STRING,
                     COL_STRING},
    [MD_ASSEMBLYPROCESSOR] = {COL_U32},
    [MD_ASSEMBLYOS] = {COL_U32, COL_U32, COL_U32},
    [MD_ASSEMBLYREF] = {COL_U16, COL_U16, COL_U16, COL_U16, COL_U32, COL_BLOB, COL_STRING, COL_STRING,
                        COL_BLOB},
    [MD_ASSEMBLYREFPROCESSOR] = {COL_U32, IDX(MD_ASSEMBLYREF)},
    [MD_ASSEMBLYREFOS] = {COL_U32, COL_U32, COL_U32, IDX(MD_ASSEMBLYREF)},
    [MD_FILE] = {COL_U32, COL_STRING, COL_BLOB},
    [MD_EXPORTEDTYPE] = {COL_U32, COL_U32, COL_STRING, COL_STRING, CODED(MD_CODED_IMPLEMENTATION)},
    [MD_MANIFESTRESOURCE] = {COL_U32, COL_U32, COL_STRING, CODED(MD_CODED_IMPLEMENTATION)},
    [MD_NESTEDCLASS] = {IDX(MD_TYPEDEF), IDX(MD_TYPEDEF)},
    [MD_GENERICPARAM] = {COL_U16, COL_U16, CODED(MD_CODED_TYPEORMETHODDEF), COL_STRING},
    [MD_METHODSPEC] = {CODED(MD_CODED_METHODDEFORREF), COL_BLOB},
    [MD_GENERICPARAMCONSTRAINT] = {IDX(MD_GENERICPARAM), CODED(MD_CODED_TYPEDEFORREF)},
    [MD_DOCUMENT] = {COL_BLOB, COL_GUID, COL_BLOB, COL_GUID},
    [MD_METHODDEBUGINFORMATION] = {IDX(MD_DOCUMENT), COL_BLOB},
    [MD_LOCALSCOPE] = {IDX(MD_METHODDEF), IDX(MD_IMPORTSCOPE), IDX(MD_LOCALVARIABLE),
                       IDX(MD_LOCALCONSTANT), COL_U32, COL_U32},
    [MD_LOCALVARIABLE] = {COL_U16, COL_U16, COL_STRING},
    [MD_LOCALCONSTANT] = {COL_STRING, COL_BLOB},
    [MD_IMPORTSCOPE] = {IDX(MD_IMPORTSCOPE), COL_BLOB},
    [MD_STATEMACHINEMETHOD] = {IDX(MD_METHODDEF), IDX(MD_METHODDEF)},
    [MD_CUSTOMDEBUGINFORMATION] = {CODED(MD_CODED_HASCUSTOMDEBUGINFORMATION), COL_GUID, COL_BLOB},
};

/* The tables of each coded index, in tag order (0xff: a tag no table has). */
#define NONE 0xff
static const struct {
    uint8_t bits;
    uint8_t count;
    uint8_t tables[27];
} coded[MD_CODED_COUNT] = {
    [MD_CODED_TYPEDEFORREF] = {2, 3, {MD_TYPEDEF, MD_TYPEREF, MD_TYPESPEC}},
    [MD_CODED_HASCONSTANT] = {2, 3, {MD_FIELD, MD_PARAM, MD_PROPERTY}},
    [MD_CODED_HASCUSTOMATTRIBUTE] = {5, 22, {MD_METHODDEF, MD_FIELD, MD_TYPEREF, MD_TYPEDEF, MD_PARAM,
                                             MD_INTERFACEIMPL, MD_MEMBERREF, MD_MODULE, MD_DECLSECURITY,
                                             MD_PROPERTY, MD_EVENT, MD_STANDALONESIG, MD_MODULEREF,
                                             MD_TYPESPEC, MD_ASSEMBLY, MD_ASSEMBLYREF, MD_FILE,
                                             MD_EXPORTEDTYPE, MD_MANIFESTRESOURCE, MD_GENERICPARAM,
                                             MD_GENERICPARAMCONSTRAINT, MD_METHODSPEC}},
    [MD_CODED_HASFIELDMARSHAL] = {1, 2, {MD_FIELD, MD_PARAM}},
    [MD_CODED_HASDECLSECURITY] = {2, 3, {MD_TYPEDEF, MD_METHODDEF, MD_ASSEMBLY}},
    [MD_CODED_MEMBERREFPARENT] = {3, 5, {MD_TYPEDEF, MD_TYPEREF, MD_MODULEREF, MD_METHODDEF, MD_TYPESPEC}},
    [MD_CODED_HASSEMANTICS] = {1, 2, {MD_EVENT, MD_PROPERTY}},
    [MD_CODED_METHODDEFORREF] = {1, 2, {MD_METHODDEF, MD_MEMBERREF}},
    [MD_CODED_MEMBERFORWARDED] = {1, 2, {MD_FIELD, MD_METHODDEF}},
    [MD_CODED_IMPLEMENTATION] = {2, 3, {MD_FILE, MD_ASSEMBLYREF, MD_EXPORTEDTYPE}},
    [MD_CODED_CUSTOMATTRIBUTETYPE] = {3, 5, {NONE, NONE, MD_METHODDEF, MD_MEMBERREF, NONE}},
    [MD_CODED_RESOLUTIONSCOPE] = {2, 4, {MD_MODULE, MD_MODULEREF, MD_ASSEMBLYREF, MD_TYPEREF}},
    [MD_CODED_TYPEORMETHODDEF] = {1, 2, {MD_TYPEDEF, MD_METHODDEF}},
    [MD_CODED_HASCUSTOMDEBUGINFORMATION] = {5, 27, {MD_METHODDEF, MD_FIELD, MD_TYPEREF, MD_TYPEDEF,
                                                    MD_PARAM, MD_INTERFACEIMPL, MD_MEMBERREF, MD_MODULE,
                                                    MD_DECLSECURITY, MD_PROPERTY, MD_EVENT,
                                                    MD_STANDALONESIG, MD_MODULEREF, MD_TYPESPEC,
                                                    MD_ASSEMBLY, MD_ASSEMBLYREF, MD_FILE,
                                                    MD_EXPORTEDTYPE, MD_MANIFESTRESOURCE,
                                                    MD_GENERICPARAM, MD_GENERICPARAMCONSTRAINT,
                                                    MD_METHODSPEC, MD_DOCUMENT, MD_LOCALSCOPE,
                                                    MD_LOCALVARIABLE, MD_LOCALCONSTANT, MD_IMPORTSCOPE}},
};

static unsigned column_size(const struct md *m, uint8_t kind, unsigned heap_sizes)
{
    switch (kind) {
    case COL_U8: return 1;
    case COL_U16: return 2;
    case COL_U32: return 4;
    case COL_STRING: return heap_sizes & 0x01 ? 4 : 2;
    case COL_GUID: return heap_sizes & 0x02 ? 4 : 2;
    case COL_BLOB: return heap_sizes & 0x04 ? 4 : 2;
    default: break;
    }
    if (kind & COL_CODED) {
        unsigned k = kind & 0x3f;
        uint32_t most = 0;
        for (unsigned i = 0; i < coded[k].count; i++)
            if (coded[k].tables[i] != NONE && m->size_rows[coded[k].tables[i]] > most)
                most = m->size_rows[coded[k].tables[i]];
        return most < (1u << (16 - coded[k].bits)) ? 2 : 4;
    }
    return m->size_rows[kind & 0x3f] < 0x10000 ? 2 : 4;
}

/* Finds a stream by name; its bytes in *s.  Returns whether found. */
static int find_stream(const uint8_t *data, size_t size, size_t headers, unsigned count,
                       const char *name, struct md_heap *s)
{
    size_t at = headers;
    for (unsigned i = 0; i < count; i++) {
        if (size - at < 8)
            return 0;
        uint32_t off = rd32(data + at), len = rd32(data + at + 4);
        const char *n = (const char *)data + at + 8;
        size_t max = size - at - 8, nlen = 0;
        while (nlen < max && nlen < 32 && n[nlen])
            nlen++;
        if (nlen == max || nlen == 32)
            return 0;
        at += 8 + ((nlen + 4) & ~(size_t)3);
        if (at > size)
            return 0;
        if (strcmp(n, name) == 0) {
            if (off > size || size - off < len)
                return 0;
            s->p = data + off;
            s->len = len;
            return 1;
        }
    }
    return 0;
}

int md_open(struct md *m, const uint8_t *data, size_t size, const char **why)
{
    memset(m, 0, sizeof *m);
    if (size < 20 || rd32(data) != 0x424a5342) { /* "BSJB" */
        *why = "no metadata signature";
        return -1;
    }
    uint32_t vlen = rd32(data + 12);
    if (vlen > 256 || size - 16 < (size_t)vlen + 4) {
        *why = "a malformed metadata root";
        return -1;
    }
    m->version = (const char *)data + 16;
    if (!memchr(m->version, 0, vlen))
        m->version = "";
    size_t at = 16 + vlen;
    unsigned streams = rd16(data + at + 2);
    at += 4;
    /* every stream inside the metadata (a file cut short is not read) */
    for (unsigned i = 0, h = (unsigned)(16 + vlen + 4); i < streams; i++) {
        if (size - h < 8 || rd32(data + h) > size || size - rd32(data + h) < rd32(data + h + 4)) {
            *why = "a stream outside the metadata (cut short?)";
            return -1;
        }
        size_t nlen = 0;
        while (h + 8 + nlen < size && nlen < 32 && data[h + 8 + nlen])
            nlen++;
        h += 8 + (unsigned)((nlen + 4) & ~(size_t)3);
        if (h > size) {
            *why = "a malformed stream header";
            return -1;
        }
    }
    struct md_heap tables = {0}, pdb = {0};
    if (!find_stream(data, size, at, streams, "#~", &tables)) {
        if (!find_stream(data, size, at, streams, "#-", &tables)) {
            *why = "no tables stream";
            return -1;
        }
        m->uncompressed = 1;
    }
    find_stream(data, size, at, streams, "#Strings", &m->strings);
    find_stream(data, size, at, streams, "#Blob", &m->blob);
    find_stream(data, size, at, streams, "#GUID", &m->guid);
    find_stream(data, size, at, streams, "#US", &m->us);
    if (find_stream(data, size, at, streams, "#Pdb", &pdb)) {
        if (pdb.len < 32) {
            *why = "a truncated #Pdb stream";
            return -1;
        }
        m->pdb = pdb.p;
        m->pdb_len = pdb.len;
        uint64_t referenced = (uint64_t)rd32(pdb.p + 24) | (uint64_t)rd32(pdb.p + 28) << 32;
        uint32_t p = 32;
        for (unsigned t = 0; t < 64; t++) {
            if (!(referenced >> t & 1))
                continue;
            if (pdb.len - p < 4) {
                *why = "a truncated #Pdb stream";
                return -1;
            }
            if (t < MD_TABLE_COUNT)
                m->size_rows[t] = rd32(pdb.p + p);
            p += 4;
        }
    }

    const uint8_t *t = tables.p;
    if (tables.len < 24) {
        *why = "a truncated tables stream";
        return -1;
    }
    unsigned heap_sizes = t[6];
    uint64_t valid = (uint64_t)rd32(t + 8) | (uint64_t)rd32(t + 12) << 32;
    size_t pos = 24;
    for (unsigned i = 0; i < 64; i++) {
        if (!(valid >> i & 1))
            continue;
        if (tables.len - pos < 4) {
            *why = "a truncated tables stream";
            return -1;
        }
        uint32_t rows = rd32(t + pos);
        pos += 4;
        if (i >= MD_TABLE_COUNT || (!schema[i][0])) {
            if (rows) {
                *why = "a table this reader does not know";
                return -1;
            }
            continue;
        }
        m->t[i].rows = rows;
        if (!m->pdb || i >= MD_DOCUMENT)
            m->size_rows[i] = rows;
    }
    if (heap_sizes & 0x40) /* extra data after the row counts */
        pos += 4;
    for (unsigned i = 0; i < MD_TABLE_COUNT; i++) {
        struct md_table_info *ti = &m->t[i];
        unsigned off = 0, c = 0;
        for (; c < MD_MAX_COLUMNS && schema[i][c]; c++) {
            unsigned sz = column_size(m, schema[i][c], heap_sizes);
            ti->col_off[c] = (uint8_t)off;
            ti->col_size[c] = (uint8_t)sz;
            off += sz;
        }
        ti->cols = (uint8_t)c;
        ti->row_size = off;
        if (!ti->rows)
            continue;
        if (pos > tables.len || (tables.len - pos) / ti->row_size < ti->rows) {
            *why = "a table runs past the tables stream";
            return -1;
        }
        ti->base = t + pos;
        pos += (size_t)ti->rows * ti->row_size;
    }
    return 0;
}

uint32_t md_get(const struct md *m, enum md_table table, uint32_t row, unsigned col)
{
    if ((unsigned)table >= MD_TABLE_COUNT)
        return 0;
    const struct md_table_info *ti = &m->t[table];
    if (row == 0 || row > ti->rows || col >= ti->cols)
        return 0;
    const uint8_t *p = ti->base + (size_t)(row - 1) * ti->row_size + ti->col_off[col];
    switch (ti->col_size[col]) {
    case 1: return p[0];
    case 2: return rd16(p);
    default: return rd32(p);
    }
}

const char *md_string(const struct md *m, uint32_t index)
{
    if (index == 0 || index >= m->strings.len)
        return "";
    const char *s = (const char *)m->strings.p + index;
    if (!memchr(s, 0, m->strings.len - index))
        return "";
    return s;
}

int md_uncompress(const uint8_t **p, const uint8_t *end, uint32_t *out)
{
    const uint8_t *q = *p;
    if (q >= end)
        return -1;
    if (!(q[0] & 0x80)) {
        *out = q[0];
        *p = q + 1;
    } else if ((q[0] & 0xc0) == 0x80) {
        if (end - q < 2)
            return -1;
        *out = (uint32_t)(q[0] & 0x3f) << 8 | q[1];
        *p = q + 2;
    } else if ((q[0] & 0xe0) == 0xc0) {
        if (end - q < 4)
            return -1;
        *out = (uint32_t)(q[0] & 0x1f) << 24 | (uint32_t)q[1] << 16 | (uint32_t)q[2] << 8 | q[3];
        *p = q + 4;
    } else {
        return -1;
    }
    return 0;
}

int md_uncompress_signed(const uint8_t **p, const uint8_t *end, int32_t *out)
{
    const uint8_t *start = *p;
    uint32_t u;
    if (md_uncompress(p, end, &u) < 0)
        return -1;
    unsigned width = *p - start == 1 ? 7 : *p - start == 2 ? 14 : 29;
    if (u & 1)
        *out = (int32_t)(u >> 1) - (int32_t)(1u << (width - 1));
    else
        *out = (int32_t)(u >> 1);
    return 0;
}

int md_blob(const struct md *m, uint32_t index, const uint8_t **p, uint32_t *len)
{
    *p = NULL;
    *len = 0;
    if (index == 0)
        return 0;
    if (index >= m->blob.len)
        return -1;
    const uint8_t *q = m->blob.p + index, *end = m->blob.p + m->blob.len;
    uint32_t n;
    if (md_uncompress(&q, end, &n) < 0 || (uint32_t)(end - q) < n)
        return -1;
    *p = q;
    *len = n;
    return 0;
}

const uint8_t *md_guid(const struct md *m, uint32_t index)
{
    if (index == 0 || (uint64_t)index * 16 > m->guid.len)
        return NULL;
    return m->guid.p + (size_t)(index - 1) * 16;
}

int md_coded(enum md_coded kind, uint32_t value, enum md_table *table, uint32_t *row)
{
    if ((unsigned)kind >= MD_CODED_COUNT)
        return -1;
    unsigned bits = coded[kind].bits;
    uint32_t tag = value & ((1u << bits) - 1);
    if (tag >= coded[kind].count || coded[kind].tables[tag] == NONE)
        return -1;
    *table = (enum md_table)coded[kind].tables[tag];
    *row = value >> bits;
    return 0;
}
