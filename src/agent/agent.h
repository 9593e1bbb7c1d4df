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

/* The two samplers' thread bodies (arg: the agent). */
HIDDEN void *suspend_sampler_main(void *arg);
HIDDEN void *signal_sampler_main(void *arg);
/* Signal sampler set-up that must happen before its thread runs: the
 * handler.  Returns 0, or -1 (logged). */
HIDDEN int signal_sampler_prepare(struct agent *a);

#endif
