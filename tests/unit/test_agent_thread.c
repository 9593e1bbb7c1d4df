/*
 * Unit tests of the agent's per-thread blocks (agent/agent_thread.h): one
 * block per thread, made on first use and the same after; peek never
 * makes one; a thread's exit frees its block, also a block made again by a
 * destructor that runs after the agent's (glibc runs the destructors
 * again); the pointer is cleared before the block is freed.
 */
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "agent/agent_thread.h"
#include "test.h"

static void test_same_block(void)
{
    struct agent_thread *t = agent_thread_get();
    REQUIRE(t);
    CHECK(agent_thread_get() == t);
    CHECK(agent_thread_peek() == t);
    CHECK_EQ(agent_thread_tid(), syscall(SYS_gettid));
    CHECK_EQ(t->tid, syscall(SYS_gettid));
}

struct seen {
    struct agent_thread *before, *got, *again;
    pid_t tid;
};

static void *first_use(void *p)
{
    struct seen *s = p;
    s->before = agent_thread_peek();
    s->got = agent_thread_get();
    s->again = agent_thread_get();
    s->tid = agent_thread_tid();
    if (s->got)
        s->got->jit.compile_depth = 3; /* zeroed for every thread: see below */
    return NULL;
}

static void test_one_per_thread_freed_at_exit(void)
{
    struct agent_thread *mine = agent_thread_get();
    REQUIRE(mine);
    uint64_t live = agent_thread_live();
    struct seen s[2] = {{0}};
    pthread_t th[2];
    for (int i = 0; i < 2; i++)
        REQUIRE(pthread_create(&th[i], NULL, first_use, &s[i]) == 0);
    for (int i = 0; i < 2; i++)
        pthread_join(th[i], NULL);
    for (int i = 0; i < 2; i++) {
        CHECK(s[i].before == NULL);
        CHECK(s[i].got != NULL);
        CHECK(s[i].again == s[i].got);
        CHECK(s[i].got != mine);
        CHECK(s[i].tid > 0 && s[i].tid != syscall(SYS_gettid));
    }
    CHECK(s[0].tid != s[1].tid);
    CHECK_EQ(agent_thread_live(), live); /* both freed by their threads' exits */
    CHECK_EQ(mine->jit.compile_depth, 0);
}

/* A destructor of a key made after the agent's runs after it (glibc runs
 * them in the keys' order): it sees the pointer cleared, and a callback
 * from there makes a block the next round of destructors frees. */
static pthread_key_t late_key;
static struct agent_thread *late_peek = (struct agent_thread *)1, *late_got;

static void late_destructor(void *p)
{
    (void)p;
    late_peek = agent_thread_peek();
    late_got = agent_thread_get();
}

static void *use_then_exit(void *p)
{
    (void)p;
    agent_thread_get();
    pthread_setspecific(late_key, (void *)1);
    return NULL;
}

static void test_late_destructor(void)
{
    agent_thread_get(); /* the agent's key exists before late_key */
    REQUIRE(pthread_key_create(&late_key, late_destructor) == 0);
    uint64_t live = agent_thread_live();
    pthread_t th;
    REQUIRE(pthread_create(&th, NULL, use_then_exit, NULL) == 0);
    pthread_join(th, NULL);
    CHECK(late_peek == NULL);
    CHECK(late_got != NULL);
    CHECK_EQ(agent_thread_live(), live);
    pthread_key_delete(late_key);
}

void suite_agent_thread(void)
{
    RUN(test_same_block);
    RUN(test_one_per_thread_freed_at_exit);
    RUN(test_late_destructor);
}
