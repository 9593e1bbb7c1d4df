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
};

/* Starts the sampler thread.  Returns 0, or -1 (logged). */
HIDDEN int sampler_start(struct agent *a);
/* Asks the sampler to stop and joins it.  Returns 0, or -1 when it did not
 * stop in time (then the recorder still belongs to it). */
HIDDEN int sampler_stop(struct agent *a);

#endif
