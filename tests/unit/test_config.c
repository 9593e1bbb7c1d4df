/*
 * Tests of config (common/config.h), the settings the CLI sends and the
 * agent reads: defaults and values, the environment, the text form an attach
 * carries as client data, the output path's %p, and the settings of the
 * events (-e exceptions,lock,jit; -e alloc,gc,live, --alloc, --alloc-interval,
 * --live-max).
 */
#include <signal.h>
#include <stdlib.h>

#include "agent/codemap.h"
#include "test.h"

static void test_config_defaults_and_values(void)
{
    struct config c;
    config_defaults(&c);
    CHECK_EQ(c.events, CONFIG_EVENT_CPU);
    CHECK_EQ(c.interval_ns, 10000000);
    CHECK_EQ(c.max_depth, 4096);
    char err[256], text0[64];
    CHECK(config_set(&c, "interval", "1ms", err, sizeof err) == 0 && c.interval_ns == 1000000);
    CHECK(config_set(&c, "interval", "1s", err, sizeof err) == 0 && c.interval_ns == 1000000000);
    CHECK(config_set(&c, "interval", "999us", err, sizeof err) < 0);
    CHECK_STR(err, "out of range (1ms to 1s)");
    CHECK(config_set(&c, "interval", "1001ms", err, sizeof err) < 0);
    CHECK(config_set(&c, "event", "wall", err, sizeof err) == 0 && c.events == CONFIG_EVENT_WALL);
    CHECK(config_set(&c, "event", "bogus", err, sizeof err) < 0);
    CHECK(config_set(&c, "event", "", err, sizeof err) < 0);
    /* nothing at all (--async=snapshots alone), and its text form */
    CHECK(config_set(&c, "event", "none", err, sizeof err) == 0 && c.events == 0);
    config_value_text(&c, "event", text0, sizeof text0);
    CHECK_STR(text0, "none");
    CHECK(config_set(&c, "event", "wall", err, sizeof err) == 0);
    CHECK(config_set(&c, "event", "cpu,", err, sizeof err) < 0);
    CHECK(config_set(&c, "event", "cpu,wall", err, sizeof err) < 0);
    CHECK(c.events == CONFIG_EVENT_WALL); /* a rejected value changes nothing */
    config_value_text(&c, "event", text0, sizeof text0);
    CHECK_STR(text0, "wall");
    CHECK(config_set(&c, "max_depth", "7", err, sizeof err) < 0);
    CHECK(config_set(&c, "max_depth", "65536", err, sizeof err) == 0 && c.max_depth == 65536);
    CHECK(config_set(&c, "output", "", err, sizeof err) < 0);
    CHECK(config_set(&c, "nonsense", "1", err, sizeof err) < 0);
    /* the sampler and its signal: never the runtime's SIGRTMIN, nor a fault */
    CHECK(c.sampler == CONFIG_SAMPLER_SIGNAL && c.signal == SIGPROF);
    CHECK(config_set(&c, "sampler", "suspend", err, sizeof err) == 0 &&
          c.sampler == CONFIG_SAMPLER_SUSPEND);
    CHECK(config_set(&c, "sampler", "signal", err, sizeof err) == 0 &&
          c.sampler == CONFIG_SAMPLER_SIGNAL);
    CHECK(config_set(&c, "sampler", "perf", err, sizeof err) < 0);
    CHECK(config_set(&c, "signal", "SIGVTALRM", err, sizeof err) == 0 && c.signal == SIGVTALRM);
    CHECK(config_set(&c, "signal", "USR2", err, sizeof err) == 0 && c.signal == SIGUSR2);
    CHECK(config_set(&c, "signal", "SIGSEGV", err, sizeof err) < 0);
    CHECK(config_set(&c, "signal", "SIGRTMIN", err, sizeof err) < 0);
    /* the CPU clock: chosen by the agent by default, perf or posix on
     * request, nothing else */
    CHECK_EQ(c.cpu_clock, CONFIG_CPU_CLOCK_AUTO);
    config_value_text(&c, "cpu_clock", text0, sizeof text0);
    CHECK_STR(text0, "auto");
    CHECK(config_set(&c, "cpu_clock", "posix", err, sizeof err) == 0 &&
          c.cpu_clock == CONFIG_CPU_CLOCK_POSIX);
    CHECK(config_set(&c, "cpu_clock", "tsc", err, sizeof err) < 0);
    CHECK_STR(err, "unknown CPU clock (clocks: auto, perf, posix)");
    config_value_text(&c, "cpu_clock", text0, sizeof text0);
    CHECK_STR(text0, "posix");
    CHECK(config_set(&c, "cpu_clock", "perf", err, sizeof err) == 0 &&
          c.cpu_clock == CONFIG_CPU_CLOCK_PERF);
    char rt[16];
    snprintf(rt, sizeof rt, "%d", SIGRTMIN);
    CHECK(config_set(&c, "signal", rt, err, sizeof err) < 0);
    snprintf(rt, sizeof rt, "%d", SIGRTMIN + 3);
    CHECK(config_set(&c, "signal", rt, err, sizeof err) == 0 && c.signal == SIGRTMIN + 3);
    config_value_text(&c, "signal", text0, sizeof text0);
    struct config e;
    config_defaults(&e);
    CHECK(config_set(&e, "signal", text0, err, sizeof err) == 0 && e.signal == c.signal);
    /* values print back in a form the parser takes */
    char text[64];
    config_value_text(&c, "interval", text, sizeof text);
    struct config d;
    config_defaults(&d);
    CHECK(config_set(&d, "interval", text, err, sizeof err) == 0 && d.interval_ns == c.interval_ns);
}

static void test_config_from_env(void)
{
    struct config c;
    char err[256];
    setenv("CORSCOPE_INTERVAL", "5ms", 1);
    setenv("CORSCOPE_EVENT", "wall", 1);
    CHECK(config_from_env(&c, err, sizeof err) == 0);
    CHECK(c.interval_ns == 5000000 && c.events == CONFIG_EVENT_WALL);
    setenv("CORSCOPE_INTERVAL", "abc", 1);
    CHECK(config_from_env(&c, err, sizeof err) < 0);
    CHECK_STR(err, "CORSCOPE_INTERVAL=abc: not a duration (expected e.g. 10ms)");
    unsetenv("CORSCOPE_INTERVAL");
    unsetenv("CORSCOPE_EVENT");
    CHECK(config_from_env(&c, err, sizeof err) == 0 && c.interval_ns == 10000000);
}

static void test_expand_output(void)
{
    char out[64];
    CHECK(config_expand_output("app-%p.corscope", 42, out, sizeof out) == 0);
    CHECK_STR(out, "app-42.corscope");
    CHECK(config_expand_output("100%%-%p", 7, out, sizeof out) == 0);
    CHECK_STR(out, "100%-7");
    CHECK(config_expand_output("%p%p%p", 123456, out, 10) < 0);
}

static void test_config_text_round_trip(void)
{
    struct config a, b;
    char err[256], text[CONFIG_TEXT_MAX];
    config_defaults(&a);
    CHECK(config_set(&a, "output", "/tmp/x %p 100%%.corscope", err, sizeof err) == 0);
    CHECK(config_set(&a, "event", "wall", err, sizeof err) == 0);
    CHECK(config_set(&a, "interval", "3ms", err, sizeof err) == 0);
    CHECK(config_set(&a, "sampler", "suspend", err, sizeof err) == 0);
    CHECK(config_set(&a, "max_depth", "100", err, sizeof err) == 0);
    CHECK(config_set(&a, "control", "@corscope-1-abc", err, sizeof err) == 0);
    int n = config_to_text(&a, text, sizeof text);
    REQUIRE(n > 0);
    CHECK_EQ(strlen(text), (size_t)n);
    /* no NUL is needed: the client data has a length */
    REQUIRE(config_from_text(&b, text, (size_t)n, err, sizeof err) == 0);
    CHECK(!strcmp(b.output, a.output));
    CHECK_EQ(b.events, CONFIG_EVENT_WALL);
    CHECK_EQ(b.interval_ns, 3000000);
    CHECK_EQ(b.sampler, CONFIG_SAMPLER_SUSPEND);
    CHECK_EQ(b.max_depth, 100);
    CHECK_STR(b.control, "@corscope-1-abc");
    CHECK_EQ(b.signal, a.signal);
    CHECK_EQ(b.cpu_clock, a.cpu_clock);
    /* too small a buffer is refused, not cut */
    CHECK(config_to_text(&a, text, 20) == -1);
}

static void test_watch_settings(void)
{
    struct config a, b;
    char err[256], text[CONFIG_TEXT_MAX];
    config_defaults(&a);
    CHECK_EQ(a.watch_methods, CONFIG_WATCH_METHODS_DEFAULT);
    CHECK_EQ(a.watch_rate, CONFIG_WATCH_RATE_DEFAULT);
    CHECK(config_set(&a, "watch", "MyApp.Orders.*", err, sizeof err) == 0);
    CHECK(config_set(&a, "watch_count", "100", err, sizeof err) == 0);
    CHECK(config_set(&a, "watch_methods", "50", err, sizeof err) == 0);
    CHECK(config_set(&a, "watch_rate", "20000", err, sizeof err) == 0);
    CHECK_EQ(a.watch_fields, 0);
    CHECK(config_set(&a, "watch_fields", "1", err, sizeof err) == 0);
    CHECK(config_set(&a, "watch_fields", "yes", err, sizeof err) == -1);
    int n = config_to_text(&a, text, sizeof text);
    REQUIRE(n > 0);
    REQUIRE(config_from_text(&b, text, (size_t)n, err, sizeof err) == 0);
    CHECK(!strcmp(b.watch, "MyApp.Orders.*"));
    CHECK_EQ(b.watch_count, 100);
    CHECK_EQ(b.watch_methods, 50);
    CHECK_EQ(b.watch_rate, 20000);
    CHECK_EQ(b.watch_fields, 1);
    CHECK(config_set(&a, "watch", "a b", err, sizeof err) == -1);
    CHECK(config_set(&a, "watch_methods", "0", err, sizeof err) == -1);
    CHECK(config_set(&a, "watch_methods", "1001", err, sizeof err) == -1);
    CHECK(config_set(&a, "watch_rate", "0", err, sizeof err) == -1);
    CHECK(config_set(&a, "watch_count", "-1", err, sizeof err) == -1);
}

static void test_config_text_rejects(void)
{
    struct config c;
    char err[256];
    static const char *const bad[] = {
        "interval=abc\n", "nonsense=1\n", "no equals sign\n", "=5\n",
        "control=corscope\n", "control=@with space\n", "event=cpu,wall\n",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err[0] = '\0';
        CHECK(config_from_text(&c, bad[i], strlen(bad[i]), err, sizeof err) == -1);
        CHECK(err[0] != '\0');
    }
    CHECK(config_from_text(&c, "log=info\0x", 10, err, sizeof err) == -1); /* a NUL inside */
    CHECK(config_set(&c, "output", "a\nb", err, sizeof err) == -1);
    /* empty lines and a missing last newline are fine; defaults fill in */
    REQUIRE(config_from_text(&c, "\nlog=debug", 10, err, sizeof err) == 0);
    CHECK_EQ(c.log, CONFIG_LOG_DEBUG);
    CHECK_EQ(c.events, CONFIG_EVENT_CPU);
    CHECK_STR(c.control, "");
}

static void test_event_settings(void)
{
    struct config c;
    char err[256], text[128];
    config_defaults(&c);
    CHECK_EQ(c.lock_min_ns, 10000);
    CHECK(config_set(&c, "event", "cpu,exceptions,lock,jit", err, sizeof err) == 0);
    CHECK_EQ(c.events, CONFIG_EVENT_CPU | CONFIG_EVENT_EXCEPTIONS | CONFIG_EVENT_LOCK |
                           CONFIG_EVENT_JIT);
    config_value_text(&c, "event", text, sizeof text);
    CHECK_STR(text, "cpu,exceptions,lock,jit");
    CHECK(config_set(&c, "event", "exceptions", err, sizeof err) == 0);
    CHECK_EQ(config_sampled(&c), 0);
    CHECK(config_set(&c, "event", "locks", err, sizeof err) < 0);
    CHECK(strstr(err, "exceptions, lock, jit") != NULL);
    CHECK(config_set(&c, "lock_min", "1ms", err, sizeof err) == 0 && c.lock_min_ns == 1000000);
    CHECK(config_set(&c, "lock_min", "0", err, sizeof err) == 0 && c.lock_min_ns == 0);
    CHECK(config_set(&c, "lock_min", "11s", err, sizeof err) < 0);
    CHECK(config_set(&c, "lock_min", "5", err, sizeof err) < 0); /* a unit is needed */
    CHECK(config_set(&c, "lock_min", "250us", err, sizeof err) == 0);
    config_value_text(&c, "lock_min", text, sizeof text);
    CHECK_STR(text, "250000ns");
    CHECK_STR(config_event_name(CONFIG_EVENT_JIT), "jit");
}

static void test_memory_settings(void)
{
    struct config c;
    config_defaults(&c);
    char err[256], text[64];
    CHECK(c.alloc == CONFIG_ALLOC_SAMPLED && c.alloc_interval == 100 * 1024 && c.live_max == 100000);
    CHECK(config_set(&c, "event", "cpu,alloc,gc", err, sizeof err) == 0);
    CHECK_EQ(c.events, CONFIG_EVENT_CPU | CONFIG_EVENT_ALLOC | CONFIG_EVENT_GC);
    /* live objects are sampled allocations: live brings alloc */
    CHECK(config_set(&c, "event", "live", err, sizeof err) == 0);
    CHECK_EQ(c.events, CONFIG_EVENT_ALLOC | CONFIG_EVENT_LIVE);
    config_value_text(&c, "event", text, sizeof text);
    CHECK_STR(text, "alloc,live");
    CHECK(config_set(&c, "alloc", "exact", err, sizeof err) == 0 && c.alloc == CONFIG_ALLOC_EXACT);
    CHECK(config_set(&c, "alloc", "every", err, sizeof err) < 0);
    CHECK_STR(err, "unknown allocation mode (modes: sampled, exact)");
    CHECK(config_set(&c, "alloc_interval", "512KiB", err, sizeof err) == 0 &&
          c.alloc_interval == 512 * 1024);
    CHECK(config_set(&c, "alloc_interval", "99KiB", err, sizeof err) < 0);
    CHECK_STR(err, "out of range (100KiB, the runtime's own mean, to 1GiB)");
    CHECK(config_set(&c, "alloc_interval", "2GiB", err, sizeof err) < 0);
    config_value_text(&c, "alloc_interval", text, sizeof text);
    CHECK_STR(text, "524288"); /* read back the same by the agent */
    CHECK(config_set(&c, "live_max", "0", err, sizeof err) < 0);
    CHECK(config_set(&c, "live_max", "5000", err, sizeof err) == 0 && c.live_max == 5000);
}

void suite_config(void)
{
    RUN(test_config_defaults_and_values);
    RUN(test_watch_settings);
    RUN(test_config_from_env);
    RUN(test_expand_output);
    RUN(test_config_text_round_trip);
    RUN(test_config_text_rejects);
    RUN(test_event_settings);
    RUN(test_memory_settings);
}
