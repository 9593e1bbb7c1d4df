/*
 * procmaps: see procmaps.h.
 */
#include "common/procmaps.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#include "common/mem.h"

#define FIRST_READ (64u * 1024u) /* a .NET process's file is 20 to 60 KB */
#define MOST (64u * 1024u * 1024u)

static _Atomic uint64_t reads;

/* A hexadecimal number at *p, ending before `end`; moves *p past it.
 * 0 when there are no digits or too many. */
static int hex(const char **p, const char *end, uintptr_t *out)
{
    uintptr_t v = 0;
    int digits = 0;
    for (const char *s = *p; s < end; s++, digits++) {
        unsigned d;
        if (*s >= '0' && *s <= '9')
            d = (unsigned)(*s - '0');
        else if (*s >= 'a' && *s <= 'f')
            d = (unsigned)(*s - 'a' + 10);
        else
            break;
        if (digits == (int)sizeof v * 2)
            return 0;
        v = v << 4 | d;
    }
    if (!digits)
        return 0;
    *p += digits;
    *out = v;
    return 1;
}

/* Skips one field of non-blanks and the blanks after it. */
static int field(const char **p, const char *end)
{
    const char *s = *p;
    while (s < end && *s != ' ')
        s++;
    if (s == *p || s == end)
        return 0;
    while (s < end && *s == ' ')
        s++;
    *p = s;
    return 1;
}

int procmaps_parse(const char *line, const char *end, struct procmaps_line *out)
{
    const char *p = line;
    if (!hex(&p, end, &out->start) || p >= end || *p++ != '-' || !hex(&p, end, &out->end) ||
        out->end <= out->start || p >= end || *p++ != ' ' || end - p < 5 || p[4] != ' ')
        return 0;
    memcpy(out->perms, p, 4);
    out->perms[4] = 0;
    p += 5;
    /* offset, device; the inode ends the line when there is no path */
    if (!field(&p, end) || !field(&p, end))
        return 0;
    const char *inode = p;
    while (p < end && *p >= '0' && *p <= '9')
        p++;
    if (p == inode || (p < end && *p != ' '))
        return 0;
    while (p < end && *p == ' ')
        p++;
    out->path = p;
    out->path_len = (size_t)(end - p);
    return 1;
}

int procmaps_each(const char *text, size_t len,
                  int (*fn)(void *ctx, const struct procmaps_line *line), void *ctx)
{
    const char *p = text, *stop = text + len;
    while (p < stop) {
        const char *nl = memchr(p, '\n', (size_t)(stop - p));
        const char *end = nl ? nl : stop;
        struct procmaps_line line;
        if (procmaps_parse(p, end, &line)) {
            int rc = fn(ctx, &line);
            if (rc)
                return rc;
        }
        p = end + 1;
    }
    return 0;
}

int procmaps_read_self(int (*fn)(void *ctx, const struct procmaps_line *line), void *ctx)
{
    int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    procmaps_count_read();
    size_t cap = FIRST_READ, len = 0;
    char *text = mem_alloc(cap);
    int ok = text != NULL;
    while (ok) {
        if (len == cap) {
            char *grown = cap < MOST ? mem_realloc(text, cap * 2) : NULL;
            if (!grown) {
                ok = 0;
                break;
            }
            text = grown;
            cap *= 2;
        }
        ssize_t got = read(fd, text + len, cap - len);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0) {
            ok = got == 0;
            break;
        }
        len += (size_t)got;
    }
    close(fd);
    int rc = ok ? procmaps_each(text, len, fn, ctx) : -1;
    mem_free(text);
    return rc;
}

void procmaps_count_read(void)
{
    atomic_fetch_add_explicit(&reads, 1, memory_order_relaxed);
}

uint64_t procmaps_reads(void)
{
    return atomic_load_explicit(&reads, memory_order_relaxed);
}
