/*
 * gc_table: the collections of a recording made with -e gc, put together
 * for the reports that show them (report -f gc, the Chrome trace's GC
 * tracks): one row per collection from its "gc" record, with the pauses
 * ("gc-pause" records) the agent attributed to it summed in, and the
 * pauses themselves in time order.  The names of the runtime's reason and
 * kind codes are here too (docs/events.md).
 */
#ifndef CORSCOPE_GC_TABLE_H
#define CORSCOPE_GC_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include "common/visibility.h"
#include "format/recording.h"

enum { GC_GEN0, GC_GEN1, GC_GEN2, GC_LOH, GC_POH, GC_SPACES };

struct gc_row {
    uint64_t number, generation, reason, kind, compacting; /* compacting: 0, 1, 2 unknown */
    uint64_t start, duration;  /* ns since the start of the recording, ns */
    uint64_t pause, pauses;    /* the pauses attributed to it: total ns, how many */
    uint64_t size[GC_SPACES];  /* bytes after it */
    uint64_t promoted, pinned_objects;
};

struct gc_pause {
    uint64_t start, duration, reason, gc;
};

struct gc_table {
    struct gc_row *rows;      /* by number */
    size_t count;
    struct gc_pause *pauses;  /* by start */
    size_t pause_count;
    uint64_t run_ns;          /* the recording's span: its last sample or record */
};

/* Loads the table, keeping collections that start in [from, to) (to 0 =
 * open).  Returns 1 when the recording has gc records, 0 when it has none,
 * -1 when out of memory. */
HIDDEN int gc_table_load(const struct recording *r, uint64_t from, uint64_t to,
                         struct gc_table *t);
HIDDEN void gc_table_free(struct gc_table *t);

/* "AllocSmall", "Induced" ... (the runtime's GC reason codes) */
HIDDEN const char *gc_reason_name(uint64_t reason);
/* "blocking", "background", "foreground" */
HIDDEN const char *gc_kind_name(uint64_t kind);
/* "GC", "GCPrep" ... (the runtime's suspension reasons) */
HIDDEN const char *gc_suspend_reason_name(uint64_t reason);

#endif
