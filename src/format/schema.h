/*
 * schema: every recorded event of the format, declared once (docs/events.md,
 * "Adding an event").
 *
 * A recorded event is an EVDF definition (a name, its values with their
 * units, its fields with their types) and EVTR records that carry those
 * values and fields in that order (docs/format.md).  The file describes
 * each event by name, so a reader shows an event it was not written for;
 * this header is what the agent and the CLI agree on about the events they
 * both know:
 *
 *   FMT_EVENTS(X)        X(NAME, "name", "what one record is")
 *   FMT_<NAME>_VALUES(V) V(NAME_MEMBER, "name", "unit", "what it holds")
 *   FMT_<NAME>_FIELDS(F) F(NAME_MEMBER, "name", TYPE, "what it holds")
 *
 * with TYPE one of enum fmt_field_type's names (UINT, STRING, FRAME,
 * THREAD, STACK, TIME, DURATION, INT).  From them come enum fmt_ev
 * (FMT_EV_NAME), an enum per event of its values and one of its fields
 * (FMT_NAME_MEMBER: its position in the definition the agent writes, and
 * FMT_NAME_VALUE_COUNT, FMT_NAME_FIELD_COUNT), the tables of schema.c, and
 * the tables of docs/events.md (tests/unit/test_schema.c compares them).
 *
 * The agent defines an event with schema_event_def() (all of it, in this
 * order); the reader resolves the schema against each recording's EVDF
 * records by name once, when it loads it (rec_event_of, rec_field_of in
 * recording.h), so the CLI opens events and fields by these enums and an
 * older recording that lacks a field reads it as absent.  Names and types
 * on the wire never change meaning: a field that must mean something else
 * gets a new name.
 */
#ifndef CORSCOPE_SCHEMA_H
#define CORSCOPE_SCHEMA_H

#include <stdint.h>

#include "common/visibility.h"
#include "format/format.h"

/* The events, in no particular order (the enum is not on the wire). */
#define FMT_EVENTS(X)                                                                          \
    X(EXCEPTIONS, "exceptions", "one per throw, at the time of the throw, on its thread, with "  \
      "the throwing stack ending in a `[throw] Type` label (`-e exceptions`)")                 \
    X(LOCK, "lock", "one per wait at least `--lock-min` long, at its end, on the waiting "      \
      "thread, with the waiting stack; about once a second, one without a stack for the "      \
      "shorter waits (`-e lock`)")                                                             \
    X(JIT, "jit", "one per compile, at its end, on the compiling thread, with the stack that "  \
      "needed it ending in a `[JIT tier1] Type.Method` label (`-e jit`)")                      \
    X(LOADS, "loads", "one per assembly or module load, at its end (`-e jit`)")                 \
    X(JIT_COUNTS, "jit_counts", "now and then: what was counted, not recorded one by one, "     \
      "since the last one (`-e jit`)")                                                         \
    X(THREAD, "thread", "a moment of a thread's life: started, named, ended, running at the "   \
      "end (always recorded)")                                                                 \
    X(ALLOC, "alloc", "one per sampled allocation, on the allocating thread, with its stack "   \
      "from the first managed frame ending in an `[alloc] Type` label (`-e alloc`)")           \
    X(COLLECTED, "collected", "one per followed object found gone (`-e live`)")                 \
    X(LIVE_SCAN, "live-scan", "one per look at the followed objects, after collections "        \
      "(`-e live`)")                                                                           \
    X(GC, "gc", "one per collection, at its end (`-e gc`)")                                      \
    X(GC_PAUSE, "gc-pause", "one per suspension of the runtime, at its end (`-e gc`)")           \
    X(CALLS, "calls", "one per call path and flush: its calls and times since its previous "    \
      "record, the path as its stack (`record --trace`; with `--trace=counts` the value "      \
      "`calls` alone)")                                                                        \
    X(LIVE, "live", "not recorded: made by the reports from `alloc`, `live-scan` and "          \
      "`collected` (src/cli/live.h), the sampled allocations alive at a look")

#define FMT_EXCEPTIONS_VALUES(V)                                                               \
    V(EXCEPTIONS_EXCEPTIONS, "exceptions", "count", "1 (stack formats count throws)")
#define FMT_EXCEPTIONS_FIELDS(F)                                                               \
    F(EXCEPTIONS_TYPE, "type", STRING, "the runtime's name of the class "                      \
      "(`System.Collections.Generic.KeyNotFoundException`)")                                  \
    F(EXCEPTIONS_RETHROW, "rethrow", UINT, "1 for a rethrow")                                  \
    F(EXCEPTIONS_OUTCOME, "outcome", UINT, "0 unknown, 1 caught, 2 unhandled, 3 swallowed by "  \
      "a filter, 4 replaced, 5 caught by the runtime")                                         \
    F(EXCEPTIONS_CATCH, "catch", FRAME, "the catching method (caught only)")                   \
    F(EXCEPTIONS_BY_FILTER, "by_filter", UINT, "1 when a `when` filter chose the catch clause") \
    F(EXCEPTIONS_FILTERS, "filters", UINT, "filters pass 1 ran for it")                        \
    F(EXCEPTIONS_MESSAGE_LENGTH, "message_length", INT, "the message's length in UTF-16 "      \
      "units, -1 unknown")

#define FMT_LOCK_VALUES(V)                                                                     \
    V(LOCK_WAIT, "wait", "ns", "the wait's duration")                                          \
    V(LOCK_WAITS, "waits", "count", "1 (or the count of a `below_min` record)")
#define FMT_LOCK_FIELDS(F)                                                                     \
    F(LOCK_OWNER, "owner", THREAD, "the thread that held the lock (the runtime says it from "  \
      ".NET 8 on)")                                                                            \
    F(LOCK_LOCK, "lock", UINT, "the runtime's LockID (a Monitor's AwareLock address; a small "  \
      "number for Lock)")                                                                      \
    F(LOCK_NATIVE, "native", UINT, "the runtime's flags: 1 for a native lock")                 \
    F(LOCK_BELOW_MIN, "below_min", UINT, "1: the totals of shorter waits")

#define FMT_JIT_VALUES(V)                                                                      \
    V(JIT_COMPILE, "compile", "ns", "the compile's duration")                                  \
    V(JIT_COMPILES, "compiles", "count", "1")
#define FMT_JIT_FIELDS(F)                                                                      \
    F(JIT_METHOD, "method", FRAME, "the method compiled")                                      \
    F(JIT_TIER, "tier", UINT, "the MethodFlags tier + 1: 0 unknown, 2 minopts, 3 optimized, "   \
      "4 tier0, 5 tier1, 6 OSR, 7 tier0 instrumented, 8 tier1 instrumented")                  \
    F(JIT_DYNAMIC, "dynamic", UINT, "1 for a dynamic method")                                  \
    F(JIT_FAILED, "failed", UINT, "1 when the compile failed")                                 \
    F(JIT_HAD_R2R, "had_r2r", UINT, "1 when it replaced ReadyToRun code (a hot method tiered "  \
      "up)")

#define FMT_LOADS_VALUES(V) V(LOADS_LOAD, "load", "ns", "the load's duration")
#define FMT_LOADS_FIELDS(F)                                                                    \
    F(LOADS_KIND, "kind", UINT, "1 assembly, 2 module")                                        \
    F(LOADS_NAME, "name", STRING, "the assembly's name or the module's path")                 \
    F(LOADS_STATUS, "status", UINT, "the runtime's HRESULT (0 loaded)")

#define FMT_JIT_COUNTS_VALUES(V)                                                               \
    V(JIT_COUNTS_CLASSES, "classes", "count", "classes loaded")                                \
    V(JIT_COUNTS_R2R_METHODS, "r2r_methods", "count", "methods whose ReadyToRun code was used")
#define FMT_JIT_COUNTS_FIELDS(F)

#define FMT_THREAD_VALUES(V) V(THREAD_CPU, "cpu", "ns", "the thread's CPU time so far")
#define FMT_THREAD_FIELDS(F)                                                                   \
    F(THREAD_WHAT, "what", UINT, "1 started, 2 named, 3 ended, 4 running at the end")          \
    F(THREAD_NAME, "name", STRING, "the name (named: it also renames the thread, `THRD`)")
/* thread's `what` */
enum fmt_thread_what {
    FMT_WHAT_START = 1,
    FMT_WHAT_NAME = 2,
    FMT_WHAT_END = 3,
    FMT_WHAT_RUNNING = 4 /* running at the end */
};

#define FMT_ALLOC_VALUES(V)                                                                    \
    V(ALLOC_SPACE, "alloc_space", "bytes", "the bytes the sample stands for")                  \
    V(ALLOC_OBJECTS, "alloc_objects", "objects", "the objects the sample stands for")
#define FMT_ALLOC_FIELDS(F)                                                                    \
    F(ALLOC_TYPE, "type", STRING, "the type's name")                                           \
    F(ALLOC_SIZE, "size", UINT, "the object's bytes")                                          \
    F(ALLOC_HEAP, "heap", UINT, "0 small, 1 large, 2 pinned")                                  \
    F(ALLOC_OBJECT, "object", UINT, "the id `-e live` follows it by, 0 when not followed")

#define FMT_COLLECTED_VALUES(V) V(COLLECTED_OBJECTS, "objects", "objects", "1")
#define FMT_COLLECTED_FIELDS(F)                                                                \
    F(COLLECTED_OBJECT, "object", UINT, "the `alloc` record's `object`")                       \
    F(COLLECTED_BY, "by", TIME, "the end of the last collection before the look that found it " \
      "gone")

#define FMT_LIVE_SCAN_VALUES(V) V(LIVE_SCAN_FOLLOWED, "followed", "objects", "objects followed")
#define FMT_LIVE_SCAN_FIELDS(F)                                                                \
    F(LIVE_SCAN_AS_OF, "as_of", TIME, "the end of the last collection before the look")        \
    F(LIVE_SCAN_ALLOCATED_BEFORE, "allocated_before", TIME, "every allocation taken before "   \
      "this time had been handed over")                                                        \
    F(LIVE_SCAN_COLLECTIONS, "collections", UINT, "collections seen so far")

#define FMT_GC_VALUES(V) V(GC_DURATION, "duration", "ns", "GCStart to GCEnd")
#define FMT_GC_FIELDS(F)                                                                       \
    F(GC_NUMBER, "number", UINT, "the runtime's count of collections")                         \
    F(GC_GENERATION, "generation", UINT, "the generation collected")                           \
    F(GC_REASON, "reason", UINT, "the runtime's reason (docs/events.md, Collections)")         \
    F(GC_KIND, "kind", UINT, "0 blocking, 1 background, 2 foreground")                         \
    F(GC_COMPACTING, "compacting", UINT, "0, 1, 2 unknown")                                    \
    F(GC_START, "start", TIME, "GCStart")                                                      \
    F(GC_GEN0, "gen0", UINT, "bytes of generation 0 after it")                                 \
    F(GC_GEN1, "gen1", UINT, "bytes of generation 1 after it")                                 \
    F(GC_GEN2, "gen2", UINT, "bytes of generation 2 after it")                                 \
    F(GC_LOH, "loh", UINT, "bytes of the large object heap after it")                          \
    F(GC_POH, "poh", UINT, "bytes of the pinned object heap after it")                         \
    F(GC_PROMOTED, "promoted", UINT, "bytes promoted")                                         \
    F(GC_PINNED_OBJECTS, "pinned_objects", UINT, "pinned objects")

#define FMT_GC_PAUSE_VALUES(V)                                                                 \
    V(GC_PAUSE_PAUSE, "pause", "ns", "GCSuspendEEBegin to GCRestartEEEnd")
#define FMT_GC_PAUSE_FIELDS(F)                                                                 \
    F(GC_PAUSE_START, "start", TIME, "GCSuspendEEBegin")                                       \
    F(GC_PAUSE_REASON, "reason", UINT, "the suspension's reason (GCSuspendEEBegin)")           \
    F(GC_PAUSE_GC, "gc", UINT, "the `number` of the collection it belongs to, 0 none")

#define FMT_CALLS_VALUES(V)                                                                    \
    V(CALLS_SELF, "self", "ns", "time in the path's leaf method itself")                       \
    V(CALLS_CALLS, "calls", "count", "calls of the path")
#define FMT_CALLS_FIELDS(F)                                                                    \
    F(CALLS_INCLUSIVE, "inclusive", DURATION, "time in its calls, callees included")           \
    F(CALLS_MAX, "max", DURATION, "the longest call so far")

#define FMT_LIVE_VALUES(V)                                                                     \
    V(LIVE_INUSE_SPACE, "inuse_space", "bytes", "the bytes the live samples stand for")        \
    V(LIVE_INUSE_OBJECTS, "inuse_objects", "objects", "the objects they stand for")
#define FMT_LIVE_FIELDS(F)

/* ---- what the lists make ------------------------------------------------------------ */

enum fmt_ev {
#define FMT_EV_ENUM(NAME, name, doc) FMT_EV_##NAME,
    FMT_EVENTS(FMT_EV_ENUM)
#undef FMT_EV_ENUM
    FMT_EV_COUNT
};

/* Per event: enum { FMT_NAME_MEMBER..., FMT_NAME_VALUE_COUNT } and the same
 * of its fields; a value and a field of one event cannot share a name. */
#define FMT_MEMBER_ENUM(ID, ...) FMT_##ID,
#define FMT_EV_MEMBERS(NAME, name, doc)                                                        \
    enum { FMT_##NAME##_VALUES(FMT_MEMBER_ENUM) FMT_##NAME##_VALUE_COUNT };                    \
    enum { FMT_##NAME##_FIELDS(FMT_MEMBER_ENUM) FMT_##NAME##_FIELD_COUNT };                    \
    _Static_assert(FMT_##NAME##_VALUE_COUNT >= 1 && FMT_##NAME##_VALUE_COUNT <= FMT_MAX_VALUES, \
                   "event " name ": 1 to FMT_MAX_VALUES values");                              \
    _Static_assert(FMT_##NAME##_FIELD_COUNT <= FMT_MAX_FIELDS,                                 \
                   "event " name ": at most FMT_MAX_FIELDS fields");
FMT_EVENTS(FMT_EV_MEMBERS)
#undef FMT_EV_MEMBERS
#undef FMT_MEMBER_ENUM

/* A value or a field of an event. */
struct schema_member {
    const char *name;
    const char *unit; /* values */
    uint8_t type;     /* fields: enum fmt_field_type */
    const char *doc;
};

struct schema_event {
    const char *name;
    const char *doc;
    uint32_t value_count, field_count;
    const struct schema_member *values, *fields;
};

/* Indexed by enum fmt_ev. */
HIDDEN extern const struct schema_event schema_events[FMT_EV_COUNT];

/* The wire name of an event, and of a field's type ("uint", "string" ...). */
HIDDEN const char *schema_event_name(enum fmt_ev ev);
HIDDEN const char *schema_type_name(uint8_t type);

/* A counter's key in STAT records, and what it counts in words (format.h,
 * FMT_COUNTERS). */
HIDDEN const char *schema_counter_key(enum fmt_counter c);
HIDDEN const char *schema_counter_words(enum fmt_counter c);

struct writer_event_def;
/* The definition the agent writes for event `ev` (id 0: the recorder
 * gives it one): its values and fields, in the schema's order. */
HIDDEN void schema_event_def(struct writer_event_def *d, enum fmt_ev ev);
/* The same with only some of them, in the schema's order (bit k of
 * `values`: value k, FMT_NAME_MEMBER): an event recorded in a lesser form
 * (`calls` of --trace=counts has the value calls alone).  Its records carry
 * those values and fields, in that order. */
HIDDEN void schema_event_def_part(struct writer_event_def *d, enum fmt_ev ev, uint32_t values,
                                  uint32_t fields);

#endif
