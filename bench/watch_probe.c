/*
 * watch_probe: what a `corscope watch` probe costs the calling thread, in
 * isolation (issue 22 item 4), without the runtime, the agent's loop or
 * corscope competing for the cores: nanoseconds per call of the two probes
 * a watched method calls (watch_enter, watch_exit: src/agent/sources/
 * watch_probe.c) for a method like WatchApp's Pricing.Mix (an int, a long
 * and a double read, a long result), on each path a call can take:
 *   taken      its values read, the precise clock read, two queue entries
 *              (the bench drains the queue itself every BLOCK calls, so
 *              that it is never full; the draining is left out of the time)
 *   over-rate  both probes run, the rate turns the call away
 *   filtered   both probes run, --where ('a < 0', never true) leaves it out
 *   inactive   the probes of a watch that ended: they return at once
 * The method's table is filled as watch.c fills it for Mix.  For
 * bench/watch.sh, beside its end-to-end settings (which mix the paths:
 * there most calls of a fast loop are turned away).
 *
 *   watch_probe CALLS      prints "taken NS", "over-rate NS", "filtered NS", "inactive NS"
 */
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agent/evq.h"
#include "agent/sources/watch.h"
#include "common/pdb/sig.h"
#include "common/watch_where.h"

#define BLOCK 256

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static uint64_t drained;

static void count_entry(void *ctx, const struct evq_entry *e)
{
    (void)ctx;
    (void)e;
    drained++;
}

static void primitive(struct watch_value *v, uint8_t kind, uint8_t size, const char *name)
{
    memset(v, 0, sizeof *v);
    v->read = WATCH_READ_BYTES;
    v->size = size;
    v->kind = kind;
    v->show = WATCH_SHOW_PLAIN;
    snprintf(v->name, sizeof v->name, "%s", name);
}

/* ns per call of CALLS calls of both probes, the draining left out */
static double run(uint64_t calls)
{
    volatile int32_t a = 7;
    volatile int64_t b = 11;
    volatile double c = 1.5;
    volatile int64_t result = 19;
    uint64_t spent = 0;
    for (uint64_t done = 0; done < calls; done += BLOCK) {
        uint64_t t0 = now_ns();
        for (int i = 0; i < BLOCK; i++) {
            int64_t token =
                watch_enter(0, (void *)&a, (void *)&b, (void *)&c, NULL, NULL, NULL);
            watch_exit(0, token, (void *)&result, NULL);
        }
        spent += now_ns() - t0;
        evq_drain(count_entry, NULL, UINT64_MAX);
    }
    return (double)spent / (double)calls;
}

int main(int argc, char **argv)
{
    uint64_t calls = argc > 1 ? strtoull(argv[1], NULL, 10) : 10000000ull;
    calls = (calls + 10 * BLOCK - 1) / (10 * BLOCK) * (10 * BLOCK); /* whole blocks, and a tenth */
    evq_open();
    struct watch_method *m = &watch_methods[0];
    memset(m, 0, sizeof *m);
    snprintf(m->display, sizeof m->display, "Pricing.Mix");
    m->params = m->taken = 3;
    primitive(&m->args[0], SIG_I4, 4, "a");
    primitive(&m->args[1], SIG_I8, 8, "b");
    primitive(&m->args[2], SIG_R8, 8, "c");
    primitive(&m->ret, SIG_I8, 8, "");
    struct watch_probe_state *p = &watch_probe;
    p->source = 0;
    p->rate = UINT32_MAX;
    atomic_store(&p->active, 1);
    run(calls / 10); /* the queue's blocks allocated, the code warm */

    double taken = run(calls);
    uint64_t queued = atomic_load(&p->taken), full = atomic_load(&p->queue_full);
    p->rate = 0;
    double over = run(calls);
    p->rate = UINT32_MAX;
    m->filter.on = 1;
    m->filter.arg = 0;
    m->filter.op = WHERE_LT;
    m->filter.cls = WATCH_FILTER_SIGNED;
    m->filter.i = 0;
    double filtered = run(calls);
    atomic_store(&p->active, 0);
    double inactive = run(calls);
    printf("taken %.1f\nover-rate %.1f\nfiltered %.1f\ninactive %.1f\n", taken, over, filtered,
           inactive);
    /* every call of the timed taken run queued, none refused for room */
    if (full || queued != calls + calls / 10 || drained != 2 * queued) {
        fprintf(stderr, "watch_probe: %llu calls queued, %llu refused for room: not all taken\n",
                (unsigned long long)queued, (unsigned long long)full);
        return 1;
    }
    return 0;
}
