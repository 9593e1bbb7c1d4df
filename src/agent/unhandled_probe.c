/*
 * unhandled_probe: see unhandled_probe.h.  One method, one body, made once
 * per process (a later session after a detach asks for the same body
 * again).
 */
#include "agent/unhandled_probe.h"

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "agent/async/ilwrap.h"
#include "agent/async/rewrite.h"
#include "agent/log.h"
#include "agent/mdplace.h"
#include "agent/unhandled.h"

static _Atomic int state = UNHANDLED_PROBE_WAITING;
/* the body, read by GetReJITParameters on any thread once `ready` says so;
 * never changed after */
static ModuleID made_module;
static mdMethodDef made_method;
static uint8_t *made_body;
static size_t made_size;
static _Atomic int ready;

/* static void OnUnhandledException(object) */
static int static_void_object(const uint8_t *sig, uint32_t len, void *ctx)
{
    (void)ctx;
    return len == 4 && sig[0] == IMAGE_CEE_CS_CALLCONV_DEFAULT && sig[1] == 1 &&
           sig[2] == ELEMENT_TYPE_VOID && sig[3] == ELEMENT_TYPE_OBJECT;
}

/* The new body into made_*; 0, or -1 with the reason in why. */
static int make(ICorProfilerInfo15 *info, ModuleID corelib, char *why, size_t why_size)
{
    struct md md;
    if (mdplace_open(info, corelib, &md) < 0)
        return il_why(why, why_size, "CoreLib's metadata cannot be read in place");
    mdTypeDef type = mdplace_find_type(&md, "System.AppContext");
    mdMethodDef method = type ? mdplace_find_method(&md, type, "OnUnhandledException",
                                                    static_void_object, NULL)
                              : 0;
    if (!method)
        return il_why(why, why_size, "System.AppContext.OnUnhandledException(object) not found");
    struct ilwrap_calli calli;
    if (!rewrite_find_calli(&md, &calli))
        return il_why(why, why_size, "CoreLib has no unmanaged call signature to use");
    /* the body is kept for the process's life */
    if (rewrite_wrap(info, corelib, method, &calli, (uint64_t)(uintptr_t)unhandled_hit, 1,
                     &made_body, &made_size, why, why_size) < 0)
        return -1;
    made_module = corelib;
    made_method = method;
    return 0;
}

static enum unhandled_probe_state off(const char *why)
{
    log_info("unhandled exceptions are seen by the runtime's exception callbacks (%s)", why);
    atomic_store(&state, UNHANDLED_PROBE_OFF);
    unhandled_probed(0);
    return UNHANDLED_PROBE_OFF;
}

int unhandled_probe_usable(DWORD mask, int runtime_major)
{
    return (mask & COR_PRF_ENABLE_REJIT) && runtime_major >= UNHANDLED_PROBE_RUNTIME_MIN;
}

enum unhandled_probe_state unhandled_probe_update(ICorProfilerInfo15 *info, DWORD mask,
                                                  int runtime_major)
{
    enum unhandled_probe_state now = atomic_load(&state);
    if (now != UNHANDLED_PROBE_WAITING)
        return now;
    if (!unhandled_probe_usable(mask, runtime_major)) {
        atomic_store(&state, UNHANDLED_PROBE_OFF); /* the callbacks were on from the start */
        return UNHANDLED_PROBE_OFF;
    }
    char why[160];
    if (!made_body) {
        ModuleID corelib = rewrite_find_corelib(info);
        if (!corelib)
            return UNHANDLED_PROBE_WAITING;
        if (make(info, corelib, why, sizeof why) < 0)
            return off(why);
    }
    atomic_store(&ready, 1);
    HRESULT hr = info->lpVtbl->RequestReJITWithInliners(info, COR_PRF_REJIT_BLOCK_INLINING, 1,
                                                        &made_module, &made_method);
    if (hr < 0) {
        atomic_store(&ready, 0);
        snprintf(why, sizeof why, "the runtime refused to recompile its last call: 0x%08x",
                 (unsigned)hr);
        return off(why);
    }
    atomic_store(&state, UNHANDLED_PROBE_ON);
    unhandled_probed(1);
    log_debug("unhandled exceptions: AppContext.OnUnhandledException recompiled to tell the agent");
    return UNHANDLED_PROBE_ON;
}

HRESULT unhandled_probe_parameters(ModuleID module, mdMethodDef method,
                                   ICorProfilerFunctionControl *control)
{
    if (!atomic_load(&ready) || module != made_module || method != made_method)
        return E_FAIL;
    return control->lpVtbl->SetILFunctionBody(control, (ULONG)made_size, made_body);
}

void unhandled_probe_failed(ModuleID module, mdMethodDef method, HRESULT status)
{
    if (!atomic_load(&ready) || module != made_module || method != made_method)
        return;
    char why[96];
    snprintf(why, sizeof why, "the runtime could not recompile its last call: 0x%08x",
             (unsigned)status);
    off(why);
}

void unhandled_probe_revert(ICorProfilerInfo15 *info)
{
    HRESULT status = S_OK;
    if (atomic_load(&state) == UNHANDLED_PROBE_ON &&
        info->lpVtbl->RequestRevert(info, 1, &made_module, &made_method, &status) < 0)
        log_warn("AppContext.OnUnhandledException could not be put back; an unhandled exception "
                 "still tells the agent, which waits for no one (harmless)");
    unhandled_probed(0);
    atomic_store(&state, UNHANDLED_PROBE_WAITING); /* the next session decides again */
}
