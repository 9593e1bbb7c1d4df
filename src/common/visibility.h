/*
 * visibility: symbol visibility for code shared by the agent and the CLI.
 *
 * Everything is compiled with -fvisibility=hidden; HIDDEN makes the intent
 * explicit on cross-module declarations, and EXPORT marks the single symbol
 * the agent exposes to the runtime (DllGetClassObject).
 */
#ifndef CORSCOPE_VISIBILITY_H
#define CORSCOPE_VISIBILITY_H

#define HIDDEN __attribute__((visibility("hidden")))
#define EXPORT __attribute__((visibility("default")))

/* For code that reads another frame's stack memory on purpose (the signal
 * handler's stack walk): AddressSanitizer would take the redzones of the
 * interrupted frames for overflows. */
#define NO_ASAN __attribute__((no_sanitize_address))

#endif
