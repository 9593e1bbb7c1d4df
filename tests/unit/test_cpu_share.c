/*
 * Tests of cli/cpu_share: what share of the CPU the cpu samples saw, the
 * cap on what one sample saw, when a profile is thin and what is said.
 */
#include <stdlib.h>
#include <string.h>

#include "cli/cpu_share.h"
#include "fixture.h"
#include "format/recording.h"
#include "test.h"

struct shape {
    const char *clock;     /* the cpu_clock INFO */
    const char *event;     /* "cpu" or "wall" */
    uint64_t cpu_ns;       /* the agent's count, 0: none */
    uint64_t dropped;
    size_t n;              /* samples of 1 ms */
    uint64_t late_ms;      /* one more sample of that many ms, 0: none */
};

/* A recording at -i 1ms of the shape's samples (weights in us). */
static int write_shape(struct buf *out, const struct shape *s)
{
    struct writer w;
    struct writer_sink sink = {fixture_sink, out};
    if (writer_begin(&w, sink) < 0)
        return -1;
    writer_info(&w, FMT_INFO_INTERVAL_NS, "1000000");
    writer_info(&w, FMT_INFO_CPU_CLOCK, s->clock);
    int wall = !strcmp(s->event, "wall");
    writer_event(&w, wall ? FMT_EVENT_WALL : FMT_EVENT_CPU, s->event, "ns", wall ? 1000000 : 1000);
    uint32_t mod = writer_string(&w, "Demo.dll", 8), type = writer_string(&w, "Demo", 4);
    uint32_t f = writer_frame(&w, FMT_FRAME_MANAGED, mod, type, writer_string(&w, "Main", 4), 0);
    uint32_t stack = writer_stack(&w, &f, 1);
    writer_thread(&w, 1, 100, 0);
    uint64_t t = 0;
    for (size_t i = 0; i < s->n; i++)
        writer_sample(&w, wall ? FMT_EVENT_WALL : FMT_EVENT_CPU, 1, t += 1000000, stack,
                      wall ? 1 : 1000);
    if (s->late_ms)
        writer_sample(&w, FMT_EVENT_CPU, 1, t += 1000000, stack, s->late_ms * 1000);
    const char *keys[2];
    uint64_t values[2];
    size_t count = 0;
    if (s->cpu_ns) {
        keys[count] = "cpu_while_sampled_ns";
        values[count++] = s->cpu_ns;
    }
    keys[count] = "dropped_samples";
    values[count++] = s->dropped;
    int rc = writer_finish(&w, keys, values, count);
    writer_free(&w);
    return rc < 0 || w.error ? -1 : 0;
}

/* Loads the shape's recording and reads its share (rc of cpu_share_read). */
static int share_of(const struct shape *s, struct recording *r, struct cpu_share *share)
{
    struct buf b = {0};
    char err[256];
    int ok = write_shape(&b, s) == 0 && rec_load_memory(b.data, b.len, r, err, sizeof err) == 0;
    buf_free(&b);
    if (!ok)
        return -2;
    return cpu_share_read(r, share);
}

static void test_share_whole(void)
{
    struct recording r;
    struct cpu_share s;
    struct shape shape = {"perf_event task-clock", "cpu", 400000000, 0, 398, 0};
    REQUIRE(share_of(&shape, &r, &s) == 0);
    CHECK(s.seen_ns == 398000000 && s.late_ns == 0 && s.late_samples == 0);
    CHECK(s.cpu_ns == 400000000 && s.interval_ns == 1000000);
    CHECK(!cpu_share_thin(&s));
    char text[256];
    cpu_share_text(&s, text, sizeof text);
    CHECK(!strcmp(text, "the cpu samples saw 398ms of the 400ms of CPU the process used while "
                        "sampled (99.5%)"));
    rec_free(&r);
}

/* A POSIX timer's sample after a long miss carries the CPU no tick saw:
 * counted as charged late, not as seen, and the profile is thin. */
static void test_share_late_sample(void)
{
    struct recording r;
    struct cpu_share s;
    struct shape shape = {"posix-cpu-timer (--cpu-clock posix; checked at the scheduler tick)",
                          "cpu", 500000000, 3, 8, 450};
    REQUIRE(share_of(&shape, &r, &s) == 0);
    /* 8 samples of 1 ms, and 20 ms (the least cap) of the 450 */
    CHECK(s.seen_ns == 28000000);
    CHECK(s.late_ns == 430000000 && s.late_samples == 1);
    CHECK(cpu_share_thin(&s));
    char text[256], causes[1024];
    cpu_share_text(&s, text, sizeof text);
    CHECK(strstr(text, "saw 28ms of the 500ms") && strstr(text, "(5.6%); 1 sample carried 430ms "
                                                              "more, unseen CPU charged"));
    cpu_share_causes(&r, causes, sizeof causes);
    CHECK(strstr(causes, "POSIX timers fire only at a scheduler tick") != NULL);
    CHECK(strstr(causes, "; 3 samples were dropped") != NULL);
    CHECK(!strstr(causes, "user time only") && !strstr(causes, "before their clocks started"));
    rec_free(&r);
}

/* Thin needs both: under three quarters, and 20 intervals missed. */
static void test_share_thin_rule(void)
{
    struct cpu_share s = {.seen_ns = 10000000, .cpu_ns = 29000000, .interval_ns = 1000000};
    CHECK(!cpu_share_thin(&s)); /* 34%, but 19 ms missed */
    s.cpu_ns = 30000000;
    CHECK(cpu_share_thin(&s)); /* 20 ms missed */
    s = (struct cpu_share){.seen_ns = 750000000, .cpu_ns = 1000000000, .interval_ns = 1000000};
    CHECK(!cpu_share_thin(&s)); /* three quarters */
    s.seen_ns = 749000000;
    CHECK(cpu_share_thin(&s));
    /* at 10 ms, 20 intervals are 200 ms */
    s = (struct cpu_share){.seen_ns = 100000000, .cpu_ns = 299000000, .interval_ns = 10000000};
    CHECK(!cpu_share_thin(&s));
    s.cpu_ns = 300000000;
    CHECK(cpu_share_thin(&s));
    s.cpu_ns = 0;
    CHECK(!cpu_share_thin(&s));
}

/* Nothing to compare: no count (an older recording), or wall samples. */
static void test_share_absent(void)
{
    struct recording r;
    struct cpu_share s;
    struct shape none = {"perf_event task-clock", "cpu", 0, 0, 10, 0};
    REQUIRE(share_of(&none, &r, &s) == -1);
    rec_free(&r);
    struct shape wall = {"", "wall", 10000000, 0, 10, 0};
    REQUIRE(share_of(&wall, &r, &s) == -1);
    rec_free(&r);
}

/* The user-time clock, and the cause said when the recording names none. */
static void test_share_causes(void)
{
    struct recording r;
    struct cpu_share s;
    struct shape user = {"perf_event task-clock (user time only)", "cpu", 400000000, 0, 100, 0};
    REQUIRE(share_of(&user, &r, &s) == 0);
    char causes[1024];
    cpu_share_causes(&r, causes, sizeof causes);
    CHECK(!strncmp(causes, "the clock counts user time only", 31));
    CHECK(!strstr(causes, "POSIX") && !strstr(causes, "before their clocks started"));
    rec_free(&r);
    struct shape plain = {"perf_event task-clock", "cpu", 400000000, 0, 100, 0};
    REQUIRE(share_of(&plain, &r, &s) == 0);
    cpu_share_causes(&r, causes, sizeof causes);
    CHECK(!strncmp(causes, "threads run before their clocks started", 39));
    rec_free(&r);
}

/* A thin cpu view says so where every report says what was lost. */
static const struct shape *shape_for_profiles;
static int write_shape_for_profiles(struct buf *out)
{
    return write_shape(out, shape_for_profiles);
}

static void test_share_in_losses(void)
{
    struct shape thin = {"posix-cpu-timer (--cpu-clock posix; checked at the scheduler tick)",
                         "cpu", 500000000, 0, 8, 450};
    struct shape whole = {"perf_event task-clock", "cpu", 400000000, 0, 398, 0};
    const struct shape *shapes[] = {&thin, &whole};
    for (int i = 0; i < 2; i++) {
        struct profiles ps;
        struct prof_filter f = {0};
        shape_for_profiles = shapes[i];
        REQUIRE(fixture_profiles_of(write_shape_for_profiles, &ps, &f) == 0);
        char losses[512];
        report_losses(prof_current(&ps), losses, sizeof losses);
        if (i == 0)
            CHECK(!strcmp(losses, "the cpu samples saw only 5.6% of the CPU the process used "
                                  "while sampled (`corscope check` says why)"));
        else
            CHECK(losses[0] == '\0');
        prof_free(&ps);
    }
}

void suite_cpu_share(void)
{
    RUN(test_share_in_losses);
    RUN(test_share_whole);
    RUN(test_share_late_sample);
    RUN(test_share_thin_rule);
    RUN(test_share_absent);
    RUN(test_share_causes);
}
