/*
 * report: the output formats.  Each format is one writer over a loaded
 * profile (profile.h); this table is the only place that lists them, so a
 * new format is one new file and one new line.
 */
#ifndef CORSCOPE_REPORT_H
#define CORSCOPE_REPORT_H

#include <stdio.h>

#include "cli/profile.h"
#include "common/visibility.h"

struct report_options {
    double min_percent; /* tree: prune nodes below this share */
    long limit;         /* top: rows; 0 = all */
    const struct profile *base; /* flamegraph --diff: the baseline, else NULL */
    const struct prof_filter *filter; /* the filters, for the tables of recorded events */
    uint64_t from_ns, to_ns;    /* the time window (--from, --to; to 0 = open), for the
                                 * formats of recorded events (gc) */
    int by_count;               /* --weight: collapsed and the flame graph weigh by the
                                 * event's count (calls, objects, samples), not its value */
    int paths;                  /* calls --paths: the call paths, not the methods */
};

/* Writes the report to out.  Returns 0, or -1 after printing a
 * `corscope:` line (e.g. out of memory). */
typedef int (*report_writer)(const struct profile *p, const struct report_options *o, FILE *out);

struct report_format {
    const char *name;
    const char *extension; /* picked by `-o file.ext`; NULL = none */
    report_writer write;
    const char *description;
};

HIDDEN const struct report_format *report_find(const char *name);
HIDDEN const struct report_format *report_for_path(const char *path);
HIDDEN const struct report_format *report_formats(size_t *count);
/* Is this a table of recorded events (gc, exceptions ...) rather than a
 * drawing of stacks? */
HIDDEN int report_is_table(const struct report_format *fmt);

HIDDEN int report_collapsed(const struct profile *p, const struct report_options *o, FILE *out);
HIDDEN int report_top(const struct profile *p, const struct report_options *o, FILE *out);
HIDDEN int report_tree(const struct profile *p, const struct report_options *o, FILE *out);
HIDDEN int report_speedscope(const struct profile *p, const struct report_options *o, FILE *out);
HIDDEN int report_chrome(const struct profile *p, const struct report_options *o, FILE *out);
HIDDEN int report_pprof(const struct profile *p, const struct report_options *o, FILE *out);
HIDDEN int report_gc(const struct profile *p, const struct report_options *o, FILE *out);
HIDDEN int report_flamegraph(const struct profile *p, const struct report_options *o, FILE *out);
/* The tables of the runtime's events (out_exceptions.c, out_locks.c,
 * out_jit.c, out_threads.c). */
HIDDEN int report_exceptions(const struct profile *p, const struct report_options *o, FILE *out);
HIDDEN int report_locks(const struct profile *p, const struct report_options *o, FILE *out);
HIDDEN int report_jit(const struct profile *p, const struct report_options *o, FILE *out);
HIDDEN int report_threads(const struct profile *p, const struct report_options *o, FILE *out);
/* The Chrome trace's tracks of recorded events (out_chrome_events.c):
 * appends them to the traceEvents array (*first: nothing written yet). */
HIDDEN int chrome_runtime_events(const struct profile *p, FILE *out, int *first);
HIDDEN int report_calls(const struct profile *p, const struct report_options *o, FILE *out);
/* The pending async operations of the last snapshot (out_async.c). */
HIDDEN int report_async(const struct profile *p, const struct report_options *o, FILE *out);
/* `report -f calls --sort KEY`: sets the column the calls table is sorted
 * by (calls, inclusive, self, mean, max); 0, or -1 for an unknown one. */
HIDDEN int report_calls_sort(const char *key);

/* Writes the report of a recording file in one format to `output` (whole
 * or not at all), with default options.  Returns 0 or an exit status. */
HIDDEN int report_render(const char *const *recordings, size_t count,
                         const struct report_format *fmt, const char *output);
/* The same with --limit's rows (0: all); output NULL: standard output. */
HIDDEN int report_render_limit(const char *const *recordings, size_t count,
                               const struct report_format *fmt, const char *output, long limit);

/* Helpers the writers share (report_text.c). */
/* Formats a value in the profile's unit for people: "1.52 s", "320 ms",
 * "12.0 MiB", "1234". */
HIDDEN void report_format_value(const struct profile *p, uint64_t weight, char *out, size_t size);
/* "COMMAND (EVENT)" for titles. */
HIDDEN void report_title(const struct profile *p, char *out, size_t size);
/* One line describing what was lost (drops, failed walks ...), or "" when
 * nothing was. */
HIDDEN void report_losses(const struct profile *p, char *out, size_t size);
/* What the view's numbers are (how allocations were sampled, when the
 * live heap was taken), or "". */
HIDDEN void report_note(const struct profile *p, char *out, size_t size);
/* --weight NAME for the view: sets *by_count (0: the event's value, its
 * time or bytes; 1: its count, calls or objects or samples) and returns 0,
 * or -1 with what the event can be weighed by in why. */
HIDDEN int report_weight(const struct profile *p, const char *name, int *by_count, char *why,
                         size_t size);
/* A warning when the view's weights are biased (AllocationTick), or NULL. */
HIDDEN const char *report_biased(const struct profile *p);
/* What the runtime did differently because the profiler was there, in
 * words (one line), or NULL: multicore JIT asked for and not started
 * (src/agent/mcjit.h), so start-up compiles that would have run on the
 * runtime's background thread ran on the program's.  Every report, `record`
 * and `check` say it. */
HIDDEN const char *report_runtime_change(const struct recording *r);

#endif
