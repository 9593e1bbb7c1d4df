/*
 * Tests of the agent's parts that need no runtime: the configuration parser
 * (shared with the CLI), the thread registry and its stack-walk protocol
 * (rule 2), and the pure helpers of name resolution.
 */
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <time.h>

#include "agent/names.h"
#include "agent/threads.h"
#include "common/config.h"
#include "test.h"

static void test_config_defaults_and_values(void)
{
    struct config c;
    config_defaults(&c);
    CHECK_EQ(c.event, CONFIG_EVENT_CPU);
    CHECK_EQ(c.interval_ns, 10000000);
    CHECK_EQ(c.max_depth, 4096);
    char err[256], text0[64];
    CHECK(config_set(&c, "interval", "1ms", err, sizeof err) == 0 && c.interval_ns == 1000000);
    CHECK(config_set(&c, "interval", "1s", err, sizeof err) == 0 && c.interval_ns == 1000000000);
    CHECK(config_set(&c, "interval", "999us", err, sizeof err) < 0);
    CHECK_STR(err, "out of range (1ms to 1s)");
    CHECK(config_set(&c, "interval", "1001ms", err, sizeof err) < 0);
    CHECK(config_set(&c, "event", "wall", err, sizeof err) == 0 && c.event == CONFIG_EVENT_WALL);
    CHECK(config_set(&c, "event", "alloc", err, sizeof err) < 0);
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
    /* the CPU clock: perf by default, posix on request, nothing else */
    CHECK_EQ(c.cpu_clock, CONFIG_CPU_CLOCK_PERF);
    CHECK(config_set(&c, "cpu_clock", "posix", err, sizeof err) == 0 &&
          c.cpu_clock == CONFIG_CPU_CLOCK_POSIX);
    CHECK(config_set(&c, "cpu_clock", "tsc", err, sizeof err) < 0);
    CHECK_STR(err, "unknown CPU clock (clocks: perf, posix)");
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
    CHECK(c.interval_ns == 5000000 && c.event == CONFIG_EVENT_WALL);
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

static void test_generic_arity(void)
{
    const uint8_t plain[] = {0x00, 0x00, 0x01};         /* default, 0 params, void */
    const uint8_t generic2[] = {0x10, 0x02, 0x01, 0x01}; /* GENERIC, 2 type params */
    const uint8_t generic_big[] = {0x30, 0x81, 0x02};    /* HASTHIS|GENERIC, 258 */
    const uint8_t cut[] = {0x10, 0x81};                  /* compressed int cut short */
    CHECK_EQ(names_generic_arity(plain, sizeof plain), 0);
    CHECK_EQ(names_generic_arity(generic2, sizeof generic2), 2);
    CHECK_EQ(names_generic_arity(generic_big, sizeof generic_big), 258);
    CHECK_EQ(names_generic_arity(cut, sizeof cut), 0);
    CHECK_EQ(names_generic_arity(generic2, 1), 0);
}

static void test_join_nested(void)
{
    const char *chain[] = {"Demo.Outer", "Middle", "Inner`1"};
    char out[64];
    names_join_nested(chain, 3, out, sizeof out);
    CHECK_STR(out, "Demo.Outer+Middle+Inner`1");
    names_join_nested(chain, 1, out, sizeof out);
    CHECK_STR(out, "Demo.Outer");
    names_join_nested(chain, 3, out, 8);
    CHECK_STR(out, "Demo.Ou");
}

static void test_registry_lifecycle(void)
{
    threads_created(0x1000);
    threads_assigned_os_thread(0x1000, 4242);
    threads_renamed(0x1000, "worker");
    threads_created(0x2000);
    struct thread_view *views = NULL;
    size_t cap = 0;
    long n = threads_snapshot(&views, &cap);
    REQUIRE(n == 2);
    struct thread_view *w = views[0].managed == 0x1000 ? &views[0] : &views[1];
    CHECK_EQ(w->os_tid, 4242);
    CHECK_STR(w->name, "worker");
    CHECK(views[0].id != views[1].id);
    uint32_t old_id = w->id;
    /* the thread dies; its slot is reused, its recording id is not */
    threads_destroyed(0x1000);
    CHECK(!threads_begin_walk(w));
    threads_created(0x3000);
    n = threads_snapshot(&views, &cap);
    REQUIRE(n == 2);
    for (long i = 0; i < n; i++)
        CHECK(views[i].id != old_id && views[i].managed != 0x1000);
    threads_destroyed(0x2000);
    threads_destroyed(0x3000);
    threads_destroyed(0x9999); /* unknown: ignored */
    CHECK_EQ(threads_snapshot(&views, &cap), 0);
    free(views);
    threads_shutdown();
}

struct destroyer {
    uintptr_t managed;
    int done;
    pthread_mutex_t lock;
};

static void *destroy(void *arg)
{
    struct destroyer *d = arg;
    threads_destroyed(d->managed);
    pthread_mutex_lock(&d->lock);
    d->done = 1;
    pthread_mutex_unlock(&d->lock);
    return NULL;
}

static int is_done(struct destroyer *d)
{
    pthread_mutex_lock(&d->lock);
    int done = d->done;
    pthread_mutex_unlock(&d->lock);
    return done;
}

static void test_destroy_waits_for_walk(void)
{
    /* rule 2: ThreadDestroyed of a thread being walked returns only after
     * the walk ends */
    threads_created(0x5000);
    struct thread_view *views = NULL;
    size_t cap = 0;
    REQUIRE(threads_snapshot(&views, &cap) == 1);
    REQUIRE(threads_begin_walk(&views[0]));
    uint64_t waits = threads_destroy_waits();
    struct destroyer d = {0x5000, 0, PTHREAD_MUTEX_INITIALIZER};
    pthread_t t;
    REQUIRE(pthread_create(&t, NULL, destroy, &d) == 0);
    struct timespec ts = {0, 50 * 1000 * 1000};
    nanosleep(&ts, NULL);
    CHECK(!is_done(&d)); /* still waiting for the walk */
    threads_end_walk();
    pthread_join(t, NULL);
    CHECK(is_done(&d));
    CHECK_EQ(threads_destroy_waits(), waits + 1);
    /* and a walk after the destroy is refused */
    CHECK(!threads_begin_walk(&views[0]));
    free(views);
    threads_shutdown();
}

void suite_agent(void)
{
    RUN(test_config_defaults_and_values);
    RUN(test_config_from_env);
    RUN(test_expand_output);
    RUN(test_generic_arity);
    RUN(test_join_nested);
    RUN(test_registry_lifecycle);
    RUN(test_destroy_waits_for_walk);
}
