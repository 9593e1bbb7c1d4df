/*
 * trace_hooks: what tracing mode's hooks cost in isolation, without the
 * runtime: nanoseconds per Enter+Leave pair of the assembly hooks
 * (src/agent/trace/elt_x64.S), called the way the JIT calls them from one
 * caller in a loop (trace_hooks_loop.S), for hooks that only return (the
 * floor: two calls), counting hooks and timing hooks; and the cost of one
 * read of the time-stamp counter (rdtsc), which timing hooks make twice
 * per call.  For bench/trace.sh.
 *
 *   trace_hooks PAIRS      prints "null NS", "counts NS", "timed NS", "rdtsc NS"
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <x86intrin.h>

#include "agent/trace/shadow.h"

void trace_hooks_loop(void *enter, void *leave, uint64_t pairs, uint64_t id);
void trace_hooks_null(void);

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    uint64_t pairs = argc > 1 ? strtoull(argv[1], NULL, 10) : 100000000ull;
    double t0 = now();
    trace_hooks_loop((void *)trace_hooks_null, (void *)trace_hooks_null, pairs, 7);
    printf("null %.2f\n", (now() - t0) / (double)pairs * 1e9);
    for (int timed = 0; timed < 2; timed++) {
        shadow_reset_for_test();
        shadow_init(timed, 64);
        FunctionEnter3 *e;
        FunctionLeave3 *l;
        FunctionTailcall3 *tc;
        shadow_hooks(&e, &l, &tc);
        trace_hooks_loop((void *)e, (void *)l, 1000, 7); /* the path exists: the fast path only */
        t0 = now();
        trace_hooks_loop((void *)e, (void *)l, pairs, 7);
        printf("%s %.2f\n", timed ? "timed" : "counts", (now() - t0) / (double)pairs * 1e9);
    }
    unsigned long long sum = 0;
    t0 = now();
    for (uint64_t i = 0; i < pairs; i++)
        sum += __rdtsc();
    printf("rdtsc %.2f\n", (now() - t0) / (double)pairs * 1e9);
    return sum == 42; /* keeps the loop */
}
