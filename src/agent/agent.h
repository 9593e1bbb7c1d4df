/*
 * agent: the state of the profiler inside the profiled process, shared by
 * the callback object (profiler.c) and the sampler (sampler.c).
 *
 * There is one agent per process; the runtime creates one profiler object
 * and calls Initialize once.  Fields are written during Initialize, before
 * the sampler thread starts, and read-only afterwards, except where noted.
 */
#ifndef CORSCOPE_AGENT_H
#define CORSCOPE_AGENT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "agent/names.h"
#include "agent/recorder.h"
#include "clr/clr_interfaces.h"
#include "common/config.h"
#include "common/visibility.h"

struct agent {
    struct config cfg;
    char output[4096];         /* cfg.output with %p expanded */
    ICorProfilerInfo15 *info;  /* the highest version the runtime offers */
    int info_version;
    struct recorder rec;       /* owned by the sampler thread while it runs */
    struct names names;        /* idem */
    pthread_t sampler;
    int sampler_started;
    _Atomic int stopping;      /* set by Shutdown */
    pthread_mutex_t wake_lock; /* guards nothing but the sleep of the sampler */
    pthread_cond_t wake;
    _Atomic int poked;         /* a thread appeared: the sampler should look now */

    /* Runtime ids (FunctionID, ModuleID) name memory the runtime frees when
     * it unloads code (a collectible assembly, a DynamicMethod), and it
     * reuses the addresses.  ids_lock orders the two: the sampler thread
     * holds it whenever it holds or uses ids (all the time but its sleep and
     * the suspend sampler's stopped world), and an unload callback takes it
     * to have everything sampled so far named while the ids are still valid,
     * then forgotten (agent_code_unloading).  It is never held across a
     * runtime call that can trigger a GC or wait for one (rule 3): the calls
     * made under it only read the runtime's data structures. */
    pthread_mutex_t ids_lock;
    /* set by the running sampler under ids_lock: resolve what is pending,
     * then forget the module (module != 0) or the method (function != 0);
     * with both 0, forget every id at once, resolving nothing first (an
     * unload went by without the sampler) */
    void (*on_unload)(struct agent *a, ModuleID module, FunctionID function);
    void *sampler_state;       /* the running sampler's, for on_unload */
    _Atomic uint64_t unloads;  /* unload callbacks so far */
    _Atomic int unload_missed; /* a callback could not take ids_lock in time */
};

/* agent.c: the sampler thread.  It starts with every signal blocked (it
 * never takes a signal meant for the program, nor the sampler's own) and
 * never runs managed code. */

/* Prepares the chosen sampler (in Initialize, on the runtime's thread) and
 * starts its thread.  Returns 0, or -1 (logged). */
HIDDEN int sampler_start(struct agent *a);
/* Asks the sampler to stop and joins it.  Returns 0, or -1 when it did not
 * stop in time (then the recorder still belongs to it). */
HIDDEN int sampler_stop(struct agent *a);
/* Sleeps until the absolute CLOCK_MONOTONIC time, or until Shutdown. */
HIDDEN void agent_sleep_until(struct agent *a, uint64_t deadline_ns);

/* Any thread: wakes the sampler early (a new thread to take care of).
 * Returns at once; the sampler's sleep ends with `poked` set. */
HIDDEN void agent_poke(struct agent *a);

/* A callback's thread: the runtime is about to unload a module (module !=
 * 0) or a dynamic method (function != 0).  Waits (bounded) for the sampler
 * to be outside its use of ids, then has the running sampler name what it
 * holds and forget the ids the runtime may reuse. */
HIDDEN void agent_code_unloading(struct agent *a, ModuleID module, FunctionID function);
/* Sampler thread: take and release ids_lock (see struct agent); the lock
 * step also catches up on an unload it could not take part in. */
HIDDEN void agent_ids_lock(struct agent *a);
HIDDEN void agent_ids_unlock(struct agent *a);

/* The two samplers' thread bodies (arg: the agent). */
HIDDEN void *suspend_sampler_main(void *arg);
HIDDEN void *signal_sampler_main(void *arg);
/* Signal sampler set-up that must happen before its thread runs: the
 * handler.  Returns 0, or -1 (logged). */
HIDDEN int signal_sampler_prepare(struct agent *a);

#endif
