/*
 * unhandled: see unhandled.h.  One request at a time: the first thread
 * whose exception goes unhandled waits for the loop; another one meanwhile
 * waits for the same answer.
 */
#include "agent/unhandled.h"

#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#include "agent/signal/ending.h"

enum { NONE, SEARCHING, CAUGHT };

struct thread_exception {
    int state;
    ObjectID object;
    ICorProfilerInfo15 *info;
};

static __thread struct thread_exception current;
static _Atomic int armed;
static _Atomic uint64_t requested, recorded; /* request numbers */
static uint64_t taken;                        /* the loop's: the request it answers */
static _Atomic uintptr_t request_class;
static _Atomic int seen;

void unhandled_thrown(ICorProfilerInfo15 *info, ObjectID object)
{
    current.state = SEARCHING;
    current.object = object;
    current.info = info;
}

void unhandled_catcher_found(void)
{
    current.state = CAUGHT;
}

void unhandled_unwinding(void)
{
    if (current.state != SEARCHING)
        return;
    /* pass 2 with no catch clause found in pass 1: unhandled */
    current.state = NONE;
    if (!atomic_load(&armed))
        return;
    ClassID klass = 0;
    if (current.info->lpVtbl->GetClassFromObject(current.info, current.object, &klass) < 0)
        klass = 0;
    atomic_store(&request_class, (uintptr_t)klass);
    uint64_t mine = atomic_fetch_add(&requested, 1) + 1;
    struct timespec step = {0, 1000000};
    for (uint64_t waited = 0; waited < ENDING_WAIT_NS && atomic_load(&armed) &&
                              atomic_load(&recorded) < mine;
         waited += 1000000)
        nanosleep(&step, NULL);
}

void unhandled_arm(void)
{
    atomic_store(&armed, 1);
}

void unhandled_disarm(void)
{
    atomic_store(&armed, 0);
}

int unhandled_pending(ClassID *klass)
{
    taken = atomic_load(&requested);
    if (taken == atomic_load(&recorded))
        return 0;
    *klass = (ClassID)atomic_load(&request_class);
    return 1;
}

void unhandled_recorded(void)
{
    atomic_store(&seen, 1);
    atomic_store(&recorded, taken);
}

int unhandled_seen(void)
{
    return atomic_load(&seen);
}
