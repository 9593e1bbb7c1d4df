/*
 * nativeunwind: see nativeunwind.h.  The collector keeps one published,
 * immutable snapshot: the loaded ELF objects sorted by the address range of
 * their executable segments.  dl_iterate_phdr's adds/subs counters say
 * cheaply whether anything was loaded or unloaded since the last look.
 *
 * A walk needs the rows of the few functions it passes through, not the
 * 110,000 rows of libcoreclr.so: parsing whole tables cost each process 20
 * to 40 ms of CPU (and its exit waited for it).  So an object's unwind
 * data is read one function at a time, through .eh_frame_hdr's sorted
 * table (cfi_index_row), at three levels:
 *
 *   1. the object's cache: the functions decoded so far (and the gaps
 *      without CFI between them), sorted, published by the collector;
 *   2. a resident object's .eh_frame itself, read in place by the walker
 *      (the handler included: a binary search and one FDE's program, no
 *      allocation), when the cache does not have the function yet: exact
 *      from the first sample;
 *   3. an object that may be unloaded (what the runtime dlopens: ICU, a
 *      P/Invoked library): the walker must not read its mapping in place,
 *      which a dlclose on another thread can take away at any moment.  It
 *      copies the few bytes a lookup needs (the search table's probes, one
 *      FDE and its CIE) through the kernel, process_vm_readv, which
 *      answers EFAULT where nothing is mapped: exact from the first sample
 *      too.  Only when that fails (unmapped since, an FDE too long to copy
 *      onto the handler's stack, a kernel or sandbox that refuses the
 *      call) does the walk step by frame pointers (NU_PENDING, counted as
 *      guessed).  Before this, such walks always did: a library built
 *      without frame pointers lost its callers from the first samples of
 *      each function (tests/apps/NativeGaps fresh: a quarter of its time).
 *
 * An object loaded since the loop's last look (at most a cycle, 10 to 50
 * ms: when a library's initialization runs) is in no snapshot yet; a frame
 * the walker could only guess at asks the kernel for the mapping
 * (vma_query, half a microsecond) and reads the object's headers and CFI
 * through copies (nativeunwind_step_unlisted), where the kernel can say;
 * the runtime's stubs, placed by cheaper means first, never ask.
 *
 * Every miss asks the collector for the function (a slot of `requests`,
 * lock-free); the collector decodes it inside dl_iterate_phdr's callback,
 * where the loader's lock keeps the object mapped, and publishes the
 * object's cache again.  A callback's walk that stepped by frame pointers
 * waits for the collector and walks again (nativeunwind_wait_tables).
 *
 * Resident objects are those the loader never unloads while the process
 * runs: the main program and the DT_NEEDED closure of resident objects
 * (the loader unloads only what dlopen loaded), objects marked NODELETE,
 * the vDSO, and the runtime's own libraries (libcoreclr.so's directory and
 * libhostfxr.so: the host and the runtime never unload them), which the
 * collector marks NODELETE itself (dlopen RTLD_NOLOAD | RTLD_NODELETE) so
 * that this is a guarantee rather than an observation.
 *
 * An object whose .eh_frame_hdr has no search table is parsed whole, as
 * before, when a walk first needs it.  Old snapshots and caches, and the
 * modules of unloaded objects, go to the reclaimer (thread_rings.h), so a
 * walker never reads freed memory.
 */
#include "agent/signal/nativeunwind.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <sys/auxv.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agent/signal/arch.h"
#include "agent/signal/cfi.h"
#include "agent/signal/loop_wake.h"
#include "agent/signal/thread_rings.h"
#include "agent/signal/vma_query.h"
#include "agent/signal/walk_step.h"
#include "common/clock.h"
#include "common/mem.h"

/* The longest FDE a walker decodes in place: a handler's time stays
 * bounded whatever the object holds (the longest of libcoreclr.so, libc,
 * libstdc++ and libclrjit.so is under 1 KiB); a longer one is decoded by
 * the collector and read from the cache. */
#define WALKER_FDE_MAX 4096
/* Functions asked for and not decoded yet (a power of two).  A full table
 * drops the ask: the next walk through the function asks again. */
#define REQUEST_SLOTS 512
#define REQUEST_PROBES 4

/* A function decoded, or a gap without CFI: link-time [lo, hi). */
struct nu_fn {
    uint64_t lo, hi;
    uint32_t first, count; /* its rows in the cache; count 0: no CFI there */
};

/* An object's functions decoded so far, immutable once published. */
struct nu_cache {
    size_t fn_count, row_count;
    struct nu_fn *fns;     /* sorted by lo, never overlapping */
    struct cfi_row *rows;
};

struct nu_module {
    uintptr_t lo, hi; /* executable segments, runtime addresses */
    uintptr_t bias;
    const uint8_t *hdr, *seg_lo, *seg_hi; /* its .eh_frame_hdr and the segment holding it */
    int indexed;          /* .eh_frame_hdr has a search table: one function at a time */
    struct cfi_index index;
    _Atomic int resident; /* never unloaded: walkers may read its sections (release) */
    _Atomic(struct nu_cache *) cache; /* indexed: functions decoded (collector, release) */
    /* not indexed: the whole table, parsed when a walk first needs it */
    _Atomic int wanted;   /* a walk needed the table (handler) */
    _Atomic int ready;    /* the table is parsed (collector, release) */
    struct cfi_table table;
    _Atomic uint32_t walks_stopped; /* walks ended at a rule of its table (handler) */
    int bare;             /* no .eh_frame_hdr: no table, frame pointers only */
    _Atomic uint32_t walks_through; /* bare: walks that stepped through it (handler) */
    /* what the parser could not turn into rows: the whole table's, or for
     * an indexed object, its functions' count and the gaps of those decoded */
    struct cfi_gaps gaps;
    char *path;           /* dlpi_name ("" for the main program) */
    /* the collector's: what decides residency */
    char *soname;         /* DT_SONAME, or the file's name */
    char **needed;        /* DT_NEEDED */
    size_t needed_count;
    int nodelete;         /* DF_1_NODELETE */
    int kept;             /* never unloaded (in the closure) */
    int pin_tried;
};

/* A library whose unwind data the walker does not wholly follow: kept past
 * its unload, for nativeunwind_gaps. */
struct nu_gap {
    char *path;
    struct cfi_gaps gaps;
    uint32_t walks; /* stopped there; for a bare library, went through it */
    int no_eh_frame;
};

struct nu_snapshot {
    size_t count;
    uint64_t gen;                /* which snapshot (memo entries name it) */
    struct nu_module *modules[]; /* sorted by lo */
};

/* Rows found lately, by run-time address.  Walks keep passing through the
 * same native frames (the host's and the runtime's at the root of every
 * managed thread, the runtime's dispatch of every throw, the signal
 * delivery path); a hit skips the module's and the function's searches.
 * Each slot is a sequence lock: a writer takes it by compare-and-swap
 * (odd), a reader that finds it odd or changed under it misses and looks
 * up as usual.  Lock-free and async-signal-safe (a handler interrupting a
 * writer of the same slot misses, or gives up writing).  An entry holds
 * only for the snapshot it was found in: objects loaded or unloaded since
 * make every entry stale. */
#define MEMO_SLOTS 1024
#define MEMO_ROW_WORDS ((sizeof(struct cfi_row) + 7) / 8)
struct nu_memo {
    _Atomic uint64_t seq;
    _Atomic uint64_t at;  /* run-time address looked up */
    _Atomic uint64_t gen; /* the snapshot's */
    _Atomic uint64_t row[MEMO_ROW_WORDS];
};

static struct nu_memo memo[MEMO_SLOTS];
static _Atomic(struct nu_snapshot *) current;
static uint64_t snapshot_gen; /* the collector's */
static unsigned long long seen_adds = ~0ull, seen_subs = ~0ull;
static _Atomic size_t rows_total;
static _Atomic int any_wanted; /* a walk stepped by frame pointers for want of rows */
static _Atomic int any_requests; /* some slot of requests is taken */
static _Atomic uintptr_t requests[REQUEST_SLOTS]; /* run-time addresses asked for */
static _Atomic uint64_t parse_ns; /* time spent decoding and parsing */
static _Atomic int abandoned;  /* the recording ends: no more work for walks */
static int parse_all;          /* nativeunwind_refresh_all: everything now */
/* A callback's walk that met a table not parsed yet waits for it
 * (nativeunwind_wait_tables): the collector says when a parse is done. */
static pthread_mutex_t parsed_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t parsed_cond = PTHREAD_COND_INITIALIZER;
static _Atomic int parsing;       /* the collector is parsing, or about to */
static _Atomic int waits_given_up; /* a wait timed out: the collector is held up */
static __thread int on_collector; /* this thread refreshes the tables */
static void (*waker)(void *);     /* wakes the collector (nativeunwind_set_waker) */
static void *waker_ctx;
/* collector: libraries unloaded that had gaps */
static struct nu_gap *gone;
static size_t gone_count, gone_cap;

/* ---- the walker's side (async-signal-safe) ---------------------------------- */

NO_ASAN static int read_word(uintptr_t addr, uintptr_t lo, uintptr_t hi, uintptr_t *out)
{
    if (addr < lo || addr > hi - 8 || (addr & 7))
        return 0;
    *out = *(const uintptr_t *)addr;
    return 1;
}

static struct nu_module *find_module(const struct nu_snapshot *s, uintptr_t pc)
{
    size_t a = 0, b = s->count;
    while (a < b) {
        size_t m = a + (b - a) / 2;
        struct nu_module *mod = s->modules[m];
        if (pc < mod->lo)
            b = m;
        else if (pc >= mod->hi)
            a = m + 1;
        else
            return mod;
    }
    return NULL;
}

/* Asks the collector for the function at run-time address at; pending: a
 * walk went on by frame pointers for want of it (a callback may wait). */
static void request(uintptr_t at, int pending)
{
    size_t h = (size_t)(((uint64_t)at * 0x9E3779B97F4A7C15ull) >> 40);
    for (int i = 0; i < REQUEST_PROBES; i++) {
        _Atomic uintptr_t *slot = &requests[(h + (size_t)i) & (REQUEST_SLOTS - 1)];
        uintptr_t v = atomic_load_explicit(slot, memory_order_relaxed);
        if (v == at || (v == 0 && atomic_compare_exchange_strong_explicit(
                                      slot, &v, at, memory_order_relaxed, memory_order_relaxed)))
            break;
    }
    if (!atomic_load_explicit(&any_requests, memory_order_relaxed))
        atomic_store_explicit(&any_requests, 1, memory_order_release);
    if (pending && !atomic_load_explicit(&any_wanted, memory_order_relaxed)) {
        atomic_store_explicit(&any_wanted, 1, memory_order_release);
        loop_wake_if_quiet(LOOP_WAKE_WORK); /* walks go on guessing until it decodes */
    }
}

/* The cache's answer for link-time pc: 1 known (*row, NULL where no CFI
 * is), 0 not decoded yet. */
static int cache_find(const struct nu_cache *c, uint64_t pc, const struct cfi_row **row)
{
    size_t a = 0, b = c->fn_count;
    while (a < b) { /* first function starting after pc */
        size_t m = a + (b - a) / 2;
        if (c->fns[m].lo <= pc)
            a = m + 1;
        else
            b = m;
    }
    if (a == 0 || pc >= c->fns[a - 1].hi)
        return 0;
    const struct nu_fn *f = &c->fns[a - 1];
    *row = NULL;
    if (!f->count)
        return 1;
    const struct cfi_row *rows = c->rows + f->first;
    size_t x = 0, y = f->count;
    while (x < y) { /* first row after pc; rows[0].pc == f->lo <= pc */
        size_t m = x + (y - x) / 2;
        if (rows[m].pc <= pc)
            x = m + 1;
        else
            y = m;
    }
    if (x > 0 && rows[x - 1].cfa != CFI_NONE)
        *row = &rows[x - 1];
    return 1;
}

/* The bytes of an object that may be unmapped under the walker, copied by
 * the kernel (walk_read_code), which answers EFAULT where nothing is
 * mapped: a read in place would fault.  A kernel or sandbox that refuses
 * the call (qemu-user has none) is asked once; walks then guess until the
 * cache has the function, as they did before. */
static _Atomic int copy_refused;

static int copy_unpinned(void *dst, uint64_t src, size_t n)
{
    if (atomic_load_explicit(&copy_refused, memory_order_relaxed))
        return -1;
    int got = walk_read_code((uintptr_t)src, dst, n);
    if (got < 0)
        atomic_store_explicit(&copy_refused, 1, memory_order_relaxed);
    return got == 1 ? 0 : -1;
}

/* Where an object loaded at bias has its .eh_frame_hdr, by its program
 * headers ph, and the readable segment holding it (0 when none does); 0
 * when it has no .eh_frame_hdr.  The collector's (a listed object's
 * headers) and the handler's (an unlisted one's, copied). */
static int eh_frame_in(const ElfW(Phdr) *ph, size_t n, uintptr_t bias, uintptr_t *hdr,
                       uintptr_t *seg_lo, uintptr_t *seg_hi)
{
    const ElfW(Phdr) *eh = NULL;
    for (size_t i = 0; i < n; i++)
        if (ph[i].p_type == PT_GNU_EH_FRAME)
            eh = &ph[i];
    if (!eh)
        return 0;
    *hdr = bias + eh->p_vaddr;
    *seg_lo = *seg_hi = 0;
    for (size_t i = 0; i < n; i++) {
        uintptr_t a = bias + ph[i].p_vaddr;
        if (ph[i].p_type == PT_LOAD && *hdr >= a && *hdr < a + ph[i].p_filesz) {
            *seg_lo = a;
            *seg_hi = a + ph[i].p_filesz;
        }
    }
    return 1;
}

/* Program headers an unlisted object may have for unlisted_row to look at
 * (libraries have 8 to 14; they are copied onto the handler's stack). */
#define UNLISTED_MAX_PHDRS 16

/* Where an unlisted object is, from its ELF and program headers read
 * through copies at base (where its file's start is mapped): its bias,
 * its .eh_frame_hdr and the segment holding it.  0 when at is not in its
 * text as this layout maps it, or it has no .eh_frame_hdr.  Not inlined:
 * the headers' copies leave the stack before the CFI's are made. */
static __attribute__((noinline)) int unlisted_layout(uintptr_t at, uint64_t base,
                                                     const struct vma_query_mapping *map,
                                                     uintptr_t *bias, uintptr_t *hdr,
                                                     uintptr_t *seg_lo, uintptr_t *seg_hi)
{
    Elf64_Ehdr eh;
    if (copy_unpinned(&eh, base, sizeof eh) < 0 || memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
        eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_phentsize != sizeof(Elf64_Phdr) ||
        eh.e_phnum == 0 || eh.e_phnum > UNLISTED_MAX_PHDRS)
        return 0;
    ElfW(Phdr) ph[UNLISTED_MAX_PHDRS];
    if (copy_unpinned(ph, base + eh.e_phoff, eh.e_phnum * sizeof ph[0]) < 0)
        return 0;
    size_t first = 0;
    while (first < eh.e_phnum && ph[first].p_type != PT_LOAD)
        first++;
    if (first == eh.e_phnum || ph[first].p_offset != 0 || ph[first].p_vaddr > base)
        return 0; /* its header is not where its first segment starts */
    *bias = base - (ph[first].p_vaddr & ~(uint64_t)0xfff);
    int in_text = 0;
    for (size_t i = 0; i < eh.e_phnum; i++) {
        uint64_t lo = *bias + ph[i].p_vaddr;
        if (ph[i].p_type == PT_LOAD && (ph[i].p_flags & PF_X) && lo <= at &&
            at < lo + ph[i].p_memsz && map->start - map->offset == lo - ph[i].p_offset)
            in_text = 1; /* and mapped where this layout says */
    }
    return in_text && eh_frame_in(ph, eh.e_phnum, *bias, hdr, seg_lo, seg_hi) && *seg_hi;
}

/* The row for run-time address at, in an object the loop has not listed
 * yet: one the runtime has just dlopened, whose initialization runs in the
 * first milliseconds (OpenSSL's, at a program's first hash), before the
 * loop's next look.  The kernel names the file mapping that holds at
 * (vma_query); the object's headers are read where its file's start is
 * mapped (where the loader puts a library's first segment), then its
 * .eh_frame_hdr and the one FDE, every byte through copies.  1 with *row,
 * 0 when no CFI covers at, -1 when it cannot tell (anonymous memory: the
 * runtime's code; a kernel without the query; an object laid out
 * otherwise). */
static int unlisted_row(uintptr_t at, struct cfi_row *row)
{
    struct vma_query_mapping map, below;
    if (vma_query_find(at, &map, NULL, 0) != 1 || !(map.perms & VMA_QUERY_EXEC) || !map.inode)
        return -1;
    /* the file's start: the text itself, or the mapping of the same file
     * just below it (lld puts the text a page further in memory than in
     * the file, as the runtime's libraries are linked), or where the file
     * would start if its segments lay at their offsets (GNU ld's) */
    uint64_t base;
    if (map.offset == 0)
        base = map.start;
    else if (vma_query_find(map.start - 1, &below, NULL, 0) == 1 && below.inode == map.inode &&
             below.dev == map.dev && below.offset == 0)
        base = below.start;
    else if (map.offset <= map.start)
        base = map.start - map.offset;
    else
        return -1;
    uintptr_t bias, hdr, seg_lo, seg_hi;
    struct cfi_index ix;
    if (!unlisted_layout(at, base, &map, &bias, &hdr, &seg_lo, &seg_hi) ||
        !cfi_index_open_copied(hdr, seg_lo, seg_hi, bias, copy_unpinned, &ix))
        return -1;
    int k = cfi_index_row_copied(&ix, at - bias, copy_unpinned, row);
    return k < 0 ? -1 : k;
}

enum look { LOOK_NONE, LOOK_ROW, LOOK_PENDING };

/* The row for link-time address pc of m (*row, in buf when decoded in
 * place).  LOOK_PENDING: not known yet, asked for. */
static enum look look_up(struct nu_module *m, uint64_t pc, struct cfi_row *buf,
                         const struct cfi_row **row)
{
    if (!m->indexed) {
        if (!atomic_load_explicit(&m->ready, memory_order_acquire)) {
            /* parsed by the collector soon; frame pointers meanwhile */
            if (!atomic_load_explicit(&m->wanted, memory_order_relaxed)) {
                atomic_store_explicit(&m->wanted, 1, memory_order_relaxed);
                atomic_store_explicit(&any_wanted, 1, memory_order_release);
                loop_wake_if_quiet(LOOP_WAKE_WORK);
            }
            return LOOK_PENDING;
        }
        *row = cfi_find(&m->table, pc);
        return *row ? LOOK_ROW : LOOK_NONE;
    }
    const struct nu_cache *c = atomic_load_explicit(&m->cache, memory_order_acquire);
    if (c && cache_find(c, pc, row))
        return *row ? LOOK_ROW : LOOK_NONE;
    int k = atomic_load_explicit(&m->resident, memory_order_acquire)
                ? cfi_index_row(&m->index, pc, WALKER_FDE_MAX, buf)
                : cfi_index_row_copied(&m->index, pc, copy_unpinned, buf);
    if (k >= 0) {
        request(pc + m->bias, 0); /* for the cache */
        *row = k ? buf : NULL;
        return k ? LOOK_ROW : LOOK_NONE;
    }
    request(pc + m->bias, 1);
    return LOOK_PENDING;
}

#if defined(__aarch64__)
/* The interrupted registers of a signal frame (walk_step.h). */
static enum nu_status signal_frame(uintptr_t *pc, uintptr_t *sp, uintptr_t *fp, uintptr_t *lr,
                                   uintptr_t lo, uintptr_t hi)
{
    struct walk_regs r;
    if (!walk_sigcontext(*sp, lo, hi, &r))
        return NU_BOUNDS;
    *pc = r.pc;
    *sp = r.sp;
    *fp = r.fp;
    *lr = r.lr;
    return NU_SIGNAL;
}

/* Where the return address is: in x30 until the function saves it. */
static int return_address(const struct cfi_row *row, uintptr_t cfa, uintptr_t lr, uintptr_t lo,
                          uintptr_t hi, int leaf, uintptr_t *ret)
{
    if (!row->ra_offset) {
        *ret = lr;
        return leaf && lr;
    }
    if (!read_word(cfa + (uintptr_t)(intptr_t)row->ra_offset, lo, hi, ret))
        return 0;
    *ret = arch_strip_pac(*ret);
    return 1;
}
#else
/* The kernel's ucontext is at RSP: gregs from +40, in the order of
 * <sys/ucontext.h> (RBP is 10, RSP 15, RIP 16). */
static enum nu_status signal_frame(uintptr_t *pc, uintptr_t *sp, uintptr_t *fp, uintptr_t *lr,
                                   uintptr_t lo, uintptr_t hi)
{
    uintptr_t ip, rsp, rbp;
    uintptr_t gregs = *sp + 40;
    (void)lr;
    if (!read_word(gregs + 8 * 16, lo, hi, &ip) || !read_word(gregs + 8 * 15, lo, hi, &rsp) ||
        !read_word(gregs + 8 * 10, lo, hi, &rbp))
        return NU_BOUNDS;
    *pc = ip;
    *sp = rsp;
    *fp = rbp;
    return NU_SIGNAL;
}

/* The return address is in the slot below the CFA. */
static int return_address(const struct cfi_row *row, uintptr_t cfa, uintptr_t lr, uintptr_t lo,
                          uintptr_t hi, int leaf, uintptr_t *ret)
{
    (void)row, (void)lr, (void)leaf;
    return read_word(cfa - 8, lo, hi, ret);
}
#endif

static struct nu_memo *memo_slot(uintptr_t at)
{
    return &memo[((uint64_t)at * 0x9E3779B97F4A7C15ull) >> 54 & (MEMO_SLOTS - 1)];
}

static int memo_get(uint64_t gen, uintptr_t at, struct cfi_row *row)
{
    struct nu_memo *e = memo_slot(at);
    uint64_t seq = atomic_load_explicit(&e->seq, memory_order_acquire);
    if ((seq & 1) || atomic_load_explicit(&e->at, memory_order_acquire) != at ||
        atomic_load_explicit(&e->gen, memory_order_acquire) != gen)
        return 0;
    /* acquire loads: the check of seq below is not done before them, and
     * a word of a writer seen means its odd seq is seen (no fences: TSan
     * does not model them) */
    uint64_t w[MEMO_ROW_WORDS];
    for (size_t i = 0; i < MEMO_ROW_WORDS; i++)
        w[i] = atomic_load_explicit(&e->row[i], memory_order_acquire);
    if (atomic_load_explicit(&e->seq, memory_order_relaxed) != seq)
        return 0;
    memcpy(row, w, sizeof *row);
    return 1;
}

static void memo_put(uint64_t gen, uintptr_t at, const struct cfi_row *row)
{
    struct nu_memo *e = memo_slot(at);
    uint64_t seq = atomic_load_explicit(&e->seq, memory_order_relaxed);
    if ((seq & 1) || !atomic_compare_exchange_strong_explicit(&e->seq, &seq, seq + 1,
                                                              memory_order_relaxed,
                                                              memory_order_relaxed))
        return;
    /* release stores: the odd seq is seen before any word changes */
    uint64_t w[MEMO_ROW_WORDS] = {0};
    memcpy(w, row, sizeof *row);
    atomic_store_explicit(&e->at, at, memory_order_release);
    atomic_store_explicit(&e->gen, gen, memory_order_release);
    for (size_t i = 0; i < MEMO_ROW_WORDS; i++)
        atomic_store_explicit(&e->row[i], w[i], memory_order_release);
    atomic_store_explicit(&e->seq, seq + 2, memory_order_release);
}

static enum nu_status apply_row(const struct cfi_row *row, uintptr_t *pc, uintptr_t *sp,
                                uintptr_t *fp, uintptr_t *lr, uintptr_t lo, uintptr_t hi,
                                int leaf);

enum nu_status nativeunwind_step(uintptr_t *pc, uintptr_t *sp, uintptr_t *fp, uintptr_t *lr,
                                 uintptr_t lo, uintptr_t hi, int leaf)
{
    const struct nu_snapshot *s = atomic_load_explicit(&current, memory_order_acquire);
    if (!s)
        return NU_NO_CFI;
    /* a return address is the instruction after the call: look inside it */
    uintptr_t at = leaf ? *pc : *pc - 1;
    struct cfi_row buf;
    const struct cfi_row *row = NULL;
    if (memo_get(s->gen, at, &buf)) {
        row = &buf;
    } else {
        struct nu_module *m = find_module(s, at);
        if (!m)
            return NU_NO_CFI; /* the runtime's code, or an object not listed yet */
        if (m->bare) {
            atomic_fetch_add_explicit(&m->walks_through, 1, memory_order_relaxed);
            return NU_NO_TABLE;
        }
        enum look found = look_up(m, at - m->bias, &buf, &row);
        if (found == LOOK_PENDING)
            return NU_PENDING;
        if (found == LOOK_NONE)
            return NU_NO_CFI;
        if (row->cfa == CFI_UNSUPPORTED) {
            atomic_fetch_add_explicit(&m->walks_stopped, 1, memory_order_relaxed);
            return NU_RULE;
        }
        memo_put(s->gen, at, row);
    }
    return apply_row(row, pc, sp, fp, lr, lo, hi, leaf);
}

/* One step by the row found for *pc (nativeunwind_step's end). */
static enum nu_status apply_row(const struct cfi_row *row, uintptr_t *pc, uintptr_t *sp,
                                uintptr_t *fp, uintptr_t *lr, uintptr_t lo, uintptr_t hi,
                                int leaf)
{
    if (row->outermost) {
        *pc = 0;
        return NU_OK;
    }
    if (row->cfa == CFI_SIGFRAME)
        return signal_frame(pc, sp, fp, lr, lo, hi);
    uintptr_t cfa;
    if (row->cfa == CFI_PLT10 || row->cfa == CFI_PLT11)
        cfa = *sp + 8 + ((*pc & 15) >= (row->cfa == CFI_PLT10 ? 10u : 11u) ? 8 : 0);
    else
        cfa = (row->cfa == CFI_RSP ? *sp : *fp) + (uintptr_t)(intptr_t)row->cfa_offset;
    uintptr_t ret, saved_fp = *fp;
    if (!return_address(row, cfa, *lr, lo, hi, leaf, &ret))
        return NU_BOUNDS;
    /* a slot below RSP was popped already (an epilogue whose CFI still
     * names it, as compilers leave them before a tail jump): RBP holds it */
    uintptr_t rbp_at = cfa + (uintptr_t)(intptr_t)row->rbp_offset;
    if (row->rbp_offset && rbp_at >= *sp && !read_word(rbp_at, lo, hi, &saved_fp))
        return NU_BOUNDS;
    *pc = ret;
    *sp = cfa;
    *fp = saved_fp;
    *lr = 0;
    return NU_OK;
}

enum nu_status nativeunwind_step_unlisted(uintptr_t *pc, uintptr_t *sp, uintptr_t *fp,
                                          uintptr_t *lr, uintptr_t lo, uintptr_t hi, int leaf)
{
    const struct nu_snapshot *s = atomic_load_explicit(&current, memory_order_acquire);
    uintptr_t at = leaf ? *pc : *pc - 1;
    struct cfi_row row;
    if (!s || find_module(s, at) || unlisted_row(at, &row) != 1)
        return NU_NO_CFI;
    if (row.cfa == CFI_UNSUPPORTED)
        return NU_RULE;
    return apply_row(&row, pc, sp, fp, lr, lo, hi, leaf);
}

int nativeunwind_seen(uintptr_t at)
{
    const struct nu_snapshot *s = atomic_load_explicit(&current, memory_order_acquire);
    struct cfi_row row;
    return s && memo_get(s->gen, at, &row);
}

/* The row at run-time address at, if CFI covers it. */
static const struct cfi_row *row_at(uintptr_t at, struct cfi_row *buf)
{
    const struct nu_snapshot *s = atomic_load_explicit(&current, memory_order_acquire);
    struct nu_module *m = s ? find_module(s, at) : NULL;
    const struct cfi_row *row = NULL;
    if (!m || m->bare || look_up(m, at - m->bias, buf, &row) != LOOK_ROW)
        return NULL;
    return row;
}

int nativeunwind_covers(uintptr_t at)
{
    struct cfi_row buf;
    return row_at(at, &buf) != NULL;
}

int nativeunwind_is_sigreturn(uintptr_t ra)
{
    struct cfi_row buf;
    const struct cfi_row *row = ra > 1 ? row_at(ra - 1, &buf) : NULL;
    return row && row->cfa == CFI_SIGFRAME;
}

/* ---- the collector's side -------------------------------------------------- */

static void free_module(void *p)
{
    struct nu_module *m = p;
    cfi_free(&m->table);
    mem_free(atomic_load(&m->cache));
    for (size_t i = 0; i < m->needed_count; i++)
        mem_free(m->needed[i]);
    mem_free(m->needed);
    mem_free(m->soname);
    mem_free(m->path);
    mem_free(m);
}

struct scan {
    const struct nu_snapshot *old;
    struct nu_module **found;
    size_t count, cap;
    int oom;
};

static struct nu_module *reuse(const struct nu_snapshot *old, uintptr_t lo, uintptr_t hi,
                               uintptr_t bias)
{
    for (size_t i = 0; old && i < old->count; i++) {
        struct nu_module *m = old->modules[i];
        if (m->lo == lo && m->hi == hi && m->bias == bias)
            return m;
    }
    return NULL;
}

/* What a library's line of nativeunwind_gaps counts: walks that stopped at
 * its rules, or, with no table at all, walks that went through it. */
static uint32_t walks_of(const struct nu_module *m)
{
    return atomic_load(m->bare ? &m->walks_through : &m->walks_stopped);
}

static int has_gaps(const struct nu_module *m)
{
    if (m->bare)
        return atomic_load(&m->walks_through) != 0; /* none entered it: no gap to show */
    if (atomic_load(&m->walks_stopped))
        return 1;
    for (int g = 0; g < CFI_GAP_COUNT; g++)
        if (m->gaps.n[g])
            return 1;
    return 0;
}

/* A library leaves the snapshot: what it had to say is kept. */
static void keep_gaps(const struct nu_module *m)
{
    if (!has_gaps(m))
        return;
    struct nu_gap *grown = mem_grow(gone, &gone_cap, gone_count + 1, sizeof *gone);
    char *copy = grown ? mem_strdup(m->path ? m->path : "") : NULL;
    if (!copy)
        return;
    gone = grown;
    gone[gone_count++] = (struct nu_gap){copy, m->gaps, walks_of(m), m->bare};
}

/* A module for the object's executable range [lo, hi), or NULL (out of
 * memory, said in sc). */
static struct nu_module *new_module(struct scan *sc, const struct dl_phdr_info *info,
                                    uintptr_t lo, uintptr_t hi)
{
    struct nu_module *m = mem_calloc(1, sizeof *m);
    if (!m) {
        sc->oom = 1;
        return NULL;
    }
    m->lo = lo;
    m->hi = hi;
    m->bias = info->dlpi_addr;
    m->path = mem_strdup(info->dlpi_name ? info->dlpi_name : "");
    return m;
}

static const char *file_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

/* Is [p, p + n) inside one of the object's loaded segments (file-backed)? */
static int in_object(const struct dl_phdr_info *info, uintptr_t p, size_t n)
{
    for (ElfW(Half) i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t a = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_LOAD && p >= a && n <= ph->p_filesz && p - a <= ph->p_filesz - n)
            return 1;
    }
    return 0;
}

/* The object's DT_SONAME, DT_NEEDED and DF_1_NODELETE, read from its
 * dynamic section in memory (every read checked to lie in its segments).
 * The loader of glibc relocates the section's pointers in place, others
 * (musl) do not: a pointer below the load bias is a link-time one. */
static void read_dynamic(const struct dl_phdr_info *info, struct nu_module *m)
{
    const ElfW(Dyn) *dyn = NULL;
    size_t n = 0;
    for (ElfW(Half) i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_DYNAMIC) {
            dyn = (const ElfW(Dyn) *)(info->dlpi_addr + ph->p_vaddr);
            n = ph->p_memsz / sizeof *dyn;
        }
    }
    if (!dyn || !in_object(info, (uintptr_t)dyn, n * sizeof *dyn))
        return;
    uintptr_t strtab = 0;
    size_t strsz = 0, needed = 0;
    for (size_t i = 0; i < n && dyn[i].d_tag != DT_NULL; i++) {
        if (dyn[i].d_tag == DT_STRTAB)
            strtab = dyn[i].d_un.d_ptr;
        else if (dyn[i].d_tag == DT_STRSZ)
            strsz = dyn[i].d_un.d_val;
        else if (dyn[i].d_tag == DT_NEEDED)
            needed++;
        else if (dyn[i].d_tag == DT_FLAGS_1 && (dyn[i].d_un.d_val & DF_1_NODELETE))
            m->nodelete = 1;
    }
    if (strtab && strtab < info->dlpi_addr)
        strtab += info->dlpi_addr;
    if (!strtab || !strsz || !in_object(info, strtab, strsz))
        return;
    const char *str = (const char *)strtab;
    m->needed = needed ? mem_calloc(needed, sizeof *m->needed) : NULL;
    for (size_t i = 0; i < n && dyn[i].d_tag != DT_NULL; i++) {
        if (dyn[i].d_tag != DT_NEEDED && dyn[i].d_tag != DT_SONAME)
            continue;
        size_t off = dyn[i].d_un.d_val;
        if (off >= strsz || !memchr(str + off, 0, strsz - off))
            continue;
        if (dyn[i].d_tag == DT_SONAME && !m->soname)
            m->soname = mem_strdup(str + off);
        else if (dyn[i].d_tag == DT_NEEDED && m->needed && m->needed_count < needed &&
                 (m->needed[m->needed_count] = mem_strdup(str + off)))
            m->needed_count++;
    }
}

/* eh_frame_in for an object dl_iterate_phdr shows. */
static int eh_frame_of(const struct dl_phdr_info *info, const uint8_t **hdr,
                       const uint8_t **seg_lo, const uint8_t **seg_hi)
{
    uintptr_t h = 0, lo = 0, hi = 0;
    int found = eh_frame_in(info->dlpi_phdr, info->dlpi_phnum, info->dlpi_addr, &h, &lo, &hi);
    *hdr = (const uint8_t *)h;
    *seg_lo = (const uint8_t *)lo;
    *seg_hi = (const uint8_t *)hi;
    return found;
}

static int on_object(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct scan *sc = arg;
    uintptr_t lo = UINTPTR_MAX, hi = 0;
    for (ElfW(Half) i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
            uintptr_t a = info->dlpi_addr + ph->p_vaddr;
            if (a < lo)
                lo = a;
            if (a + ph->p_memsz > hi)
                hi = a + ph->p_memsz;
        }
    }
    if (lo >= hi)
        return 0;
    const char *name = info->dlpi_name ? info->dlpi_name : "";
    struct nu_module *m = reuse(sc->old, lo, hi, info->dlpi_addr);
    const uint8_t *hdr = NULL, *seg_lo = NULL, *seg_hi = NULL;
    int has_eh = eh_frame_of(info, &hdr, &seg_lo, &seg_hi);
    if (!m && !has_eh) {
        /* no unwind data at all: walks go through it by frame pointers
         * (the vDSO's is in the kernel's image: not listed) */
        if (strstr(name, "linux-vdso"))
            return 0;
        if (!(m = new_module(sc, info, lo, hi)))
            return 0;
        m->bare = 1;
        atomic_store(&m->ready, 1); /* an empty table */
        read_dynamic(info, m);
    } else if (!m) {
        if (!seg_lo)
            return 0;
        if (!(m = new_module(sc, info, lo, hi)))
            return 0;
        m->hdr = hdr;
        m->seg_lo = seg_lo;
        m->seg_hi = seg_hi;
        m->indexed = cfi_index_open(hdr, seg_lo, seg_hi, m->bias, &m->index);
        if (m->indexed)
            m->gaps.functions = (uint32_t)m->index.count;
        else if (parse_all)
            atomic_store(&m->wanted, 1);
        read_dynamic(info, m);
    }
    struct nu_module **grown = mem_grow(sc->found, &sc->cap, sc->count + 1, sizeof *grown);
    if (!grown) {
        if (!reuse(sc->old, lo, hi, info->dlpi_addr))
            free_module(m);
        sc->oom = 1;
        return 0;
    }
    sc->found = grown;
    sc->found[sc->count++] = m;
    return 0;
}

static int changed(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)arg;
    if (size < offsetof(struct dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs)
        return 1; /* no counters: always rescan */
    if (info->dlpi_adds == seen_adds && info->dlpi_subs == seen_subs)
        return 2;
    seen_adds = info->dlpi_adds;
    seen_subs = info->dlpi_subs;
    return 1;
}

/* ---- residency ------------------------------------------------------------- */

/* Marks the loaded object m NODELETE (it stays mapped to the end); 1 when
 * it is that object. */
static int pin(const struct nu_module *m)
{
    if (!m->path[0])
        return 1; /* the main program */
    void *h = dlopen(m->path, RTLD_LAZY | RTLD_NOLOAD | RTLD_NODELETE);
    if (!h)
        return 0;
    struct link_map *lm = NULL;
    int same = dlinfo(h, RTLD_DI_LINKMAP, &lm) == 0 && lm && lm->l_addr == m->bias;
    dlclose(h); /* the reference dlopen took; NODELETE stays */
    return same;
}

/* The vDSO (clock_gettime's leaf frames in wall mode): the kernel maps it
 * for the process's life; its ELF header is at AT_SYSINFO_EHDR. */
static int is_vdso(const struct nu_module *m)
{
    uintptr_t ehdr = (uintptr_t)getauxval(AT_SYSINFO_EHDR);
    return (ehdr && ehdr >= m->bias && ehdr < m->hi && m->lo - ehdr < 0x10000) ||
           strstr(m->path, "linux-vdso") || strstr(m->path, "linux-gate");
}

static struct nu_module *by_soname(struct nu_module **mods, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++) {
        const char *own = mods[i]->soname ? mods[i]->soname : file_name(mods[i]->path);
        if (strcmp(own, name) == 0)
            return mods[i];
    }
    return NULL;
}

/* Which objects (mods, in the loader's order) are never unloaded: roots,
 * then what they need, to a fixed point; their walkers may then read them
 * in place. */
static void settle_residency(struct nu_module **mods, size_t n)
{
    const char *runtime_dir = NULL;
    size_t dir_len = 0;
    for (size_t i = 0; i < n && !runtime_dir; i++) {
        if (strcmp(file_name(mods[i]->path), "libcoreclr.so") == 0) {
            runtime_dir = mods[i]->path;
            dir_len = (size_t)(file_name(runtime_dir) - runtime_dir);
        }
    }
    for (size_t i = 0; i < n; i++) {
        struct nu_module *m = mods[i];
        if (m->kept || m->pin_tried)
            continue;
        const char *name = file_name(m->path);
        int runtime = (runtime_dir && dir_len && strncmp(m->path, runtime_dir, dir_len) == 0 &&
                       !strchr(m->path + dir_len, '/')) ||
                      strcmp(name, "libhostfxr.so") == 0;
        if (!m->path[0])
            m->kept = 1; /* the main program */
        else if (is_vdso(m))
            m->kept = 1; /* the kernel's, mapped for the process's life */
        else if (m->nodelete)
            m->kept = 1;
        else if (runtime) {
            m->pin_tried = 1;
            m->kept = pin(m);
        }
    }
    for (int grew = 1; grew;) {
        grew = 0;
        for (size_t i = 0; i < n; i++) {
            if (!mods[i]->kept)
                continue;
            for (size_t k = 0; k < mods[i]->needed_count; k++) {
                struct nu_module *dep = by_soname(mods, n, mods[i]->needed[k]);
                if (dep && !dep->kept)
                    dep->kept = grew = 1;
            }
        }
    }
    for (size_t i = 0; i < n; i++)
        if (mods[i]->kept && mods[i]->indexed && !atomic_load(&mods[i]->resident))
            atomic_store_explicit(&mods[i]->resident, 1, memory_order_release);
}

/* ---- decoding what walks asked for ------------------------------------------ */

static void publish_cache(struct nu_module *m, struct nu_cache *next)
{
    struct nu_cache *old = atomic_exchange_explicit(&m->cache, next, memory_order_acq_rel);
    size_t before = old ? old->row_count : 0;
    atomic_fetch_add(&rows_total, next->row_count - before);
    if (old)
        thread_rings_retire_object(old, mem_free);
}

static int by_fn_lo(const void *a, const void *b)
{
    const struct cfi_function *x = a, *y = b;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Does [lo, hi) overlap a function of the cache? */
static int cached(const struct nu_cache *c, uint64_t lo, uint64_t hi)
{
    if (!c)
        return 0;
    size_t a = 0, b = c->fn_count;
    while (a < b) {
        size_t m = a + (b - a) / 2;
        if (c->fns[m].lo < hi)
            a = m + 1;
        else
            b = m;
    }
    return a > 0 && c->fns[a - 1].hi > lo;
}

/* The old cache and the functions fresh (sorted, not overlapping it or one
 * another) as one new cache; NULL when out of memory. */
static struct nu_cache *merged(const struct nu_cache *old, const struct cfi_function *fresh,
                               size_t n)
{
    size_t fns = (old ? old->fn_count : 0) + n, rows = old ? old->row_count : 0;
    for (size_t i = 0; i < n; i++)
        rows += fresh[i].count;
    struct nu_cache *c = mem_alloc(sizeof *c + fns * sizeof *c->fns + rows * sizeof *c->rows);
    if (!c)
        return NULL;
    c->fns = (struct nu_fn *)(c + 1);
    c->rows = (struct cfi_row *)(c->fns + fns);
    c->fn_count = fns;
    c->row_count = rows;
    size_t r = 0;
    if (old && old->row_count) {
        memcpy(c->rows, old->rows, old->row_count * sizeof *c->rows);
        r = old->row_count;
    }
    size_t a = 0, b = 0, o = 0, na = old ? old->fn_count : 0;
    while (a < na || b < n) {
        if (b == n || (a < na && old->fns[a].lo < fresh[b].lo)) {
            c->fns[o++] = old->fns[a++];
            continue;
        }
        const struct cfi_function *f = &fresh[b++];
        c->fns[o++] = (struct nu_fn){f->lo, f->hi, (uint32_t)r, (uint32_t)f->count};
        if (f->count)
            memcpy(c->rows + r, f->rows, f->count * sizeof *c->rows);
        r += f->count;
    }
    return c;
}

/* Decodes the functions at the run-time addresses pcs (sorted) of m into
 * its cache; the loader's lock is held (inside dl_iterate_phdr). */
static void decode_functions(struct nu_module *m, const uintptr_t *pcs, size_t n)
{
    const struct nu_cache *old = atomic_load(&m->cache);
    struct cfi_function *fresh = mem_calloc(n, sizeof *fresh);
    if (!fresh)
        return;
    size_t kept = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t pc = pcs[i] - m->bias;
        const struct cfi_row *row;
        if ((old && cache_find(old, pc, &row)) ||
            (kept && pc >= fresh[kept - 1].lo && pc < fresh[kept - 1].hi))
            continue; /* decoded already (pcs are sorted: the last fresh one) */
        struct cfi_function f;
        if (cfi_index_function(&m->index, pc, &f) < 0)
            break; /* out of memory: asked again later */
        if (cached(old, f.lo, f.hi) || (kept && f.lo < fresh[kept - 1].hi)) {
            cfi_function_free(&f); /* overlaps one known (a damaged table) */
            continue;
        }
        fresh[kept++] = f;
        for (int g = 0; g < CFI_GAP_COUNT; g++)
            if (f.gaps & (1u << g))
                m->gaps.n[g]++;
    }
    if (kept) {
        qsort(fresh, kept, sizeof *fresh, by_fn_lo);
        struct nu_cache *next = merged(old, fresh, kept);
        if (next)
            publish_cache(m, next);
    }
    for (size_t i = 0; i < kept; i++)
        cfi_function_free(&fresh[i]);
    mem_free(fresh);
}

/* Is the object dl_iterate_phdr shows the module's (not another loaded
 * where an unloaded one was)? */
static int same_object(const struct dl_phdr_info *info, const struct nu_module *m)
{
    const uint8_t *hdr = NULL, *seg_lo, *seg_hi;
    if (m->bias != info->dlpi_addr || !eh_frame_of(info, &hdr, &seg_lo, &seg_hi))
        return 0;
    return hdr == m->hdr && seg_lo == m->seg_lo && seg_hi == m->seg_hi;
}

struct work {
    const struct nu_snapshot *s;
    const uintptr_t *pcs; /* asked for, sorted */
    size_t count;
};

/* dl_iterate_phdr callback: under the loader's lock (no object is unloaded
 * meanwhile), the wanted whole tables of the object's module, and the
 * functions asked for in it. */
static int do_work(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    const struct work *w = arg;
    for (size_t i = 0; i < w->s->count && !atomic_load(&abandoned); i++) {
        struct nu_module *m = w->s->modules[i];
        if (m->bare || m->bias != info->dlpi_addr)
            continue;
        int whole = !m->indexed && !atomic_load(&m->ready) && atomic_load(&m->wanted);
        size_t a = 0, b = w->count, e;
        while (a < b) { /* the first pc in the module */
            size_t k = a + (b - a) / 2;
            if (w->pcs[k] < m->lo)
                a = k + 1;
            else
                b = k;
        }
        for (e = a; e < w->count && w->pcs[e] < m->hi; e++) {
        }
        if ((!whole && (!m->indexed || e == a)) || !same_object(info, m))
            continue;
        uint64_t t0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
        if (whole) {
            struct cfi_table t;
            memset(&t, 0, sizeof t);
            if (cfi_parse_hdr(m->hdr, m->seg_lo, m->seg_hi, m->bias, &t) < 0) {
                atomic_store(&m->wanted, 0); /* out of memory: wanted again later */
            } else {
                m->table = t;
                m->gaps = t.gaps;
                atomic_store_explicit(&m->ready, 1, memory_order_release);
                atomic_fetch_add(&rows_total, t.count);
            }
        } else {
            decode_functions(m, w->pcs + a, e - a);
        }
        atomic_fetch_add(&parse_ns, clock_ns(CLOCK_THREAD_CPUTIME_ID) - t0);
    }
    return 0;
}

static int by_address(const void *a, const void *b)
{
    uintptr_t x = *(const uintptr_t *)a, y = *(const uintptr_t *)b;
    return x < y ? -1 : x > y;
}

/* Every function asked for in the whole snapshot (refresh_all, tests). */
static size_t every_function(const struct nu_snapshot *s, uintptr_t **out);

static void do_wanted_work(void)
{
    on_collector = 1;
    atomic_store(&parsing, 1); /* before any_wanted is taken: a waiter sees one or the other */
    int wanted = atomic_exchange(&any_wanted, 0);
    uintptr_t pcs[REQUEST_SLOTS];
    size_t n = 0;
    if (atomic_exchange(&any_requests, 0)) {
        for (size_t i = 0; i < REQUEST_SLOTS; i++) {
            uintptr_t v = atomic_exchange_explicit(&requests[i], 0, memory_order_relaxed);
            if (v)
                pcs[n++] = v;
        }
    }
    struct nu_snapshot *s = atomic_load(&current);
    if (s && !atomic_load(&abandoned) && (wanted || n || parse_all)) {
        qsort(pcs, n, sizeof pcs[0], by_address);
        struct work w = {s, pcs, n};
        uintptr_t *all = NULL;
        if (parse_all && (w.count = every_function(s, &all)) > 0)
            w.pcs = all;
        else
            w.count = n;
        dl_iterate_phdr(do_work, &w);
        mem_free(all);
    }
    pthread_mutex_lock(&parsed_lock);
    atomic_store(&parsing, 0);
    pthread_cond_broadcast(&parsed_cond);
    pthread_mutex_unlock(&parsed_lock);
}

static size_t every_function(const struct nu_snapshot *s, uintptr_t **out)
{
    size_t n = 0;
    for (size_t i = 0; i < s->count; i++)
        if (s->modules[i]->indexed)
            n += s->modules[i]->index.count;
    uintptr_t *all = n ? mem_alloc(n * sizeof *all) : NULL;
    if (!all)
        return 0;
    size_t k = 0;
    for (size_t i = 0; i < s->count; i++) {
        const struct cfi_index *ix = &s->modules[i]->index;
        for (size_t e = 0; s->modules[i]->indexed && e < ix->count; e++) {
            const uint8_t *p = ix->table + 8 * e;
            int32_t off = (int32_t)((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
                                    (uint32_t)p[3] << 24);
            all[k++] = (uintptr_t)ix->hdr + (uintptr_t)(intptr_t)off;
        }
    }
    qsort(all, k, sizeof *all, by_address);
    *out = all;
    return k;
}

void nativeunwind_set_waker(void (*fn)(void *), void *ctx)
{
    waker_ctx = ctx;
    waker = fn;
}

int nativeunwind_wait_tables(uint64_t timeout_ns)
{
    if (on_collector || atomic_load(&waits_given_up) || atomic_load(&abandoned))
        return 0;
    if (waker)
        waker(waker_ctx); /* the collector does the work at once */
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += (time_t)(timeout_ns / 1000000000ull);
    deadline.tv_nsec += (long)(timeout_ns % 1000000000ull);
    if (deadline.tv_nsec >= 1000000000l) {
        deadline.tv_sec++;
        deadline.tv_nsec -= 1000000000l;
    }
    int ready = 1;
    pthread_mutex_lock(&parsed_lock);
    while ((atomic_load(&any_wanted) || atomic_load(&parsing)) && !atomic_load(&abandoned)) {
        if (pthread_cond_timedwait(&parsed_cond, &parsed_lock, &deadline) == ETIMEDOUT) {
            ready = 0;
            atomic_store(&waits_given_up, 1);
            break;
        }
    }
    pthread_mutex_unlock(&parsed_lock);
    return ready && !atomic_load(&abandoned);
}

static int by_lo(const void *a, const void *b)
{
    const struct nu_module *x = *(struct nu_module *const *)a, *y = *(struct nu_module *const *)b;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static void list_objects(void);

void nativeunwind_refresh(void)
{
    if (dl_iterate_phdr(changed, NULL) != 2)
        list_objects();
    do_wanted_work();
}

void nativeunwind_list(void)
{
    atomic_store(&abandoned, 0);
    if (dl_iterate_phdr(changed, NULL) != 2)
        list_objects();
}

/* A new snapshot of the loaded objects, reusing the modules (and tables)
 * of the old one that are still there. */
static void list_objects(void)
{
    struct nu_snapshot *old = atomic_load(&current);
    struct scan sc = {old, NULL, 0, 0, 0};
    dl_iterate_phdr(on_object, &sc);
    /* in the loader's order, outside its lock (pin calls dlopen) */
    settle_residency(sc.found, sc.count);
    struct nu_snapshot *next = mem_alloc(sizeof *next + sc.count * sizeof next->modules[0]);
    if (!next) {
        for (size_t i = 0; i < sc.count; i++)
            if (!reuse(old, sc.found[i]->lo, sc.found[i]->hi, sc.found[i]->bias))
                free_module(sc.found[i]);
        mem_free(sc.found);
        seen_adds = seen_subs = ~0ull; /* try again next time */
        return;
    }
    next->count = sc.count;
    next->gen = ++snapshot_gen;
    if (sc.count)
        memcpy(next->modules, sc.found, sc.count * sizeof sc.found[0]);
    qsort(next->modules, next->count, sizeof next->modules[0], by_lo);
    mem_free(sc.found);
    if (sc.oom)
        seen_adds = seen_subs = ~0ull;
    atomic_store_explicit(&current, next, memory_order_release);
    size_t rows = 0;
    for (size_t i = 0; i < next->count; i++) {
        const struct nu_module *m = next->modules[i];
        const struct nu_cache *c = atomic_load(&m->cache);
        rows += atomic_load(&m->ready) ? m->table.count : 0;
        rows += c ? c->row_count : 0;
    }
    atomic_store(&rows_total, rows);
    if (!old)
        return;
    /* modules of the old snapshot that are gone, then the old array */
    for (size_t i = 0; i < old->count; i++) {
        struct nu_module *m = old->modules[i];
        if (!reuse(next, m->lo, m->hi, m->bias)) {
            keep_gaps(m);
            thread_rings_retire_object(m, free_module);
        }
    }
    thread_rings_retire_object(old, mem_free);
}

void nativeunwind_gaps(void (*fn)(void *ctx, const char *path, const struct cfi_gaps *gaps,
                                  uint32_t walks, int no_eh_frame),
                       void *ctx)
{
    const struct nu_snapshot *s = atomic_load(&current);
    for (size_t i = 0; s && i < s->count; i++) {
        const struct nu_module *m = s->modules[i];
        if (has_gaps(m))
            fn(ctx, m->path ? m->path : "", &m->gaps, walks_of(m), m->bare);
    }
    for (size_t i = 0; i < gone_count; i++)
        fn(ctx, gone[i].path, &gone[i].gaps, gone[i].walks, gone[i].no_eh_frame);
}

void nativeunwind_want_all(void)
{
    const struct nu_snapshot *s = atomic_load(&current);
    for (size_t i = 0; s && i < s->count; i++)
        if (!s->modules[i]->indexed && !atomic_load(&s->modules[i]->ready))
            atomic_store(&s->modules[i]->wanted, 1);
    atomic_store(&any_wanted, 1);
}

void nativeunwind_refresh_all(void)
{
    parse_all = 1;
    seen_adds = seen_subs = ~0ull;
    nativeunwind_list();
    nativeunwind_want_all();
    do_wanted_work();
    parse_all = 0;
}

void nativeunwind_abandon(void)
{
    pthread_mutex_lock(&parsed_lock);
    atomic_store(&abandoned, 1);
    pthread_cond_broadcast(&parsed_cond); /* a waiting callback walks on */
    pthread_mutex_unlock(&parsed_lock);
}

void nativeunwind_resume(void)
{
    atomic_store(&abandoned, 0);
}

int nativeunwind_resident(uintptr_t at)
{
    const struct nu_snapshot *s = atomic_load(&current);
    const struct nu_module *m = s ? find_module(s, at) : NULL;
    return m && atomic_load(&m->resident);
}

uint64_t nativeunwind_parse_ns(void)
{
    return atomic_load(&parse_ns);
}

size_t nativeunwind_rows(void)
{
    return atomic_load(&rows_total);
}

void nativeunwind_shutdown(void)
{
    struct nu_snapshot *old = atomic_exchange(&current, NULL);
    seen_adds = seen_subs = ~0ull;
    atomic_store(&waits_given_up, 0);
    atomic_store(&any_requests, 0);
    for (size_t i = 0; i < REQUEST_SLOTS; i++)
        atomic_store(&requests[i], 0);
    for (size_t i = 0; i < gone_count; i++)
        mem_free(gone[i].path);
    mem_free(gone);
    gone = NULL;
    gone_count = gone_cap = 0;
    if (!old)
        return;
    for (size_t i = 0; i < old->count; i++)
        thread_rings_retire_object(old->modules[i], free_module);
    thread_rings_retire_object(old, mem_free);
}
