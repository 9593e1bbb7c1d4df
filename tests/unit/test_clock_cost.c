/*
 * Tests of the choice of the signal sampler's CPU clock
 * (agent/sources/clock_cost.c, cpu_clock_take_cost): the rule with given
 * costs, what the cpu_clock INFO says of each choice, and that the measure
 * itself leaves the thread as it found it (its signal mask, no signal
 * pending).  What the measure finds on this machine is not tested here
 * (a number of the machine, not of the code): bench/sigcost.sh and
 * docs/performance.md.
 */
#include <errno.h>
#include <signal.h>
#include <string.h>

#include "agent/sources/clock_cost.h"
#include "agent/sources/clock_trial.h"
#include "agent/sources/cpu_clock.h"
#include "common/config.h"
#include "test.h"

#define US 1000ull
#define MS 1000000ull

/* 1% of a core: at 1 ms, 10 us an interrupt is allowed and no more. */
static void test_rule(void)
{
    CHECK(!clock_cost_prefers_posix(10 * US, 1 * MS));
    CHECK(clock_cost_prefers_posix(10 * US + 1, 1 * MS));
    CHECK(clock_cost_prefers_posix(55 * US, 1 * MS));     /* our CI VM, earlier: 5.5% */
    CHECK(clock_cost_prefers_posix(15 * US, 1 * MS));     /* our CI VM, 26 Nov: 1.5% */
    CHECK(!clock_cost_prefers_posix(4 * US, 1 * MS));     /* bare metal */
    CHECK(!clock_cost_prefers_posix(55 * US, 10 * MS));   /* 0.55% at the default */
    CHECK(clock_cost_prefers_posix(30 * US, 2 * MS));     /* 1.5% */
    CHECK(!clock_cost_prefers_posix(30 * US, 5 * MS));    /* 0.6% */
    CHECK_EQ(clock_cost_permille(55 * US, 1 * MS), 55);
    CHECK_EQ(clock_cost_permille(4 * US, 1 * MS), 4);
}

/* Nothing measured where even the dearest interrupt known could not make
 * the rule pick POSIX: from the default 10 ms up. */
static void test_worth_measuring(void)
{
    CHECK(!clock_cost_worth_measuring(10 * MS));
    CHECK(!clock_cost_worth_measuring(100 * MS));
    CHECK(clock_cost_worth_measuring(9 * MS));
    CHECK(clock_cost_worth_measuring(1 * MS));
}

/* A cpu_clock as the agent makes it for `-i interval_ns`, with no clock
 * asked for; the suspend sampler, so that nothing is measured here. */
static void make_clock(struct cpu_clock *c, uint64_t interval_ns)
{
    struct config cfg;
    config_defaults(&cfg);
    cfg.interval_ns = interval_ns;
    cfg.sampler = CONFIG_SAMPLER_SUSPEND;
    cpu_clock_init(c, &cfg, 1);
    CHECK(!c->measured);
}

static void test_dear_interrupts_choose_posix(void)
{
    struct cpu_clock c;
    make_clock(&c, 1 * MS);
    struct clock_cost cost = {55100, 24, 3 * MS, 2 * MS};
    cpu_clock_take_cost(&c, &cost, 0);
    CHECK(c.posix && c.chose_posix);
    const char *text = cpu_clock_describe(&c);
    static const char want[] = "posix-cpu-timer (chosen at start: a perf_event interrupt costs "
                               "55.1 us here, 5.5% of a core at 1 ms, more than the 1.0% "
                               "allowed; checked at the scheduler tick";
    CHECK(!strncmp(text, want, sizeof want - 1));
    /* the tick is the machine's: one sample per tick at most, said when
     * that is fewer than the interval asks for */
    if (c.tick_hz && c.tick_hz < 1000)
        CHECK(strstr(text, "samples per CPU-second per thread") != NULL);
}

static void test_cheap_interrupts_keep_perf(void)
{
    struct cpu_clock c;
    make_clock(&c, 1 * MS);
    struct clock_cost cost = {4200, 24, 3 * MS, 2 * MS};
    cpu_clock_take_cost(&c, &cost, 0);
    CHECK(!c.posix && !c.chose_posix);
    CHECK_STR(cpu_clock_describe(&c),
              "perf_event task-clock (chosen at start: a perf_event interrupt costs 4.2 us here, "
              "0.4% of a core at 1 ms, within the 1.0% allowed)");
}

/* The same cost is too dear at 1 ms and cheap enough at 2 ms. */
static void test_interval_decides(void)
{
    struct clock_cost cost = {15000, 24, 3 * MS, 2 * MS};
    struct cpu_clock c;
    make_clock(&c, 1 * MS);
    cpu_clock_take_cost(&c, &cost, 0); /* 1.5% */
    CHECK(c.chose_posix && c.posix);
    make_clock(&c, 2 * MS);
    cpu_clock_take_cost(&c, &cost, 0); /* 0.75% */
    CHECK(!c.chose_posix && !c.posix);
}

/* A machine too busy to measure: perf_event stays, and the INFO says so. */
static void test_unmeasured_keeps_perf(void)
{
    struct cpu_clock c;
    make_clock(&c, 1 * MS);
    struct clock_cost cost = {0, 3, 20 * MS, 1 * MS};
    cpu_clock_take_cost(&c, &cost, EBUSY);
    CHECK(!c.posix);
    CHECK_STR(cpu_clock_describe(&c),
              "perf_event task-clock (its cost not measured at start: too few overflows in "
              "20 ms, the machine too busy)");
}

/* A thread the POSIX timers missed: 10 intervals and 25 ticks' worth of
 * its CPU since its last sample (20 ms when the tick is unknown). */
static void test_missed_rule(void)
{
    CHECK(!cpu_clock_missed(100 * MS, 1 * MS, 250));       /* 25 ticks of 4 ms */
    CHECK(cpu_clock_missed(100 * MS + 1, 1 * MS, 250));
    CHECK(!cpu_clock_missed(25 * MS, 1 * MS, 1000));
    CHECK(cpu_clock_missed(26 * MS, 1 * MS, 1000));
    CHECK(!cpu_clock_missed(200 * MS, 20 * MS, 1000));     /* 10 intervals */
    CHECK(cpu_clock_missed(201 * MS, 20 * MS, 1000));
    CHECK(!cpu_clock_missed(20 * MS, 1 * MS, 0));
    CHECK(cpu_clock_missed(20 * MS + 1, 1 * MS, 0));
}

/* What the INFO says once threads were moved to perf_event clocks. */
static void test_rescued_said(void)
{
    struct cpu_clock c;
    make_clock(&c, 1 * MS);
    struct clock_cost cost = {30600, 24, 3 * MS, 2 * MS};
    cpu_clock_take_cost(&c, &cost, 0);
    c.rescued_threads = 2;
    c.rescued_missed_ns = 102 * MS + 400000;
    const char *text = cpu_clock_describe(&c);
    CHECK(!strncmp(text, "posix-cpu-timer (chosen at start: a perf_event interrupt costs 30.6 us",
                   strlen("posix-cpu-timer (chosen at start: a perf_event interrupt costs 30.6 us")));
    static const char tail[] = "); perf_event task-clock for 2 threads the tick missed (102 ms of CPU "
                               "unsampled before)";
    size_t n = strlen(text);
    CHECK(n > sizeof tail - 1 && !strcmp(text + n - (sizeof tail - 1), tail));
}

/* A thread that switches more than 10,000 times a CPU-second is tried on
 * a POSIX timer; 10 ms of its CPU between two looks are needed to tell. */
static void test_switchy_rule(void)
{
    CHECK(clock_trial_switchy(100, 10 * MS, CLOCK_TRIAL_RATE));      /* 10,000 */
    CHECK(!clock_trial_switchy(99, 10 * MS, CLOCK_TRIAL_RATE));
    CHECK(clock_trial_switchy(13000, 250 * MS, CLOCK_TRIAL_RATE));   /* 52,000: handoff */
    CHECK(!clock_trial_switchy(2000, 250 * MS, CLOCK_TRIAL_RATE));   /* 8,000: a build node */
    CHECK(!clock_trial_switchy(1000, 9 * MS, CLOCK_TRIAL_RATE));     /* too little CPU */
    CHECK(!clock_trial_switchy(0, 0, CLOCK_TRIAL_RATE));
    /* the process's gate: a quarter of the rate */
    CHECK(clock_trial_switchy(625, 250 * MS, CLOCK_TRIAL_RATE / 4));
    CHECK(!clock_trial_switchy(624, 250 * MS, CLOCK_TRIAL_RATE / 4));
}

/* A trial passes when its 8 ticks came at most 3 ticks' worth of CPU late
 * on average (4 ms ticks at 250 Hz: 12 ms); fewer ticks tell nothing. */
static void test_trial_verdict(void)
{
    CHECK_EQ(clock_trial_verdict(7, 0, 250), -1);
    CHECK_EQ(clock_trial_verdict(8, 8 * 12 * MS, 250), 1);
    CHECK_EQ(clock_trial_verdict(8, 8 * 12 * MS + 1, 250), 0);
    CHECK_EQ(clock_trial_verdict(8, 8 * 3 * MS, 1000), 1);
    CHECK_EQ(clock_trial_verdict(8, 8 * 3 * MS + 1, 1000), 0);
    CHECK_EQ(clock_trial_verdict(8, 8 * 12 * MS, 0), 1); /* 250 Hz assumed */
    /* ticks in step with the work: 100 ms late each */
    CHECK_EQ(clock_trial_verdict(9, 9 * 100 * MS, 250), 0);
}

/* Only with no clock asked for, in cpu mode, with random periods (the
 * rescue of a thread the ticks miss needs them). */
static void test_switchy_allowed(void)
{
    struct config cfg;
    struct cpu_clock c;
    config_defaults(&cfg);
    cpu_clock_init(&c, &cfg, 1);
    CHECK(c.switches_allowed);
    cfg.cpu_clock = CONFIG_CPU_CLOCK_PERF;
    cpu_clock_init(&c, &cfg, 1);
    CHECK(!c.switches_allowed);
    config_defaults(&cfg);
    cfg.cpu_period = CONFIG_CPU_PERIOD_FIXED;
    cpu_clock_init(&c, &cfg, 1);
    CHECK(!c.switches_allowed);
    config_defaults(&cfg);
    cfg.sampler = CONFIG_SAMPLER_SUSPEND;
    cpu_clock_init(&c, &cfg, 1);
    CHECK(!c.switches_allowed);
}

/* What the INFO says once threads were moved for their switches, one of
 * them moved back, and trials that kept the perf_event clock. */
static void test_switchy_said(void)
{
    struct config cfg;
    struct cpu_clock c;
    config_defaults(&cfg);
    cpu_clock_init(&c, &cfg, 1);
    c.perf_threads = 12;
    c.switchy_threads = 3;
    CHECK_STR(cpu_clock_describe(&c),
              "perf_event task-clock; posix-cpu-timer for 3 threads that switched more than "
              "10000 times a CPU-second (the perf_event clock pays each switch; tried first "
              "beside it; checked at the scheduler tick)");
    c.switchy_threads = 1;
    c.trials_failed = 2;
    c.rescued_threads = 1;
    c.rescued_missed_ns = 101 * MS;
    CHECK_STR(cpu_clock_describe(&c),
              "perf_event task-clock; posix-cpu-timer for 1 thread that switched more than "
              "10000 times a CPU-second (the perf_event clock pays each switch; tried first "
              "beside it; checked at the scheduler tick); the perf_event task-clock kept for 2 "
              "threads that switched as often, a POSIX timer tried beside it finding them late; "
              "perf_event task-clock again for 1 thread the tick missed (101 ms of CPU "
              "unsampled before)");
}

/* --cpu-clock perf: said, and nothing chosen. */
static void test_forced_perf(void)
{
    struct config cfg;
    config_defaults(&cfg);
    cfg.interval_ns = 1 * MS;
    cfg.cpu_clock = CONFIG_CPU_CLOCK_PERF;
    struct cpu_clock c;
    cpu_clock_init(&c, &cfg, 1);
    CHECK(!c.measured && !c.posix);
    CHECK_STR(cpu_clock_describe(&c), "perf_event task-clock (--cpu-clock perf)");
}

/* The measure blocks the sampler's signal while it runs and takes what it
 * caused: the mask is restored and nothing is left pending, whether
 * perf_event was allowed or not. */
static void test_measure_leaves_thread_clean(void)
{
    sigset_t before, after, pending;
    pthread_sigmask(SIG_SETMASK, NULL, &before);
    struct clock_cost cost;
    int rc = clock_cost_measure(SIGPROF, 0, &cost);
    pthread_sigmask(SIG_SETMASK, NULL, &after);
    CHECK(sigismember(&after, SIGPROF) == sigismember(&before, SIGPROF));
    sigpending(&pending);
    CHECK(!sigismember(&pending, SIGPROF));
    if (rc == 0)
        CHECK(cost.periods >= COST_MIN_PERIODS && cost.periods <= COST_PERIODS);
}

void suite_clock_cost(void)
{
    RUN(test_rule);
    RUN(test_worth_measuring);
    RUN(test_dear_interrupts_choose_posix);
    RUN(test_cheap_interrupts_keep_perf);
    RUN(test_interval_decides);
    RUN(test_unmeasured_keeps_perf);
    RUN(test_forced_perf);
    RUN(test_missed_rule);
    RUN(test_rescued_said);
    RUN(test_switchy_rule);
    RUN(test_switchy_allowed);
    RUN(test_trial_verdict);
    RUN(test_switchy_said);
    RUN(test_measure_leaves_thread_clean);
}
