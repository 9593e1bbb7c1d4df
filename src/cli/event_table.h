/*
 * event_table: what the table reports of recorded events share (report -f
 * exceptions, locks, jit, threads): opening an event of the schema
 * (format/schema.h) and reading its values and fields by their enums, the
 * records the report's filters keep (thread, time window, and
 * --include/--exclude on the stack of records that have one), naming
 * frames, stacks and threads as the other reports do, counting by a key,
 * and printing durations.  Every table reads the recording's records
 * directly: the numbers are exact counts and sums, not samples.
 */
#ifndef CORSCOPE_EVENT_TABLE_H
#define CORSCOPE_EVENT_TABLE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cli/report.h"
#include "common/map.h"
#include "common/visibility.h"

/* One recorded event of a recording. */
struct event_table {
    const struct profile *p;
    const struct recording *r;
    const struct report_options *o;
    enum fmt_ev ev;
    long event;    /* index into r->events, -1 when the recording has none */
    uint8_t *memo; /* name id -> regex result cache (0 unknown, 1 no, 2 yes), x2 */
};

/* Opens event `ev`; e->event is -1 when the recording has no such event
 * (not an error: the table says so).  Returns -1 only when out of memory. */
HIDDEN int event_table_open(struct event_table *e, const struct profile *p,
                            const struct report_options *o, enum fmt_ev ev);
HIDDEN void event_table_close(struct event_table *e);
/* A record's field or value of the event (FMT_NAME_MEMBER), 0 when the
 * recording's event has none. */
HIDDEN uint64_t event_table_get(const struct event_table *e, const struct rec_record *x,
                                unsigned field);
HIDDEN uint64_t event_table_value(const struct event_table *e, const struct rec_record *x,
                                  unsigned value);
/* Does the report keep this record (thread, window, stack filters)? */
HIDDEN int event_table_keep(struct event_table *e, const struct rec_record *x);
/* Iterate over the kept records of the event:
 * for (x = event_table_next(e, NULL); x; x = event_table_next(e, x)) */
HIDDEN const struct rec_record *event_table_next(struct event_table *e,
                                                 const struct rec_record *after);

/* Names, as every report spells them. */
HIDDEN const char *event_table_frame_name(const struct event_table *e, uint64_t frame);
HIDDEN const char *event_table_string(const struct event_table *e, uint64_t string_id, char *buf,
                                      size_t size);
/* "name (tid 123)" or "thread 123"; "-" for none (thread index + 1 as in records). */
HIDDEN void event_table_thread_name(const struct event_table *e, uint32_t thread_plus_one,
                                    char *out, size_t size);
/* The same for a thread field's value (a thread id of the recording). */
HIDDEN void event_table_thread_id_name(const struct event_table *e, uint64_t id, char *out,
                                       size_t size);
/* The first frame of a stack that is code (managed, native or the
 * runtime's), not a label: the method an event happened in.  0 if none. */
HIDDEN uint32_t event_table_site(const struct event_table *e, uint32_t stack);
/* Up to `frames` code frames of a stack from the leaf, joined by " < ". */
HIDDEN void event_table_stack_text(const struct event_table *e, uint32_t stack, int frames,
                                   char *out, size_t size);
/* The recording's length (ns), from its samples and records. */
HIDDEN uint64_t event_table_duration(const struct recording *r);

/* "1.52 s", "320 ms", "12.5 us", "800 ns" */
HIDDEN void event_table_duration_text(uint64_t ns, char *out, size_t size);

/* Counting by a key: rows of (key, count, sum, extra), sorted for printing. */
struct event_table_row {
    uint64_t key;
    uint64_t count;
    uint64_t sum;
    uint64_t max;
    uint64_t a, b; /* the table's own */
};
struct event_table_rows {
    struct map64 index; /* key -> row */
    struct event_table_row *rows;
    size_t count, cap;
    int failed;
};
HIDDEN void event_table_rows_init(struct event_table_rows *t);
HIDDEN void event_table_rows_free(struct event_table_rows *t);
/* The row of key (made on first use); NULL when out of memory. */
HIDDEN struct event_table_row *event_table_row(struct event_table_rows *t, uint64_t key);
/* Sorts by count (by_sum 0) or by sum (1), largest first, then by key. */
HIDDEN void event_table_rows_sort(struct event_table_rows *t, int by_sum);
/* How many rows to print: the report's --limit (0 = all). */
HIDDEN size_t event_table_limit(const struct event_table *e, size_t rows);

#endif
