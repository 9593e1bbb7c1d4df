/*
 * covfile: see covfile.h.  Records (all little-endian, 8-byte aligned):
 *
 *   u32 type, u32 size (the whole record, padded to 8)
 *   MODULE   u32 index, u32 state, u32 pdb_state, u32 0, u8 mvid[16],
 *            path NUL name NUL why NUL
 *   METHOD   u32 module, u32 token, u32 count, u32 0,
 *            count x {u32 il_offset, u16 kind, u16 path},
 *            count x u64 counter
 *   SKIPPED  u32 module, u32 token, u32 reason, u32 0, why NUL
 */
#include "format/covfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/mem.h"

#define GROW_MIN (1u << 20)

static uint64_t align8(uint64_t n)
{
    return (n + 7) & ~(uint64_t)7;
}

static struct covfile_header *header_of(struct covfile *f)
{
    return (struct covfile_header *)f->base;
}

/* Makes the file at least `size` bytes, blocks allocated (a page of a
 * sparse file that the disk cannot hold would fault in the program), and
 * maps what was added.  Returns 0 or -1. */
static int grow(struct covfile *f, uint64_t size)
{
    if (size <= f->mapped)
        return 0;
    uint64_t want = f->mapped * 2;
    if (want < size)
        want = size;
    want = (want + GROW_MIN - 1) & ~(uint64_t)(GROW_MIN - 1);
    if (want > COVFILE_MAX)
        want = COVFILE_MAX;
    if (want < size)
        return -1;
    if (posix_fallocate(f->fd, (off_t)f->mapped, (off_t)(want - f->mapped)) != 0)
        return -1;
    void *p = mmap(f->base + f->mapped, want - f->mapped, PROT_READ | PROT_WRITE,
                   MAP_SHARED | MAP_FIXED, f->fd, (off_t)f->mapped);
    if (p == MAP_FAILED)
        return -1;
    f->mapped = want;
    return 0;
}

int covfile_open(struct covfile *f, const char *dir, long pid, const char *command)
{
    memset(f, 0, sizeof *f);
    f->fd = -1;
    char path[4096];
    for (int attempt = 1; attempt < 100 && f->fd < 0; attempt++) {
        int n = attempt == 1 ? snprintf(path, sizeof path, "%s/cover-%ld.bin", dir, pid)
                             : snprintf(path, sizeof path, "%s/cover-%ld-%d.bin", dir, pid, attempt);
        if (n < 0 || (size_t)n >= sizeof path) {
            errno = ENAMETOOLONG;
            return -1;
        }
        f->fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (f->fd < 0 && errno != EEXIST)
            return -1;
    }
    if (f->fd < 0)
        return -1;
    void *base = mmap(NULL, COVFILE_MAX, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (base == MAP_FAILED) {
        int e = errno;
        close(f->fd);
        unlink(path);
        errno = e;
        return -1;
    }
    f->base = base;
    if (grow(f, GROW_MIN) < 0) {
        int e = errno ? errno : ENOSPC;
        munmap(f->base, COVFILE_MAX);
        close(f->fd);
        unlink(path);
        errno = e;
        return -1;
    }
    pthread_mutex_init(&f->lock, NULL);
    struct covfile_header *h = header_of(f);
    memcpy(h->magic, COVFILE_MAGIC, 8);
    h->version = COVFILE_VERSION;
    h->header_size = COVFILE_HEADER;
    h->pid = (uint32_t)pid;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    h->started_ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
    snprintf(h->command, sizeof h->command, "%s", command ? command : "");
    f->end = COVFILE_HEADER;
    return 0;
}

/* Takes `size` bytes for a record; NULL when full.  Under the lock. */
static uint8_t *take(struct covfile *f, uint64_t size)
{
    if (!f->base || f->end + size > COVFILE_MAX || grow(f, f->end + size) < 0)
        return NULL;
    uint8_t *p = f->base + f->end;
    f->end += size;
    return p;
}

/* Publishes everything taken so far.  Under the lock. */
static void publish(struct covfile *f)
{
    atomic_store_explicit((_Atomic uint64_t *)&header_of(f)->used, f->end - COVFILE_HEADER,
                          memory_order_release);
}

static void put32(uint8_t *p, uint32_t v)
{
    memcpy(p, &v, 4);
}

long covfile_module(struct covfile *f, const uint8_t mvid[16], uint32_t state, uint32_t pdb_state,
                    const char *path, const char *name, const char *why)
{
    size_t lp = strlen(path), ln = strlen(name), lw = why ? strlen(why) : 0;
    uint64_t size = align8(40 + lp + ln + lw + 3);
    pthread_mutex_lock(&f->lock);
    uint8_t *p = take(f, size);
    long index = -1;
    if (p) {
        index = (long)f->modules++;
        put32(p, COVFILE_MODULE);
        put32(p + 4, (uint32_t)size);
        put32(p + 8, (uint32_t)index);
        put32(p + 12, state);
        put32(p + 16, pdb_state);
        memcpy(p + 24, mvid, 16);
        uint8_t *s = p + 40;
        memcpy(s, path, lp);
        s += lp + 1;
        memcpy(s, name, ln);
        s += ln + 1;
        if (lw)
            memcpy(s, why, lw);
        publish(f);
    }
    pthread_mutex_unlock(&f->lock);
    return index;
}

int covfile_method(struct covfile *f, uint32_t module, uint32_t token,
                   const struct covfile_probe_desc *probes, uint32_t n, uint64_t **counters)
{
    uint64_t size = 24 + 16ull * n;
    pthread_mutex_lock(&f->lock);
    uint8_t *p = take(f, size);
    if (!p) {
        header_of(f)->full_methods++;
        pthread_mutex_unlock(&f->lock);
        return -1;
    }
    put32(p, COVFILE_METHOD);
    put32(p + 4, (uint32_t)size);
    put32(p + 8, module);
    put32(p + 12, token);
    put32(p + 16, n);
    if (n)
        memcpy(p + 24, probes, 8ull * n);
    *counters = (uint64_t *)(p + 24 + 8ull * n);
    publish(f);
    pthread_mutex_unlock(&f->lock);
    return 0;
}

void covfile_skipped(struct covfile *f, uint32_t module, uint32_t token, uint32_t reason,
                     const char *why)
{
    size_t lw = why ? strnlen(why, 400) : 0;
    uint64_t size = align8(24 + lw + 1);
    pthread_mutex_lock(&f->lock);
    uint8_t *p = take(f, size);
    if (p) {
        put32(p, COVFILE_SKIPPED);
        put32(p + 4, (uint32_t)size);
        put32(p + 8, module);
        put32(p + 12, token);
        put32(p + 16, reason);
        if (lw)
            memcpy(p + 24, why, lw);
        publish(f);
    }
    pthread_mutex_unlock(&f->lock);
}

void covfile_close(struct covfile *f)
{
    if (f->base)
        munmap(f->base, COVFILE_MAX);
    if (f->fd >= 0)
        close(f->fd);
    f->base = NULL;
    f->fd = -1;
}

/* ---- reader --------------------------------------------------------------------- */

static uint32_t get32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

/* A NUL-terminated string at *p inside [p, end): advances past it. */
static const char *string_at(const uint8_t **p, const uint8_t *end)
{
    const uint8_t *nul = memchr(*p, 0, (size_t)(end - *p));
    if (!nul)
        return NULL;
    const char *s = (const char *)*p;
    *p = nul + 1;
    return s;
}

static int fail(char *why, size_t size, const char *what)
{
    if (why && size)
        snprintf(why, size, "%s", what);
    return -1;
}

int covfile_read(const uint8_t *data, size_t size, struct covfile_view *v, char *why,
                 size_t why_size)
{
    memset(v, 0, sizeof *v);
    if (size < sizeof(struct covfile_header) || memcmp(data, COVFILE_MAGIC, 8) != 0)
        return fail(why, why_size, "not a corscope counter file");
    const struct covfile_header *h = (const struct covfile_header *)data;
    if (h->version != COVFILE_VERSION)
        return fail(why, why_size, "a counter file of another version of corscope");
    if (h->header_size != COVFILE_HEADER || size < COVFILE_HEADER)
        return fail(why, why_size, "a counter file with a damaged header");
    v->header = h;
    uint64_t used = h->used;
    if (used > size - COVFILE_HEADER) {
        used = size - COVFILE_HEADER;
        v->truncated = 1;
    }
    size_t cap_mod = 0, cap_meth = 0, cap_skip = 0;
    const uint8_t *p = data + COVFILE_HEADER, *end = p + used;
    while (end - p >= 8) {
        uint32_t type = get32(p), rsize = get32(p + 4);
        if (rsize < 8 || rsize % 8 || rsize > (uint64_t)(end - p)) {
            v->truncated = 1;
            break;
        }
        const uint8_t *rend = p + rsize;
        if (type == COVFILE_MODULE && rsize >= 40) {
            struct covfile_module_rec m = {.index = get32(p + 8), .state = get32(p + 12),
                                           .pdb_state = get32(p + 16)};
            memcpy(m.mvid, p + 24, 16);
            const uint8_t *s = p + 40;
            m.path = string_at(&s, rend);
            m.name = m.path ? string_at(&s, rend) : NULL;
            m.why = m.name ? string_at(&s, rend) : NULL;
            if (m.why) {
                struct covfile_module_rec *grown =
                    mem_grow(v->modules, &cap_mod, v->module_count + 1, sizeof *grown);
                if (!grown)
                    goto oom;
                v->modules = grown;
                v->modules[v->module_count++] = m;
            }
        } else if (type == COVFILE_METHOD && rsize >= 24) {
            uint32_t n = get32(p + 16);
            if ((uint64_t)n * 16 + 24 <= rsize) {
                struct covfile_method_rec *grown =
                    mem_grow(v->methods, &cap_meth, v->method_count + 1, sizeof *grown);
                if (!grown)
                    goto oom;
                v->methods = grown;
                v->methods[v->method_count++] = (struct covfile_method_rec){
                    .module = get32(p + 8), .token = get32(p + 12), .count = n,
                    .probes = (const struct covfile_probe_desc *)(p + 24),
                    .counters = (const uint64_t *)(p + 24 + 8ull * n)};
            }
        } else if (type == COVFILE_SKIPPED && rsize >= 24) {
            const uint8_t *s = p + 24;
            const char *text = string_at(&s, rend);
            struct covfile_skipped_rec *grown =
                mem_grow(v->skipped, &cap_skip, v->skipped_count + 1, sizeof *grown);
            if (!grown)
                goto oom;
            v->skipped = grown;
            v->skipped[v->skipped_count++] = (struct covfile_skipped_rec){
                .module = get32(p + 8), .token = get32(p + 12), .reason = get32(p + 16),
                .why = text ? text : ""};
        }
        p = rend;
    }
    return 0;
oom:
    covfile_view_free(v);
    return fail(why, why_size, "out of memory");
}

void covfile_view_free(struct covfile_view *v)
{
    mem_free(v->modules);
    mem_free(v->methods);
    mem_free(v->skipped);
    memset(v, 0, sizeof *v);
}
