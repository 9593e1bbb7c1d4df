/*
 * elfsym_cost: what naming native frames from a library's full symbol
 * table costs the agent's thread (src/agent/elfsym.c), without the
 * runtime: for one library (libc by default, its table read from its
 * debug file when installed), the medians over RUNS fresh loads of
 *   load   elfsym_load: the file's headers, its string table and its
 *          function symbols read (pread, nothing mapped)
 *   scan   one lookup before the table is sorted (the first ELFSYM_SCANS
 *          lookups of a process scan the table in the file's order)
 *   sort   elfsym_sort, once the scans' budget is spent
 *   find   one lookup in the sorted table
 * Each load is a fresh table, as each process of a build gets its own.
 *
 *   elfsym_cost [RUNS] [PATH]   prints "load US", "scan US", "sort US",
 *                               "find US", "functions N"
 */
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agent/elfsym.h"
#include "median.h"

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static int find_libc(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    if (info->dlpi_name && strstr(info->dlpi_name, "/libc.so")) {
        snprintf(data, 4096, "%s", info->dlpi_name);
        return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    int runs = argc > 1 ? atoi(argv[1]) : 21;
    char path[4096] = "";
    if (argc > 2)
        snprintf(path, sizeof path, "%s", argv[2]);
    else
        dl_iterate_phdr(find_libc, path);
    if (runs < 1 || !path[0]) {
        fprintf(stderr, "corscope: usage: elfsym_cost [RUNS] [PATH]\n");
        return 2;
    }
    double *load = calloc((size_t)runs, sizeof *load), *scan = calloc((size_t)runs, sizeof *scan),
           *sort = calloc((size_t)runs, sizeof *sort), *find = calloc((size_t)runs, sizeof *find);
    /* the range the probes spread over, from a sorted table */
    struct elfsym *w = elfsym_load(path);
    if (!w || elfsym_sort(w) < 0) {
        fprintf(stderr, "corscope: %s has no symbol table (nor a debug file with one)\n", path);
        return 1;
    }
    uint64_t lo = w->entries[0].addr, hi = w->entries[w->count - 1].addr;
    size_t functions = w->count;
    elfsym_free(w);
    volatile size_t sink = 0;
    for (int r = 0; r < runs; r++) {
        double t0 = now_us();
        struct elfsym *s = elfsym_load(path);
        double t1 = now_us();
        if (!s)
            return 1;
        /* addresses spread over the table, as a process's samples are */
        enum { PROBES = 16 };
        for (int i = 0; i < PROBES; i++) {
            const char *n = elfsym_find(s, lo + (hi - lo) / PROBES * (uint64_t)i);
            sink += n ? strlen(n) : 0;
        }
        double t2 = now_us();
        if (elfsym_sort(s) < 0)
            return 1;
        double t3 = now_us();
        for (int i = 0; i < 1000; i++) {
            const char *n = elfsym_find(s, lo + (hi - lo) / 1000 * (uint64_t)i);
            sink += n ? strlen(n) : 0;
        }
        double t4 = now_us();
        load[r] = t1 - t0;
        scan[r] = (t2 - t1) / PROBES;
        sort[r] = t3 - t2;
        find[r] = (t4 - t3) / 1000;
        elfsym_free(s);
    }
    printf("load %.1f\nscan %.2f\nsort %.1f\nfind %.3f\nfunctions %zu\n", bench_median(load, runs),
           bench_median(scan, runs), bench_median(sort, runs), bench_median(find, runs), functions);
    free(load);
    free(scan);
    free(sort);
    free(find);
    return sink == (size_t)-1;
}
