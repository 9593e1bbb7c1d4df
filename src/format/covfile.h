/*
 * covfile: the counter file of `corscope cover` (docs/coverage.md has the
 * layout).  Each covered process writes one, DIR/cover-PID.bin, in the
 * directory the command made for the run; the command reads them all when
 * the program is done.
 *
 * The file is the process's memory: the agent maps it shared and the
 * counters the instrumented code increments live in it, so every hit is
 * in the page cache the moment it happens and a process killed by
 * SIGKILL, by vstest's exit timeout or by a crash keeps them all.  After
 * a 4 KiB header come records, 8-byte aligned, appended and never moved:
 *   MODULE  an assembly the agent covers (or saw and left out, with why):
 *           its MVID, path and name;
 *   METHOD  an instrumented method: module, token, and its probes, each an
 *           IL offset (of the original body), a kind (a sequence point, an
 *           edge of a conditional branch and its path, a method's entry)
 *           and where its 64-bit counter is in the file;
 *   SKIPPED a method left alone, and why (a body the engine refused, a
 *           malformed PDB, the runtime's refusal).
 * The header's `used` says how far records are whole: a record, and the
 * counters it points to, count once `used` covers them (the writer stores
 * it last, with release order); anything after is ignored.
 *
 * Writer (agent): covfile_open maps the file into a reserved range of
 * address space that never moves, and grows it by mapping more of the file
 * after what is there, so a counter's address stays valid for the
 * process's life; a full file (COVFILE_MAX) refuses new methods, counted
 * in the header.  Several threads may add records at once (a mutex, held
 * only while space is taken and a record written; nothing else is done
 * under it).
 *
 * Reader (CLI): covfile_read takes a whole file's bytes and checks every
 * record against them.
 */
#ifndef CORSCOPE_COVFILE_H
#define CORSCOPE_COVFILE_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "common/visibility.h"

#define COVFILE_MAGIC "CSCOVER1"
#define COVFILE_VERSION 1
#define COVFILE_HEADER 4096
#define COVFILE_MAX (1ull << 30) /* the reserved address range */

enum covfile_record { COVFILE_MODULE = 1, COVFILE_METHOD = 2, COVFILE_SKIPPED = 3 };

/* What a probe counts. */
enum covfile_probe {
    COVFILE_PROBE_LINE = 1,   /* the sequence point at il_offset was reached */
    COVFILE_PROBE_BRANCH = 2, /* the conditional branch at il_offset went along path */
    COVFILE_PROBE_ENTRY = 3,  /* the method was entered (an assembly without PDB) */
};

/* A module's state, as the agent found it. */
enum covfile_module_state {
    COVFILE_COVERED = 0,        /* lines and branches, from its PDB */
    COVFILE_METHODS_ONLY = 1,   /* no usable PDB, included by name: entries only */
    COVFILE_NO_PDB = 2,         /* left out: no PDB (pdb_state says which) */
    COVFILE_UNREADABLE = 3,     /* left out: the file could not be read */
};

/* Why a method was left alone. */
enum covfile_skip {
    COVFILE_SKIP_ENGINE = 1,    /* the IL engine refused the body */
    COVFILE_SKIP_PDB = 2,       /* its sequence points could not be read */
    COVFILE_SKIP_RUNTIME = 3,   /* the runtime refused the new body, or gave none */
    COVFILE_SKIP_FULL = 4,      /* the counter file is full */
};

struct covfile_header {
    char magic[8];
    uint32_t version;
    uint32_t header_size;
    uint32_t pid;
    uint32_t flags;
    uint64_t started_ns;         /* CLOCK_REALTIME */
    uint64_t used;               /* bytes of records, from the header's end (atomic) */
    uint64_t full_methods;       /* methods refused because the file was full */
    char command[256];           /* the process's command line, spaces for NULs */
};

struct covfile_probe_desc {
    uint32_t il_offset;
    uint16_t kind;  /* enum covfile_probe */
    uint16_t path;  /* branch: 0 falls through, k the k-th target */
};

/* ---- writer --------------------------------------------------------------------- */

struct covfile {
    int fd;
    uint8_t *base;        /* COVFILE_MAX reserved, the file mapped from its start */
    uint64_t mapped;      /* bytes of the file mapped */
    uint64_t end;         /* offset of the next record */
    uint32_t modules;     /* module records so far */
    pthread_mutex_t lock;
};

/* Creates dir/cover-PID.bin (exclusively) and maps it.  Returns 0, or -1
 * with errno. */
HIDDEN int covfile_open(struct covfile *f, const char *dir, long pid, const char *command);
/* The module record; returns its index (0, 1, ...) or -1 (full). */
HIDDEN long covfile_module(struct covfile *f, const uint8_t mvid[16], uint32_t state,
                           uint32_t pdb_state, const char *path, const char *name,
                           const char *why);
/* A method record with n probes: *counters gets the address of its n
 * zeroed 64-bit counters (in the order of probes).  Returns 0, or -1 when
 * the file is full (counted). */
HIDDEN int covfile_method(struct covfile *f, uint32_t module, uint32_t token,
                          const struct covfile_probe_desc *probes, uint32_t n,
                          uint64_t **counters);
HIDDEN void covfile_skipped(struct covfile *f, uint32_t module, uint32_t token, uint32_t reason,
                            const char *why);
/* Unmaps and closes (the counters' memory goes with it: only once no code
 * can run them, at the process's very end, or never). */
HIDDEN void covfile_close(struct covfile *f);

/* ---- reader --------------------------------------------------------------------- */

struct covfile_module_rec {
    uint32_t index;
    uint32_t state, pdb_state;
    uint8_t mvid[16];
    const char *path, *name, *why; /* NUL-terminated inside the file's bytes */
};

struct covfile_method_rec {
    uint32_t module, token, count;
    const struct covfile_probe_desc *probes; /* unaligned access safe: 8-aligned in the file */
    const uint64_t *counters;
};

struct covfile_skipped_rec {
    uint32_t module, token, reason;
    const char *why;
};

struct covfile_view {
    const struct covfile_header *header;
    struct covfile_module_rec *modules;
    uint32_t module_count;
    struct covfile_method_rec *methods;
    uint32_t method_count;
    struct covfile_skipped_rec *skipped;
    uint32_t skipped_count;
    int truncated;  /* records past the end of the bytes were ignored */
};

/* Reads a counter file's bytes (kept: the view points into them; they
 * must be 8-byte aligned).  Returns 0, or -1 with a reason. */
HIDDEN int covfile_read(const uint8_t *data, size_t size, struct covfile_view *v, char *why,
                        size_t why_size);
HIDDEN void covfile_view_free(struct covfile_view *v);

#endif
