/*
 * fold: native frames as people read them.  The runtime's libraries ship
 * without symbols, so a walk through them records one `libcoreclr.so!+0x...`
 * frame per call, ten or twenty deep, that say nothing to a .NET developer;
 * what the runtime was doing is said by the label frames the agent adds
 * ("[JIT] Type.Method", "[GC gen2 induced]").  By default every report is
 * drawn from the recording with:
 *
 *   - runs: consecutive frames of one library without a symbol fold into
 *     one frame named by the library (`libcoreclr.so`); a label or a named
 *     frame between two runs keeps them apart;
 *   - roots: the host's start-up frames under the main thread's first
 *     managed frame (the executable, libc's __libc_start_main, hostfxr,
 *     hostpolicy, the runtime calling Main) fold into one root, [start];
 *     a thread's start (clone, start_thread and the runtime's frames up to
 *     its first managed frame) into [thread]; a thread that runs no
 *     managed code (the runtime's own: background GC, tiered compilation)
 *     starts with its name, [.NET BGC].
 *
 * `report --native raw` keeps every frame as recorded.  Folding rewrites
 * the stacks of samples and records in place (new stacks are appended;
 * frames and strings too), before any report reads them, so every format
 * shows the same frames.
 */
#ifndef CORSCOPE_FOLD_H
#define CORSCOPE_FOLD_H

#include "common/visibility.h"
#include "format/recording.h"

/* A frame's `extra` when it stands for a folded run: shown as the
 * library's name alone. */
#define FOLD_RUN_EXTRA UINT64_MAX

/* Folds the recording's stacks.  Returns 0, or -1 when out of memory (the
 * recording is then unchanged or partly folded, and still valid). */
HIDDEN int fold_recording(struct recording *r);

#endif
