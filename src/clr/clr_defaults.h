/*
 * clr_defaults: a default body for every ICorProfilerCallback method
 * (versions 1 to 11), generated from the one method list in
 * clr_interfaces.h, each returning S_OK.  A profiler object starts its
 * vtable with CLR_CALLBACK_DEFAULTS and then names the methods it
 * implements; nothing is written twice and no slot is ever NULL.
 *
 * The designated initialisers that follow CLR_CALLBACK_DEFAULTS override
 * defaults on purpose, so such a vtable is compiled with -Woverride-init
 * silenced (CLR_VTBL_BEGIN / CLR_VTBL_END).
 *
 * clr_default_hook, when set, is called with the method's name each time a
 * default runs: the agent logs, at debug level, which events the runtime
 * delivers that corscope ignores.
 */
#ifndef CORSCOPE_CLR_DEFAULTS_H
#define CORSCOPE_CLR_DEFAULTS_H

#include "clr/clr_interfaces.h"

/* version 0 (IUnknown) has no default: every object implements it */
#define CLR_DEFAULT_DECL_0(ret, name, params)
#define CLR_DEFAULT_DECL_V(ret, name, params) CLR_HIDDEN ret STDMETHODCALLTYPE clr_default_##name params;
#define CLR_DEFAULT_INIT_0(name)
#define CLR_DEFAULT_INIT_V(name) .name = clr_default_##name,
/* versions 1..11 all take the versioned form */
#define CLR_DEFAULT_DECL_1 CLR_DEFAULT_DECL_V
#define CLR_DEFAULT_DECL_2 CLR_DEFAULT_DECL_V
#define CLR_DEFAULT_DECL_3 CLR_DEFAULT_DECL_V
#define CLR_DEFAULT_DECL_4 CLR_DEFAULT_DECL_V
#define CLR_DEFAULT_DECL_5 CLR_DEFAULT_DECL_V
#define CLR_DEFAULT_DECL_6 CLR_DEFAULT_DECL_V
#define CLR_DEFAULT_DECL_7 CLR_DEFAULT_DECL_V
#define CLR_DEFAULT_DECL_8 CLR_DEFAULT_DECL_V
#define CLR_DEFAULT_DECL_9 CLR_DEFAULT_DECL_V
#define CLR_DEFAULT_DECL_10 CLR_DEFAULT_DECL_V
#define CLR_DEFAULT_DECL_11 CLR_DEFAULT_DECL_V
#define CLR_DEFAULT_INIT_1 CLR_DEFAULT_INIT_V
#define CLR_DEFAULT_INIT_2 CLR_DEFAULT_INIT_V
#define CLR_DEFAULT_INIT_3 CLR_DEFAULT_INIT_V
#define CLR_DEFAULT_INIT_4 CLR_DEFAULT_INIT_V
#define CLR_DEFAULT_INIT_5 CLR_DEFAULT_INIT_V
#define CLR_DEFAULT_INIT_6 CLR_DEFAULT_INIT_V
#define CLR_DEFAULT_INIT_7 CLR_DEFAULT_INIT_V
#define CLR_DEFAULT_INIT_8 CLR_DEFAULT_INIT_V
#define CLR_DEFAULT_INIT_9 CLR_DEFAULT_INIT_V
#define CLR_DEFAULT_INIT_10 CLR_DEFAULT_INIT_V
#define CLR_DEFAULT_INIT_11 CLR_DEFAULT_INIT_V

#define CLR_DEFAULT_DECL(ver, ret, name, params) CLR_DEFAULT_DECL_##ver(ret, name, params)
#define CLR_DEFAULT_INIT(ver, ret, name, params) CLR_DEFAULT_INIT_##ver(name)

CLR_CALLBACK_METHODS(CLR_DEFAULT_DECL, ICorProfilerCallback11)

/* Designated initialisers of every default, for the top of a vtable. */
#define CLR_CALLBACK_DEFAULTS CLR_CALLBACK_METHODS(CLR_DEFAULT_INIT, ICorProfilerCallback11)

#define CLR_VTBL_BEGIN \
    _Pragma("GCC diagnostic push") _Pragma("GCC diagnostic ignored \"-Woverride-init\"")
#define CLR_VTBL_END _Pragma("GCC diagnostic pop")

extern CLR_HIDDEN void (*clr_default_hook)(const char *method);

/* Names of the callback slots in vtable order (IUnknown's first), and how
 * many there are: for logging and for the slot-count test. */
extern CLR_HIDDEN const char *const clr_callback_slot_names[];
extern CLR_HIDDEN const unsigned clr_callback_slot_count;
/* Version that introduced each slot (0 = IUnknown). */
extern CLR_HIDDEN const unsigned char clr_callback_slot_versions[];
extern CLR_HIDDEN const char *const clr_info_slot_names[];
extern CLR_HIDDEN const unsigned clr_info_slot_count;
extern CLR_HIDDEN const unsigned char clr_info_slot_versions[];

#endif
