/*
 * agent: the life of the sampler thread, whichever sampler it runs.  The
 * thread is started from Initialize with all signals blocked, sleeps on a
 * condition variable between ticks so that Shutdown can wake it at once,
 * and is joined with a deadline: a sampler that does not stop in time is
 * abandoned with its recording rather than hanging the program's exit.
 */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <time.h>

#include "agent/agent.h"
#include "agent/log.h"

/* How long Shutdown waits for the sampler: a tick ends within a runtime
 * suspension and a few walks, or a drain of the rings. */
#define STOP_DEADLINE_S 10
/* How long an unload callback waits for the sampler to let go of its ids:
 * a cycle of the sampler takes milliseconds; past this it is stuck, and
 * the program must not be */
#define UNLOAD_WAIT_S 2

void agent_code_unloading(struct agent *a, ModuleID module, FunctionID function)
{
    atomic_fetch_add(&a->unloads, 1);
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += UNLOAD_WAIT_S;
    if (pthread_mutex_timedlock(&a->ids_lock, &deadline) != 0) {
        /* the sampler forgets everything before it next uses an id */
        atomic_store(&a->unload_missed, 1);
        log_warn("the sampler did not answer an unload within %d s; names of code sampled "
                 "meanwhile may be missing", UNLOAD_WAIT_S);
        return;
    }
    if (a->on_unload)
        a->on_unload(a, module, function);
    pthread_mutex_unlock(&a->ids_lock);
}

void agent_ids_lock(struct agent *a)
{
    pthread_mutex_lock(&a->ids_lock);
    if (atomic_exchange(&a->unload_missed, 0) && a->on_unload)
        a->on_unload(a, 0, 0);
}

void agent_ids_unlock(struct agent *a)
{
    pthread_mutex_unlock(&a->ids_lock);
}

void agent_sleep_until(struct agent *a, uint64_t deadline_ns)
{
    struct timespec ts = {(time_t)(deadline_ns / 1000000000ull),
                          (long)(deadline_ns % 1000000000ull)};
    pthread_mutex_lock(&a->wake_lock);
    while (!atomic_load(&a->stopping) && !atomic_load(&a->poked)) {
        if (pthread_cond_timedwait(&a->wake, &a->wake_lock, &ts) == ETIMEDOUT)
            break;
    }
    pthread_mutex_unlock(&a->wake_lock);
}

void agent_poke(struct agent *a)
{
    if (!a->sampler_started || atomic_exchange(&a->poked, 1))
        return; /* not running, or already poked */
    pthread_mutex_lock(&a->wake_lock);
    pthread_cond_broadcast(&a->wake);
    pthread_mutex_unlock(&a->wake_lock);
}

int sampler_start(struct agent *a)
{
    void *(*body)(void *) = suspend_sampler_main;
    if (a->cfg.sampler == CONFIG_SAMPLER_SIGNAL) {
        if (signal_sampler_prepare(a) < 0)
            return -1;
        body = signal_sampler_main;
    }
    pthread_mutex_init(&a->wake_lock, NULL);
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&a->wake, &attr);
    pthread_condattr_destroy(&attr);

    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = pthread_create(&a->sampler, NULL, body, a);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        log_error("cannot start the sampler thread: %s", strerror(rc));
        return -1;
    }
    a->sampler_started = 1;
    return 0;
}

int sampler_stop(struct agent *a)
{
    if (!a->sampler_started)
        return 0;
    pthread_mutex_lock(&a->wake_lock);
    atomic_store(&a->stopping, 1);
    pthread_cond_broadcast(&a->wake);
    pthread_mutex_unlock(&a->wake_lock);

    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += STOP_DEADLINE_S;
    int rc = pthread_timedjoin_np(a->sampler, NULL, &deadline);
    if (rc != 0) {
        log_error("the sampler thread did not stop within %d s; the recording is left "
                  "unfinished", STOP_DEADLINE_S);
        return -1;
    }
    a->sampler_started = 0;
    return 0;
}
