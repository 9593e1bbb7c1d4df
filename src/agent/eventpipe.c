/*
 * eventpipe: see eventpipe.h.
 */
#include "agent/eventpipe.h"

#include <stdatomic.h>
#include <string.h>

#include "agent/log.h"

#define MAX_PROVIDERS 8
#define NAME_CHARS 96

struct want {
    char name[NAME_CHARS];
    WCHAR wname[NAME_CHARS];
    uint64_t keywords;
    uint32_t level;
};

static struct want wants[MAX_PROVIDERS];
static uint32_t want_count;
static EVENTPIPE_SESSION session;
static int running;
/* the runtime's provider handle, learnt at its first event */
static _Atomic EVENTPIPE_PROVIDER runtime_provider;

int eventpipe_want(const char *provider, uint64_t keywords, uint32_t level)
{
    for (uint32_t i = 0; i < want_count; i++) {
        if (!strcmp(wants[i].name, provider)) {
            wants[i].keywords |= keywords;
            if (level > wants[i].level)
                wants[i].level = level;
            return 0;
        }
    }
    size_t n = strlen(provider);
    if (want_count >= MAX_PROVIDERS || n >= NAME_CHARS)
        return -1;
    struct want *w = &wants[want_count++];
    memcpy(w->name, provider, n + 1);
    for (size_t i = 0; i <= n; i++)
        w->wname[i] = (WCHAR)(unsigned char)provider[i];
    w->keywords = keywords;
    w->level = level;
    return 0;
}

int eventpipe_start(ICorProfilerInfo15 *info, int info_version)
{
    if (!want_count || running)
        return 0;
    if (info_version < 12) {
        log_error("the runtime's events asked for (-e gc, lock, alloc) need .NET 5 or later "
                  "(in-process EventPipe, ICorProfilerInfo12; this runtime has "
                  "ICorProfilerInfo%d): the program runs without the profiler", info_version);
        return -1;
    }
    COR_PRF_EVENTPIPE_PROVIDER_CONFIG configs[MAX_PROVIDERS];
    for (uint32_t i = 0; i < want_count; i++) {
        configs[i].providerName = wants[i].wname;
        configs[i].keywords = wants[i].keywords;
        configs[i].loggingLevel = wants[i].level;
        configs[i].filterData = NULL;
    }
    HRESULT hr = info->lpVtbl->EventPipeStartSession(info, want_count, configs, FALSE, &session);
    if (hr < 0) {
        log_error("the runtime refused an EventPipe session (0x%08x)", (unsigned)hr);
        return -1;
    }
    running = 1;
    return 0;
}

void eventpipe_stop(ICorProfilerInfo15 *info)
{
    /* needs ICorProfilerInfo12: a session runs only once eventpipe_start
     * found it */
    if (!running)
        return;
    info->lpVtbl->EventPipeStopSession(info, session);
    running = 0;
    want_count = 0;
    memset(wants, 0, sizeof wants);
}

int eventpipe_is_runtime(ICorProfilerInfo15 *info, EVENTPIPE_PROVIDER provider)
{
    /* needs ICorProfilerInfo12: only the session eventpipe_start opened
     * delivers events */
    EVENTPIPE_PROVIDER known = atomic_load_explicit(&runtime_provider, memory_order_relaxed);
    if (known)
        return provider == known;
    WCHAR name[NAME_CHARS];
    ULONG len = 0;
    if (info->lpVtbl->EventPipeGetProviderInfo(info, provider, NAME_CHARS, &len, name) < 0)
        return 0;
    static const char runtime[] = EVENTPIPE_RUNTIME;
    if (len < sizeof runtime - 1)
        return 0;
    for (size_t i = 0; i < sizeof runtime - 1; i++)
        if (name[i] != (WCHAR)runtime[i])
            return 0;
    if (len > sizeof runtime - 1 && name[sizeof runtime - 1] != 0)
        return 0;
    atomic_store_explicit(&runtime_provider, provider, memory_order_relaxed);
    return 1;
}
