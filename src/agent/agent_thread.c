/*
 * agent_thread: see agent_thread.h.
 */
#include "agent/agent_thread.h"

#include <pthread.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/mem.h"

static __thread struct agent_thread *self __attribute__((tls_model("initial-exec")));
static pthread_once_t key_once = PTHREAD_ONCE_INIT;
static pthread_key_t key;
static int key_made;
static _Atomic uint64_t missing, live;

/* The exiting thread's destructor (on that thread): NULL before free, so a
 * signal handler interrupting it finds the live block or none. */
static void thread_exit(void *p)
{
    struct agent_thread *t = p;
    if (self == t)
        self = NULL;
    atomic_signal_fence(memory_order_seq_cst);
    mem_free(t);
    atomic_fetch_sub_explicit(&live, 1, memory_order_relaxed);
}

static void make_key(void)
{
    key_made = pthread_key_create(&key, thread_exit) == 0;
}

struct agent_thread *agent_thread_get(void)
{
    struct agent_thread *t = self;
    if (t)
        return t;
    pthread_once(&key_once, make_key);
    /* without the key, the block could never be freed: none */
    t = key_made ? mem_calloc(1, sizeof *t) : NULL;
    if (t && pthread_setspecific(key, t) != 0) {
        mem_free(t);
        t = NULL;
    }
    if (!t) {
        atomic_fetch_add_explicit(&missing, 1, memory_order_relaxed);
        return NULL;
    }
    atomic_fetch_add_explicit(&live, 1, memory_order_relaxed);
    atomic_signal_fence(memory_order_seq_cst); /* whole before a handler may see it */
    self = t;
    return t;
}

struct agent_thread *agent_thread_peek(void)
{
    return self;
}

pid_t agent_thread_tid(void)
{
    struct agent_thread *t = agent_thread_get();
    if (!t)
        return (pid_t)syscall(SYS_gettid);
    if (!t->tid)
        t->tid = (pid_t)syscall(SYS_gettid);
    return t->tid;
}

uint64_t agent_thread_missing(void)
{
    return atomic_load_explicit(&missing, memory_order_relaxed);
}

uint64_t agent_thread_live(void)
{
    return atomic_load_explicit(&live, memory_order_relaxed);
}
