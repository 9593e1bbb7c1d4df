/*
 * ppdb: see ppdb.h.
 */
#include "common/pdb/ppdb.h"

#include <string.h>

#include "common/mem.h"

int ppdb_open(struct ppdb *p, const uint8_t *data, size_t size, const char **why)
{
    memset(p, 0, sizeof *p);
    if (size >= 4 && memcmp(data, "Microsoft C/C++ MSF 7.00", size < 24 ? size : 24) == 0) {
        *why = "a Windows PDB (only portable PDBs are read)";
        return -1;
    }
    if (md_open(&p->md, data, size, why) < 0)
        return -1;
    if (!p->md.pdb) {
        *why = "metadata without a #Pdb stream: not a portable PDB";
        return -1;
    }
    memcpy(p->id, p->md.pdb, 20);
    const uint8_t *e = p->md.pdb + 20;
    p->entry_point = (uint32_t)e[0] | (uint32_t)e[1] << 8 | (uint32_t)e[2] << 16 | (uint32_t)e[3] << 24;
    return 0;
}

int ppdb_sequence_points(const struct ppdb *p, uint32_t method, struct ppdb_point **out,
                         uint32_t *count, const char **why)
{
    *out = NULL;
    *count = 0;
    const uint8_t *blob;
    uint32_t len;
    if (method == 0 || method > md_rows(&p->md, MD_METHODDEBUGINFORMATION))
        return 0;
    uint32_t document = md_get(&p->md, MD_METHODDEBUGINFORMATION, method,
                               MD_METHODDEBUGINFORMATION_DOCUMENT);
    if (md_blob(&p->md,
                md_get(&p->md, MD_METHODDEBUGINFORMATION, method,
                       MD_METHODDEBUGINFORMATION_SEQUENCEPOINTS),
                &blob, &len) < 0) {
        *why = "a sequence-point blob outside the blob heap";
        return -1;
    }
    if (len == 0)
        return 0;
    const uint8_t *q = blob, *end = blob + len;
    uint32_t local_sig;
    if (md_uncompress(&q, end, &local_sig) < 0 ||
        (document == 0 && md_uncompress(&q, end, &document) < 0)) {
        *why = "a truncated sequence-point header";
        return -1;
    }
    /* each record takes at least 2 bytes: a bound for the array */
    size_t cap = (size_t)(end - q) / 2 + 1;
    struct ppdb_point *v = mem_alloc(cap * sizeof *v);
    if (!v) {
        *why = "out of memory";
        return -1;
    }
    uint32_t n = 0, il = 0, line = 0, column = 0;
    int first = 1, first_visible = 1;
    while (q < end) {
        uint32_t delta_il;
        if (md_uncompress(&q, end, &delta_il) < 0)
            goto bad;
        if (delta_il == 0 && !first) { /* a document record */
            if (md_uncompress(&q, end, &document) < 0)
                goto bad;
            continue;
        }
        if (!first && delta_il == 0)
            goto bad;
        if ((uint64_t)il + delta_il >= 0x20000000u)
            goto bad;
        il = first ? delta_il : il + delta_il;
        first = 0;
        uint32_t delta_lines;
        if (md_uncompress(&q, end, &delta_lines) < 0)
            goto bad;
        int32_t delta_columns;
        if (delta_lines == 0) {
            uint32_t u;
            if (md_uncompress(&q, end, &u) < 0)
                goto bad;
            delta_columns = (int32_t)u;
        } else if (md_uncompress_signed(&q, end, &delta_columns) < 0) {
            goto bad;
        }
        if (n >= cap)
            goto bad;
        struct ppdb_point *pt = &v[n++];
        pt->il_offset = il;
        pt->document = document;
        if (delta_lines == 0 && delta_columns == 0) {
            pt->start_line = pt->end_line = PPDB_HIDDEN_LINE;
            pt->start_column = pt->end_column = 0;
            continue;
        }
        if (first_visible) {
            uint32_t l, c;
            if (md_uncompress(&q, end, &l) < 0 || md_uncompress(&q, end, &c) < 0)
                goto bad;
            line = l;
            column = c;
            first_visible = 0;
        } else {
            int32_t dl, dc;
            if (md_uncompress_signed(&q, end, &dl) < 0 || md_uncompress_signed(&q, end, &dc) < 0)
                goto bad;
            line = (uint32_t)((int64_t)line + dl);
            column = (uint32_t)((int64_t)column + dc);
        }
        int64_t end_line = (int64_t)line + delta_lines, end_column = (int64_t)column + delta_columns;
        if (line >= 0x20000000u || line == PPDB_HIDDEN_LINE || end_line >= 0x20000000 ||
            column >= 0x10000u || end_column < 0 || end_column >= 0x10000)
            goto bad;
        pt->start_line = line;
        pt->end_line = (uint32_t)end_line;
        pt->start_column = (uint16_t)column;
        pt->end_column = (uint16_t)end_column;
    }
    *out = v;
    *count = n;
    return 0;
bad:
    mem_free(v);
    *why = "a malformed sequence-point blob";
    return -1;
}

long ppdb_document_name(const struct ppdb *p, uint32_t doc, char *out, size_t size)
{
    if (size == 0)
        return -1;
    out[0] = '\0';
    const uint8_t *blob;
    uint32_t len;
    if (doc == 0 || doc > md_rows(&p->md, MD_DOCUMENT) ||
        md_blob(&p->md, md_get(&p->md, MD_DOCUMENT, doc, MD_DOCUMENT_NAME), &blob, &len) < 0 ||
        len == 0)
        return -1;
    const uint8_t *q = blob + 1, *end = blob + len;
    char sep = (char)blob[0];
    size_t used = 0;
    int parts = 0;
    while (q < end) {
        uint32_t part;
        if (md_uncompress(&q, end, &part) < 0)
            return -1;
        if (parts++ && sep && used + 1 < size)
            out[used++] = sep;
        const uint8_t *text;
        uint32_t tlen;
        if (md_blob(&p->md, part, &text, &tlen) < 0)
            return -1;
        for (uint32_t i = 0; i < tlen && used + 1 < size; i++)
            out[used++] = text[i] ? (char)text[i] : '?';
    }
    out[used] = '\0';
    return (long)used;
}

uint32_t ppdb_kickoff(const struct ppdb *p, uint32_t move_next)
{
    /* sorted by MoveNextMethod */
    uint32_t lo = 1, hi = md_rows(&p->md, MD_STATEMACHINEMETHOD);
    while (lo <= hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        uint32_t m = md_get(&p->md, MD_STATEMACHINEMETHOD, mid, MD_STATEMACHINEMETHOD_MOVENEXT);
        if (m == move_next)
            return md_get(&p->md, MD_STATEMACHINEMETHOD, mid, MD_STATEMACHINEMETHOD_KICKOFF);
        if (m < move_next)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return 0;
}
