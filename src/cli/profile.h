/*
 * profile: a recording read into the aggregate every report is written
 * from, keyed by (event, thread, stack).
 *
 * Loading folds native frames (fold.h) unless asked for them raw, then
 * applies the filters common to all formats (thread, time window,
 * include/exclude regexes on frame names, reversed stacks, thread names as
 * roots), then builds what all events share:
 *   - display names, deduplicated: frames that print the same share a name
 *     id, so two FunctionIDs of one method merge in every report;
 * and, per event with samples (cpu, wall, alloc, exceptions ...; and live,
 * the sampled allocations still alive, derived by cli/live.h), a view:
 *   - per (thread, stack) the weight and count of the samples that passed
 *     the filters;
 *   - a call tree (trie over name ids, root first, or leaf first when
 *     reversed) with total and self weight per node.
 * One view is current (--event, else the sampled event, else the first
 * with samples): the single-event formats draw it; the multi-event ones
 * (pprof, speedscope, the flame graph) draw every view.  Writers read these
 * and the underlying recording; none re-reads the file.
 */
#ifndef CORSCOPE_PROFILE_H
#define CORSCOPE_PROFILE_H

#include <regex.h>
#include <stddef.h>
#include <stdint.h>

#include "common/map.h"
#include "common/strtab.h"
#include "common/visibility.h"
#include "format/recording.h"

struct prof_filter {
    const char *event;  /* event name; NULL = the default (see above) */
    const char *thread; /* thread name substring or os tid; NULL = all */
    uint64_t from_ns, to_ns; /* window relative to the start; to 0 = open */
    regex_t include, exclude;
    int has_include, has_exclude;
    int reverse;      /* leaf first: who calls the hot methods */
    int thread_roots; /* each stack starts with its thread's name */
    uint64_t at_ns;   /* live: the heap as of this time (ns since the start) */
    int has_at;       /* else as of the end */
    int native_raw;   /* native frames as recorded, not folded (fold.h) */
};

struct prof_node {
    uint32_t name;         /* name id */
    uint32_t parent;       /* node index, smaller than the node's own; the root
                            * (0) is its own parent */
    uint32_t first_child;  /* 0 = none */
    uint32_t next_sibling; /* 0 = none */
    uint64_t total;        /* weight of samples through this node */
    uint64_t self;         /* weight of samples ending here */
};

/* A (thread, stack) pair and the weight of its selected samples. */
struct prof_path {
    uint32_t thread; /* index into rec.threads */
    uint32_t stack;  /* stack id */
    uint64_t weight; /* sum of the samples' weights (periods of the event) */
    uint64_t count;  /* sum of their counts (samples, objects, calls ...) */
    uint64_t samples;
};

/* One selected sample, for the formats that keep time order. */
struct prof_sample {
    uint32_t sample; /* index into rec.samples */
    uint32_t path;   /* index into paths */
};

/* What every event's view shares (owned by the current view's profile
 * set, see prof_load). */
struct prof_shared {
    struct recording rec;
    struct strtab names;       /* display names; id 0 = "" */
    uint32_t *frame_name;      /* frame id -> name id */
    uint8_t *name_kind;        /* name id -> fmt_frame_kind (0 = thread root) */
    uint32_t *thread_name;     /* thread index -> name id of its root label */
    char live_note[256];       /* what the live view holds (cli/live.h), "" when none */
};

/* One event's view. */
struct profile {
    struct prof_shared *shared;
    const struct recording *rec; /* = &shared->rec */
    const struct strtab *names;  /* = &shared->names */
    const uint32_t *frame_name, *thread_name;
    const uint8_t *name_kind;
    const struct profile *views; /* every event's view, this one among them */
    size_t view_count;
    long event;                /* index into rec.events, -1 when none */
    struct prof_path *paths;
    size_t path_count, path_cap;
    struct prof_node *nodes;   /* [0] = root */
    size_t node_count, node_cap;
    struct prof_sample *selected; /* the samples that passed the filters, in file order */
    size_t selected_cap;
    uint32_t *path_leaf;       /* path index -> its last node in the tree */
    uint64_t total_weight;     /* of the selected samples */
    uint64_t total_count;
    uint64_t selected_samples;
    uint64_t first_time, last_time; /* of the selected samples */
};

/* Every view of a recording; `current` is the one single-event formats
 * draw. */
struct profiles {
    struct prof_shared shared;
    struct profile *views;
    size_t count;
    size_t current;
};

/* Loads and aggregates.  Returns 0, or -1 with a one-line reason in err. */
HIDDEN int prof_load(struct profiles *ps, const char *path, const struct prof_filter *f, char *err,
                     size_t err_size);
/* Loads several recordings (the processes of one tree, merge.h) as one;
 * pid > 0 keeps only the one of that process.  One path is prof_load. */
HIDDEN int prof_load_many(struct profiles *ps, const char *const *paths, size_t n, long pid,
                          const struct prof_filter *f, char *err, size_t err_size);
/* Same from a recording already loaded; takes it over. */
HIDDEN int prof_build(struct profiles *ps, struct recording *rec, const struct prof_filter *f,
                      char *err, size_t err_size);
HIDDEN void prof_free(struct profiles *ps);
HIDDEN void prof_filter_free(struct prof_filter *f);
/* The view single-event formats draw. */
static inline const struct profile *prof_current(const struct profiles *ps)
{
    return &ps->views[ps->current];
}

enum prof_order { PROF_BY_NAME, PROF_BY_TOTAL };
/* Children of a node, sorted, into *out (grown as needed, caller frees).
 * Returns their number, or SIZE_MAX when out of memory. */
HIDDEN size_t prof_children(const struct profile *p, uint32_t node, enum prof_order order,
                            uint32_t **out, size_t *cap);

/* The names of a tree node's path, root first, into *out (grown as
 * needed, caller frees).  Returns the depth, or SIZE_MAX when out of
 * memory.  The root itself (node 0) has depth 0. */
HIDDEN size_t prof_node_path(const struct profile *p, uint32_t node, uint32_t **out, size_t *cap);

/* Per node of the tree, the count (samples, calls, objects ...) of the
 * samples that end there (*self) and that pass through it (*total): arrays
 * of node_count, the caller frees them.  Returns 0, or -1 when out of
 * memory.  (Counts are not kept in the nodes: most reports never read
 * them, and a tree of millions of nodes would carry them for nothing.) */
HIDDEN int prof_node_counts(const struct profile *p, uint64_t **self, uint64_t **total);

HIDDEN const char *prof_name(const struct profile *p, uint32_t name_id);
/* Does --thread `want` (a name's substring or an OS tid; NULL = all)
 * select thread index t? */
HIDDEN int prof_thread_selected(const struct recording *r, size_t t, const char *want);
/* Value of a weight in the event's unit (weight * period). */
HIDDEN double prof_value(const struct profile *p, uint64_t weight);
HIDDEN const char *prof_unit(const struct profile *p);
HIDDEN const char *prof_event_name(const struct profile *p);
/* The name and unit of the event's second measure ("samples", "objects"),
 * and whether it has one worth showing beside the first. */
HIDDEN const char *prof_count_name(const struct profile *p);
HIDDEN const char *prof_count_unit(const struct profile *p);

#endif
