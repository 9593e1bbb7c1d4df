/*
 * codemap: see codemap.h.  Ranges live in a sorted array plus a short
 * unsorted tail merged in when it grows; the JIT callbacks only append a
 * FunctionID to a queue under a mutex that is never held across a runtime
 * call (rule 3).  Everything but that queue is used under the agent's
 * ids_lock, by the sampler or by an unload callback.
 */
#include "agent/codemap.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "common/mem.h"

#define MAX_VERSIONS 16
#define MAX_PARTS 8

static ICorProfilerInfo15 *info;
static int info_version;

static pthread_mutex_t queue_lock = PTHREAD_MUTEX_INITIALIZER;
static FunctionID *queue, *draining;
static size_t queue_count, queue_cap, draining_cap;

static struct code_range *ranges; /* sorted by start */
static size_t count, cap;
static size_t sorted;             /* ranges[0..sorted) are sorted */

void codemap_note(FunctionID function)
{
    pthread_mutex_lock(&queue_lock);
    FunctionID *grown = mem_grow(queue, &queue_cap, queue_count + 1, sizeof *queue);
    if (grown) {
        queue = grown;
        queue[queue_count++] = function;
    }
    pthread_mutex_unlock(&queue_lock);
}

int codemap_init(ICorProfilerInfo15 *i, int version)
{
    info = i;
    info_version = version;
    return 0;
}

static int by_start(const void *a, const void *b)
{
    const struct code_range *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

static void add_range(uintptr_t start, uintptr_t end, uintptr_t method_start, FunctionID f)
{
    if (end <= start)
        return;
    struct code_range *grown = mem_grow(ranges, &cap, count + 1, sizeof *ranges);
    if (!grown)
        return;
    ranges = grown;
    struct code_range r = {start, end, method_start, f};
    ranges[count++] = r;
}

/* Adds the parts of one code version (hot, cold), as the runtime reported
 * n of them: the method starts where its first part does. */
static void add_parts(FunctionID f, const COR_PRF_CODE_INFO *parts, ULONG32 n)
{
    if (n > MAX_PARTS)
        n = MAX_PARTS;
    for (ULONG32 i = 0; i < n; i++)
        add_range(parts[i].startAddress, parts[i].startAddress + parts[i].size,
                  parts[0].startAddress, f);
}

/* Adds the ranges of one code version starting at `code`. */
static void add_version(FunctionID f, UINT_PTR code)
{
    COR_PRF_CODE_INFO parts[MAX_PARTS];
    ULONG32 n = 0;
    if (info->lpVtbl->GetCodeInfo4(info, code, MAX_PARTS, &n, parts) >= 0)
        add_parts(f, parts, n);
}

void codemap_add_function(FunctionID f)
{
    if (info_version >= 9) {
        UINT_PTR starts[MAX_VERSIONS];
        ULONG32 n = 0;
        if (info->lpVtbl->GetNativeCodeStartAddresses(info, f, 0, MAX_VERSIONS, &n, starts) >= 0) {
            if (n > MAX_VERSIONS)
                n = MAX_VERSIONS;
            for (ULONG32 i = 0; i < n; i++)
                add_version(f, starts[i]);
            return;
        }
    }
    COR_PRF_CODE_INFO parts[MAX_PARTS];
    ULONG32 n = 0;
    if (info->lpVtbl->GetCodeInfo2(info, f, MAX_PARTS, &n, parts) >= 0)
        add_parts(f, parts, n);
}

/* Sorts, and drops duplicates (a method queued twice). */
static void merge(void)
{
    if (sorted == count)
        return;
    qsort(ranges, count, sizeof *ranges, by_start);
    size_t kept = 0;
    for (size_t i = 0; i < count; i++) {
        if (kept && ranges[kept - 1].start == ranges[i].start) {
            ranges[kept - 1] = ranges[i]; /* the newest wins */
            continue;
        }
        ranges[kept++] = ranges[i];
    }
    count = sorted = kept;
}

void codemap_update(void)
{
    pthread_mutex_lock(&queue_lock);
    /* swap buffers so the runtime calls below run without the lock */
    FunctionID *batch = queue;
    size_t batch_count = queue_count, batch_cap = queue_cap;
    queue = draining;
    queue_cap = draining_cap;
    queue_count = 0;
    pthread_mutex_unlock(&queue_lock);
    for (size_t i = 0; i < batch_count; i++)
        codemap_add_function(batch[i]);
    draining = batch;
    draining_cap = batch_cap;
    merge();
}

void codemap_forget(FunctionID function)
{
    if (!function) {
        /* queued ids too: after a missed unload some may be gone (code of
         * live methods queued meanwhile is found by GetFunctionFromIP) */
        pthread_mutex_lock(&queue_lock);
        queue_count = 0;
        pthread_mutex_unlock(&queue_lock);
        count = sorted = 0;
        return;
    }
    size_t kept = 0, kept_sorted = 0;
    for (size_t i = 0; i < count; i++) {
        if (ranges[i].function == function)
            continue;
        if (i < sorted)
            kept_sorted++;
        ranges[kept++] = ranges[i];
    }
    count = kept;
    sorted = kept_sorted; /* removal keeps the sorted prefix sorted */
}

const struct code_range *codemap_find(uintptr_t address)
{
    merge();
    size_t a = 0, b = count;
    while (a < b) {
        size_t m = a + (b - a) / 2;
        if (address < ranges[m].start)
            b = m;
        else if (address >= ranges[m].end)
            a = m + 1;
        else
            return &ranges[m];
    }
    return NULL;
}

size_t codemap_size(void)
{
    return count;
}

void codemap_shutdown(void)
{
    pthread_mutex_lock(&queue_lock);
    mem_free(queue);
    mem_free(draining);
    queue = draining = NULL;
    queue_count = queue_cap = draining_cap = 0;
    pthread_mutex_unlock(&queue_lock);
    mem_free(ranges);
    ranges = NULL;
    count = cap = sorted = 0;
}
