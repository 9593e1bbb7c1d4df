/*
 * Tests of thread_ids (agent/thread_ids.h): the recording's thread ids.
 * One id per OS thread for its whole life, whichever source meets it
 * first; once a thread's end is noticed, the next thread the kernel gives
 * its tid gets a new id, while events queued before the end keep the old
 * one; ids are never reused.  Names: a name learnt from the runtime's
 * events is written as given; a managed thread's is the registry's,
 * followed as it changes.
 */
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "agent/thread_ids.h"
#include "common/clock.h"
#include "fixture.h"
#include "format/recording.h"
#include "test.h"

/* The latest name the recording gives thread `id` ("" when none). */
static struct rec_str name_of(const struct recording *r, uint32_t id)
{
    struct rec_str none = {"", 0};
    for (size_t i = 0; i < r->thread_count; i++)
        if (r->threads[i].id == id)
            return r->strings[r->threads[i].name];
    return none;
}

static int has_thread(const struct recording *r, uint32_t id, uint64_t os_tid)
{
    for (size_t i = 0; i < r->thread_count; i++)
        if (r->threads[i].id == id)
            return r->threads[i].os_tid == os_tid;
    return 0;
}

static void test_ids_per_thread_life(void)
{
    char path[] = "/tmp/corscope-unit-tids.XXXXXX";
    struct recorder rec;
    REQUIRE(fixture_recorder(&rec, path) == 0);
    struct thread_ids t;
    thread_ids_init(&t);
    /* tids that are no thread of ours: no OS name to read */
    uint32_t a = thread_ids_get(&t, &rec, 999001), b = thread_ids_get(&t, &rec, 999002);
    CHECK(a != 0 && b != 0 && a != b);
    CHECK_EQ(thread_ids_get(&t, &rec, 999001), a);
    CHECK_EQ(thread_ids_find(&t, 999002), b);
    CHECK_EQ(thread_ids_find(&t, 999003), 0);
    /* the first thread with tid 999001 ends; an event it queued before is
     * still its own, a thread that gets the tid afterwards is another */
    uint64_t before = clock_now_ns();
    thread_ids_ended(&t, 999001);
    CHECK_EQ(thread_ids_find(&t, 999001), 0);
    CHECK_EQ(thread_ids_get_at(&t, &rec, 999001, before), a);
    uint64_t later = clock_now_ns() + 1000000000ull;
    uint32_t again = thread_ids_get_at(&t, &rec, 999001, later);
    CHECK(again != a && again != b);
    CHECK_EQ(thread_ids_get(&t, &rec, 999001), again);
    /* the other thread is untouched, and ending a tid nobody has is nothing */
    thread_ids_ended(&t, 999004);
    CHECK_EQ(thread_ids_find(&t, 999002), b);
    /* a name learnt from the runtime's events */
    CHECK_EQ(thread_ids_named(&t, &rec, 999002, later, "worker-7"), b);
    thread_ids_free(&t);
    recorder_close(&rec);
    struct recording r;
    char err[256];
    REQUIRE(rec_load_file(path, &r, err, sizeof err) == 0);
    CHECK(has_thread(&r, a, 999001));
    CHECK(has_thread(&r, again, 999001));
    CHECK(has_thread(&r, b, 999002));
    CHECK(rec_str_eq(name_of(&r, b), "worker-7"));
    rec_free(&r);
    unlink(path);
}

/* A managed thread is named from the registry, and renamed when its name
 * there changes (thread_ids_update_names, when thread_registry_changes
 * moved). */
static void test_names_follow_the_registry(void)
{
    char path[] = "/tmp/corscope-unit-tids.XXXXXX";
    struct recorder rec;
    REQUIRE(fixture_recorder(&rec, path) == 0);
    REQUIRE(thread_registry_init() == 0);
    pid_t self = (pid_t)syscall(SYS_gettid);
    thread_registry_created(0x9100);
    thread_registry_assigned_os_thread(0x9100, self);
    thread_registry_renamed(0x9100, "Main worker");
    struct thread_ids t;
    thread_ids_init(&t);
    uint32_t id = thread_ids_get(&t, &rec, self);
    REQUIRE(id != 0);
    thread_ids_update_names(&t, &rec);
    recorder_flush(&rec);
    thread_registry_renamed(0x9100, "Renamed");
    thread_ids_update_names(&t, &rec);
    thread_ids_free(&t);
    thread_registry_destroyed(0x9100);
    thread_registry_shutdown();
    recorder_close(&rec);
    struct recording r;
    char err[256];
    REQUIRE(rec_load_file(path, &r, err, sizeof err) == 0);
    CHECK(has_thread(&r, id, (uint64_t)self));
    CHECK(rec_str_eq(name_of(&r, id), "Renamed"));
    rec_free(&r);
    unlink(path);
}

void suite_thread_ids(void)
{
    RUN(test_ids_per_thread_life);
    RUN(test_names_follow_the_registry);
}
