/*
 * fuzz_pdb: the readers of coverage (common/pdb: PE, ECMA-335 metadata,
 * portable PDB, the assembly model; common/inflate) over arbitrary bytes.
 *
 * The agent reads every assembly it may cover and its PDB inside the
 * profiled program, and the CLI reads them again for the report: any
 * bytes must give a clean refusal or a model whose every name is a
 * terminated string and every sequence point a sane one.  The input is an
 * assembly image, optionally followed by a PDB: when its last 4 bytes are
 * "PDB:" preceded by a little-endian u32 n, the last n bytes before them
 * are the PDB.  Every method's name, type name, body, sequence points
 * and document names are read; the PDB part is also run through the
 * deflate decoder.  Seeds: small assemblies of our tests with their PDBs
 * (embedded and separate), framework assemblies' first bytes.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/inflate.h"
#include "common/mem.h"
#include "common/pdb/assembly.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static volatile size_t sink;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    size_t image_size = size;
    const uint8_t *pdb = NULL;
    size_t pdb_size = 0;
    if (size >= 8 && !memcmp(data + size - 4, "PDB:", 4)) {
        uint32_t n = data[size - 8] | (uint32_t)data[size - 7] << 8 | (uint32_t)data[size - 6] << 16 |
                     (uint32_t)data[size - 5] << 24;
        if (n <= size - 8) {
            pdb = data + size - 8 - n;
            pdb_size = n;
            image_size = size - 8 - n;
        }
    }
    /* copies, so that ASan sees reads past their ends */
    uint8_t *image = malloc(image_size ? image_size : 1);
    uint8_t *pdb_copy = malloc(pdb_size ? pdb_size : 1);
    if (!image || !pdb_copy)
        abort();
    memcpy(image, data, image_size);
    if (pdb_size)
        memcpy(pdb_copy, pdb, pdb_size);

    static uint8_t out[1 << 16];
    size_t produced;
    const char *reason;
    inflate_raw(pdb_size ? pdb_copy : image, pdb_size ? pdb_size : image_size, out, sizeof out,
                &produced, &reason);
    if (produced > sizeof out)
        abort();

    struct assembly a;
    char why[256];
    if (assembly_load(&a, image, image_size, pdb_size ? pdb_copy : NULL, pdb_size, why,
                      sizeof why) == 0) {
        sink += strlen(a.name);
        for (uint32_t m = 1; m <= a.method_count && m <= 4096; m++) {
            char type[512];
            assembly_type_name(&a, a.methods[m - 1].type, type, sizeof type);
            sink += strlen(type) + strlen(assembly_method_name(&a, m));
            if (a.methods[m - 1].owner == 0 || a.methods[m - 1].owner > a.method_count)
                abort();
            size_t avail;
            const uint8_t *body = assembly_method_body(&a, m, &avail);
            if (body && (body < a.image || body + avail > a.image + a.image_size))
                abort();
            if (!assembly_has_pdb(&a))
                continue;
            struct ppdb_point *pts;
            uint32_t n;
            if (ppdb_sequence_points(&a.pdb, m, &pts, &n, &reason) == 0) {
                for (uint32_t i = 0; i < n; i++) {
                    if (i && pts[i].il_offset <= pts[i - 1].il_offset)
                        abort();
                    if (pts[i].start_line != PPDB_HIDDEN_LINE && pts[i].end_line < pts[i].start_line)
                        abort();
                    char doc[300];
                    if (ppdb_document_name(&a.pdb, pts[i].document, doc, sizeof doc) >= 0)
                        sink += strlen(doc);
                    sink += (size_t)assembly_line_excluded(&a, pts[i].document, pts[i].start_line);
                }
                mem_free(pts);
            }
        }
        assembly_close(&a);
    }
    mem_fail_after(1 + (long)(size % 5), 0);
    if (assembly_load(&a, image, image_size, pdb_size ? pdb_copy : NULL, pdb_size, why,
                      sizeof why) == 0)
        assembly_close(&a);
    mem_fail_after(0, 0);
    free(image);
    free(pdb_copy);
    return 0;
}
