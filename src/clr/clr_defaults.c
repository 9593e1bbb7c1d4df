/*
 * clr_defaults: the generated default callback bodies and the slot tables
 * (see clr_defaults.h).  Parameters of a default are unused by design.
 */
#include "clr/clr_defaults.h"

void (*clr_default_hook)(const char *method);

#pragma GCC diagnostic ignored "-Wunused-parameter"

#define CLR_DEFAULT_BODY_0(ret, name, params)
#define CLR_DEFAULT_BODY_V(ret, name, params)              \
    ret STDMETHODCALLTYPE clr_default_##name params        \
    {                                                      \
        void (*hook)(const char *) = clr_default_hook;     \
        if (hook)                                          \
            hook(#name);                                   \
        return S_OK;                                       \
    }
#define CLR_DEFAULT_BODY_1 CLR_DEFAULT_BODY_V
#define CLR_DEFAULT_BODY_2 CLR_DEFAULT_BODY_V
#define CLR_DEFAULT_BODY_3 CLR_DEFAULT_BODY_V
#define CLR_DEFAULT_BODY_4 CLR_DEFAULT_BODY_V
#define CLR_DEFAULT_BODY_5 CLR_DEFAULT_BODY_V
#define CLR_DEFAULT_BODY_6 CLR_DEFAULT_BODY_V
#define CLR_DEFAULT_BODY_7 CLR_DEFAULT_BODY_V
#define CLR_DEFAULT_BODY_8 CLR_DEFAULT_BODY_V
#define CLR_DEFAULT_BODY_9 CLR_DEFAULT_BODY_V
#define CLR_DEFAULT_BODY_10 CLR_DEFAULT_BODY_V
#define CLR_DEFAULT_BODY_11 CLR_DEFAULT_BODY_V
#define CLR_DEFAULT_BODY(ver, ret, name, params) CLR_DEFAULT_BODY_##ver(ret, name, params)

CLR_CALLBACK_METHODS(CLR_DEFAULT_BODY, ICorProfilerCallback11)

#define CLR_SLOT_NAME(ver, ret, name, params) #name,
#define CLR_SLOT_VERSION(ver, ret, name, params) ver,

const char *const clr_callback_slot_names[] = {CLR_CALLBACK_METHODS(CLR_SLOT_NAME, ICorProfilerCallback11)};
const unsigned clr_callback_slot_count = sizeof clr_callback_slot_names / sizeof clr_callback_slot_names[0];
const unsigned char clr_callback_slot_versions[] = {CLR_CALLBACK_METHODS(CLR_SLOT_VERSION, ICorProfilerCallback11)};
const char *const clr_info_slot_names[] = {CLR_INFO_METHODS(CLR_SLOT_NAME, ICorProfilerInfo15)};
const unsigned clr_info_slot_count = sizeof clr_info_slot_names / sizeof clr_info_slot_names[0];
const unsigned char clr_info_slot_versions[] = {CLR_INFO_METHODS(CLR_SLOT_VERSION, ICorProfilerInfo15)};
