/*
 * pstream: a recording read while it is written (the agent's pipe, a file
 * that grows), cut into windows of time, each window made into a
 * self-contained recording of its own that the ordinary reader and
 * reports take (push.h turns it into a Pyroscope profile per event).
 *
 * Bytes come in any pieces (pstream_feed); whole chunks are checked (CRC,
 * references) and decoded as they complete.  Definitions (strings, frames,
 * stacks, threads) are kept compactly, and those no recent window needed
 * are forgotten when a budget is passed (pdefs.h); samples and recorded
 * events are kept only until their window is made (pwindow.h).
 *
 * Windows are aligned to multiples of `every` in wall-clock time, so the
 * windows of every process of a fleet line up (the first and last are
 * partial: the recording's start and end); consecutive windows share
 * their boundary, so a series has no gap.  A window is made once the
 * stream's clock (the agent's CLOCK_MONOTONIC, INFO start_monotonic_ns) is
 * PSTREAM_GRACE_NS past its end: the agent writes at least every 250 ms,
 * and a recorded event's queue may hold it a little longer.  Anything that
 * arrives for a window already made goes into the oldest open one and is
 * counted (late), never dropped.
 *
 * The live heap (-e live) is a state, not a flow: each window also gets a
 * recording of the live heap as of its end (the followed allocations not
 * found collected, and the last look at the heap), at most --live-max
 * allocations.
 */
#ifndef CORSCOPE_CLI_PSTREAM_H
#define CORSCOPE_CLI_PSTREAM_H

#include <stddef.h>
#include <stdint.h>

#include "format/chunk.h"
#include "cli/pdefs.h"
#include "common/buf.h"
#include "common/map.h"
#include "common/visibility.h"
#include "format/format.h"

#define PSTREAM_GRACE_NS 2000000000ull

struct pstream_event {
    uint32_t id;
    int recorded;
    char name[64];
    char unit[32];
    uint64_t period;
    uint32_t value_count, field_count;
    char value_names[FMT_MAX_VALUES][64], value_units[FMT_MAX_VALUES][32];
    char field_names[FMT_MAX_FIELDS][64];
    uint8_t field_types[FMT_MAX_FIELDS];
    uint64_t taken; /* samples or records of it seen */
};

struct pstream_frame {
    uint32_t module, type, name; /* text ids (texts) */
    uint64_t extra;              /* a label's subject: a stream frame id */
    uint8_t kind;
};

struct pstream_kv {
    char *key, *value;
    uint64_t value_u64;
};

/* A sample or a recorded event waiting for its window. */
struct pstream_item {
    uint64_t time;    /* ns since the recording's start */
    uint32_t thread;  /* stream thread id, 0 = none */
    uint32_t stack;   /* stream stack id, 0 = none */
    uint32_t data;    /* recorded: index into the window's data; sampled: unused */
    uint16_t event;   /* index into events */
    uint16_t sampled; /* 1: SMPL (data[...] holds the weight) */
    uint64_t weight;  /* sampled: the weight */
};

struct pstream_window_data {
    uint64_t start, end; /* stream time */
    struct pstream_item *items;
    size_t item_count, item_cap;
    uint64_t *data; /* recorded events' values and fields */
    size_t data_count, data_cap;
};

#define PSTREAM_OPEN_MAX 16

struct pstream {
    uint64_t every_ns;
    /* input */
    struct buf in;
    size_t in_pos;
    int header_seen;
    int ended;        /* trailer read */
    int failed;       /* corrupt or out of memory: see problem */
    char problem[256];
    uint64_t bytes, chunks;
    /* clocks */
    uint64_t start_realtime_ns;
    uint64_t start_mono_ns; /* the agent's CLOCK_MONOTONIC at time 0 */
    int have_start;
    uint64_t last_time; /* the latest item's time */
    /* definitions */
    struct pstream_kv *info; /* every INFO record, in order */
    size_t info_count, info_cap;
    struct pstream_event *events;
    size_t event_count, event_cap;
    struct pdefs defs;        /* strings, frames, stacks, threads */
    struct chunk_reader reader; /* the recording's syntax (format/chunk.h) */
    struct pstream_kv *stats; /* the latest value of each counter (value_u64) */
    size_t stat_count, stat_cap;
    /* windows not made yet, oldest first */
    struct pstream_window_data open[PSTREAM_OPEN_MAX];
    size_t open_count;
    uint64_t next_start; /* where the window after the open ones starts */
    uint64_t windows_made, late_items, items;
    /* the live heap */
    long alloc_event, scan_event, collected_event; /* indexes, -1 none */
    long alloc_object_field, scan_as_of_field, collected_object_field, collected_by_field;
    struct pstream_window_data live;   /* followed allocations not yet collected */
    struct map64 live_by_object;       /* object id -> item index in live */
    struct pstream_window_data pending; /* collected after the last look's as_of */
    struct pstream_window_data last_scan;
    uint64_t last_as_of;
};

/* A window made into recordings (buffers the caller owns and frees). */
struct pstream_window {
    uint64_t start_ns, end_ns;     /* Unix time */
    struct buf recording;          /* the window's samples and events */
    struct buf live;               /* the live heap at its end; empty when not recorded */
    uint64_t items;
};

HIDDEN int pstream_init(struct pstream *s, uint64_t every_ns);
HIDDEN void pstream_free(struct pstream *s);
/* Takes n more bytes of the recording.  Returns 0, or -1 when the stream
 * is corrupt or memory ran out (s->problem says which; nothing more is
 * taken). */
HIDDEN int pstream_feed(struct pstream *s, const void *data, size_t n);
/* The stream's time (ns since the recording's start) at CLOCK_MONOTONIC
 * now_mono_ns; 0 before the header's INFO was read. */
HIDDEN uint64_t pstream_now(const struct pstream *s, uint64_t now_mono_ns);
/* Makes the oldest window that is due at now_mono_ns (or every one left,
 * when at_end: the stream has ended) into *w.  Returns 1 when it made
 * one, 0 when none is due, -1 when out of memory. */
HIDDEN int pstream_next_window(struct pstream *s, uint64_t now_mono_ns, int at_end,
                               struct pstream_window *w);
/* CLOCK_MONOTONIC time when the next window is due (UINT64_MAX: none
 * open yet). */
HIDDEN uint64_t pstream_next_due(const struct pstream *s);
HIDDEN void pstream_window_free(struct pstream_window *w);
/* The latest value of a counter of the recording (0 when absent). */
HIDDEN uint64_t pstream_stat(const struct pstream *s, const char *key);
HIDDEN const char *pstream_info(const struct pstream *s, const char *key);
/* A window's items (and the live heap's) made into a recording of their
 * own (pwindow.c).  Returns 0 or -1 (out of memory). */
HIDDEN int pwindow_build(struct pstream *s, struct pstream_window_data *const *parts, size_t nparts,
                         struct buf *out);

#endif
