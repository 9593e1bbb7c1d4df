/*
 * live: see live.h.  The handles to give back travel from the loop to the
 * callbacks through a ring with one producer (the loop) and any number of
 * consumers (allocating threads, which claim a slot by compare-and-swap on
 * the 64-bit tail: a slot is overwritten only after the tail passed it, so
 * a consumer that lost the race never uses a stale value).
 *
 * Everything here needs ICorProfilerInfo13 (weak handles): alloc.c turns
 * live off on an older runtime before any of it runs.
 */
#include "agent/sources/live.h"

#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include "agent/agent.h"
#include "common/clock.h"
#include "common/mem.h"

#define GIVE_BACK_SLOTS 65536u /* power of two */
#define GIVE_BACK_PER_CALL 4

static ObjectHandleID give_back[GIVE_BACK_SLOTS];
static _Atomic uint64_t give_head; /* the loop */
static _Atomic uint64_t give_tail; /* the callbacks */

static uint32_t max_held;
static _Atomic int64_t held;          /* handles made and not yet given back */
static _Atomic uint64_t tracked, untracked, refused;
static _Atomic uint64_t gcs;          /* collections finished */
static _Atomic uint64_t last_gc_end;  /* CLOCK_MONOTONIC ns */

/* The loop's table: every followed handle and its id. */
struct followed {
    ObjectHandleID handle;
    uint64_t id;
};
static struct followed *table;
static size_t table_count, table_cap;
/* dead handles the ring had no room for yet */
static ObjectHandleID *backlog;
static size_t backlog_count, backlog_cap;
static uint64_t next_id = 1;
static uint64_t scanned_gcs, last_scan_ns, handed_over_ns;
static uint32_t ev_collected, ev_scan;

int live_init(uint32_t max)
{
    max_held = max;
    atomic_store(&held, 0);
    atomic_store(&give_head, 0);
    atomic_store(&give_tail, 0);
    atomic_store(&tracked, 0);
    atomic_store(&untracked, 0);
    atomic_store(&refused, 0);
    atomic_store(&gcs, 0);
    atomic_store(&last_gc_end, 0);
    table_count = backlog_count = 0;
    next_id = 1;
    scanned_gcs = last_scan_ns = handed_over_ns = 0;
    return 0;
}

void live_start(struct agent *a)
{
    ev_collected = recorder_define_event(&a->out, FMT_EV_COLLECTED);
    ev_scan = recorder_define_event(&a->out, FMT_EV_LIVE_SCAN);
}

/* ---- the callbacks' side ------------------------------------------------------ */

static void give_back_some(ICorProfilerInfo15 *info)
{
    for (int i = 0; i < GIVE_BACK_PER_CALL; i++) {
        uint64_t tail = atomic_load_explicit(&give_tail, memory_order_acquire);
        if (tail >= atomic_load_explicit(&give_head, memory_order_acquire))
            return;
        ObjectHandleID h = give_back[tail & (GIVE_BACK_SLOTS - 1)];
        if (!atomic_compare_exchange_strong(&give_tail, &tail, tail + 1))
            continue; /* another thread took it */
        info->lpVtbl->DestroyHandle(info, h);
        atomic_fetch_sub_explicit(&held, 1, memory_order_relaxed);
    }
}

ObjectHandleID live_track(ICorProfilerInfo15 *info, ObjectID address)
{
    give_back_some(info);
    if (atomic_load_explicit(&held, memory_order_relaxed) >= (int64_t)max_held) {
        atomic_fetch_add_explicit(&untracked, 1, memory_order_relaxed);
        return NULL;
    }
    ObjectHandleID h = NULL;
    if (info->lpVtbl->CreateHandle(info, address, COR_PRF_HANDLE_TYPE_WEAK, &h) < 0 || !h) {
        atomic_fetch_add_explicit(&refused, 1, memory_order_relaxed);
        return NULL;
    }
    atomic_fetch_add_explicit(&held, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&tracked, 1, memory_order_relaxed);
    return h;
}

void live_untrack(ICorProfilerInfo15 *info, ObjectHandleID handle)
{
    info->lpVtbl->DestroyHandle(info, handle);
    atomic_fetch_sub_explicit(&held, 1, memory_order_relaxed);
    atomic_fetch_sub_explicit(&tracked, 1, memory_order_relaxed);
}

void live_gc_finished(void)
{
    atomic_store_explicit(&last_gc_end, clock_now_ns(), memory_order_relaxed);
    atomic_fetch_add_explicit(&gcs, 1, memory_order_release);
}

/* ---- the loop's side ------------------------------------------------------------ */

void live_seen(uint64_t taken_ns)
{
    if (taken_ns > handed_over_ns)
        handed_over_ns = taken_ns;
}

uint64_t live_add(ObjectHandleID handle, uint64_t taken_ns)
{
    live_seen(taken_ns);
    struct followed *grown = mem_grow(table, &table_cap, table_count + 1, sizeof *table);
    if (!grown) {
        /* cannot follow it: give the handle back */
        ObjectHandleID *b = mem_grow(backlog, &backlog_cap, backlog_count + 1, sizeof *backlog);
        if (b) {
            backlog = b;
            backlog[backlog_count++] = handle;
        }
        return 0;
    }
    table = grown;
    table[table_count].handle = handle;
    table[table_count].id = next_id;
    table_count++;
    return next_id++;
}

/* Hands dead handles to the callbacks, as far as the ring has room. */
static void flush_backlog(void)
{
    uint64_t head = atomic_load_explicit(&give_head, memory_order_relaxed);
    uint64_t tail = atomic_load_explicit(&give_tail, memory_order_acquire);
    size_t n = 0;
    while (n < backlog_count && head - tail < GIVE_BACK_SLOTS) {
        give_back[head & (GIVE_BACK_SLOTS - 1)] = backlog[n++];
        head++;
    }
    atomic_store_explicit(&give_head, head, memory_order_release);
    memmove(backlog, backlog + n, (backlog_count - n) * sizeof *backlog);
    backlog_count -= n;
}

/* Records go out in time order (their times are deltas): the looks' take
 * the time of the last allocation handed over, which every later one
 * follows. */
static void scan(struct agent *a, uint64_t now, uint64_t gc_count)
{
    (void)now;
    uint64_t at = handed_over_ns;
    uint64_t as_of = atomic_load_explicit(&last_gc_end, memory_order_relaxed);
    uint64_t by = recorder_since_start(&a->out, as_of);
    size_t kept = 0;
    for (size_t i = 0; i < table_count; i++) {
        ObjectID object = 0;
        HRESULT hr = a->info->lpVtbl->GetObjectIDFromHandle(a->info, table[i].handle, &object);
        if (hr >= 0 && object) {
            table[kept++] = table[i];
            continue;
        }
        uint64_t values[FMT_COLLECTED_VALUE_COUNT] = {[FMT_COLLECTED_OBJECTS] = 1};
        uint64_t fields[FMT_COLLECTED_FIELD_COUNT] = {[FMT_COLLECTED_OBJECT] = table[i].id,
                                                      [FMT_COLLECTED_BY] = by};
        recorder_record(&a->out, ev_collected, 0, at, 0, values, FMT_COLLECTED_VALUE_COUNT,
                        fields, FMT_COLLECTED_FIELD_COUNT);
        ObjectHandleID *b = mem_grow(backlog, &backlog_cap, backlog_count + 1, sizeof *backlog);
        if (b) {
            backlog = b;
            backlog[backlog_count++] = table[i].handle;
        } /* else: the handle stays with the runtime until it ends */
    }
    table_count = kept;
    flush_backlog();
    uint64_t values[FMT_LIVE_SCAN_VALUE_COUNT] = {[FMT_LIVE_SCAN_FOLLOWED] = table_count};
    uint64_t fields[FMT_LIVE_SCAN_FIELD_COUNT] = {
        [FMT_LIVE_SCAN_AS_OF] = by,
        [FMT_LIVE_SCAN_ALLOCATED_BEFORE] = recorder_since_start(&a->out, handed_over_ns),
        [FMT_LIVE_SCAN_COLLECTIONS] = gc_count};
    recorder_record(&a->out, ev_scan, 0, at, 0, values, FMT_LIVE_SCAN_VALUE_COUNT, fields,
                    FMT_LIVE_SCAN_FIELD_COUNT);
    scanned_gcs = gc_count;
    last_scan_ns = now;
}

void live_cycle(struct agent *a, uint64_t now, int final)
{
    uint64_t gc_count = atomic_load_explicit(&gcs, memory_order_acquire);
    if (backlog_count)
        flush_backlog();
    if (gc_count == scanned_gcs && !final)
        return;
    if (!final && now - last_scan_ns < LIVE_SCAN_NS)
        return;
    scan(a, now, gc_count);
}

void live_finish(struct agent *a)
{
    recorder_count(&a->out, FMT_COUNTER_LIVE_TRACKED, atomic_load(&tracked));
    recorder_count(&a->out, FMT_COUNTER_LIVE_UNTRACKED, atomic_load(&untracked));
    recorder_count(&a->out, FMT_COUNTER_LIVE_HANDLE_FAILURES, atomic_load(&refused));
    mem_free(table);
    mem_free(backlog);
    table = NULL;
    backlog = NULL;
    table_count = table_cap = backlog_count = backlog_cap = 0;
}
