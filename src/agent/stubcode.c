/*
 * stubcode: see stubcode.h.  The copy is a sorted array of [start, end)
 * ranges; only executable mappings whose path is empty, anonymous
 * ("[anon:...]") or a memfd ("/memfd:...", with or without " (deleted)")
 * are kept: the stack ("[stack]"), [vdso] and files are not.
 */
#include "agent/stubcode.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "agent/signal/ranges.h"
#include "agent/signal/vma_query.h"
#include "common/clock.h"
#include "common/mem.h"
#include "common/procmaps.h"

/* A miss reads the file again when the copy is older than REREAD_NS, at
 * most READS_PER_WINDOW times a WINDOW_NS (a .NET process's maps are
 * hundreds of lines, a read a few hundred microseconds; a run of bad
 * walks must not read it at every sample) */
#define REREAD_NS 10000000ull
#define WINDOW_NS 1000000000ull
#define READS_PER_WINDOW 8

struct range {
    uintptr_t start, end;
};
_Static_assert(offsetof(struct range, start) == 0, "ranges.h searches by the first member");

static struct range *ranges;
static size_t count, cap;
static uint64_t read_ns; /* when the copy was made; 0: never */
static uint64_t window_ns; /* when the current window began */
static unsigned window_reads;

static uint64_t real_now(void)
{
    return clock_now_ns();
}

static uint64_t (*now_ns)(void) = real_now;

void stubcode_test_clock(uint64_t (*now)(void))
{
    now_ns = now ? now : real_now;
}

/* Is a mapping with this path (len bytes, not terminated) one of no file? */
static int kept(const char *path, size_t len)
{
    return !len || (len >= 5 && !memcmp(path, "[anon", 5)) ||
           (len >= 7 && !memcmp(path, "/memfd:", 7));
}

struct collect {
    struct range *list;
    size_t n, size;
};

static int add_line(void *ctx, const struct procmaps_line *line)
{
    struct collect *c = ctx;
    if (line->perms[2] != 'x' || !kept(line->path, line->path_len))
        return 0;
    struct range *grown = mem_grow(c->list, &c->size, c->n + 1, sizeof *c->list);
    if (!grown)
        return -1;
    c->list = grown;
    grown[c->n++] = (struct range){line->start, line->end};
    return 0;
}

static int by_start(const void *a, const void *b)
{
    const struct range *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

static void replace(struct collect *c)
{
    if (c->n > 1)
        qsort(c->list, c->n, sizeof *c->list, by_start);
    mem_free(ranges);
    ranges = c->list;
    count = c->n;
    cap = c->size;
}

int stubcode_load_text(const char *text)
{
    struct collect c = {NULL, 0, 0};
    if (procmaps_each(text, strlen(text), add_line, &c) < 0) {
        mem_free(c.list);
        return -1;
    }
    replace(&c);
    read_ns = now_ns();
    return 0;
}

static void reread(void)
{
    struct collect c = {NULL, 0, 0};
    if (procmaps_read_self(add_line, &c) < 0) {
        mem_free(c.list);
        return;
    }
    replace(&c);
}

/* Puts [start, end) into the copy in its place, in place of any range it
 * overlaps (a mapping since replaced).  A copy that cannot grow is left as
 * it was. */
static void insert(uintptr_t start, uintptr_t end)
{
    size_t at = ranges_upper_bound(ranges, count, sizeof *ranges, start);
    size_t from = at;
    while (from > 0 && ranges[from - 1].end > start)
        from--;
    size_t to = at;
    while (to < count && ranges[to].start < end)
        to++;
    if (to == from) {
        struct range *grown = mem_grow(ranges, &cap, count + 1, sizeof *ranges);
        if (!grown)
            return;
        ranges = grown;
        memmove(ranges + from + 1, ranges + from, (count - from) * sizeof *ranges);
        count++;
    } else if (to > from + 1) {
        memmove(ranges + from + 1, ranges + to, (count - to) * sizeof *ranges);
        count -= to - from - 1;
    }
    ranges[from] = (struct range){start, end};
}

/* The kernel's answer for address (vma_query.h): 1 in a mapping kept
 * (now in the copy), 0 not, -1 not asked (read the text). */
static int ask_kernel(uintptr_t address, uintptr_t *start)
{
    struct vma_query_mapping m;
    char name[320]; /* a memfd's name is at most 249 bytes, an [anon:] one 80 */
    int rc = vma_query_find(address, &m, name, sizeof name);
    if (rc <= 0)
        return rc;
    if (!(m.perms & VMA_QUERY_EXEC) || !kept(name, strlen(name)))
        return 0;
    insert(m.start, m.end);
    *start = m.start;
    return 1;
}

/* Mappings do not overlap: only the last one starting at or below the
 * address can hold it. */
static const struct range *lookup(uintptr_t address)
{
    size_t after = ranges_upper_bound(ranges, count, sizeof *ranges, address);
    return after && address < ranges[after - 1].end ? &ranges[after - 1] : NULL;
}

enum stubcode_answer stubcode_find(uintptr_t address, uintptr_t *start)
{
    const struct range *hit = lookup(address);
    if (!hit) {
        int asked = ask_kernel(address, start);
        if (asked >= 0)
            return asked ? STUBCODE_YES : STUBCODE_NO;
        uint64_t now = now_ns();
        if (now - window_ns >= WINDOW_NS) {
            window_ns = now;
            window_reads = 0;
        }
        if (read_ns && (now - read_ns < REREAD_NS || window_reads >= READS_PER_WINDOW))
            return STUBCODE_STALE;
        read_ns = now;
        window_reads++;
        reread();
        hit = lookup(address);
    }
    if (!hit)
        return STUBCODE_NO;
    *start = hit->start;
    return STUBCODE_YES;
}

void stubcode_free(void)
{
    mem_free(ranges);
    ranges = NULL;
    count = cap = 0;
    read_ns = window_ns = 0;
    window_reads = 0;
}
