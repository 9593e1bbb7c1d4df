/*
 * frame_name: how a frame is shown to people, the same in every report.
 *
 *   managed    Namespace.Outer+Inner.Method, generic types with their metadata
 *              arity (System.Collections.Generic.List`1.Add) and generic
 *              methods with theirs after two backticks (Enumerable.Select``2),
 *              as in XML documentation ids
 *   native     libname.so!symbol, or libname.so!+0x1a2b without a symbol, or
 *              libname.so for a folded run of those (fold.h)
 *   runtime    as native (libcoreclr.so!...), coloured apart by reports
 *   synthetic  [unknown], [truncated], [native] ... as recorded
 *   label      what the runtime was doing, or what an event was, with its
 *              subject: [JIT] Namespace.Type.Method, [GC gen2 induced],
 *              [alloc] System.Byte[], [throw] System.InvalidOperationException
 */
#ifndef CORSCOPE_FRAME_NAME_H
#define CORSCOPE_FRAME_NAME_H

#include <stddef.h>

#include "common/visibility.h"
#include "format/recording.h"

/* Writes the display name of frame `id` into out (always NUL-terminated,
 * cut at size-1 bytes).  Returns the untruncated length. */
HIDDEN size_t frame_name_format(const struct recording *r, uint32_t id, char *out, size_t size);

#endif
