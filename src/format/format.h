/*
 * format: the constants of the corscope recording format (docs/format.md).
 *
 * A recording is a 32-byte self-checking header followed by chunks.  Each
 * chunk is a 16-byte header (tag, payload length, record count, CRC-32 of
 * the payload) and a payload of records made of varints and length-prefixed
 * strings.  Tables (strings, frames, stacks, threads) are append-only and
 * deduplicated by the writer; a record may only refer to ids defined by an
 * earlier record, so everything before the last whole chunk stays readable
 * when the process dies mid-write.  A final TRLR chunk marks a recording
 * that was closed properly.
 *
 * Two kinds of events: sampled events (cpu, wall: SMPL records, each a
 * stack weighed in periods of the event) and recorded events (allocations,
 * collections, exceptions, ...: EVTR records, whose values and fields an
 * EVDF record describes, so a reader can show an event it was not written
 * for).
 *
 * This header is shared by the writer (in the agent) and the reader (in the
 * CLI); the numbers and keys here are the file format and never change
 * meaning within a major version.
 */
#ifndef CORSCOPE_FORMAT_H
#define CORSCOPE_FORMAT_H

#include <stdint.h>

#define FMT_MAGIC "\x89" "CSC\r\n\x1a\n"
#define FMT_MAGIC_LEN 8
#define FMT_VERSION_MAJOR 2
#define FMT_VERSION_MINOR 0
#define FMT_BYTE_ORDER_MARK 0x01020304u
#define FMT_HEADER_SIZE 32
#define FMT_CHUNK_HEADER_SIZE 16
/* The reader refuses larger chunks: the writer never makes one above a few
 * hundred KiB, and a corrupt length must not become a huge allocation. */
#define FMT_MAX_CHUNK_PAYLOAD (16u << 20)
/* Deepest stack a recording may hold; deeper stacks are cut by the agent
 * and end in a [truncated] frame. */
#define FMT_MAX_STACK_DEPTH 65536
/* Most values and fields a recorded event may have. */
#define FMT_MAX_VALUES 4
#define FMT_MAX_FIELDS 16

#define FMT_TAG(a, b, c, d) \
    ((uint32_t)(a) | ((uint32_t)(b) << 8) | ((uint32_t)(c) << 16) | ((uint32_t)(d) << 24))

/* Chunk tags, in the order a writer flushes them (definitions before use). */
enum fmt_chunk {
    FMT_CHUNK_INFO,
    FMT_CHUNK_EVENTS,
    FMT_CHUNK_EVENT_DEFS,
    FMT_CHUNK_STRINGS,
    FMT_CHUNK_FRAMES,
    FMT_CHUNK_STACKS,
    FMT_CHUNK_THREADS,
    FMT_CHUNK_SAMPLES,
    FMT_CHUNK_RECORDS,
    FMT_CHUNK_STATS,
    FMT_CHUNK_COUNT /* the trailer is written separately, last */
};

#define FMT_TAG_INFO FMT_TAG('I', 'N', 'F', 'O')
#define FMT_TAG_EVENTS FMT_TAG('E', 'V', 'N', 'T')
#define FMT_TAG_EVENT_DEFS FMT_TAG('E', 'V', 'D', 'F')
#define FMT_TAG_STRINGS FMT_TAG('S', 'T', 'R', 'S')
#define FMT_TAG_FRAMES FMT_TAG('F', 'R', 'M', 'S')
#define FMT_TAG_STACKS FMT_TAG('S', 'T', 'K', 'S')
#define FMT_TAG_THREADS FMT_TAG('T', 'H', 'R', 'D')
#define FMT_TAG_SAMPLES FMT_TAG('S', 'M', 'P', 'L')
#define FMT_TAG_RECORDS FMT_TAG('E', 'V', 'T', 'R')
#define FMT_TAG_STATS FMT_TAG('S', 'T', 'A', 'T')
#define FMT_TAG_TRAILER FMT_TAG('T', 'R', 'L', 'R')

/* What a frame is; decides how a report names and colours it. */
enum fmt_frame_kind {
    FMT_FRAME_MANAGED = 1,   /* type + method (+ generic arity) from metadata */
    FMT_FRAME_NATIVE = 2,    /* module + symbol, or module + offset */
    FMT_FRAME_RUNTIME = 3,   /* native code of the runtime itself (coreclr, clrjit) */
    FMT_FRAME_SYNTHETIC = 4, /* [unknown], [truncated], [native] ... */
    FMT_FRAME_LABEL = 5,     /* what the runtime was doing, or what an event was:
                              * [JIT] Type.Method, [GC gen2 induced],
                              * [alloc] System.Byte[], [throw] System.Exception */
    FMT_FRAME_KIND_MAX = 5
};

/* Well-known ids of sampled events (EVNT).  An EVNT record gives each its
 * name, unit and period; the value of a sample is weight * period in that
 * unit.  Recorded events (EVDF) take ids from FMT_EVENT_FIRST_RECORDED. */
enum fmt_event {
    FMT_EVENT_CPU = 1,
    FMT_EVENT_WALL = 2,
    FMT_EVENT_FIRST_RECORDED = 16,
};

/* Types of the fields of a recorded event (EVDF), each a varint in EVTR. */
enum fmt_field_type {
    FMT_FIELD_UINT = 1,     /* an unsigned number */
    FMT_FIELD_STRING = 2,   /* a string id (0 = none) */
    FMT_FIELD_FRAME = 3,    /* a frame id (0 = none) */
    FMT_FIELD_THREAD = 4,   /* a recording thread id (0 = none) */
    FMT_FIELD_STACK = 5,    /* a stack id (0 = none) */
    FMT_FIELD_TIME = 6,     /* ns since the start of the recording */
    FMT_FIELD_DURATION = 7, /* ns */
    FMT_FIELD_INT = 8,      /* a signed number, zigzag-encoded */
    FMT_FIELD_TYPE_MAX = 8
};

/* INFO keys the agent writes (docs/format.md says what each holds). */
#define FMT_INFO_AGENT_VERSION "agent_version"
#define FMT_INFO_PID "pid"
#define FMT_INFO_COMMAND "command"
#define FMT_INFO_EVENTS "events"
#define FMT_INFO_SAMPLER "sampler"
#define FMT_INFO_CPU_CLOCK "cpu_clock"
/* In a cpu_clock INFO: threads moved from the perf_event clock to POSIX
 * timers for their context switches ("posix-cpu-timer for 3 threads that
 * switched more than 10000 times a CPU-second ..."). */
#define FMT_CPU_CLOCK_SWITCHY "that switched more than"
#define FMT_INFO_INTERVAL_NS "interval_ns"
#define FMT_INFO_MAX_DEPTH "max_depth"
#define FMT_INFO_START_REALTIME_NS "start_realtime_ns"
/* CLOCK_MONOTONIC (ns) at that moment: a reader of the live stream (push)
 * tells how far the recording has got by the machine's clock */
#define FMT_INFO_START_MONOTONIC_NS "start_monotonic_ns"
#define FMT_INFO_RUNTIME "runtime"
#define FMT_INFO_ENDED_BY "ended_by"
#define FMT_INFO_MODE "mode" /* launched: the agent started with the program; attached */
#define FMT_INFO_LOCK_MIN_NS "lock_min_ns"
/* -e alloc, live, gc: how each was recorded, or why it could not be */
#define FMT_INFO_ALLOC "alloc"
#define FMT_INFO_LIVE "live"
#define FMT_INFO_GC "gc"
#define FMT_INFO_TRACE "trace"
#define FMT_INFO_TRACE_METHODS "trace_methods"
#define FMT_INFO_TRACE_CLOCK "trace_clock"
/* --async: "on (...)" with logical async stacks, else "off (why)" */
#define FMT_INFO_ASYNC "async"
#define FMT_INFO_TRACE_SCOPE "trace_scope" /* default scope: the assemblies traced */
#define FMT_INFO_TRACE_COST "trace_cost"   /* times: the hooks' own cost, key=value */
/* Native libraries whose unwind data the signal sampler's walker does not
 * wholly follow: one line per library, "path\tkey=N key=N ...", the keys
 * FMT_UNWIND_GAPS's and those below (docs/format.md). */
#define FMT_INFO_UNWIND_GAPS "unwind_gaps"
#define FMT_UNWIND_FUNCTIONS "functions"         /* FDEs in the library's .eh_frame */
#define FMT_UNWIND_WALKS_STOPPED "walks_stopped" /* walks that ended at one of its rules */
#define FMT_UNWIND_NO_EH_FRAME "no_eh_frame"     /* 1: no .eh_frame_hdr at all */
#define FMT_UNWIND_DEBUG_FRAME "debug_frame"     /* 1: its CFI is in .debug_frame only */
#define FMT_UNWIND_WALKS_THROUGH "walks_through" /* no_eh_frame: walks that went through it */

/* What the walker does not follow, counted per function (FDE) of a library:
 * X(NAME, "key", "what it is").  A row of such a function ends a walk. */
#define FMT_UNWIND_GAPS(X)                                                                     \
    X(CFA_EXPRESSION, "cfa_expression", "a frame address computed by a DWARF expression")      \
    X(CFA_REGISTER, "cfa_register", "a frame address based on a register other than RSP or RBP") \
    X(RBP_EXPRESSION, "rbp_expression", "RBP restored by a DWARF expression")                  \
    X(RBP_REGISTER, "rbp_register", "RBP saved in another register")                          \
    X(OFFSET_RANGE, "offset_range", "an offset beyond what a row holds")                     \
    X(SIGNAL_FRAME, "signal_frame", "a signal frame other than the C library's trampoline")   \
    X(AUGMENTATION, "augmentation", "a CIE augmentation that cannot be read (function skipped)") \
    X(MALFORMED, "malformed", "an entry that could not be parsed (function skipped)")

/* Counters (STAT records and the trailer): X(NAME, "key", "what it counts").
 * The agent counts them, the reader and the reports name them from here. */
#define FMT_COUNTERS(X)                                                                        \
    X(SAMPLES, "samples", "samples written")                                                   \
    X(DROPPED, "dropped_samples", "samples dropped (a buffer was full)")                       \
    X(FAILED_WALKS, "failed_walks", "stack walks that stopped early (shown as [unknown])")     \
    X(TRUNCATED, "truncated_stacks", "stacks cut at the depth limit (shown as [truncated])")   \
    X(UNRESOLVED, "unresolved_frames", "frames without a name (shown as [unknown])")           \
    X(SKIPPED_TICKS, "skipped_ticks", "sampling ticks skipped (runtime busy suspending)")      \
    X(STARTUP_TICKS, "startup_ticks", "ticks before the runtime could be suspended")           \
    X(TICKS, "ticks", "sampling ticks taken")                                                  \
    X(SUSPEND_NS, "suspended_ns", "time the runtime was held suspended by the sampler, ns")   \
    X(MAX_SUSPEND_NS, "max_suspended_ns", "longest suspension by the sampler, ns")             \
    X(STACK_RESETS, "stack_table_resets", "times the stack table was forgotten (memory)")      \
    X(WRITE_ERRORS, "write_errors", "write errors (the recording stopped early)")              \
    X(UNSAMPLED_THREADS, "unsampled_threads", "threads that could not be sampled")             \
    X(ORPHAN_SIGNALS, "orphan_signals", "sampler signals on threads not tracked")              \
    X(NO_SYMBOL, "native_frames_without_symbol", "native frames shown as library!+offset")     \
    X(SAMPLER_CPU_NS, "sampler_cpu_ns", "CPU time of the agent's own thread, ns")              \
    X(GUESSED_WALKS, "guessed_walks", "walks that crossed code with no unwind data by RBP")   \
    X(HIJACKED_RETURNS, "hijacked_returns", "return addresses hijacked by the runtime, put right") \
    X(DROPPED_EVENTS, "dropped_events", "events dropped (a buffer was full)")                  \
    X(EVENTS, "events", "events recorded")                                                     \
    X(STALE_TICKS, "stale_ticks", "samples dropped because code was unloaded meanwhile")     \
    X(ATTACH_METHODS, "methods_listed_at_attach", "methods compiled before an attach, listed") \
    X(ATTACH_THREADS, "threads_listed_at_attach", "managed threads running at an attach") \
    X(ALLOC_SAMPLES, "alloc_samples", "allocation samples the runtime reported")              \
    X(ALLOC_THINNED, "alloc_thinned", "allocation samples left out for --alloc-interval")     \
    X(ALLOC_CALLBACK_NS, "alloc_callback_ns", "time the allocating threads spent in corscope's allocation callbacks, ns") \
    X(ALLOC_CALLBACKS_TIMED, "alloc_callbacks_timed", "allocation callbacks in alloc_callback_ns (those not interrupted)") \
    X(LIVE_TRACKED, "live_tracked", "sampled allocations followed for -e live")               \
    X(LIVE_UNTRACKED, "live_untracked", "sampled allocations not followed (--live-max reached)") \
    X(LIVE_HANDLE_FAILURES, "live_handle_failures", "sampled allocations the runtime gave no handle for") \
    X(GC_UNMATCHED, "gc_unmatched", "collection events without their start or end")          \
    X(UNTRACKED_CALLS, "untracked_calls", "traced calls kept in no call path (memory or depth)") \
    X(UNTRACED_THREADS, "untraced_threads", "threads whose calls could not be traced (memory)") \
    X(OPEN_AT_END, "calls_open_at_end", "traced calls still running when their thread or the recording ended") \
    X(ABANDONED_FRAMES, "calls_without_return", "traced calls that ended without a return hook (closed by one further up)") \
    X(UNMATCHED_LEAVES, "unmatched_returns", "return hooks that matched no traced call") \
    X(STRING_RESETS, "string_table_resets", "times the string table was forgotten (memory)")  \
    X(MAX_AGENT_HEAP, "max_agent_heap_bytes", "most heap memory the agent held at a flush")   \
    X(END_AGENT_HEAP, "end_agent_heap_bytes", "heap memory the agent held at the end, its queues drained") \
    X(INIT_NS, "agent_init_ns", "time the agent's Initialize held the program's start, ns")    \
    X(UNWIND_PARSE_NS, "unwind_tables_ns", "CPU time spent parsing native unwind tables, ns") \
    X(SHUTDOWN_NS, "shutdown_ns", "time the agent's Shutdown held the program's exit before the recording's close, ns") \
    X(METADATA_OPENS, "metadata_opens", "modules' metadata opened through the runtime (each slows the runtime's own use of it)") \
    X(MAPS_READS, "maps_reads", "whole readings of /proc/self/maps (a few hundred microseconds of CPU each)") \
    X(SAMPLING_START_NS, "sampling_start_ns", "time from the agent's Initialize until the sampler's first threads were armed, ns (nothing was sampled before)") \
    X(ASYNC_REWRITE_NS, "async_rewrite_ns", "CPU time of the agent's thread for the async rewrite (the bodies made, the recompilation asked for), ns") \
    X(ASYNC_TOO_DEEP, "async_too_deep", "resumptions nested deeper than the agent keeps (their samples have no async chain)") \
    X(LOOP_WAKEUPS, "loop_wakeups", "times the program's threads woke the agent's thread early (a system call each)") \
    X(CPU_WHILE_SAMPLED_NS, "cpu_while_sampled_ns", "CPU time of the process's threads, the agent's own left out, from the cpu sampler's start to its stop, ns: what the cpu samples' weights stand for") \
    X(HANDLER_NS, "handler_ns", "time the program's threads spent in the signal sampler's handler (its walks), ns") \
    X(AGENT_CODE_SAMPLES, "agent_code_samples", "cpu samples taken in the agent's own code on the program's threads (its callbacks and hooks, and the runtime's work they asked for)") \
    X(AGENT_CODE_NS, "agent_code_ns", "the weight of those samples, ns: the CPU the agent's callbacks and hooks cost the program's threads, as the samples estimate it") \
    X(CONTEXT_SWITCHES, "context_switches", "context switches of the program's threads while recorded, voluntary and involuntary (the agent's own thread left out)") \
    X(EXCEPTIONS_THROWN, "exceptions_thrown", "exceptions the program threw while recorded (the runtime's ExceptionThrown callbacks; absent when they were off: on .NET 10 a recording takes them only for -e exceptions)") \
    X(MULTICORE_JIT_OFF, "multicore_jit_off", "1 when the program asked for multicore JIT (ProfileOptimization.SetProfileRoot), which the runtime does not start while a profiler follows compilations") \
    X(RECORDED_NS, "recorded_ns", "time from the recording's start to its last flush (its close, for a complete one), ns") \
    X(WALL_SIGNALS, "wall_signals", "wall mode: signals sent to take a thread's stack (a thread that has not run since its last sample is recorded again without one)")

enum fmt_counter {
#define FMT_COUNTER_ENUM(name, key, words) FMT_COUNTER_##name,
    FMT_COUNTERS(FMT_COUNTER_ENUM)
#undef FMT_COUNTER_ENUM
    FMT_COUNTER_COUNT
};

#endif
