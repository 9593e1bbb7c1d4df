/*
 * achain: see achain.h.
 */
#include "agent/signal/achain.h"

#include <errno.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#define TABLE_SIZE 16384u /* power of two */
#define PROBES 64u

static struct achain_type table[TABLE_SIZE];
static _Atomic int32_t coop_offset = -1;
static _Atomic uint64_t suspend_seq;
static _Atomic int suspended;
static _Atomic uint64_t discarded;
/* Whether an entry may be set: the table is half a megabyte that a
 * process without async types never touches, and clearing it would fault
 * in every page of it (a millisecond at each exit and module unload). */
static _Atomic int filled;

/* The slot: the address of the innermost running rewritten method's home
 * of its object, 0 when none (async/enter.c sets it). */
static __thread uintptr_t current __attribute__((tls_model("initial-exec")));

uintptr_t *achain_slot(void)
{
    return &current;
}

static uint32_t hash_mt(uintptr_t mt)
{
    uint64_t h = (uint64_t)(mt >> 3) * 0x9E3779B97F4A7C15ull;
    return (uint32_t)(h >> 32) & (TABLE_SIZE - 1);
}

int achain_init(void)
{
    return 0;
}

int achain_type_put(const struct achain_type *t)
{
    uintptr_t mt = atomic_load_explicit(&t->mt, memory_order_relaxed);
    if (!mt)
        return -1;
    uint32_t at = hash_mt(mt);
    for (uint32_t i = 0; i < PROBES; i++) {
        struct achain_type *e = &table[(at + i) & (TABLE_SIZE - 1)];
        uintptr_t have = atomic_load_explicit(&e->mt, memory_order_relaxed);
        if (have && have != mt)
            continue;
        atomic_store_explicit(&filled, 1, memory_order_relaxed);
        if (have == mt) /* taken out while rewritten: a reader sees it or nothing */
            atomic_store_explicit(&e->mt, 0, memory_order_release);
        e->kind = t->kind;
        e->path[0] = t->path[0];
        e->path[1] = t->path[1];
        e->alt[0] = t->alt[0];
        e->alt[1] = t->alt[1];
        atomic_store_explicit(&e->mt, mt, memory_order_release);
        return 0;
    }
    return -1;
}

void achain_types_clear(void)
{
    if (!atomic_exchange(&filled, 0))
        return;
    for (uint32_t i = 0; i < TABLE_SIZE; i++)
        if (atomic_load_explicit(&table[i].mt, memory_order_relaxed))
            atomic_store_explicit(&table[i].mt, 0, memory_order_release);
}

void achain_set_coop_offset(int32_t offset)
{
    atomic_store(&coop_offset, offset);
}

void achain_suspend_begin(void)
{
    atomic_store(&suspended, 1);
    atomic_fetch_add(&suspend_seq, 1);
}

void achain_suspend_end(void)
{
    atomic_fetch_add(&suspend_seq, 1);
    atomic_store(&suspended, 0);
}

uint64_t achain_discarded(void)
{
    return atomic_load(&discarded);
}

/* A lookup as the handler makes it: an entry whose MethodTable matches,
 * read after that match (the writer publishes the MethodTable last). */
static int lookup(uintptr_t mt, struct achain_type *out)
{
    uint32_t at = hash_mt(mt);
    for (uint32_t i = 0; i < PROBES; i++) {
        const struct achain_type *e = &table[(at + i) & (TABLE_SIZE - 1)];
        uintptr_t have = atomic_load_explicit(&e->mt, memory_order_acquire);
        if (have == mt) {
            out->kind = e->kind;
            out->path[0] = e->path[0];
            out->path[1] = e->path[1];
            out->alt[0] = e->alt[0];
            out->alt[1] = e->alt[1];
            /* still the same entry after the copy */
            return atomic_load_explicit(&e->mt, memory_order_acquire) == mt;
        }
        if (!have)
            return 0;
    }
    return 0;
}

/* Heap reads: direct in cooperative mode, else through the kernel, which
 * copies a window of up to ACHAIN_WINDOW bytes from the address asked:
 * an object's MethodTable and the reference the chain follows next are
 * usually in the same window, one system call where there were two or
 * three (each several microseconds in a virtual machine).  A window ends
 * at its 4 KB page's end: the next page may be unmapped, and the kernel
 * fails a read that reaches it (the words asked, aligned, never cross
 * a page). */
#define ACHAIN_WINDOW 64
#define ACHAIN_PAGE 4096u

struct reader {
    int direct;
    int failed;
    pid_t pid;
    uintptr_t win_at;
    size_t win_len;
    unsigned char win[ACHAIN_WINDOW];
};

static _Atomic uint64_t kernel_reads; /* tests */

uint64_t achain_kernel_reads(void)
{
    return atomic_load_explicit(&kernel_reads, memory_order_relaxed);
}

static int plausible(uintptr_t p)
{
    return p >= 4096 && !(p & 7);
}

/* n bytes at addr through the window (r->direct unset); -1 on a failed
 * read. */
static int guarded(struct reader *r, uintptr_t addr, void *out, size_t n)
{
    if (addr < r->win_at || addr - r->win_at > r->win_len || n > r->win_len - (addr - r->win_at)) {
        size_t len = ACHAIN_PAGE - (addr & (ACHAIN_PAGE - 1));
        if (len > sizeof r->win)
            len = sizeof r->win;
        struct iovec local = {r->win, len}, remote = {(void *)addr, len};
        atomic_fetch_add_explicit(&kernel_reads, 1, memory_order_relaxed);
        long got = syscall(SYS_process_vm_readv, (long)r->pid, &local, 1L, &remote, 1L, 0L);
        r->win_at = addr;
        r->win_len = got > 0 ? (size_t)got : 0;
        if (r->win_len < n)
            return -1;
    }
    memcpy(out, r->win + (addr - r->win_at), n);
    return 0;
}

NO_ASAN static uintptr_t read_word(struct reader *r, uintptr_t addr)
{
    if (r->failed || !plausible(addr))
        goto fail;
    if (r->direct)
        return *(const uintptr_t *)addr;
    uintptr_t v = 0;
    if (guarded(r, addr, &v, sizeof v) < 0)
        goto fail;
    return v;
fail:
    r->failed = 1;
    return 0;
}

NO_ASAN static uint32_t read_u32(struct reader *r, uintptr_t addr)
{
    if (r->failed || addr < 4096 || (addr & 3)) {
        r->failed = 1;
        return 0;
    }
    if (r->direct)
        return *(const uint32_t *)addr;
    uint32_t v = 0;
    if (guarded(r, addr, &v, sizeof v) < 0) {
        r->failed = 1;
        return 0;
    }
    return v;
}

int achain_object_type(uintptr_t home, uintptr_t *mt)
{
    uint64_t seq = atomic_load_explicit(&suspend_seq, memory_order_acquire);
    if (atomic_load_explicit(&suspended, memory_order_acquire))
        return 0;
    int saved = errno;
    struct reader r = {.pid = (pid_t)syscall(SYS_getpid)};
    uintptr_t obj = read_word(&r, home);
    uintptr_t type = read_word(&r, obj);
    errno = saved;
    if (r.failed || !plausible(type))
        return -1;
    atomic_thread_fence(memory_order_seq_cst);
    if (atomic_load_explicit(&suspend_seq, memory_order_acquire) != seq)
        return 0;
    *mt = type;
    return 1;
}

/* Follows a path from obj; 0 when it leads nowhere (a null on the way). */
static uintptr_t follow(struct reader *r, uintptr_t obj, const int32_t path[2])
{
    if (path[0] < 0)
        return 0;
    uintptr_t p = obj;
    for (int i = 0; i < 2 && path[i] >= 0 && p; i++)
        p = read_word(r, p + (uint32_t)path[i]);
    return p;
}

/* The first continuation of a List<object> (up to a few slots in). */
static uintptr_t first_item(struct reader *r, uintptr_t list, const struct achain_type *t)
{
    uintptr_t items = read_word(r, list + (uint32_t)t->path[0]);
    uint32_t n = read_u32(r, list + (uint32_t)t->path[1]);
    for (uint32_t i = 0; items && i < n && i < 8 && !r->failed; i++) {
        uintptr_t x = read_word(r, items + ACHAIN_ARRAY_DATA + 8 * (uintptr_t)i);
        if (x)
            return x;
    }
    return 0;
}

NO_ASAN uint32_t achain_read(uintptr_t sp, uintptr_t hi, uintptr_t thread, uint64_t *mts,
                             uint32_t max, uintptr_t *local, uint32_t *end)
{
    *end = ACHAIN_END_NONE;
    uintptr_t at = current;
    *local = at;
    if (!at || (at & 7) || at < sp || !hi || at > hi - 8)
        return 0; /* nothing running, or a frame not on this stack */
    uintptr_t obj = *(const uintptr_t *)at;
    if (!obj)
        return 0;
    /* a suspension in progress: a collection may be running, on this very
     * thread (the one that triggered it collects, in cooperative mode),
     * marking MethodTables and moving objects */
    uint64_t seq = atomic_load_explicit(&suspend_seq, memory_order_acquire);
    if (atomic_load_explicit(&suspended, memory_order_acquire)) {
        atomic_fetch_add_explicit(&discarded, 1, memory_order_relaxed);
        return 0;
    }
    struct reader r = {.win_len = 0};
    int32_t coop = atomic_load_explicit(&coop_offset, memory_order_relaxed);
    if (thread && coop >= 0)
        r.direct = *(const volatile uint32_t *)(thread + (uint32_t)coop) != 0;
    if (!r.direct) {
        int saved = errno;
        r.pid = (pid_t)syscall(SYS_getpid);
        errno = saved;
    }
    int saved = errno;
    uint32_t n = 0;
    while (obj) {
        if (n == max) {
            *end = ACHAIN_END_LIMIT;
            break;
        }
        uintptr_t mt = read_word(&r, obj);
        if (!r.failed && !plausible(mt))
            r.failed = 1; /* a MethodTable is aligned: this is not an object */
        if (r.failed)
            break;
        mts[n++] = mt;
        struct achain_type t;
        if (!lookup(mt, &t)) {
            *end = ACHAIN_END_UNKNOWN;
            break;
        }
        if (t.kind == ACHAIN_END) {
            *end = ACHAIN_END_KNOWN;
            break;
        }
        uintptr_t next = t.kind == ACHAIN_LIST ? first_item(&r, obj, &t) : follow(&r, obj, t.path);
        if (!next && !r.failed && t.alt[0] >= 0)
            next = follow(&r, obj, t.alt);
        obj = next;
    }
    errno = saved;
    if (r.failed)
        *end = ACHAIN_END_FAULT;
    /* (in cooperative mode no suspension can have completed meanwhile; the
     * check costs nothing and covers a mode misread) */
    atomic_thread_fence(memory_order_acquire);
    if (atomic_load_explicit(&suspend_seq, memory_order_acquire) != seq) {
        atomic_fetch_add_explicit(&discarded, 1, memory_order_relaxed);
        return 0;
    }
    return n;
}
