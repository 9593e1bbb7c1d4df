/*
 * frame_name: how a frame is shown to people, the same in every report.
 *
 *   managed    Namespace.Outer+Inner.Method, generic types with their metadata
 *              arity (System.Collections.Generic.List`1.Add) and generic
 *              methods with theirs after two backticks (Enumerable.Select``2),
 *              as in XML documentation ids; in a recording made for async
 *              code (INFO async "on ..." or "snapshots ..."), an async method's state machine
 *              (Chain+<C>d__3.MoveNext) as the method it was written as
 *              (Chain.C)
 *   native     libname.so!symbol, or libname.so!+0x1a2b without a symbol, or
 *              libname.so for a folded run of those (fold.h)
 *   runtime    as native (libcoreclr.so!...), coloured apart by reports
 *   synthetic  [unknown], [truncated], [native] ... as recorded
 *   label      what the runtime was doing, or what an event was, with its
 *              subject: [JIT] Namespace.Type.Method, [GC gen2 induced],
 *              [alloc] System.Byte[], [throw] System.InvalidOperationException;
 *              a method awaiting the one below it: [async] Chain.B
 */
#ifndef CORSCOPE_FRAME_NAME_H
#define CORSCOPE_FRAME_NAME_H

#include <stddef.h>

#include "common/visibility.h"
#include "format/recording.h"

/* Writes the display name of frame `id` into out (always NUL-terminated,
 * cut at size-1 bytes).  Returns the untruncated length. */
HIDDEN size_t frame_name_format(const struct recording *r, uint32_t id, char *out, size_t size);

/* Is (type, method) a compiler-made state machine's MoveNext
 * ("Outer+<Name>d__3", "MoveNext")?  Then *outer_len is the length of
 * "Outer" and [*name, *name + *name_len) is "Name". */
HIDDEN int frame_name_state_machine(const char *type, size_t type_len, const char *method,
                               size_t method_len, size_t *outer_len, const char **name,
                               size_t *name_len);

#endif
