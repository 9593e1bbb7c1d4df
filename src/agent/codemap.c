/*
 * codemap: see codemap.h.  The callbacks append to a FIFO under a mutex
 * held for the append only; the ranges live in the loop's index
 * (code_index.h) and, for the signal handler, in mcode.h's.
 */
#include "agent/codemap.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agent/code_index.h"
#include "agent/signal/loop_wake.h"
#include "agent/signal/mcode.h"
#include "agent/signal/arch.h"
#include "agent/signal/ranges.h"
#include "common/clock.h"
#include "common/map.h"
#include "common/mem.h"

/* What the callbacks may have queued for the loop, in bytes: a loop held
 * up (a disk that does not take data) must not make the program grow.
 * Past it, compiled methods are not queued (they are named later the way
 * ReadyToRun code is, or not at all when they could be unloaded: counted as
 * unresolved); unloads are always queued. */
#define QUEUE_BUDGET (8u << 20)
#define MAX_VERSIONS 16
#define MAX_PARTS 8
#define MAX_RANGES (MAX_VERSIONS * MAX_PARTS)
#define SHAPE_BYTES 128 /* of a method's code, enough for any prologue */

enum item_kind { ITEM_JITTED, ITEM_FORGET, ITEM_IMAGE };

/* One allocation each, its ranges, shapes and name in it: the callbacks
 * allocate it, the loop frees it, and each free of memory a program thread
 * allocated waits for that thread's malloc arena, which its runtime holds
 * often.  Under a compiling ExprLoop the agent's thread switched out 1,060
 * to 1,227 times a second, most of them waiting there, when an item was
 * three blocks (the queue's link, the item, its shapes); 412 to 427 since. */
struct item {
    struct item *next;        /* the queue's */
    size_t bytes;             /* the whole block's, for the queue's budget */
    enum item_kind kind;
    uint64_t time;            /* of an unload's announcement */
    FunctionID function;
    ModuleID module;
    struct method_desc *desc; /* named at JIT time (in the block), or NULL */
    struct frame_shape *shapes; /* per range (JIT'd code, in the block), or NULL */
    uint32_t count;
    struct code_range ranges[]; /* frame and function filled by the loop */
};

/* The frame shape of a range, decoded from its code in the JIT callback
 * (the code is certainly valid there) for the signal handler's walker. */
struct frame_shape {
    arch_shape shape;
    int known;
};

static ICorProfilerInfo15 *info;
static int info_version;
static struct recorder *io; /* held from writing while ids_lock is held */

static pthread_mutex_t queue_lock = PTHREAD_MUTEX_INITIALIZER;
static struct item *queue_head, **queue_tail = &queue_head;
static size_t queue_bytes;          /* under queue_lock */
static uint64_t items_applied; /* the loop's: what codemap_update took */
static _Atomic uint64_t queue_refused; /* methods not queued (budget) */
static _Atomic int stopped;            /* codemap_stop: queue nothing more */

static pthread_mutex_t ids_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic uint64_t last_unload_ns;
/* a collectible module's unload announced, its code not yet out of the
 * runtime's lists (codemap_unload_suspension): no id is asked about */
static _Atomic int unload_in_flight;
static _Atomic int unload_suspended; /* the runtime suspended for an unload */

static struct map64 permanent; /* FunctionID -> 1: its ids are never freed */
struct image {
    uintptr_t start, end;
};
_Static_assert(offsetof(struct image, start) == 0, "ranges.h searches by the first member");
static struct image *images; /* of modules never unloaded, sorted by start */
static size_t image_count, image_cap;

void codemap_init(ICorProfilerInfo15 *i, int version, struct recorder *out)
{
    info = i;
    info_version = version;
    io = out;
    atomic_store(&stopped, 0);
    /* a detach between an unload's announcement and its resume left these
     * set: a later attach hears of neither */
    atomic_store(&unload_in_flight, 0);
    atomic_store(&unload_suspended, 0);
    map64_init(&permanent);
    code_index_init();
}

int codemap_permanent(FunctionID function)
{
    uint32_t v;
    return map64_get(&permanent, function, &v);
}

/* ---- the callbacks' side --------------------------------------------------- */

#define ALIGNED(n) (((n) + 15) & ~(size_t)15)

/* An item (zeroed but for its name) with room for `ranges` ranges, their
 * shapes when `shapes`, and a name when `named`; NULL when memory ran out. */
static struct item *item_alloc(uint32_t ranges, int shapes, int named)
{
    size_t at_shapes = ALIGNED(sizeof(struct item) + ranges * sizeof(struct code_range));
    size_t at_desc = ALIGNED(at_shapes + (shapes ? ranges * sizeof(struct frame_shape) : 0));
    size_t bytes = at_desc + (named ? sizeof(struct method_desc) : 0);
    char *block = mem_alloc(bytes);
    if (!block)
        return NULL;
    memset(block, 0, at_desc); /* the name, if any, is written whole by names_describe */
    struct item *item = (struct item *)block;
    item->bytes = bytes;
    item->shapes = shapes && ranges ? (struct frame_shape *)(block + at_shapes) : NULL;
    item->desc = named ? (struct method_desc *)(block + at_desc) : NULL;
    return item;
}

static void enqueue(struct item *item)
{
    item->next = NULL;
    pthread_mutex_lock(&queue_lock);
    int refuse = item->kind == ITEM_JITTED && queue_bytes + item->bytes > QUEUE_BUDGET;
    if (!refuse) {
        *queue_tail = item;
        queue_tail = &item->next;
        queue_bytes += item->bytes;
    }
    pthread_mutex_unlock(&queue_lock);
    if (refuse) {
        atomic_fetch_add(&queue_refused, 1);
        mem_free(item);
        return;
    }
    loop_wake_if_quiet(LOOP_WAKE_WORK);
}

uint64_t codemap_refused(void)
{
    return atomic_load(&queue_refused);
}

uint64_t codemap_applied(void)
{
    return items_applied;
}

/* The runtime's parts of a code version (at most MAX_PARTS of the n it
 * counted), as ranges: empty parts left out, at most room of them, each
 * knowing where the method starts (its first part). */
static uint32_t parts_to_ranges(const COR_PRF_CODE_INFO *parts, ULONG32 n, struct code_range *out,
                                uint32_t room)
{
    if (n > MAX_PARTS)
        n = MAX_PARTS;
    uint32_t k = 0;
    for (ULONG32 i = 0; i < n && k < room; i++) {
        if (!parts[i].size)
            continue;
        out[k].start = parts[i].startAddress;
        out[k].end = parts[i].startAddress + parts[i].size;
        out[k].method_start = parts[0].startAddress;
        k++;
    }
    return k;
}

/* The parts of one code version, as the runtime reports them. */
static uint32_t version_parts(UINT_PTR code, struct code_range *out, uint32_t room)
{
    COR_PRF_CODE_INFO parts[MAX_PARTS];
    ULONG32 n = 0;
    if (info->lpVtbl->GetCodeInfo4(info, code, MAX_PARTS, &n, parts) < 0)
        return 0;
    return parts_to_ranges(parts, n, out, room);
}

/* Every range of every code version of a function (of its ReJIT version
 * `rejit`, 0 the original). */
static uint32_t function_ranges(FunctionID f, ReJITID rejit, struct code_range *out)
{
    if (info_version >= 9) {
        UINT_PTR starts[MAX_VERSIONS];
        ULONG32 n = 0;
        uint32_t k = 0;
        if (info->lpVtbl->GetNativeCodeStartAddresses(info, f, rejit, MAX_VERSIONS, &n, starts) >=
            0) {
            if (n > MAX_VERSIONS)
                n = MAX_VERSIONS;
            for (ULONG32 i = 0; i < n; i++)
                k += version_parts(starts[i], out + k, MAX_RANGES - k);
            return k;
        }
    }
    COR_PRF_CODE_INFO parts[MAX_PARTS];
    ULONG32 n = 0;
    if (info->lpVtbl->GetCodeInfo2(info, f, MAX_PARTS, &n, parts) < 0)
        return 0;
    return parts_to_ranges(parts, n, out, MAX_RANGES);
}

/* Modules that are never unloaded (not collectible), as the runtime said
 * at the compilation of one of their methods (a module whose load was
 * abandoned compiles nothing): an open-addressed set the
 * JIT callbacks share without a lock (slots go from 0 to a ModuleID, never
 * back).  Such a module's id is never freed, so it can never name another
 * module later, and the set holds for the process's life (across
 * attaches).  Asking the runtime for the module's flags at each compiled
 * method was a tenth to a fifth of what the JIT callback cost (a csc
 * compiles 10,000 methods). */
#define STAYING_SLOTS 512
#define STAYING_PROBES 16
static _Atomic uintptr_t staying[STAYING_SLOTS];

static size_t staying_slot(ModuleID m, size_t probe)
{
    uint64_t h = (uint64_t)m * 0x9E3779B97F4A7C15ull;
    return (size_t)((h >> 40) + probe) % STAYING_SLOTS;
}

static int module_stays(ModuleID m)
{
    for (size_t i = 0; m && i < STAYING_PROBES; i++) { /* 0 is an empty slot, no module */
        uintptr_t v = atomic_load_explicit(&staying[staying_slot(m, i)], memory_order_relaxed);
        if (v == (uintptr_t)m)
            return 1;
        if (!v)
            return 0;
    }
    return 0;
}

/* Remembers a module found not collectible; when its probes are all taken
 * it is simply asked about again next time. */
static void module_stays_add(ModuleID m)
{
    for (size_t i = 0; m && i < STAYING_PROBES; i++) {
        uintptr_t expected = 0;
        _Atomic uintptr_t *slot = &staying[staying_slot(m, i)];
        if (atomic_compare_exchange_strong_explicit(slot, &expected, (uintptr_t)m,
                                                    memory_order_relaxed, memory_order_relaxed) ||
            expected == (uintptr_t)m)
            return;
    }
}

/* Can this function's ids be freed while the program runs? */
static int unloadable(FunctionID f, int dynamic, ModuleID *module)
{
    *module = 0;
    if (dynamic)
        return 1;
    ClassID klass = 0;
    mdToken token = 0;
    if (info->lpVtbl->GetFunctionInfo2(info, f, 0, &klass, module, &token, 0, NULL, NULL) < 0)
        return 1; /* cannot tell: treat it as one that can go */
    if (module_stays(*module))
        return 0;
    DWORD flags = 0;
    LPCBYTE base = NULL;
    ULONG len = 0;
    AssemblyID assembly = 0;
    if (info->lpVtbl->GetModuleInfo2(info, *module, &base, 0, &len, NULL, &assembly, &flags) < 0)
        return 1;
    if (flags & COR_PRF_MODULE_COLLECTIBLE)
        return 1;
    module_stays_add(*module);
    return 0;
}

/* The prologue of each code version, read where it was just compiled; a
 * cold part gets its version's shape (it has no prologue of its own). */
static void decode_shapes(const struct code_range *ranges, uint32_t n, struct frame_shape *out)
{
    for (uint32_t i = 0; i < n; i++) {
        if (ranges[i].start != ranges[i].method_start)
            continue;
        size_t len = ranges[i].end - ranges[i].start;
        out[i].known = arch_shape_from_code((const uint8_t *)ranges[i].start,
                                             len < SHAPE_BYTES ? len : SHAPE_BYTES, &out[i].shape) == 0;
    }
    for (uint32_t i = 0; i < n; i++) {
        if (ranges[i].start == ranges[i].method_start)
            continue;
        for (uint32_t j = 0; j < n; j++)
            if (ranges[j].start == ranges[i].method_start)
                out[i] = out[j];
    }
}

static void to_entry(const struct code_range *r, const struct frame_shape *shape, int stays,
                     struct mcode_entry *e)
{
    memset(e, 0, sizeof *e);
    e->start = r->start;
    e->len = (uint32_t)(r->end - r->start);
    e->fn_start = r->start == r->method_start ? r->start : 0;
    e->permanent = (uint8_t)stays;
    if (shape) {
        e->known = (uint8_t)shape->known;
        e->shape = shape->shape;
    }
}

static void jitted(FunctionID f, ReJITID rejit, int dynamic)
{
    if (!info || !f || atomic_load(&stopped))
        return;
    struct code_range ranges[MAX_RANGES];
    uint32_t n = function_ranges(f, rejit, ranges);
    ModuleID module = 0;
    int collectible = unloadable(f, dynamic, &module);
    struct item *item = item_alloc(n, 1, collectible);
    if (!item)
        return; /* unnamed when it had to be: left to GetFunctionFromIP's rules */
    if (collectible && names_describe(info, info_version, f, item->desc) < 0) {
        mem_free(item);
        return;
    }
    item->kind = ITEM_JITTED;
    item->function = f;
    item->module = module;
    item->count = n;
    if (item->shapes) {
        decode_shapes(ranges, n, item->shapes);
        for (uint32_t i = 0; i < n; i++) {
            struct mcode_entry e;
            to_entry(&ranges[i], &item->shapes[i], !collectible, &e);
            mcode_fresh(&e);
        }
    }
    for (uint32_t i = 0; i < n; i++) {
        item->ranges[i] = ranges[i];
        item->ranges[i].function = f;
        item->ranges[i].module = module;
        item->ranges[i].frame = 0;
        item->ranges[i].permanent = !collectible;
    }
    enqueue(item);
}

void codemap_jitted(FunctionID f, int dynamic)
{
    jitted(f, 0, dynamic);
}

void codemap_rejitted(FunctionID f, ReJITID rejit)
{
    jitted(f, rejit, 0);
}

int codemap_module_loaded(ModuleID module)
{
    if (!info || !module || atomic_load(&stopped))
        return 0;
    LPCBYTE base = NULL;
    ULONG len = 0;
    AssemblyID assembly = 0;
    DWORD flags = 0;
    if (info->lpVtbl->GetModuleInfo2(info, module, &base, 0, &len, NULL, &assembly, &flags) < 0 ||
        (flags & (COR_PRF_MODULE_COLLECTIBLE | COR_PRF_MODULE_DYNAMIC)))
        return 0;
    if (!base)
        return 1;
    /* its size is read from its headers by the loop (mcode_add_image,
     * off the loading thread); a module that is not collectible is never
     * unloaded, so the headers are still its */
    struct item *item = item_alloc(1, 0, 0);
    if (!item)
        return 1;
    item->kind = ITEM_IMAGE;
    item->module = module;
    item->count = 1;
    item->ranges[0].start = (uintptr_t)base;
    item->ranges[0].end = 0; /* the loop's */
    enqueue(item);
    return 1;
}

int codemap_in_permanent_image(uintptr_t address)
{
    /* images do not overlap: only the last one starting at or below the
     * address can hold it */
    size_t after = ranges_upper_bound(images, image_count, sizeof *images, address);
    return after && address < images[after - 1].end;
}

static void add_image(uintptr_t start, uintptr_t end)
{
    struct image *grown = mem_grow(images, &image_cap, image_count + 1, sizeof *images);
    if (!grown)
        return;
    images = grown;
    size_t at = ranges_lower_bound(images, image_count, sizeof *images, start);
    memmove(images + at + 1, images + at, (image_count - at) * sizeof *images);
    images[at].start = start;
    images[at].end = end;
    image_count++;
}

void codemap_unloading(ModuleID module, FunctionID function)
{
    struct item *item = atomic_load(&stopped) ? NULL : item_alloc(0, 0, 0);
    pthread_mutex_lock(&ids_lock);
    uint64_t now = clock_now_ns();
    atomic_store(&last_unload_ns, now);
    if (module)
        atomic_store(&unload_in_flight, 1);
    pthread_mutex_unlock(&ids_lock);
    if (!item)
        return; /* the time above still keeps the loop from asking about it */
    item->time = now;
    item->kind = ITEM_FORGET;
    item->module = module;
    item->function = function;
    enqueue(item);
}

void codemap_unload_suspension(int begins)
{
    if (!begins && !atomic_load(&unload_suspended))
        return; /* a collection's resume */
    pthread_mutex_lock(&ids_lock);
    atomic_store(&unload_suspended, begins);
    atomic_store(&unload_in_flight, begins);
    atomic_store(&last_unload_ns, clock_now_ns());
    pthread_mutex_unlock(&ids_lock);
}

int codemap_ids_begin(uint64_t seen_ns)
{
    pthread_mutex_lock(&ids_lock);
    if (atomic_load(&last_unload_ns) >= seen_ns || atomic_load(&unload_in_flight)) {
        pthread_mutex_unlock(&ids_lock);
        return 0;
    }
    /* a frame named under the lock may fill the writer's buffers: it must
     * not write (a stalled disk would hold the lock, and the unload
     * callback waiting for it, for as long as the disk stalls) */
    if (io)
        recorder_hold(io);
    return 1;
}

void codemap_ids_end(void)
{
    if (io)
        recorder_release(io);
    pthread_mutex_unlock(&ids_lock);
}

int codemap_unloaded_since(uint64_t ns)
{
    return atomic_load(&last_unload_ns) >= ns || atomic_load(&unload_in_flight);
}

/* ---- the loop's side ------------------------------------------------------- */

/* The index's removal: each range leaves the handler's map too. */
static void range_gone(void *ctx, const struct code_range *r)
{
    struct names *names = ctx;
    mcode_remove(r->start);
    if (names)
        names_forget(names, r->function);
}

/* Drops the ranges of a DynamicMethod (function), or of every function of
 * a collectible module, handing each dropped function to names_forget. */
static void remove_ranges(struct names *names, ModuleID module, FunctionID function)
{
    code_index_remove(module, function, range_gone, names);
    if (names && function)
        names_forget(names, function); /* named lazily, with no range (stop-the-world) */
}

void codemap_remove(ModuleID module, FunctionID function)
{
    remove_ranges(NULL, module, function);
}

void codemap_add_function(FunctionID f)
{
    struct code_range ranges[MAX_RANGES];
    uint32_t n = function_ranges(f, 0, ranges);
    ModuleID module = 0;
    int stays = !unloadable(f, 0, &module);
    if (stays)
        map64_put(&permanent, f, 1);
    for (uint32_t i = 0; i < n; i++) {
        ranges[i].function = f;
        ranges[i].module = module;
        ranges[i].frame = 0;
        ranges[i].permanent = stays;
        code_index_insert(&ranges[i]);
    }
}

/* ---- catch-up after an attach ------------------------------------------------ */

#define CATCH_UP_BATCH 128
#define CATCH_UP_ATTEMPTS 3
#define CATCH_UP_WAIT_MS 200 /* for an unload under way, before each attempt */

/* One pass over the runtime's lists.  Every id comes from a list taken
 * after `since`, and is asked about only while no unload was announced
 * since then (codemap_ids_begin): ids of code unloaded meanwhile may be
 * freed.  A collectible module is torn down in part before its
 * ModuleUnloadStarted (a core of tests/stress/attach.sh alc: GetModuleInfo2
 * read a NULL inside a module whose context was unloading, 4.5 ms after
 * the last announcement), so no announcement covers it: the methods of a
 * module that was not listed as one that stays are not described here;
 * a sample in them is named through GetFunctionFromIP, as for code never
 * listed.  Returns 0, or -1 when an unload cut the pass short. */
static int catch_up_once(uint64_t since, struct map64 *seen)
{
    struct map64 stays; /* ModuleID -> 1: listed, never unloaded */
    map64_init(&stays);
    ICorProfilerModuleEnum *modules = NULL;
    if (info->lpVtbl->EnumModules(info, &modules) >= 0 && modules) {
        ModuleID ids[CATCH_UP_BATCH];
        ULONG got = 0;
        int cut = 0;
        while (!cut && modules->lpVtbl->Next(modules, CATCH_UP_BATCH, ids, &got) >= 0 && got) {
            for (ULONG i = 0; i < got && !cut; i++) {
                if (!codemap_ids_begin(since)) {
                    cut = 1;
                    break;
                }
                if (codemap_module_loaded(ids[i]))
                    map64_put(&stays, ids[i], 1);
                codemap_ids_end();
            }
        }
        modules->lpVtbl->Release(modules);
        if (cut) {
            map64_free(&stays);
            return -1;
        }
    }
    ICorProfilerFunctionEnum *functions = NULL;
    if (info->lpVtbl->EnumJITedFunctions2(info, &functions) < 0 || !functions) {
        map64_free(&stays);
        return 0;
    }
    COR_PRF_FUNCTION batch[CATCH_UP_BATCH];
    ULONG got = 0;
    int cut = 0;
    while (!cut && functions->lpVtbl->Next(functions, CATCH_UP_BATCH, batch, &got) >= 0 && got) {
        for (ULONG i = 0; i < got; i++) {
            FunctionID f = batch[i].functionId;
            uint32_t v;
            /* one entry per ReJIT version: codemap_jitted takes all */
            if (!f || map64_get(seen, f, &v))
                continue;
            if (!codemap_ids_begin(since)) {
                cut = 1;
                break;
            }
            BOOL dynamic = 0;
            if (info_version >= 8 && info->lpVtbl->IsFunctionDynamic(info, f, &dynamic) < 0)
                dynamic = 1; /* cannot tell: described now, never asked again */
            ClassID klass = 0;
            ModuleID module = 0;
            mdToken token = 0;
            /* a DynamicMethod's ids are freed only after its
             * DynamicMethodUnloaded, which waits for this lock */
            if (dynamic ||
                (info->lpVtbl->GetFunctionInfo2(info, f, 0, &klass, &module, &token, 0, NULL,
                                                NULL) >= 0 &&
                 map64_get(&stays, module, &v)))
                codemap_jitted(f, dynamic != 0);
            codemap_ids_end();
            map64_put(seen, f, 1);
        }
    }
    functions->lpVtbl->Release(functions);
    map64_free(&stays);
    return cut ? -1 : 0;
}

size_t codemap_catch_up(void)
{
    if (!info)
        return 0;
    struct map64 seen;
    map64_init(&seen);
    for (int attempt = 0; attempt < CATCH_UP_ATTEMPTS; attempt++) {
        /* an unload under way would refuse every question: let it end */
        for (int ms = 0; ms < CATCH_UP_WAIT_MS && atomic_load(&unload_in_flight); ms++)
            nanosleep(&(struct timespec){0, 1000000}, NULL);
        if (catch_up_once(clock_now_ns(), &seen) == 0)
            break;
    }
    size_t n = seen.count;
    map64_free(&seen);
    return n;
}

/* Everything queued so far, in order; the queue left empty. */
static struct item *take_queue(void)
{
    pthread_mutex_lock(&queue_lock);
    struct item *q = queue_head;
    queue_head = NULL;
    queue_tail = &queue_head;
    queue_bytes = 0;
    pthread_mutex_unlock(&queue_lock);
    return q;
}

uint64_t codemap_update(struct names *names, void (*before_forget)(void *ctx, uint64_t t),
                        void *ctx)
{
    /* before the queue is taken: whatever is queued after, was queued after
     * this time */
    uint64_t complete = clock_now_ns();
    struct item *item = take_queue();
    while (item) {
        items_applied++;
        if (item->kind == ITEM_FORGET) {
            /* what was taken before the unload is recorded first, while
             * the unloaded code's ranges and names are still here; nothing
             * taken since can be in that code */
            if (before_forget)
                before_forget(ctx, item->time);
            remove_ranges(names, item->module, item->function);
            if (names)
                names_forget_module(names, item->module);
        } else if (item->kind == ITEM_IMAGE) {
            size_t size = 0;
            mcode_add_image(item->ranges[0].start, &size);
            if (size)
                add_image(item->ranges[0].start, item->ranges[0].start + size);
        } else {
            uint32_t frame = item->desc && names ? names_add(names, item->function, item->desc) : 0;
            if (!item->desc)
                map64_put(&permanent, item->function, 1);
            for (uint32_t i = 0; i < item->count; i++) {
                const struct code_range *r = &item->ranges[i];
                item->ranges[i].frame = frame;
                code_index_insert(r);
                struct mcode_entry e;
                to_entry(r, item->shapes ? &item->shapes[i] : NULL, r->permanent, &e);
                mcode_add(&e);
            }
        }
        struct item *next = item->next;
        mem_free(item);
        item = next;
    }
    mcode_publish();
    return complete;
}

static void free_queue(void)
{
    struct item *item = take_queue();
    while (item) {
        struct item *next = item->next;
        mem_free(item);
        item = next;
    }
}

void codemap_stop(void)
{
    atomic_store(&stopped, 1);
    free_queue();
}

void codemap_shutdown(void)
{
    free_queue();
    mcode_shutdown();
    code_index_free();
    map64_free(&permanent);
    mem_free(images);
    images = NULL;
    image_count = image_cap = 0;
}
