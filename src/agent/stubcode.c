/*
 * stubcode: see stubcode.h.  The copy is a sorted array of [start, end)
 * ranges; only executable mappings whose path is empty, anonymous
 * ("[anon:...]") or a memfd ("/memfd:...", with or without " (deleted)")
 * are kept: the stack ("[stack]"), [vdso] and files are not.
 */
#include "agent/stubcode.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/signal/ranges.h"
#include "common/clock.h"
#include "common/mem.h"

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

static int kept(const char *path)
{
    while (*path == ' ')
        path++;
    return !*path || *path == '\n' || !strncmp(path, "[anon", 5) || !strncmp(path, "/memfd:", 7);
}

/* One line of maps: "start-end perms offset dev inode   path" */
static int add_line(const char *line, struct range **list, size_t *n, size_t *size)
{
    char *rest;
    unsigned long long start = strtoull(line, &rest, 16);
    if (*rest != '-')
        return 0;
    unsigned long long end = strtoull(rest + 1, &rest, 16);
    char perms[5];
    int used = 0;
    unsigned long long offset, inode;
    unsigned dev_major, dev_minor;
    if (sscanf(rest, " %4s %llx %x:%x %llu%n", perms, &offset, &dev_major, &dev_minor, &inode,
               &used) != 5 ||
        perms[2] != 'x' || end <= start || !kept(rest + used))
        return 0;
    struct range *grown = mem_grow(*list, size, *n + 1, sizeof **list);
    if (!grown)
        return -1;
    *list = grown;
    grown[(*n)++] = (struct range){(uintptr_t)start, (uintptr_t)end};
    return 0;
}

static int by_start(const void *a, const void *b)
{
    const struct range *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

static void replace(struct range *list, size_t n, size_t size)
{
    if (n > 1)
        qsort(list, n, sizeof *list, by_start);
    mem_free(ranges);
    ranges = list;
    count = n;
    cap = size;
}

int stubcode_load_text(const char *text)
{
    struct range *list = NULL;
    size_t n = 0, size = 0;
    for (const char *line = text; line && *line;) {
        if (add_line(line, &list, &n, &size) < 0) {
            mem_free(list);
            return -1;
        }
        line = strchr(line, '\n');
        if (line)
            line++;
    }
    replace(list, n, size);
    read_ns = now_ns();
    return 0;
}

static void reread(void)
{
    FILE *f = fopen("/proc/self/maps", "re");
    if (!f)
        return;
    struct range *list = NULL;
    size_t n = 0, size = 0;
    char line[4352];
    int failed = 0;
    while (!failed && fgets(line, sizeof line, f))
        failed = add_line(line, &list, &n, &size) < 0;
    fclose(f);
    if (failed) {
        mem_free(list);
        return;
    }
    replace(list, n, size);
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
