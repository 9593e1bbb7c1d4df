/*
 * mcode: see mcode.h.
 */
#include "agent/signal/mcode.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "agent/signal/ranges.h"
#include "agent/signal/thread_rings.h"
#include "common/map.h"
#include "common/mem.h"

_Static_assert(offsetof(struct mcode_entry, start) == 0, "ranges.h searches by the first member");

struct mc_array {
    size_t count, cap;
    struct mcode_entry e[]; /* sorted by start */
};

struct pe_section {
    uint32_t rva, size;
};

#define MAX_SECTIONS 96
/* An image of at most this many sections has each function's entry and
 * unwind data checked when a walk first finds it (lazy), not all at once
 * when it is added: that read the unwind codes of every function of
 * CoreLib (50,000, scattered through it: ~1 ms of page faults in every
 * process), and the entries alone took 0.44 ms more.
 * Only where a function's end is in its table entry (x86-64): arm64's is
 * in its unwind data. */
#if defined(__x86_64__)
#define LAZY_SECTIONS 8
#else
#define LAZY_SECTIONS 0
#endif

struct mc_image {
    uintptr_t lo, hi;        /* the image */
    const uint32_t *rf;      /* RUNTIME_FUNCTION entries (arch.h), sorted by begin */
    size_t count;
    /* its sections, when its unwind data is checked lazily (0: all of it
     * was checked when the image was added) */
    size_t nsecs;
    struct pe_section secs[LAZY_SECTIONS ? LAZY_SECTIONS : 1];
};

struct mc_images {
    size_t count;
    struct mc_image im[]; /* sorted by lo */
};

struct mc_snap {
    const struct mc_array *big;
    const struct mc_images *images;
    size_t recent_count;
    struct mcode_entry recent[];
};

static _Atomic(struct mc_snap *) current;

/* the loop's own */
static struct mc_array *big;       /* as published */
static struct mc_images *images;   /* as published */
static struct mcode_entry *recent; /* sorted; copied into each snapshot */
static size_t recent_count, recent_cap;
static struct map64 removed;       /* starts to drop from big at the next publication */
static int removed_init, dirty;
static size_t copied_since_merge; /* recent entries copied into snapshots since big was last rebuilt */
static uint64_t copied_total;     /* entries copied by publications (tests) */
static uint64_t unchanged_reports; /* additions of what was already there (tests) */
static struct mc_image *pending_images;
static size_t pending_count, pending_cap;
/* The largest large array no handler can see any more, kept for the next
 * rebuild to write into: each merge of a compiler's start-up wrote a new
 * array into fresh pages, whose faults were more than half of the agent
 * thread's in a `dotnet build` (3,968 of 7,194).  The array two merges
 * back is grown to fit when it must. */
static struct mc_array *spare;
static uint64_t spare_reuses; /* tests */

/* The ring of just-compiled code: written by the JIT callbacks under a lock
 * of their own, read by handlers without one, each slot a seqlock (odd
 * while being written; a reader that sees it change skips the slot). */
#define FRESH 128

struct fresh_slot {
    _Atomic uint32_t seq;
    struct mcode_entry e;
};

static struct fresh_slot fresh[FRESH];
static _Atomic uint64_t fresh_head;
static pthread_mutex_t fresh_lock = PTHREAD_MUTEX_INITIALIZER;

void mcode_fresh(const struct mcode_entry *e)
{
    if (!e->len)
        return;
    pthread_mutex_lock(&fresh_lock);
    uint64_t h = atomic_load_explicit(&fresh_head, memory_order_relaxed);
    struct fresh_slot *f = &fresh[h % FRESH];
    uint32_t seq = atomic_load_explicit(&f->seq, memory_order_relaxed);
    atomic_store_explicit(&f->seq, seq + 1, memory_order_relaxed);
    atomic_thread_fence(memory_order_release);
    f->e = *e;
    atomic_store_explicit(&f->seq, seq + 2, memory_order_release);
    atomic_store_explicit(&fresh_head, h + 1, memory_order_release);
    pthread_mutex_unlock(&fresh_lock);
}

/* ---- the handler's side -------------------------------------------------- */

static void fill(const struct mcode_entry *e, struct mcode_hit *h)
{
    h->lo = e->start;
    h->hi = e->start + e->len;
    h->fn_start = e->fn_start;
    h->permanent = e->permanent;
    h->shape = e->shape;
}

enum mcode_found mcode_find_fresh(uintptr_t at, struct mcode_hit *h)
{
    uint64_t head = atomic_load_explicit(&fresh_head, memory_order_acquire);
    uint64_t n = head < FRESH ? head : FRESH;
    for (uint64_t i = 1; i <= n; i++) { /* newest first */
        const struct fresh_slot *f = &fresh[(head - i) % FRESH];
        uint32_t seq = atomic_load_explicit(&f->seq, memory_order_acquire);
        if (seq & 1)
            continue;
        struct mcode_entry e;
        memcpy(&e, (const void *)&f->e, sizeof e);
        atomic_thread_fence(memory_order_acquire);
        if (atomic_load_explicit(&f->seq, memory_order_relaxed) != seq)
            continue;
        if (at - e.start < e.len) {
            fill(&e, h);
            return e.known ? MCODE_FOUND : MCODE_NO_SHAPE;
        }
    }
    return MCODE_NONE;
}

static const struct mcode_entry *search(const struct mcode_entry *v, size_t n, uintptr_t at)
{
    size_t a = ranges_upper_bound(v, n, sizeof *v, at);
    if (a == 0)
        return NULL;
    const struct mcode_entry *e = &v[a - 1];
    return at - e->start < e->len ? e : NULL;
}

/* Does [rva, rva + n) lie in one section? */
static int in_section(const struct pe_section *secs, size_t nsecs, uint32_t rva, uint32_t n)
{
    for (size_t i = 0; i < nsecs; i++)
        if (rva >= secs[i].rva && rva - secs[i].rva <= secs[i].size &&
            n <= secs[i].size - (rva - secs[i].rva))
            return 1;
    return 0;
}

/* Is entry f's unwind data inside the image's sections (its header first,
 * then the codes the header counts)? */
static int unwind_inside(const uint8_t *base, const struct pe_section *secs, size_t nsecs,
                         const uint32_t *f)
{
    uint32_t u, head = arch_rf_unwind(f, &u);
    return !head || (in_section(secs, nsecs, u, head) &&
                     in_section(secs, nsecs, u, arch_rf_unwind_size(base, f)));
}

static enum mcode_found from_image(const struct mc_images *ims, uintptr_t at, struct mcode_hit *h)
{
    size_t a = 0, b = ims->count;
    const struct mc_image *im = NULL;
    while (a < b) {
        size_t m = a + (b - a) / 2;
        if (at < ims->im[m].lo)
            b = m;
        else if (at >= ims->im[m].hi)
            a = m + 1;
        else {
            im = &ims->im[m];
            break;
        }
    }
    if (!im)
        return MCODE_NONE;
    uint32_t rva = (uint32_t)(at - im->lo);
    a = 0, b = im->count;
    while (a < b) { /* first begin > rva */
        size_t m = a + (b - a) / 2;
        if (im->rf[ARCH_RF_WORDS * m] <= rva)
            a = m + 1;
        else
            b = m;
    }
    if (a == 0)
        return MCODE_IMAGE;
    const uint32_t *f = &im->rf[ARCH_RF_WORDS * (a - 1)];
    /* a damaged entry's unwind data is not read, nor a range outside the
     * image's sections taken: the function is unknown */
    if (im->nsecs && !unwind_inside((const uint8_t *)im->lo, im->secs, im->nsecs, f))
        return MCODE_IMAGE;
    uint32_t end = arch_rf_end((const uint8_t *)im->lo, f);
    if (rva >= end || (im->nsecs && !in_section(im->secs, im->nsecs, f[0], end - f[0])))
        return MCODE_IMAGE;
    h->lo = im->lo + f[0];
    h->hi = im->lo + end;
    h->fn_start = h->lo;
    h->permanent = 1;
    return arch_rf_shape(im->lo, im->hi, f, h->lo, h->hi, &h->shape) == 0 ? MCODE_FOUND
                                                                          : MCODE_NO_SHAPE;
}

enum mcode_found mcode_find(uintptr_t at, struct mcode_hit *h)
{
    const struct mc_snap *s = atomic_load_explicit(&current, memory_order_acquire);
    if (!s)
        return MCODE_NONE;
    const struct mcode_entry *e = search(s->recent, s->recent_count, at);
    if (!e && s->big)
        e = search(s->big->e, s->big->count, at);
    if (e) {
        fill(e, h);
        return e->known ? MCODE_FOUND : MCODE_NO_SHAPE;
    }
    return s->images ? from_image(s->images, at, h) : MCODE_NONE;
}

/* ---- the loop's side ----------------------------------------------------- */

static size_t lower_bound(const struct mcode_entry *v, size_t n, uintptr_t start)
{
    return ranges_lower_bound(v, n, sizeof *v, start);
}

static void drop_recent(uintptr_t start)
{
    size_t at = lower_bound(recent, recent_count, start);
    if (at < recent_count && recent[at].start == start) {
        memmove(recent + at, recent + at + 1, (recent_count - at - 1) * sizeof *recent);
        recent_count--;
    }
}

static void mark_removed(uintptr_t start)
{
    if (!removed_init) {
        map64_init(&removed);
        removed_init = 1;
    }
    if (big) {
        size_t at = lower_bound(big->e, big->count, start);
        if (at < big->count && big->e[at].start == start)
            map64_put(&removed, start, 1);
    }
}

static int same_entry(const struct mcode_entry *a, const struct mcode_entry *b)
{
    return a->start == b->start && a->len == b->len && a->fn_start == b->fn_start &&
           a->known == b->known && a->permanent == b->permanent &&
           (!a->known || memcmp(&a->shape, &b->shape, sizeof a->shape) == 0);
}

/* Is exactly this entry what the handler will find at its start?  The JIT
 * callbacks report every code version of a method each time one is
 * compiled (a tier-1 compilation reports the tier-0 code again): such a
 * report changes nothing, and treating it as a replacement would mark the
 * large array's entry removed and make the next publication rebuild it. */
static int already_published(const struct mcode_entry *e)
{
    size_t at = lower_bound(recent, recent_count, e->start);
    if (at < recent_count && recent[at].start == e->start)
        return same_entry(&recent[at], e);
    uint32_t gone;
    if (!big || (removed_init && map64_get(&removed, e->start, &gone)))
        return 0;
    at = lower_bound(big->e, big->count, e->start);
    return at < big->count && same_entry(&big->e[at], e);
}

void mcode_add(const struct mcode_entry *e)
{
    if (!e->len)
        return;
    if (already_published(e)) {
        unchanged_reports++;
        return;
    }
    drop_recent(e->start);
    mark_removed(e->start); /* a newer report of code at the same start */
    struct mcode_entry *grown = mem_grow(recent, &recent_cap, recent_count + 1, sizeof *recent);
    if (!grown)
        return;
    recent = grown;
    size_t at = lower_bound(recent, recent_count, e->start);
    memmove(recent + at + 1, recent + at, (recent_count - at) * sizeof *recent);
    recent[at] = *e;
    recent_count++;
    dirty = 1;
}

void mcode_remove(uintptr_t start)
{
    drop_recent(start);
    mark_removed(start);
    dirty = 1;
}

/* ---- ReadyToRun images ---------------------------------------------------- */

static int peek(uintptr_t at, void *out, size_t n)
{
    /* through the kernel: a header that is not mapped is an error, not a crash */
    struct iovec local = {out, n}, remote = {(void *)at, n};
    return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == (ssize_t)n ? 0 : -1;
}

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

#define R2R_SIGNATURE 0x00525452u /* "RTR" */
#define R2R_SECTION_RUNTIME_FUNCTIONS 102u


/* The image's RUNTIME_FUNCTIONS section, with the image mapped as loaded
 * (sections at their RVAs, as the runtime maps ReadyToRun images), and its
 * sections.  *size is the image's extent (SizeOfImage, at offset 56 of the
 * optional header in PE32 and PE32+ alike), 0 when base holds no PE image.
 * Returns the number of functions, 0 when it has none or is not such an
 * image. */
static size_t find_runtime_functions(uintptr_t base, size_t *size, uint32_t *rva_out,
                                     struct pe_section *secs, size_t *nsecs)
{
    uint8_t dos[64], nt[24 + 240];
    *size = 0;
    if (peek(base, dos, sizeof dos) < 0 || dos[0] != 'M' || dos[1] != 'Z')
        return 0;
    uint32_t lfanew = le32(dos + 60);
    if (lfanew > (1u << 20) || peek(base + lfanew, nt, sizeof nt) < 0 ||
        memcmp(nt, "PE\0\0", 4) != 0)
        return 0;
    const uint8_t *opt = nt + 24;
    size_t extent = le32(opt + 56);
    *size = extent;
    if (extent < sizeof nt || lfanew > extent - sizeof nt)
        return 0;
    if (opt[0] != 0x0b || opt[1] != 0x02)
        return 0; /* not PE32+ */
    size_t count = (size_t)(nt[6] | nt[7] << 8), opt_size = (size_t)(nt[20] | nt[21] << 8);
    if (count > MAX_SECTIONS)
        return 0;
    uint8_t sh[MAX_SECTIONS * 40]; /* the section table, in one read */
    if (count && peek(base + lfanew + 24 + opt_size, sh, 40 * count) < 0)
        return 0;
    for (size_t i = 0; i < count; i++) {
        secs[i].size = le32(sh + 40 * i + 8);
        secs[i].rva = le32(sh + 40 * i + 12);
    }
    *nsecs = count;
    /* data directory 14: the CLI header */
    uint32_t cli = le32(opt + 112 + 14 * 8);
    uint8_t cor[72];
    if (!cli || cli > extent - sizeof cor || peek(base + cli, cor, sizeof cor) < 0)
        return 0;
    uint32_t mnh = le32(cor + 64); /* ManagedNativeHeader: the READYTORUN_HEADER */
    uint8_t hdr[16];
    if (!mnh || mnh > extent - sizeof hdr || peek(base + mnh, hdr, sizeof hdr) < 0 ||
        le32(hdr) != R2R_SIGNATURE)
        return 0;
    uint32_t sections = le32(hdr + 12);
    if (sections > 256 || mnh + 16 + (size_t)sections * 12 > extent)
        return 0;
    uint8_t table[256 * 12]; /* the ReadyToRun sections, in one read */
    if (sections && peek(base + mnh + 16, table, 12 * (size_t)sections) < 0)
        return 0;
    for (uint32_t i = 0; i < sections; i++) {
        const uint8_t *sec = table + 12 * i;
        if (le32(sec) != R2R_SECTION_RUNTIME_FUNCTIONS)
            continue;
        uint32_t rva = le32(sec + 4), bytes = le32(sec + 8);
        if (rva > extent || bytes > extent - rva || bytes % (4 * ARCH_RF_WORDS) || !bytes)
            return 0;
        *rva_out = rva;
        return bytes / (4 * ARCH_RF_WORDS);
    }
    return 0;
}


size_t mcode_add_image(uintptr_t base, size_t *image_size)
{
    uint32_t rva = 0;
    struct pe_section secs[MAX_SECTIONS];
    size_t nsecs = 0, size = 0;
    size_t count = find_runtime_functions(base, &size, &rva, secs, &nsecs);
    *image_size = size;
    if (!count || !in_section(secs, nsecs, rva, (uint32_t)(count * 4 * ARCH_RF_WORDS)))
        return 0;
    /* the handler reads the table and the unwind codes in place: every
     * section must be mapped, the table sorted, each function and its
     * unwind codes inside a section */
    for (size_t i = 0; i < nsecs; i++) {
        uint8_t byte;
        if (secs[i].size && (secs[i].rva >= size || secs[i].size > size - secs[i].rva ||
                             peek(base + secs[i].rva, &byte, 1) < 0 ||
                             peek(base + secs[i].rva + secs[i].size - 1, &byte, 1) < 0))
            return 0;
    }
    const uint32_t *rf = (const uint32_t *)(base + rva);
    /* lazy: each entry is checked when a walk finds it (its range in a
     * section, its unwind data too), not all 50,000 of CoreLib's here
     * (0.44 ms of every process).  The order is the runtime's: it searches
     * the same table the same way; an entry out of order can only make a
     * function unfound, since a found entry must hold the address */
    int lazy = LAZY_SECTIONS && nsecs <= LAZY_SECTIONS;
    for (size_t i = 0; i < count && !lazy; i++) {
        const uint32_t *f = rf + ARCH_RF_WORDS * i;
        if (!unwind_inside((const uint8_t *)base, secs, nsecs, f))
            return 0;
        uint32_t b = f[0], e = arch_rf_end((const uint8_t *)base, f);
        if (b >= e || !in_section(secs, nsecs, b, e - b) || (i && b < f[-ARCH_RF_WORDS]))
            return 0;
    }
    struct mc_image *grown = mem_grow(pending_images, &pending_cap, pending_count + 1,
                                      sizeof *pending_images);
    if (!grown)
        return 0;
    pending_images = grown;
    struct mc_image *im = &pending_images[pending_count++];
    memset(im, 0, sizeof *im);
    im->lo = base;
    im->hi = base + size;
    im->rf = rf;
    im->count = count;
    if (lazy) {
        im->nsecs = nsecs;
        memcpy(im->secs, secs, nsecs * sizeof secs[0]);
    }
    dirty = 1;
    return count;
}

/* ---- publication ------------------------------------------------------------ */

static void free_snap(void *p)
{
    mem_free(p);
}

/* The reclaimer's (on the loop's thread): a large array no handler sees.
 * After mcode_shutdown (nothing published) it is freed. */
static void keep_spare(void *p)
{
    struct mc_array *a = p;
    if (!atomic_load(&current) || (spare && spare->cap >= a->cap)) {
        mem_free(a);
        return;
    }
    mem_free(spare);
    spare = a;
}

/* An array for n entries: the spare, grown if need be (a block this large
 * is grown by remapping its pages, which stay faulted in), or a new one. */
static struct mc_array *array_for(size_t n)
{
    size_t cap = 2 * n + 256;
    if (spare && spare->cap < n) {
        struct mc_array *grown = mem_realloc(spare, sizeof *grown + cap * sizeof grown->e[0]);
        if (grown) {
            grown->cap = cap;
            spare = grown;
        }
    }
    if (spare && spare->cap >= n) {
        struct mc_array *a = spare;
        spare = NULL;
        spare_reuses++;
        return a;
    }
    struct mc_array *a = mem_alloc(sizeof *a + cap * sizeof a->e[0]);
    if (a)
        a->cap = cap;
    return a;
}

static int by_lo(const void *a, const void *b)
{
    const struct mc_image *x = a, *y = b;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* big without the removed starts, merged with recent when `merge`. */
static struct mc_array *rebuild(int merge)
{
    size_t n = (big ? big->count : 0) + (merge ? recent_count : 0);
    struct mc_array *out = array_for(n);
    if (!out)
        return NULL;
    size_t i = 0, j = 0, k = 0, bn = big ? big->count : 0, rn = merge ? recent_count : 0;
    uint32_t v;
    int dropping = removed_init && removed.count;
    while (i < bn || j < rn) {
        if (j == rn || (i < bn && big->e[i].start < recent[j].start)) {
            if (!(dropping && map64_get(&removed, big->e[i].start, &v)))
                out->e[k++] = big->e[i];
            i++;
        } else {
            if (i < bn && big->e[i].start == recent[j].start)
                i++; /* the newer report wins */
            out->e[k++] = recent[j++];
        }
    }
    out->count = k;
    return out;
}

/* Everything a publication needs is allocated before anything is
 * replaced: `big` and `images` are always the arrays of the published
 * snapshot, and an array goes to the reclaimer only once the snapshot that
 * no longer refers to it is published.  A failed allocation leaves the
 * published table as it was and the changes for the next publication. */
void mcode_publish(void)
{
    if (!dirty)
        return;
    /* Merging recent into big costs a copy of every entry; keeping them
     * apart costs a copy of recent in every snapshot.  Merge once the
     * copies of recent since the last merge would reach the cost of a
     * merge (as a ski rental: within twice the best choice made knowing
     * the future, whatever the rate of compilation and publication).  At
     * a few dozen new methods per publication, as a compiler's start-up
     * makes, this copies a third of what a fixed sqrt(n) bound did. */
    size_t total = (big ? big->count : 0) + recent_count;
    int merge = copied_since_merge + recent_count > total;
    size_t keep_recent = merge ? 0 : recent_count;
    struct mc_snap *s = mem_alloc(sizeof *s + keep_recent * sizeof s->recent[0]);
    if (!s)
        return;
    struct mc_array *nb = NULL;
    if (merge || (removed_init && removed.count)) {
        nb = rebuild(merge);
        if (!nb) {
            mem_free(s);
            return;
        }
    }
    struct mc_images *ni = NULL;
    if (pending_count) {
        size_t have = images ? images->count : 0;
        ni = mem_alloc(sizeof *ni + (have + pending_count) * sizeof ni->im[0]);
        if (ni) { /* else the images wait for the next publication */
            if (have)
                memcpy(ni->im, images->im, have * sizeof ni->im[0]);
            memcpy(ni->im + have, pending_images, pending_count * sizeof ni->im[0]);
            ni->count = have + pending_count;
            qsort(ni->im, ni->count, sizeof ni->im[0], by_lo);
        }
    }
    /* nothing fails from here on */
    struct mc_array *old_big = NULL;
    struct mc_images *old_images = NULL;
    if (nb) {
        old_big = big;
        big = nb;
        copied_total += nb->count;
        if (merge) {
            recent_count = 0;
            copied_since_merge = 0;
        }
        if (removed_init)
            map64_clear(&removed);
    }
    if (ni) {
        old_images = images;
        images = ni;
        pending_count = 0;
    }
    s->big = big;
    s->images = images;
    s->recent_count = recent_count;
    if (recent_count)
        memcpy(s->recent, recent, recent_count * sizeof s->recent[0]);
    copied_since_merge += recent_count;
    copied_total += recent_count;
    struct mc_snap *old = atomic_exchange(&current, s);
    dirty = pending_count != 0;
    if (old)
        thread_rings_retire_object(old, free_snap);
    if (old_big)
        thread_rings_retire_object(old_big, keep_spare);
    if (old_images)
        thread_rings_retire_object(old_images, free_snap);
}

uint64_t mcode_copied(void)
{
    return copied_total;
}

uint64_t mcode_spare_reuses(void)
{
    return spare_reuses;
}

uint64_t mcode_unchanged_reports(void)
{
    return unchanged_reports;
}

size_t mcode_ranges(void)
{
    return (big ? big->count : 0) + recent_count;
}

size_t mcode_images(void)
{
    return (images ? images->count : 0) + pending_count;
}

void mcode_shutdown(void)
{
    struct mc_snap *old = atomic_exchange(&current, NULL);
    if (old)
        thread_rings_retire_object(old, free_snap);
    if (big)
        thread_rings_retire_object(big, free_snap);
    if (images)
        thread_rings_retire_object(images, free_snap);
    big = NULL;
    images = NULL;
    mem_free(spare);
    spare = NULL;
    spare_reuses = 0;
    mem_free(recent);
    recent = NULL;
    recent_count = recent_cap = 0;
    mem_free(pending_images);
    pending_images = NULL;
    pending_count = pending_cap = 0;
    if (removed_init)
        map64_free(&removed);
    removed_init = 0;
    dirty = 0;
    copied_since_merge = 0;
    copied_total = 0;
}
