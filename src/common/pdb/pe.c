/*
 * pe: see pe.h.
 */
#include "common/pdb/pe.h"

#include <stdint.h>
#include <string.h>

static uint16_t rd16(const uint8_t *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t rd32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

#define DIR_DEBUG 6
#define DIR_CLI 14

/* The PE headers and the section table, within data[0..size). */
static int read_headers(struct pe_image *pe, const uint8_t *data, size_t size, const char **why)
{
    memset(pe, 0, sizeof *pe);
    pe->data = data;
    pe->size = size;
    if (size < 0x40 || data[0] != 'M' || data[1] != 'Z') {
        *why = "not a PE file (no MZ header)";
        return -1;
    }
    uint32_t lfanew = rd32(data + 0x3c);
    if (lfanew > size || size - lfanew < 24 || memcmp(data + lfanew, "PE\0\0", 4) != 0) {
        *why = "not a PE file (no PE signature)";
        return -1;
    }
    const uint8_t *coff = data + lfanew + 4;
    pe->machine = rd16(coff);
    uint32_t nsections = rd16(coff + 2);
    uint32_t opt_size = rd16(coff + 16);
    size_t opt = lfanew + 24;
    if (opt_size < 2 || opt > size || size - opt < opt_size) {
        *why = "a truncated optional header";
        return -1;
    }
    uint16_t magic = rd16(data + opt);
    size_t dirs_at;
    if (magic == 0x10b)
        dirs_at = 96;
    else if (magic == 0x20b)
        dirs_at = 112, pe->pe32plus = 1;
    else {
        *why = "an unknown optional header (neither PE32 nor PE32+)";
        return -1;
    }
    if (opt_size < dirs_at) {
        *why = "a truncated optional header";
        return -1;
    }
    uint32_t ndirs = rd32(data + opt + dirs_at - 4);
    if (ndirs > 16)
        ndirs = 16;
    if ((opt_size - dirs_at) / 8 < ndirs)
        ndirs = (uint32_t)((opt_size - dirs_at) / 8);
    for (uint32_t i = 0; i < ndirs; i++) {
        pe->dir_rva[i] = rd32(data + opt + dirs_at + 8 * i);
        pe->dir_size[i] = rd32(data + opt + dirs_at + 8 * i + 4);
    }
    size_t sec = opt + opt_size;
    if (nsections > PE_MAX_SECTIONS || sec > size || (size - sec) / 40 < nsections) {
        *why = "a truncated section table";
        return -1;
    }
    for (uint32_t i = 0; i < nsections; i++) {
        const uint8_t *s = data + sec + 40 * i;
        struct pe_section *out = &pe->sections[i];
        out->vsize = rd32(s + 8);
        out->va = rd32(s + 12);
        out->raw_size = rd32(s + 16);
        out->raw = rd32(s + 20);
    }
    pe->section_count = nsections;
    return 0;
}

/* The CLI header and the metadata it points to (each checked with
 * readable first, when given). */
static int read_cli(struct pe_image *pe, int (*readable)(const uint8_t *, size_t), const char **why)
{
    size_t avail;
    const uint8_t *cli = pe->dir_size[DIR_CLI] >= 72 ? pe_at_rva(pe, pe->dir_rva[DIR_CLI], &avail) : NULL;
    if (!cli || avail < 72 || (readable && !readable(cli, 72))) {
        *why = "no CLI header: not a .NET assembly";
        return -1;
    }
    uint32_t md_rva = rd32(cli + 8), md_size = rd32(cli + 12);
    pe->cli_flags = rd32(cli + 16);
    pe->entry_token = rd32(cli + 20);
    pe->native_header_rva = rd32(cli + 64);
    const uint8_t *md = pe_at_rva(pe, md_rva, &avail);
    if (!md || md_size == 0 || avail < md_size || (readable && !readable(md, md_size))) {
        *why = "the metadata lies outside the file";
        return -1;
    }
    pe->metadata = md;
    pe->metadata_size = md_size;
    return 0;
}

int pe_open(struct pe_image *pe, const uint8_t *data, size_t size, const char **why)
{
    return read_headers(pe, data, size, why) < 0 ? -1 : read_cli(pe, NULL, why);
}

int pe_open_loaded(struct pe_image *pe, const uint8_t *base, int flat,
                   int (*readable)(const uint8_t *, size_t), const char **why)
{
    if (readable && !readable(base, PE_LOADED_HEADERS)) {
        *why = "the image's headers are not mapped";
        return -1;
    }
    if (read_headers(pe, base, PE_LOADED_HEADERS, why) < 0)
        return -1;
    uint64_t extent = PE_LOADED_HEADERS;
    for (uint32_t i = 0; i < pe->section_count; i++) {
        struct pe_section *s = &pe->sections[i];
        if (!flat) {
            /* mapped as the loader maps it: each section at its RVA, its
             * file bytes first (the rest of vsize is zeros) */
            s->raw = s->va;
            if (s->vsize && s->vsize < s->raw_size)
                s->raw_size = s->vsize;
        }
        if ((uint64_t)s->raw + s->raw_size > extent)
            extent = (uint64_t)s->raw + s->raw_size;
    }
    if (extent > SIZE_MAX)
        extent = SIZE_MAX;
    pe->size = (size_t)extent;
    return read_cli(pe, readable, why);
}

const uint8_t *pe_at_rva(const struct pe_image *pe, uint32_t rva, size_t *avail)
{
    for (uint32_t i = 0; i < pe->section_count; i++) {
        const struct pe_section *s = &pe->sections[i];
        uint32_t span = s->vsize > s->raw_size || s->vsize == 0 ? s->raw_size : s->vsize;
        if (rva < s->va || rva - s->va >= span)
            continue;
        uint64_t off = (uint64_t)s->raw + (rva - s->va);
        if (off >= pe->size)
            return NULL;
        uint64_t end = (uint64_t)s->raw + span;
        if (end > pe->size)
            end = pe->size;
        *avail = (size_t)(end - off);
        return pe->data + off;
    }
    return NULL;
}

int pe_is_readytorun(const struct pe_image *pe)
{
    size_t avail;
    const uint8_t *h = pe->native_header_rva ? pe_at_rva(pe, pe->native_header_rva, &avail) : NULL;
    return h && avail >= 4 && rd32(h) == 0x00525452; /* "RTR" */
}

#define DEBUG_CODEVIEW 2
#define DEBUG_REPRODUCIBLE 16
#define DEBUG_EMBEDDED_PDB 17
#define DEBUG_PDB_CHECKSUM 19

/* The bytes of one debug entry's data, by its file pointer (which every
 * entry has; the RVA is 0 for data not mapped). */
static const uint8_t *entry_data(const struct pe_image *pe, const uint8_t *e, size_t *len)
{
    uint32_t size = rd32(e + 16), ptr = rd32(e + 24);
    if (ptr > pe->size || pe->size - ptr < size)
        return NULL;
    *len = size;
    return pe->data + ptr;
}

int pe_debug_read(const struct pe_image *pe, struct pe_debug *out, const char **why)
{
    memset(out, 0, sizeof *out);
    uint32_t rva = pe->dir_rva[DIR_DEBUG], size = pe->dir_size[DIR_DEBUG];
    if (!rva || !size)
        return 0;
    size_t avail;
    const uint8_t *dir = pe_at_rva(pe, rva, &avail);
    if (!dir || avail < size || size % 28 != 0) {
        *why = "a malformed debug directory";
        return -1;
    }
    int n = 0;
    for (uint32_t at = 0; at < size; at += 28, n++) {
        const uint8_t *e = dir + at;
        uint16_t minor = rd16(e + 10);
        uint32_t type = rd32(e + 12);
        size_t len;
        const uint8_t *d = entry_data(pe, e, &len);
        if (type == DEBUG_REPRODUCIBLE)
            out->reproducible = 1;
        if (type == DEBUG_PDB_CHECKSUM)
            out->checksum = 1;
        if (!d)
            continue;
        if (type == DEBUG_CODEVIEW && len >= 24 && memcmp(d, "RSDS", 4) == 0 && !out->codeview) {
            out->codeview = 1;
            out->portable = minor == 0x504d;
            memcpy(out->pdb_id, d + 4, 16);
            memcpy(out->pdb_id + 16, e + 4, 4); /* the entry's time stamp */
            out->age = rd32(d + 20);
            size_t plen = 0;
            while (24 + plen < len && d[24 + plen])
                plen++;
            if (plen >= sizeof out->pdb_path) {
                plen = sizeof out->pdb_path - 1;
                out->pdb_path_truncated = 1;
            }
            memcpy(out->pdb_path, d + 24, plen);
            out->pdb_path[plen] = '\0';
        } else if (type == DEBUG_EMBEDDED_PDB && len >= 8 && memcmp(d, "MPDB", 4) == 0 &&
                   !out->embedded) {
            out->embedded_size = rd32(d + 4);
            out->embedded = d + 8;
            out->embedded_len = len - 8;
        }
    }
    return n;
}
