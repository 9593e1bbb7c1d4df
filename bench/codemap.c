/*
 * codemap: the code map's cost at the scale of a big application
 * (bench/codemap.sh).  Three measures, each the median of RUNS:
 *
 *   insert   200,000 ranges reported one at a time in random address order
 *            (ReadyToRun methods found one by one as samples land in them),
 *            a lookup after each, as the resolver does: ns per insertion;
 *   lookup   random addresses over the 200,000 ranges: ns per lookup;
 *   churn    on top of the 200,000 permanent ranges, MODULES collectible
 *            modules of 50 methods each loaded (their ranges inserted),
 *            looked up, and unloaded (codemap_remove of the module), as a
 *            plugin host or a test runner does: µs per module.
 *
 * Usage: codemap [ranges] [modules] [runs]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "agent/codemap.h"
#include "median.h"

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t rng = 88172645463325252ull;
static uint64_t next_random(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

#define BASE 0x7f0000000000ull
#define SLOT 0x400ull /* each method 0x200 bytes of code in a 0x400 slot */

static volatile uintptr_t sink;

int main(int argc, char **argv)
{
    uint32_t n = argc > 1 ? (uint32_t)strtoul(argv[1], NULL, 10) : 200000;
    uint32_t modules = argc > 2 ? (uint32_t)strtoul(argv[2], NULL, 10) : 2000;
    int runs = argc > 3 ? atoi(argv[3]) : 5;
    if (runs < 1 || runs > 64 || n == 0)
        return 2;
    uint32_t *order = malloc(n * sizeof *order);
    double ins[64], look[64], churn[64];
    for (int run = 0; run < runs; run++) {
        for (uint32_t i = 0; i < n; i++)
            order[i] = i;
        for (uint32_t i = n - 1; i > 0; i--) { /* a random permutation */
            uint32_t j = (uint32_t)(next_random() % (i + 1));
            uint32_t t = order[i];
            order[i] = order[j];
            order[j] = t;
        }
        uint64_t t0 = now_ns();
        for (uint32_t i = 0; i < n; i++) {
            uintptr_t start = BASE + order[i] * SLOT;
            struct code_range r = {start, start + 0x200, start, 0x1000 + order[i], 1, 0, 1};
            code_index_insert(&r);
            sink += (uintptr_t)code_index_find(start + 0x10);
        }
        ins[run] = (double)(now_ns() - t0) / n;
        if (code_index_count() != n) {
            fprintf(stderr, "codemap: %zu ranges, expected %u\n", code_index_count(), n);
            return 1;
        }

        uint32_t lookups = 5000000;
        t0 = now_ns();
        for (uint32_t i = 0; i < lookups; i++)
            sink += (uintptr_t)code_index_find(BASE + next_random() % ((uint64_t)n * SLOT));
        look[run] = (double)(now_ns() - t0) / lookups;

        /* collectible modules above the permanent code, each loaded,
         * looked up and unloaded; the runtime reuses their addresses */
        uintptr_t high = BASE + (uint64_t)n * SLOT + 0x100000;
        t0 = now_ns();
        for (uint32_t m = 0; m < modules; m++) {
            ModuleID module = 0x500000 + m;
            uintptr_t at = high + (m % 16) * 50 * SLOT;
            for (uint32_t k = 0; k < 50; k++) {
                uintptr_t start = at + k * SLOT;
                struct code_range r = {start, start + 0x200, start, 0x900000 + m * 64 + k, module, 0, 0};
                code_index_insert(&r);
            }
            for (uint32_t k = 0; k < 200; k++)
                sink += (uintptr_t)code_index_find(at + (next_random() % 50) * SLOT + 8);
            codemap_remove(module, 0);
        }
        churn[run] = (double)(now_ns() - t0) / 1000.0 / modules;
        if (code_index_count() != n) {
            fprintf(stderr, "codemap: %zu ranges after the churn, expected %u\n", code_index_count(), n);
            return 1;
        }
        codemap_shutdown();
    }
    printf("ranges %u modules %u runs %d\n", n, modules, runs);
    printf("insert_ns %.0f\n", bench_median(ins, runs));
    printf("lookup_ns %.0f\n", bench_median(look, runs));
    printf("module_us %.1f\n", bench_median(churn, runs));
    free(order);
    return 0;
}
