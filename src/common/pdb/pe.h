/*
 * pe: the parts of a PE/COFF file (a .NET assembly, .dll or .exe) that
 * coverage needs, read from the file's bytes: its sections (to turn RVAs
 * into file offsets), the CLI header (where the metadata is, whether the
 * image carries ReadyToRun code), and the debug directory, which says
 * where the debugging information is:
 *   - CodeView (type 2): "RSDS", the PDB's GUID and age, and its path at
 *     build time; a portable PDB's entry has minor version 0x504d ("PM"),
 *     and its id is the GUID plus the entry's time stamp (20 bytes, equal
 *     to the #Pdb stream's id);
 *   - Embedded portable PDB (type 17): "MPDB", the uncompressed size, and
 *     the PDB compressed with raw deflate;
 *   - PDB checksum (type 19), reproducible (16): noted only.
 * (ECMA-335 II.25; the PE/COFF specification; dotnet/runtime
 * docs/design/specs/PE-COFF.md.)
 *
 * Pure: no I/O, nothing allocated; every read is checked against the size
 * given, so any bytes may come in.
 */
#ifndef CORSCOPE_PE_H
#define CORSCOPE_PE_H

#include <stddef.h>
#include <stdint.h>

#include "common/visibility.h"

#define PE_MAX_SECTIONS 96
#define PE_PATH_MAX 1024

struct pe_section {
    uint32_t va, vsize;     /* where it is mapped (RVA) and how much */
    uint32_t raw, raw_size; /* where it is in the file */
};

struct pe_image {
    const uint8_t *data;
    size_t size;
    int pe32plus;
    uint16_t machine;
    struct pe_section sections[PE_MAX_SECTIONS];
    uint32_t section_count;
    uint32_t dir_rva[16], dir_size[16]; /* the optional header's data directories */
    /* the CLI header (ECMA-335 II.25.3.3) */
    uint32_t cli_flags;
    uint32_t entry_token;
    uint32_t native_header_rva; /* ManagedNativeHeader: a ReadyToRun image's header */
    const uint8_t *metadata;    /* the metadata root, metadata_size bytes */
    uint32_t metadata_size;
};

/* Reads the headers of a managed image.  Returns 0, or -1 with a static
 * reason in *why (not a PE file, no CLI header, metadata outside the file). */
HIDDEN int pe_open(struct pe_image *pe, const uint8_t *data, size_t size, const char **why);
/* The same for an image the runtime has loaded at base, read in place:
 * flat (the file's bytes as they are, COR_PRF_MODULE_FLAT_LAYOUT) or
 * mapped (each section at its RVA).  The headers must lie in the first
 * PE_LOADED_HEADERS bytes; the sections' extent is what the headers say,
 * so each range read beyond them (the CLI header, the metadata) is first
 * given to readable (NULL: trusted), which answers whether all of it is
 * mapped: a layout told wrong must not make the reader fault. */
#define PE_LOADED_HEADERS 4096
HIDDEN int pe_open_loaded(struct pe_image *pe, const uint8_t *base, int flat,
                          int (*readable)(const uint8_t *, size_t), const char **why);
/* The file bytes at rva: *avail gets how many follow it inside its section
 * (and inside the file).  NULL when rva is in no section's file data. */
HIDDEN const uint8_t *pe_at_rva(const struct pe_image *pe, uint32_t rva, size_t *avail);
/* Whether the image carries ReadyToRun native code. */
HIDDEN int pe_is_readytorun(const struct pe_image *pe);

/* What the debug directory says. */
struct pe_debug {
    int codeview;                /* an RSDS CodeView entry was found */
    int portable;                /* ... for a portable PDB (minor version 0x504d) */
    uint8_t pdb_id[20];          /* GUID (16) then the entry's time stamp (4) */
    uint32_t age;
    char pdb_path[PE_PATH_MAX];  /* as the compiler wrote it (may be truncated: see below) */
    int pdb_path_truncated;
    const uint8_t *embedded;     /* type 17: the deflate stream, embedded_len bytes */
    size_t embedded_len;
    uint32_t embedded_size;      /* its uncompressed size */
    int checksum;                /* a PDB checksum entry (type 19) */
    int reproducible;            /* a reproducible-build entry (type 16) */
};

/* Reads the debug directory into *out (zeroed first).  Returns the number
 * of entries read (0 for none), or -1 with a reason when the directory is
 * malformed; an entry whose data lies outside the file is skipped. */
HIDDEN int pe_debug_read(const struct pe_image *pe, struct pe_debug *out, const char **why);

#endif
