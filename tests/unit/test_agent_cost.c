/*
 * Tests of cli/agent_cost: what the profiler cost the process, read from
 * the agent's counters; the parts a recording lacks are left out of the
 * line, and a recording without the agent's thread's count has none.
 */
#include <stdlib.h>
#include <string.h>

#include "cli/agent_cost.h"
#include "cli/cpu_share.h"
#include "fixture.h"
#include "format/recording.h"
#include "test.h"

/* A recording whose only STATs are keys[i] = values[i], and whose CPU
 * clock is `clock` (NULL: none said). */
static int load_clocked(struct recording *r, const char *clock, const char *const *keys,
                        const uint64_t *values, size_t n)
{
    struct buf out = {0};
    struct writer w;
    struct writer_sink sink = {fixture_sink, &out};
    char err[256];
    int ok = writer_begin(&w, sink) == 0;
    if (ok) {
        if (clock)
            writer_info(&w, FMT_INFO_CPU_CLOCK, clock);
        writer_event(&w, FMT_EVENT_CPU, "cpu", "ns", 1000);
        ok = writer_finish(&w, keys, values, n) == 0 && !w.error;
        writer_free(&w);
    }
    ok = ok && rec_load_memory(out.data, out.len, r, err, sizeof err) == 0;
    buf_free(&out);
    return ok ? 0 : -1;
}

static int load_counters(struct recording *r, const char *const *keys, const uint64_t *values,
                         size_t n)
{
    return load_clocked(r, NULL, keys, values, n);
}

static void test_cost_whole(void)
{
    const char *keys[] = {"sampler_cpu_ns", "handler_ns", "samples", "cpu_while_sampled_ns",
                          "agent_code_samples", "agent_code_ns"};
    const uint64_t values[] = {40000000, 8000000, 160, 1600000000, 4, 40000000};
    struct recording r;
    REQUIRE(load_counters(&r, keys, values, 6) == 0);
    struct agent_cost c;
    REQUIRE(agent_cost_read(&r, &c) == 0);
    CHECK(c.thread_ns == 40000000 && c.handler_ns == 8000000 && c.samples == 160);
    CHECK(c.has_callbacks && c.callback_samples == 4 && c.callback_ns == 40000000);
    char text[512];
    agent_cost_text(&c, text, sizeof text);
    /* (40 + 8 + 40) ms of (1600 + 40) ms */
    CHECK(!strcmp(text, "its own thread 40ms of CPU; its signal handler 8ms on the program's "
                        "threads (160 samples, 50.0 us each); its callbacks and hooks in 4 of "
                        "the 160 cpu samples (40ms); in all 5.4% of the process's CPU "
                        "(2.9% counted, the rest estimated from 4 samples)"));
    rec_free(&r);

    /* from 10 samples on, the estimate stands without the split */
    const uint64_t more[] = {40000000, 8000000, 160, 1600000000, 10, 100000000};
    REQUIRE(load_counters(&r, keys, more, 6) == 0);
    REQUIRE(agent_cost_read(&r, &c) == 0);
    agent_cost_text(&c, text, sizeof text);
    CHECK(!strcmp(text, "its own thread 40ms of CPU; its signal handler 8ms on the program's "
                        "threads (160 samples, 50.0 us each); its callbacks and hooks in 10 of "
                        "the 160 cpu samples (100ms); in all 9.0% of the process's CPU"));
    rec_free(&r);

    /* one sample of a short process: the count apart from the guess */
    const uint64_t one[] = {3980000, 1160000, 18, 175800000, 1, 10200000};
    REQUIRE(load_counters(&r, keys, one, 6) == 0);
    REQUIRE(agent_cost_read(&r, &c) == 0);
    agent_cost_text(&c, text, sizeof text);
    CHECK(strstr(text, "; in all 8.5% of the process's CPU (2.9% counted, the rest estimated "
                       "from 1 sample)") != NULL);
    rec_free(&r);
}

/* Wall mode: no CPU count, no samples in the agent's code counted, and no
 * time per sample (an idle thread's stack is repeated without a walk). */
static void test_cost_wall(void)
{
    const char *keys[] = {"sampler_cpu_ns", "handler_ns", "samples"};
    const uint64_t values[] = {12500000, 1000, 5};
    struct recording r;
    REQUIRE(load_counters(&r, keys, values, 3) == 0);
    struct agent_cost c;
    REQUIRE(agent_cost_read(&r, &c) == 0);
    CHECK(!c.has_callbacks);
    char text[512];
    agent_cost_text(&c, text, sizeof text);
    CHECK(!strcmp(text, "its own thread 12.5ms of CPU; its signal handler 1us on the program's "
                        "threads"));
    rec_free(&r);
}

/* The stop-the-world sampler: no handler; an agent older than the
 * counters of its code: no callbacks part; none at all without the
 * thread's count. */
static void test_cost_partial(void)
{
    const char *keys[] = {"sampler_cpu_ns", "cpu_while_sampled_ns"};
    const uint64_t values[] = {0, 1000000000};
    struct recording r;
    REQUIRE(load_counters(&r, keys, values, 2) == 0);
    struct agent_cost c;
    REQUIRE(agent_cost_read(&r, &c) == 0);
    char text[512];
    agent_cost_text(&c, text, sizeof text);
    CHECK(!strcmp(text, "its own thread 0ns of CPU; in all 0.0% of the process's CPU"));
    rec_free(&r);

    const char *other[] = {"samples"};
    const uint64_t one[] = {10};
    REQUIRE(load_counters(&r, other, one, 1) == 0);
    CHECK(agent_cost_read(&r, &c) == -1);
    rec_free(&r);
}

/* The runtime's exception callbacks: the count, its rate, and the cost
 * said only where the rate makes it matter. */
static void test_cost_exceptions(void)
{
    struct recording r;
    char text[512];
    const char *none_keys[] = {"sampler_cpu_ns", "cpu_while_sampled_ns"};
    const uint64_t none_values[] = {1000000, 1000000000};
    REQUIRE(load_counters(&r, none_keys, none_values, 2) == 0);
    CHECK_EQ(agent_cost_exceptions_text(&r, text, sizeof text), 0); /* older, or none thrown */
    rec_free(&r);

    const char *keys[] = {"exceptions_thrown", "cpu_while_sampled_ns"};
    const uint64_t few[] = {900, 1000000000}; /* 900 a CPU-second: no cost said */
    REQUIRE(load_counters(&r, keys, few, 2) == 0);
    REQUIRE(agent_cost_exceptions_text(&r, text, sizeof text) == 1);
    CHECK(!strcmp(text, "900 thrown (900 a CPU-second)"));
    rec_free(&r);

    const uint64_t many[] = {102000, 1250000000}; /* 81,600 a CPU-second */
    REQUIRE(load_counters(&r, keys, many, 2) == 0);
    REQUIRE(agent_cost_exceptions_text(&r, text, sizeof text) == 1);
    CHECK(!strcmp(text, "102000 thrown (81600 a CPU-second): the runtime calls the agent at "
                        "every frame of each throw, which -e exceptions asks for (and, before "
                        ".NET 10, every recording, to see an unhandled exception coming); about 1 "
                        "us a throw on our machines, some "
                        "8.2% of this process's CPU, not in the profiler line"));
    rec_free(&r);

    /* wall mode, or no cpu time: the count alone */
    REQUIRE(load_counters(&r, keys, (const uint64_t[]){7, 0}, 1) == 0);
    REQUIRE(agent_cost_exceptions_text(&r, text, sizeof text) == 1);
    CHECK(!strcmp(text, "7 thrown"));
    rec_free(&r);
}

/* The program's switches: the count and rate, the perf_event clock's cost
 * said where they are many, and the thin share put down to them. */
static void test_cost_switches(void)
{
    struct recording r;
    char text[512], causes[1024];
    const char *keys[] = {"context_switches", "cpu_while_sampled_ns"};
    const uint64_t many[] = {40000, 800000000}; /* 50,000 a CPU-second */
    REQUIRE(load_clocked(&r, "perf_event task-clock", keys, many, 2) == 0);
    REQUIRE(agent_cost_switches_text(&r, text, sizeof text) == 1);
    CHECK(!strcmp(text, "40000 (50000 a CPU-second): the perf_event clock's timer is stopped and "
                        "started at each switch of a sampled thread, about 2 us more a switch on "
                        "virtual machines that make timers dear (bench/sigcost.sh), some 10.0% of "
                        "this process's CPU there, not in the profiler line; --cpu-clock posix "
                        "does not pay it, with coarser samples (README)"));
    cpu_share_causes(&r, causes, sizeof causes);
    CHECK(strstr(causes, "context switches, 50000 a CPU-second: the perf_event clock does not "
                         "count a thread's time in switching") != NULL);
    rec_free(&r);

    /* the POSIX timers: the count alone, and no such cause */
    REQUIRE(load_clocked(&r, "posix-cpu-timer (--cpu-clock posix)", keys, many, 2) == 0);
    REQUIRE(agent_cost_switches_text(&r, text, sizeof text) == 1);
    CHECK(!strcmp(text, "40000 (50000 a CPU-second)"));
    cpu_share_causes(&r, causes, sizeof causes);
    CHECK(strstr(causes, "context switches") == NULL);
    rec_free(&r);

    /* the switchy threads given POSIX timers by the agent: said, and the
     * perf_event clock's cost not (nor record's note, nor a thin share
     * put down to it) */
    REQUIRE(load_clocked(&r,
                         "perf_event task-clock; posix-cpu-timer for 2 threads " FMT_CPU_CLOCK_SWITCHY
                         " 10000 times a CPU-second (the perf_event clock pays each switch; tried "
                         "first beside it; checked at the scheduler tick)",
                         keys, many, 2) == 0);
    REQUIRE(agent_cost_switches_text(&r, text, sizeof text) == 1);
    CHECK(!strcmp(text, "40000 (50000 a CPU-second): the threads that switched most were given "
                        "POSIX timers, which do not pay them (the clock line)"));
    CHECK(agent_cost_perf_switch_rate(&r) == 0.0);
    cpu_share_causes(&r, causes, sizeof causes);
    CHECK(strstr(causes, "context switches") == NULL);
    rec_free(&r);

    /* few switches under perf_event: nothing to say of them */
    const uint64_t few[] = {3000, 1000000000};
    REQUIRE(load_clocked(&r, "perf_event task-clock", keys, few, 2) == 0);
    REQUIRE(agent_cost_switches_text(&r, text, sizeof text) == 1);
    CHECK(!strcmp(text, "3000 (3000 a CPU-second)"));
    rec_free(&r);

    /* none counted (an older recording): no line */
    REQUIRE(load_clocked(&r, "perf_event task-clock", keys + 1, many + 1, 1) == 0);
    CHECK_EQ(agent_cost_switches_text(&r, text, sizeof text), 0);
    rec_free(&r);
}

void suite_agent_cost(void)
{
    RUN(test_cost_switches);
    RUN(test_cost_exceptions);
    RUN(test_cost_whole);
    RUN(test_cost_wall);
    RUN(test_cost_partial);
}
