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
 * Memory stays bounded: when the stack table outgrows its budget it is
 * forgotten and stacks are written again under new ids (the format allows
 * duplicates), counted in "stack_table_resets".
 */
#ifndef CORSCOPE_RECORDER_H
#define CORSCOPE_RECORDER_H

#include <stddef.h>
#include <stdint.h>

#include "common/config.h"
#include "common/map.h"
#include "common/strtab.h"
#include "common/visibility.h"
#include "format/writer.h"

#define RECORDER_FLUSH_NS 250000000ull

/* Loss and activity counters, written as STAT records. */
#define RECORDER_COUNTERS(X)                                                         \
    X(SAMPLES, "samples")                     /* samples written */                  \
    X(DROPPED, "dropped_samples")             /* lost: a buffer was full */          \
    X(FAILED_WALKS, "failed_walks")           /* walk failed; sample is [unknown] */ \
    X(TRUNCATED, "truncated_stacks")          /* cut at max depth: [truncated] */    \
    X(UNRESOLVED, "unresolved_frames")        /* frames without a name: [unknown] */ \
    X(SKIPPED_TICKS, "skipped_ticks")         /* runtime could not be suspended */   \
    X(STARTUP_TICKS, "startup_ticks")         /* runtime not yet initialised */      \
    X(TICKS, "ticks")                         /* sampling ticks taken */             \
    X(SUSPEND_NS, "suspended_ns")             /* total time the runtime was held */  \
    X(MAX_SUSPEND_NS, "max_suspended_ns")     /* longest single suspension */        \
    X(STACK_RESETS, "stack_table_resets")     /* stack table forgotten (memory) */   \
    X(WRITE_ERRORS, "write_errors")           /* recording stopped by an I/O error */ \
    X(UNSAMPLED_THREADS, "unsampled_threads") /* no timer/ring: thread not sampled */ \
    X(ORPHAN_SIGNALS, "orphan_signals")       /* sampler signals on unknown threads */ \
    X(NO_SYMBOL, "native_frames_without_symbol") /* shown as library!+offset */ \
    X(SAMPLER_CPU_NS, "sampler_cpu_ns")       /* CPU the sampler thread used */ \
    X(OSR_FRAMES, "osr_frames_merged")        /* OSR frames shown as one; caller may be missing */

enum recorder_counter {
#define ENUM(name, key) RECORDER_##name,
    RECORDER_COUNTERS(ENUM)
#undef ENUM
    RECORDER_COUNTER_COUNT
};

struct recorder {
    struct writer w;
    int fd;
    uint64_t file_size;
    uint64_t size_limit; /* RLIMIT_FSIZE, UINT64_MAX when unlimited */
    char path[4096];
    uint64_t start_ns;   /* CLOCK_MONOTONIC at open */
    uint64_t last_flush_ns;
    struct strtab strings;     /* text -> string id (as written) */
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
    uint64_t counters[RECORDER_COUNTER_COUNT];
    int failed_logged;
    int open;
};

/* Opens (creates, truncates, never through a symlink, mode 0600) the file
 * and writes the header, the INFO and EVNT records.  Returns 0, or -1 with
 * a reason in err. */
HIDDEN int recorder_open(struct recorder *r, const struct config *c, const char *path, char *err,
                         size_t err_size);
HIDDEN void recorder_info(struct recorder *r, const char *key, const char *value);
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
HIDDEN void recorder_count(struct recorder *r, enum recorder_counter c, uint64_t n);
HIDDEN void recorder_max(struct recorder *r, enum recorder_counter c, uint64_t v);
/* Flushes when RECORDER_FLUSH_NS passed since the last flush. */
HIDDEN void recorder_maybe_flush(struct recorder *r, uint64_t now_ns);
HIDDEN void recorder_flush(struct recorder *r);
/* Writes the trailer and closes the file.  Safe to call twice. */
HIDDEN void recorder_close(struct recorder *r);
HIDDEN uint64_t recorder_now_ns(void);

#endif
