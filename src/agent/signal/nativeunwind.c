/*
 * nativeunwind: see nativeunwind.h.  The collector keeps one published,
 * immutable snapshot: the loaded ELF objects sorted by the address range of
 * their executable segments.  dl_iterate_phdr's adds/subs counters say
 * cheaply whether anything was loaded or unloaded since the last look.
 *
 * An object's CFI table (cfi.h) is parsed when a walk first needs it, not
 * before: parsing every library at start-up took 25 to 45 ms of each
 * process (libcoreclr.so alone has 110,000 rows), most of it for libraries
 * no sample ever enters.  A handler that meets an object whose table is not
 * there yet marks it wanted and steps by frame pointers (which the runtime's
 * own libraries keep); the collector parses wanted tables at its next
 * cycle, off the program's threads.  Tables are parsed inside
 * dl_iterate_phdr's callback, while the loader's lock keeps the object from
 * being unloaded under the parser, and published by a release store of the
 * module's `ready`.  Old snapshots, and the tables of unloaded objects, go
 * to the reclaimer (thread_rings.h), so a handler never reads freed memory.
 */
#include "agent/signal/nativeunwind.h"

#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agent/signal/arch.h"
#include "agent/signal/cfi.h"
#include "agent/signal/thread_rings.h"
#include "agent/signal/walk_step.h"
#include "common/clock.h"
#include "common/mem.h"

struct nu_module {
    uintptr_t lo, hi; /* executable segments, runtime addresses */
    uintptr_t bias;
    const uint8_t *hdr, *seg_lo, *seg_hi; /* its .eh_frame_hdr and the segment holding it */
    _Atomic int wanted;   /* a walk needed the table (handler) */
    _Atomic int ready;    /* the table is parsed (collector, release) */
    _Atomic uint32_t walks_stopped; /* walks ended at a rule of its table (handler) */
    int bare;             /* no .eh_frame_hdr: no table, frame pointers only */
    _Atomic uint32_t walks_through; /* bare: walks that stepped through it (handler) */
    struct cfi_table table;
    char *path;           /* dlpi_name ("" for the main program) */
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
    struct nu_module *modules[]; /* sorted by lo */
};

static _Atomic(struct nu_snapshot *) current;
static unsigned long long seen_adds = ~0ull, seen_subs = ~0ull;
static _Atomic size_t rows_total;
static _Atomic int any_wanted; /* some module is wanted and not ready */
static _Atomic uint64_t parse_ns; /* time spent parsing tables */
static int parse_all;          /* nativeunwind_refresh_all: every table now */
/* A callback's walk that met a table not parsed yet waits for it
 * (nativeunwind_wait_tables): the collector says when a parse is done. */
static pthread_mutex_t parsed_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t parsed_cond = PTHREAD_COND_INITIALIZER;
static _Atomic int parsing;       /* the collector is parsing, or about to */
static _Atomic int waits_given_up; /* a wait timed out: the collector is held up */
static __thread int on_collector; /* this thread refreshes the tables */
/* collector: libraries unloaded that had gaps */
static struct nu_gap *gone;
static size_t gone_count, gone_cap;

/* ---- the handler's side ---------------------------------------------------- */

NO_ASAN static int read_word(uintptr_t addr, uintptr_t lo, uintptr_t hi, uintptr_t *out)
{
    if (addr < lo || addr > hi - 8 || (addr & 7))
        return 0;
    *out = *(const uintptr_t *)addr;
    return 1;
}

static const struct nu_module *find_module(const struct nu_snapshot *s, uintptr_t pc)
{
    size_t a = 0, b = s->count;
    while (a < b) {
        size_t m = a + (b - a) / 2;
        const struct nu_module *mod = s->modules[m];
        if (pc < mod->lo)
            b = m;
        else if (pc >= mod->hi)
            a = m + 1;
        else
            return mod;
    }
    return NULL;
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

enum nu_status nativeunwind_step(uintptr_t *pc, uintptr_t *sp, uintptr_t *fp, uintptr_t *lr,
                                 uintptr_t lo, uintptr_t hi, int leaf)
{
    const struct nu_snapshot *s = atomic_load_explicit(&current, memory_order_acquire);
    if (!s)
        return NU_NO_CFI;
    /* a return address is the instruction after the call: look inside it */
    uintptr_t at = leaf ? *pc : *pc - 1;
    struct nu_module *m = (struct nu_module *)find_module(s, at);
    if (!m)
        return NU_NO_CFI;
    if (m->bare) {
        atomic_fetch_add_explicit(&m->walks_through, 1, memory_order_relaxed);
        return NU_NO_TABLE;
    }
    if (!atomic_load_explicit(&m->ready, memory_order_acquire)) {
        /* parsed by the collector soon; frame pointers meanwhile */
        if (!atomic_load_explicit(&m->wanted, memory_order_relaxed)) {
            atomic_store_explicit(&m->wanted, 1, memory_order_relaxed);
            atomic_store_explicit(&any_wanted, 1, memory_order_release);
        }
        return NU_PENDING;
    }
    const struct cfi_row *row = cfi_find(&m->table, at - m->bias);
    if (!row)
        return NU_NO_CFI;
    if (row->cfa == CFI_UNSUPPORTED) {
        atomic_fetch_add_explicit(&m->walks_stopped, 1, memory_order_relaxed);
        return NU_RULE;
    }
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

/* The row of a module's table for `at`, read only once the acquire of
 * `ready` has shown the table whole (NULL before, or with no module). */
static const struct cfi_row *published_row(const struct nu_module *m, uintptr_t at)
{
    if (!m || !atomic_load_explicit(&m->ready, memory_order_acquire))
        return NULL;
    return cfi_find(&m->table, at - m->bias);
}

int nativeunwind_covers(uintptr_t at)
{
    const struct nu_snapshot *s = atomic_load_explicit(&current, memory_order_acquire);
    if (!s)
        return 0;
    return published_row(find_module(s, at), at) != NULL;
}

int nativeunwind_is_sigreturn(uintptr_t ra)
{
    const struct nu_snapshot *s = atomic_load_explicit(&current, memory_order_acquire);
    if (!s || ra < 1)
        return 0;
    const struct cfi_row *row = published_row(find_module(s, ra - 1), ra - 1);
    return row && row->cfa == CFI_SIGFRAME;
}

/* ---- the collector's side -------------------------------------------------- */

static void free_module(void *p)
{
    struct nu_module *m = p;
    cfi_free(&m->table);
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
        if (m->table.gaps.n[g])
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
    gone[gone_count++] = (struct nu_gap){copy, m->table.gaps, walks_of(m), m->bare};
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

static int on_object(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct scan *sc = arg;
    uintptr_t lo = UINTPTR_MAX, hi = 0;
    const ElfW(Phdr) *eh = NULL;
    for (ElfW(Half) i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
            uintptr_t a = info->dlpi_addr + ph->p_vaddr;
            if (a < lo)
                lo = a;
            if (a + ph->p_memsz > hi)
                hi = a + ph->p_memsz;
        } else if (ph->p_type == PT_GNU_EH_FRAME) {
            eh = ph;
        }
    }
    if (lo >= hi)
        return 0;
    struct nu_module *m = reuse(sc->old, lo, hi, info->dlpi_addr);
    if (!m && !eh) {
        /* no unwind data at all: walks go through it by frame pointers
         * (the vDSO's is in the kernel's image: not listed) */
        const char *name = info->dlpi_name ? info->dlpi_name : "";
        if (strstr(name, "linux-vdso"))
            return 0;
        if (!(m = new_module(sc, info, lo, hi)))
            return 0;
        m->bare = 1;
        atomic_store(&m->ready, 1); /* an empty table */
    } else if (!m) {
        /* the readable segment holding .eh_frame_hdr bounds the parser */
        const uint8_t *hdr = (const uint8_t *)(info->dlpi_addr + eh->p_vaddr);
        const uint8_t *seg_lo = NULL, *seg_hi = NULL;
        for (ElfW(Half) i = 0; i < info->dlpi_phnum; i++) {
            const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
            const uint8_t *a = (const uint8_t *)(info->dlpi_addr + ph->p_vaddr);
            if (ph->p_type == PT_LOAD && hdr >= a && hdr < a + ph->p_filesz) {
                seg_lo = a;
                seg_hi = a + ph->p_filesz;
            }
        }
        if (!seg_lo)
            return 0;
        if (!(m = new_module(sc, info, lo, hi)))
            return 0;
        m->hdr = hdr;
        m->seg_lo = seg_lo;
        m->seg_hi = seg_hi;
        if (parse_all)
            atomic_store(&m->wanted, 1);
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

/* The agent thread's CPU time: what parsing costs, whatever the load. */
/* dl_iterate_phdr callback: parses the wanted tables of the objects of the
 * current snapshot (under the loader's lock, so none is unloaded meanwhile). */
static int parse_wanted(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    const struct nu_snapshot *s = arg;
    for (size_t i = 0; i < s->count; i++) {
        struct nu_module *m = s->modules[i];
        if (m->bias != info->dlpi_addr || atomic_load(&m->ready) || !atomic_load(&m->wanted))
            continue;
        struct cfi_table t;
        memset(&t, 0, sizeof t);
        uint64_t t0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
        int rc = cfi_parse_hdr(m->hdr, m->seg_lo, m->seg_hi, m->bias, &t);
        atomic_fetch_add(&parse_ns, clock_ns(CLOCK_THREAD_CPUTIME_ID) - t0);
        if (rc < 0) {
            atomic_store(&m->wanted, 0); /* out of memory: wanted again later */
            continue;
        }
        m->table = t;
        atomic_store_explicit(&m->ready, 1, memory_order_release);
        atomic_fetch_add(&rows_total, t.count);
    }
    return 0;
}

static void parse_wanted_tables(void)
{
    on_collector = 1;
    atomic_store(&parsing, 1); /* before any_wanted is taken: a waiter sees one or the other */
    if (atomic_exchange(&any_wanted, 0) || parse_all) {
        struct nu_snapshot *s = atomic_load(&current);
        if (s)
            dl_iterate_phdr(parse_wanted, s);
    }
    pthread_mutex_lock(&parsed_lock);
    atomic_store(&parsing, 0);
    pthread_cond_broadcast(&parsed_cond);
    pthread_mutex_unlock(&parsed_lock);
}

int nativeunwind_wait_tables(uint64_t timeout_ns)
{
    if (on_collector || atomic_load(&waits_given_up))
        return 0;
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
    while (atomic_load(&any_wanted) || atomic_load(&parsing)) {
        if (pthread_cond_timedwait(&parsed_cond, &parsed_lock, &deadline) == ETIMEDOUT) {
            ready = 0;
            atomic_store(&waits_given_up, 1);
            break;
        }
    }
    pthread_mutex_unlock(&parsed_lock);
    return ready;
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
    parse_wanted_tables();
}

void nativeunwind_list(void)
{
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
    if (sc.count)
        memcpy(next->modules, sc.found, sc.count * sizeof sc.found[0]);
    qsort(next->modules, next->count, sizeof next->modules[0], by_lo);
    mem_free(sc.found);
    if (sc.oom)
        seen_adds = seen_subs = ~0ull;
    atomic_store_explicit(&current, next, memory_order_release);
    size_t rows = 0;
    for (size_t i = 0; i < next->count; i++)
        if (atomic_load(&next->modules[i]->ready))
            rows += next->modules[i]->table.count;
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
            fn(ctx, m->path ? m->path : "", &m->table.gaps, walks_of(m), m->bare);
    }
    for (size_t i = 0; i < gone_count; i++)
        fn(ctx, gone[i].path, &gone[i].gaps, gone[i].walks, gone[i].no_eh_frame);
}

void nativeunwind_want_all(void)
{
    const struct nu_snapshot *s = atomic_load(&current);
    for (size_t i = 0; s && i < s->count; i++)
        if (!atomic_load(&s->modules[i]->ready))
            atomic_store(&s->modules[i]->wanted, 1);
    atomic_store(&any_wanted, 1);
}

void nativeunwind_refresh_all(void)
{
    parse_all = 1;
    seen_adds = seen_subs = ~0ull;
    nativeunwind_refresh();
    parse_all = 0;
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
