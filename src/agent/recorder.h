/*
 * recorder: the agent's side of the recording: the output file, the
 * deduplicating tables (strings, synthetic frames, stacks), the loss
 * counters, and the flush policy.
 *
 * One thread owns a recorder: the sampler thread while it runs, then the
 * Shutdown callback after that thread has been joined.  Nothing here
 * blocks on the runtime or on a lock.  Data reaches the file in whole
 * chunks at least every RECORDER_FLUSH_NS, so a process that dies loses at
 * most that much.  A write error (disk full, file size limit) stops the
 * recording, is logged once and counted; the program is never disturbed:
 * a RLIMIT_FSIZE limit is respected by refusing the write (EFBIG) rather
 * than letting SIGXFSZ kill the process.
 *
 * Memory stays bounded however long the program runs: when the stack
 * table or the string table outgrows its budget it is forgotten, and
 * stacks and strings are written again under new ids as they come (the
 * format allows duplicates), counted in "stack_table_resets" and
 * "string_table_resets".  Each flush records the most heap the agent has
 * held ("max_agent_heap_bytes", mem_live_bytes).
 */
#ifndef CORSCOPE_RECORDER_H
#define CORSCOPE_RECORDER_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "common/config.h"
#include "common/map.h"
#include "common/strtab.h"
#include "common/visibility.h"
#include "format/schema.h"
#include "format/writer.h"

#define RECORDER_FLUSH_NS 250000000ull

struct recorder {
    struct writer w;
    int fd;
    uint64_t file_size;
    uint64_t size_limit; /* RLIMIT_FSIZE, UINT64_MAX when unlimited */
    int pipe;            /* the output is a pipe or FIFO (a push uploader reads it) */
    char path[4096];
    uint64_t start_ns;   /* CLOCK_MONOTONIC at open */
    uint64_t last_flush_ns;
    struct strtab strings;     /* text -> index into string_id */
    uint32_t *string_id;       /* the written id of each interned string */
    size_t string_id_cap;
    size_t strings_bytes;      /* what the interned strings cost, roughly */
    size_t strings_budget;     /* ... before the table is forgotten */
    struct strtab synthetic;   /* name -> index into synthetic_frame */
    uint32_t *synthetic_frame; /* frame id of each synthetic name */
    size_t synthetic_cap;
    /* stacks: hash (+ probe) -> index into stack_off/stack_len */
    struct map64 stack_index;
    uint32_t *stack_pool; /* frame ids of every known stack, back to back */
    size_t pool_len, pool_cap;
    uint32_t *stack_off, *stack_len, *stack_id;
    size_t stacks, stacks_cap;
    size_t pool_budget; /* frame ids kept before the table is reset */
    uint64_t counters[FMT_COUNTER_COUNT];
    uint8_t uncounted[FMT_COUNTER_COUNT]; /* left out of the file: not counted, not 0 */
    uint32_t next_event;       /* ids of recorded events (EVDF) */
    int failed_logged;
    int open;
    _Atomic uint64_t write_since_ns; /* inside a write(2) since then (CLOCK_MONOTONIC), 0 when not */
};

/* Opens (creates, truncates, never through a symlink, mode 0600) the file
 * and writes the header and the INFO records.  Returns 0, or -1 with a
 * reason in err. */
HIDDEN int recorder_open(struct recorder *r, const struct config *c, const char *path, char *err,
                         size_t err_size);
/* The same on a file already open for writing (proctree_claim); takes
 * the fd over, closing it on failure. */
HIDDEN int recorder_open_fd(struct recorder *r, const struct config *c, int fd, const char *path,
                            char *err, size_t err_size);
/* The loop's thread, first thing: the recording's descriptor goes above
 * the numbers select() can use (fds.h).  Not in Initialize: the first
 * descriptor that high grows the process's descriptor table, and in a
 * threaded process the kernel then waits for an RCU grace period (5 to 22
 * ms measured here) on the thread that asked, which must not be the
 * program's main thread. */
HIDDEN void recorder_move_high(struct recorder *r);
HIDDEN void recorder_info(struct recorder *r, const char *key, const char *value);
/* A sampled event (SMPL: cpu, wall), FMT_EVENT_*. */
HIDDEN void recorder_sampled_event(struct recorder *r, uint32_t id, const char *name,
                                   const char *unit, uint64_t period);
/* A recorded event: fills in its id (from FMT_EVENT_FIRST_RECORDED) and
 * writes its definition.  Returns the id, 0 on failure. */
HIDDEN uint32_t recorder_define(struct recorder *r, struct writer_event_def *d);
/* The same for an event of the schema (format/schema.h), all of it. */
HIDDEN uint32_t recorder_define_event(struct recorder *r, enum fmt_ev ev);
/* One occurrence of a recorded event: values and fields as defined; time
 * CLOCK_MONOTONIC, thread and stack 0 for none. */
HIDDEN void recorder_record(struct recorder *r, uint32_t event, uint32_t thread, uint64_t now_ns,
                            uint32_t stack, const uint64_t *values, uint32_t value_count,
                            const uint64_t *fields, uint32_t field_count);
/* A label frame ("[JIT tier1] Type.Method", "[alloc] System.Byte[]"):
 * label, and what it is about: a string (may be NULL) and a frame (0). */
HIDDEN uint32_t recorder_label(struct recorder *r, const char *label, const char *subject,
                               uint32_t subject_frame);
/* Nanoseconds since the recording started, for a CLOCK_MONOTONIC time. */
HIDDEN uint64_t recorder_since_start(const struct recorder *r, uint64_t now_ns);
/* Id of a string, writing it the first time.  0 for "" or on failure. */
HIDDEN uint32_t recorder_string(struct recorder *r, const char *s, size_t len);
/* A new frame (the caller caches by its own key).  0 on failure. */
HIDDEN uint32_t recorder_frame(struct recorder *r, enum fmt_frame_kind kind, const char *module,
                               const char *type, const char *name, uint64_t extra);
/* The frame of a synthetic name such as "[unknown]", written once. */
HIDDEN uint32_t recorder_synthetic(struct recorder *r, const char *name);
/* Id of a stack (leaf first), written the first time it is seen. */
HIDDEN uint32_t recorder_stack(struct recorder *r, const uint32_t *frames, uint32_t depth);
HIDDEN void recorder_thread(struct recorder *r, uint32_t id, uint64_t os_tid, const char *name);
/* now_ns: CLOCK_MONOTONIC. */
HIDDEN void recorder_sample(struct recorder *r, uint32_t event, uint32_t thread, uint64_t now_ns,
                            uint32_t stack, uint64_t weight);
HIDDEN void recorder_count(struct recorder *r, enum fmt_counter c, uint64_t n);
HIDDEN void recorder_max(struct recorder *r, enum fmt_counter c, uint64_t v);
/* This recording could not count c: the file leaves it out (a reader
 * tells "not counted" from 0 by its absence). */
HIDDEN void recorder_uncounted(struct recorder *r, enum fmt_counter c);
/* Has the recording failed (a write error)?  Then nothing more is
 * written: sources should stop. */
HIDDEN int recorder_failed(const struct recorder *r);
/* Brackets a stretch in which the recorder must not write to its file (a
 * lock that a runtime callback may wait for is held): records are kept
 * in memory until the matching release; nests. */
HIDDEN void recorder_hold(struct recorder *r);
HIDDEN void recorder_release(struct recorder *r);
/* Flushes when RECORDER_FLUSH_NS passed since the last flush. */
HIDDEN void recorder_maybe_flush(struct recorder *r, uint64_t now_ns);
/* Records appended since the recording opened (the loop: did a cycle
 * record anything). */
static inline uint64_t recorder_records(const struct recorder *r)
{
    return r->w.records_made;
}
HIDDEN void recorder_flush(struct recorder *r);
/* Writes the trailer and closes the file.  Safe to call twice. */
HIDDEN void recorder_close(struct recorder *r);

/* This process's command line, its arguments joined by spaces (truncated
 * to size). */
HIDDEN void recorder_command_line(char *out, size_t size);

#endif
