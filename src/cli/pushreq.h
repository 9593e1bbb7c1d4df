/*
 * pushreq: one window of a recording (pstream.h) as the body of a Grafana
 * Pyroscope push: a push.v1.PushRequest (github.com/grafana/pyroscope,
 * api/push/v1/push.proto) holding one series per event that has samples in
 * the window, each a gzipped pprof of that event alone, labelled as
 * Pyroscope's own .NET agent labels its profiles (docs/push.md):
 *
 *   event       __name__      sample types (pprof)                period type
 *   cpu         process_cpu   cpu/nanoseconds, cpu_samples/count  cpu/nanoseconds
 *   wall        wall          wall/nanoseconds                    cpu/nanoseconds
 *   alloc       memory        alloc_samples/count, alloc_size/bytes   space/bytes
 *   live        memory        inuse_objects/count, inuse_space/bytes  space/bytes
 *   exceptions  exception     exception/count                     cpu/nanoseconds
 *   lock        lock          lock_count/count, lock_time/nanoseconds cpu/nanoseconds
 *   jit         jit           jit_count/count, jit_time/nanoseconds   cpu/nanoseconds
 *   calls       calls         calls/count, self/nanoseconds       cpu/nanoseconds
 *
 * and the series labels service_name, spy_name (dotnetspy: Pyroscope's word
 * for .NET), otel.scope.name/version (corscope, its version),
 * process.runtime.name/version, hostname, pid and the user's own.  Every
 * profile's time and duration are the window's, so consecutive windows
 * tile the timeline.
 */
#ifndef CORSCOPE_CLI_PUSHREQ_H
#define CORSCOPE_CLI_PUSHREQ_H

#include <stddef.h>
#include <stdint.h>

#include "cli/pstream.h"
#include "common/buf.h"
#include "common/pushcfg.h"
#include "common/visibility.h"

/* The labels every series of one process carries. */
struct pushreq_labels {
    size_t count;
    char names[PUSH_MAX_LABELS + 10][PUSH_LABEL_NAME_MAX];
    char values[PUSH_MAX_LABELS + 10][PUSH_LABEL_VALUE_MAX];
};

/* Fills the labels from the settings and what the recording says (its
 * INFO: pid, command, runtime). */
HIDDEN void pushreq_labels(const struct push_config *c, const struct pstream *s,
                           struct pushreq_labels *out);
/* The service name when none was given: the program's (App for `dotnet
 * App.dll`). */
HIDDEN void pushreq_default_service(const char *command, char *out, size_t size);
/* Pyroscope's profile type (the __name__ label) for a recording's event
 * ("cpu" -> "process_cpu"), NULL for an event that is not pushed. */
HIDDEN const char *pushreq_profile_type(const char *event);
/* Appends the PushRequest of a window to body.  Returns the number of
 * series (0: nothing in the window to send), or -1 with the reason. */
HIDDEN int pushreq_build(const struct pstream_window *w, const struct pushreq_labels *labels,
                         struct buf *body, char *err, size_t err_size);

#endif
