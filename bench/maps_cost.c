/*
 * maps_cost: what placing an address among a process's mappings costs,
 * the three ways the agent has had (docs/performance.md, start-up): the
 * CPU time (this process's; the kernel's formatting is charged to the
 * reader) of
 *   stdio   /proc/PID/maps read whole through fgets and sscanf (the agent's
 *           stack_bounds and stubcode before session 14, and glibc's
 *           pthread_getattr_np for a main thread)
 *   read    the same file in large read()s, parsed by common/procmaps (the
 *           agent's text path now, for kernels before 6.11)
 *   query   one PROCMAP_QUERY ioctl for one address (Linux 6.11; the
 *           agent's way now)
 * medians over RUNS of each, interleaved.
 *
 *   maps_cost PID [RUNS]   prints "lines N", "stdio US", "read US", "query US"
 *                          (query: "-" where the kernel has no such ioctl)
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "agent/signal/vma_query.h"
#include "common/procmaps.h"
#include "median.h"

static double cpu_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static long stdio_read(const char *path)
{
    FILE *f = fopen(path, "re");
    if (!f)
        return -1;
    char line[512];
    long n = 0;
    while (fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        char perms[8];
        n += sscanf(line, "%lx-%lx %7s", &lo, &hi, perms) == 3;
    }
    fclose(f);
    return n;
}

struct tally {
    long lines;
    uintptr_t first; /* the first mapping's start: an address to ask for */
};

static int count_line(void *ctx, const struct procmaps_line *line)
{
    struct tally *t = ctx;
    if (!t->lines++)
        t->first = line->start;
    return 0;
}

static long big_read(const char *path, uintptr_t *an_address)
{
    static char text[4 << 20];
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    size_t len = 0;
    ssize_t got;
    while (len < sizeof text && (got = read(fd, text + len, sizeof text - len)) > 0)
        len += (size_t)got;
    close(fd);
    struct tally t = {0, 0};
    procmaps_each(text, len, count_line, &t);
    *an_address = t.first;
    return t.lines;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: maps_cost PID [RUNS]\n");
        return 2;
    }
    int runs = argc > 2 ? atoi(argv[2]) : 21;
    if (runs < 1 || runs > 10000)
        runs = 21;
    char path[64];
    snprintf(path, sizeof path, "/proc/%s/maps", argv[1]);
    double *s = calloc((size_t)runs, sizeof *s), *r = calloc((size_t)runs, sizeof *r),
           *q = calloc((size_t)runs, sizeof *q);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (!s || !r || !q || fd < 0) {
        fprintf(stderr, "maps_cost: cannot read %s\n", path);
        return 1;
    }
    long lines = 0;
    uintptr_t addr = 0;
    int queries = 1;
    for (int i = 0; i < runs; i++) {
        double t0 = cpu_us();
        lines = stdio_read(path);
        double t1 = cpu_us();
        big_read(path, &addr);
        double t2 = cpu_us();
        struct procmap_query pq;
        memset(&pq, 0, sizeof pq);
        pq.size = sizeof pq;
        pq.query_addr = addr;
        queries = queries && ioctl(fd, PROCMAP_QUERY, &pq) == 0;
        double t3 = cpu_us();
        s[i] = t1 - t0;
        r[i] = t2 - t1;
        q[i] = t3 - t2;
    }
    printf("lines %ld\nstdio %.1f\nread %.1f\n", lines, bench_median(s, runs), bench_median(r, runs));
    if (queries)
        printf("query %.2f\n", bench_median(q, runs));
    else
        printf("query -\n");
    return 0;
}
