/*
 * Tests of the agent's parts that need no runtime: the configuration parser
 * (shared with the CLI), the thread registry and its stack-walk protocol
 * (rule 2), and the pure helpers of name resolution.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "agent/clrdesc.h"
#include "agent/codemap.h"
#include "agent/evq.h"
#include "agent/names.h"
#include "agent/proctree.h"
#include "agent/recorder.h"
#include "agent/thread_registry.h"
#include "common/clock.h"
#include "common/config.h"
#include "format/recording.h"
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
    thread_registry_created(0x1000);
    thread_registry_assigned_os_thread(0x1000, 4242);
    thread_registry_renamed(0x1000, "worker");
    thread_registry_created(0x2000);
    struct thread_view *views = NULL;
    size_t cap = 0;
    long n = thread_registry_snapshot(&views, &cap);
    REQUIRE(n == 2);
    struct thread_view *w = views[0].managed == 0x1000 ? &views[0] : &views[1];
    CHECK_EQ(w->os_tid, 4242);
    CHECK_STR(w->name, "worker");
    CHECK(views[0].id != views[1].id);
    uint32_t old_id = w->id;
    /* the thread dies; its slot is reused, its recording id is not */
    thread_registry_destroyed(0x1000);
    CHECK(!thread_registry_begin_walk(w));
    thread_registry_created(0x3000);
    n = thread_registry_snapshot(&views, &cap);
    REQUIRE(n == 2);
    for (long i = 0; i < n; i++)
        CHECK(views[i].id != old_id && views[i].managed != 0x1000);
    thread_registry_destroyed(0x2000);
    thread_registry_destroyed(0x3000);
    thread_registry_destroyed(0x9999); /* unknown: ignored */
    CHECK_EQ(thread_registry_snapshot(&views, &cap), 0);
    free(views);
    thread_registry_shutdown();
}

struct destroyer {
    uintptr_t managed;
    int done;
    pthread_mutex_t lock;
};

static void *destroy(void *arg)
{
    struct destroyer *d = arg;
    thread_registry_destroyed(d->managed);
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
    thread_registry_created(0x5000);
    struct thread_view *views = NULL;
    size_t cap = 0;
    REQUIRE(thread_registry_snapshot(&views, &cap) == 1);
    REQUIRE(thread_registry_begin_walk(&views[0]));
    uint64_t waits = thread_registry_destroy_waits();
    struct destroyer d = {0x5000, 0, PTHREAD_MUTEX_INITIALIZER};
    pthread_t t;
    REQUIRE(pthread_create(&t, NULL, destroy, &d) == 0);
    struct timespec ts = {0, 50 * 1000 * 1000};
    nanosleep(&ts, NULL);
    CHECK(!is_done(&d)); /* still waiting for the walk */
    thread_registry_end_walk();
    pthread_join(t, NULL);
    CHECK(is_done(&d));
    CHECK_EQ(thread_registry_destroy_waits(), waits + 1);
    /* and a walk after the destroy is refused */
    CHECK(!thread_registry_begin_walk(&views[0]));
    free(views);
    thread_registry_shutdown();
}

/* The code map: lookups find the range that holds an address, after
 * thousands of insertions out of order (merged from the small array into
 * the large one on the way), and an unload removes only its own ranges. */
static void test_codemap(void)
{
    enum { N = 5000 };
    for (uint32_t i = 0; i < N; i++) {
        uint32_t k = (i * 7919u) % N; /* a permutation: out of order */
        struct code_range r = {0x100000 + k * 0x100, 0x100000 + k * 0x100 + 0x80,
                               0x100000 + k * 0x100, 1000 + k, 1 + k % 3, 0, 0};
        code_index_insert(&r);
    }
    CHECK_EQ(code_index_count(), N);
    for (uint32_t k = 0; k < N; k += 97) {
        const struct code_range *r = code_index_find(0x100000 + k * 0x100 + 0x40);
        CHECK(r && r->function == 1000 + k);
        CHECK(code_index_find(0x100000 + k * 0x100 + 0x80) == NULL); /* the gap after it */
    }
    CHECK(code_index_find(0xfffff) == NULL);
    /* a newer report of the same start replaces the older one */
    struct code_range again = {0x100000, 0x100090, 0x100000, 4242, 0, 0, 0}; /* a DynamicMethod */
    code_index_insert(&again);
    CHECK(code_index_find(0x100085) && code_index_find(0x100085)->function == 4242);
    uint32_t of_module_2 = 0;
    for (uint32_t k = 0; k < N; k++)
        of_module_2 += k % 3 == 1 && k != 0;
    codemap_remove(2, 0); /* module 2: a third of them */
    CHECK_EQ(code_index_count(), N - of_module_2);
    for (uint32_t k = 0; k < N; k += 97) {
        const struct code_range *r = code_index_find(0x100000 + k * 0x100 + 0x40);
        CHECK(k % 3 == 1 ? r == NULL : r != NULL);
    }
    /* the runtime reuses unloaded code's addresses, at other starts: a new
     * range that begins before a removed one and covers its place is found
     * there (a removed range left behind must not hide it) */
    struct code_range reuse = {0x100000 + 1 * 0x100 - 0x20, 0x100000 + 1 * 0x100 + 0x70,
                               0x100000 + 1 * 0x100 - 0x20, 7777, 9, 0, 0};
    code_index_insert(&reuse);
    CHECK(code_index_find(0x100000 + 1 * 0x100 + 0x40) && code_index_find(0x100000 + 1 * 0x100 + 0x40)->function == 7777);
    CHECK(code_index_find(0x100000 + 4 * 0x100 + 0x40) == NULL);
    /* a range that took an unloaded one's start belongs to its new owner */
    struct code_range took = {0x100000 + 4 * 0x100, 0x100000 + 4 * 0x100 + 0x80,
                              0x100000 + 4 * 0x100, 8888, 5, 0, 0};
    code_index_insert(&took);
    codemap_remove(2, 0);
    CHECK(code_index_find(0x100000 + 4 * 0x100 + 0x40) && code_index_find(0x100000 + 4 * 0x100 + 0x40)->function == 8888);
    codemap_remove(9, 0);
    codemap_remove(5, 0);
    CHECK_EQ(code_index_count(), N - of_module_2);
    codemap_remove(0, 4242); /* one function */
    CHECK(code_index_find(0x100040) == NULL);
    CHECK_EQ(code_index_count(), N - of_module_2 - 1);
    codemap_shutdown();
    CHECK_EQ(code_index_count(), 0);
}

static long long file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (long long)st.st_size : -1;
}

/* Rule 1: while the loop holds the code map's ids lock (which an unload
 * callback takes), the recording is not written to, however much is named
 * meanwhile: a stalled disk cannot hold the lock, and the program's unload
 * callbacks behind it.  What was named is written after the lock. */
static void test_no_write_under_ids_lock(void)
{
    char path[] = "/tmp/corscope-unit-hold.XXXXXX";
    int fd = mkstemp(path);
    REQUIRE(fd >= 0);
    close(fd);
    struct config cfg;
    config_defaults(&cfg);
    struct recorder rec;
    char err[256];
    REQUIRE(recorder_open(&rec, &cfg, path, err, sizeof err) == 0);
    codemap_init(NULL, 0, &rec);
    long long before = file_size(path);
    REQUIRE(codemap_ids_begin(UINT64_MAX));
    char name[64];
    for (int i = 0; i < 20000; i++) { /* about 600 KiB: past the writer's flush threshold twice */
        snprintf(name, sizeof name, "Method_%d_with_a_long_enough_name", i);
        CHECK(recorder_frame(&rec, FMT_FRAME_MANAGED, "/app/App.dll", "App.Type", name, 0) != 0);
    }
    CHECK_EQ(file_size(path), before);
    recorder_maybe_flush(&rec, clock_now_ns() + RECORDER_FLUSH_NS); /* due, but held */
    CHECK_EQ(file_size(path), before);
    codemap_ids_end();
    recorder_frame(&rec, FMT_FRAME_MANAGED, "/app/App.dll", "App.Type", "After", 0);
    CHECK(file_size(path) > before + (512 << 10));
    recorder_close(&rec);
    codemap_shutdown();
    codemap_init(NULL, 0, NULL);
    unlink(path);
}

/* Item 7: however many distinct names a long run makes, the string table
 * stays within its budget: it is forgotten and strings are written again
 * under new ids, and every frame still reads back with its own name. */
static void test_string_table_is_bounded(void)
{
    char path[] = "/tmp/corscope-unit-strings.XXXXXX";
    int fd = mkstemp(path);
    REQUIRE(fd >= 0);
    close(fd);
    struct config cfg;
    config_defaults(&cfg);
    struct recorder rec;
    char err[256];
    REQUIRE(recorder_open(&rec, &cfg, path, err, sizeof err) == 0);
    rec.strings_budget = 4096;
    enum { N = 2000 };
    uint32_t frames[N];
    char name[64];
    for (int i = 0; i < N; i++) {
        snprintf(name, sizeof name, "lambda_method%d", i);
        /* the module and type come back again and again, the method never */
        frames[i] = recorder_frame(&rec, FMT_FRAME_MANAGED, "[dynamic]", "dynamicClass", name, 0);
        CHECK(frames[i] != 0);
        CHECK(rec.strings_bytes <= rec.strings_budget);
    }
    uint64_t resets = rec.counters[FMT_COUNTER_STRING_RESETS];
    CHECK(resets > 10);
    recorder_close(&rec);
    struct recording r;
    REQUIRE(rec_load_file(path, &r, err, sizeof err) == 0);
    CHECK_EQ(r.status, REC_COMPLETE);
    CHECK_EQ(rec_stat(&r, "string_table_resets"), resets);
    for (int i = 0; i < N; i += 37) {
        snprintf(name, sizeof name, "lambda_method%d", i);
        REQUIRE(frames[i] < r.frame_count);
        const struct rec_frame *f = &r.frames[frames[i]];
        CHECK(rec_str_eq(r.strings[f->name], name));
        CHECK(rec_str_eq(r.strings[f->type], "dynamicClass"));
        CHECK(rec_str_eq(r.strings[f->module], "[dynamic]"));
    }
    rec_free(&r);
    unlink(path);
}

/* Item 2: the processes of one record never share a file: the first
 * claims the output record made (empty), the others go beside it under
 * their pid, exclusively, and a file that has data is nobody's to take. */
static void test_process_tree_files(void)
{
    char dir[] = "/tmp/corscope-unit-tree.XXXXXX";
    REQUIRE(mkdtemp(dir) != NULL);
    char path[96], chosen[128], beside[128];
    snprintf(path, sizeof path, "%s/app.corscope", dir);
    int made = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600); /* as record does */
    REQUIRE(made >= 0);
    close(made);
    int first = proctree_claim(path, 100, chosen, sizeof chosen);
    REQUIRE(first >= 0);
    CHECK_STR(chosen, path);
    int second = proctree_claim(path, 200, chosen, sizeof chosen); /* at the same time */
    REQUIRE(second >= 0);
    snprintf(beside, sizeof beside, "%s/app-200.corscope", dir);
    CHECK_STR(chosen, beside);
    CHECK(proctree_claim_first(path) < 0 && errno == EEXIST); /* locked */
    CHECK(write(first, "data", 4) == 4);
    close(first);
    CHECK(proctree_claim_first(path) < 0 && errno == EEXIST); /* has data: never truncated */
    int again = proctree_claim(path, 200, chosen, sizeof chosen); /* a pid seen before */
    REQUIRE(again >= 0);
    snprintf(beside, sizeof beside, "%s/app-200-2.corscope", dir);
    CHECK_STR(chosen, beside);
    close(second);
    close(again);
    CHECK(proctree_beside("/d/x.y/noext", 7, 1, chosen, sizeof chosen) == 0);
    CHECK_STR(chosen, "/d/x.y/noext-7");
    snprintf(beside, sizeof beside, "rm -rf '%s'", dir);
    CHECK(system(beside) == 0);
}

struct drained {
    uint64_t n, sum, last_time;
    uint32_t depth;
};

static void on_entry(void *ctx, const struct evq_entry *e)
{
    struct drained *d = ctx;
    d->n++;
    d->sum += e->payload[0];
    d->last_time = e->time;
    d->depth = e->depth;
}

static void *push_some(void *arg)
{
    (void)arg;
    for (uint64_t i = 1; i <= 100; i++)
        evq_push(3, 1, &i, 1, i == 100 ? 64 : 0);
    return NULL;
}

/* Event queues: entries from another thread arrive whole and in order, a
 * stack walked in place comes with the last, and a time bound keeps later
 * entries for the next drain. */
static void test_event_queues(void)
{
    evq_open();
    pthread_t t;
    REQUIRE(pthread_create(&t, NULL, push_some, NULL) == 0);
    pthread_join(t, NULL);
    struct drained d = {0, 0, 0, 0};
    CHECK_EQ(evq_drain(on_entry, &d, 0), 0); /* nothing before time 0 */
    CHECK_EQ(evq_drain(on_entry, &d, UINT64_MAX), 100);
    CHECK_EQ(d.sum, 5050);
    CHECK(d.depth > 1); /* push_some, and the thread's start */
    CHECK_EQ(evq_drain(on_entry, &d, UINT64_MAX), 0);
    CHECK_EQ(evq_dropped(), 0);
    evq_shutdown();
}

/* The runtime's contract descriptor, as .NET 10 writes it (abridged). */
static void test_clrdesc_frames(void)
{
    static const char json[] =
        "{\"version\":0,\"baseline\":\"empty\",\"types\":{\"Thread\":{\"Id\":16,"
        "\"OSId\":296,\"Frame\":8,\"GCHandle\":[304,\"GCHandle\"]},\"Frame\":{\"Next\":8},"
        "\"InlinedCallFrame\":{\"!\":56,\"CallSiteSP\":24,\"CallerReturnAddress\":32},"
        "\"FramedMethodFrame\":{\"!\":32,\"TransitionBlockPtr\":16},"
        "\"TransitionBlock\":{\"!\":104,\"ReturnAddress\":96},"
        "\"HijackFrame\":{\"!\":40,\"ReturnAddress\":16,\"HijackArgsPtr\":32}},"
        "\"globals\":{\"GCInfoVersion\":[\"0x4\",\"uint32\"],"
        "\"InlinedCallFrameIdentifier\":[\"0x1\",\"nuint\"],"
        "\"HijackFrameIdentifier\":[\"0x8\",\"nuint\"],"
        "\"PrestubMethodFrameIdentifier\":[\"0x9\",\"nuint\"],"
        "\"AppDomain\":[[1],\"pointer\"],\"Architecture\":[\"x64\",\"string\"]},"
        "\"contracts\":{\"Thread\":1}}";
    struct clrdesc_frames f;
    REQUIRE(clrdesc_parse_frames(json, sizeof json - 1, &f) == 0);
    CHECK(f.usable);
    CHECK_EQ(f.thread_frame, 8);
    CHECK_EQ(f.thread_os_id, 296);
    CHECK_EQ(f.fmf_transition, 16);
    CHECK_EQ(f.fmf_method, 24);
    CHECK_EQ(f.tb_return, 96);
    REQUIRE(f.id_count == 3);
    CHECK_EQ(f.ids[0].id, 9);
    CHECK_EQ(f.ids[0].kind, CLR_FRAME_PRESTUB);
    CHECK(f.ids[0].transition);
    CHECK_EQ(f.ids[1].id, 8);
    CHECK_EQ(f.ids[1].kind, CLR_FRAME_SUSPENDED);
    CHECK_EQ(f.ids[1].ret, 16);
    CHECK_EQ(f.ids[2].id, 1);
    CHECK_EQ(f.ids[2].kind, CLR_FRAME_PINVOKE);
    CHECK_EQ(f.ids[2].ret, 32);
    /* anything missing or malformed: unusable, never a guess */
    char broken[sizeof json];
    memcpy(broken, json, sizeof json);
    *strstr(broken, "\"Frame\":8") = 'X';
    CHECK(clrdesc_parse_frames(broken, sizeof json - 1, &f) < 0 && !f.usable);
    /* cut short (read under ASan: never past the end): what is read whole
     * is right, and without the frame types nothing is usable */
    for (size_t cut = 0; cut < sizeof json - 1; cut++) {
        char *copy = malloc(cut ? cut : 1);
        REQUIRE(copy);
        memcpy(copy, json, cut);
        if (clrdesc_parse_frames(copy, cut, &f) == 0) {
            CHECK(cut > (size_t)(strstr(json, "globals") - json));
            CHECK_EQ(f.tb_return, 96);
            for (uint32_t i = 0; i < f.id_count; i++)
                CHECK(f.ids[i].id == 9 || f.ids[i].id == 8 || f.ids[i].id == 1);
        }
        free(copy);
    }
    CHECK(clrdesc_parse_frames("{\"types\":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}",
                               85, &f) < 0);
}

void suite_agent(void)
{
    RUN(test_clrdesc_frames);
    RUN(test_codemap);
    RUN(test_no_write_under_ids_lock);
    RUN(test_string_table_is_bounded);
    RUN(test_process_tree_files);
    RUN(test_event_queues);
    RUN(test_config_defaults_and_values);
    RUN(test_config_from_env);
    RUN(test_expand_output);
    RUN(test_generic_arity);
    RUN(test_join_nested);
    RUN(test_registry_lifecycle);
    RUN(test_destroy_waits_for_walk);
}
