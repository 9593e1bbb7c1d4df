/*
 * thread_ids: the recording's thread ids, one per OS thread for its whole life,
 * whichever source meets it first (a signal sampled on it, an event from
 * one of its callbacks, the stop-the-world sampler's walk).  An OS thread
 * id is reused by the kernel once a thread ends: when a source learns that
 * a thread ended (thread_ids_ended), its id is retired, and the next thread with
 * that tid gets a new one.  Ids are never reused within a recording.
 *
 * Names: a managed thread's name is the runtime's (Thread.Name, from the
 * registry, thread_registry.h), followed as it changes; a native thread's is its
 * OS name, read when first seen and once more later, in case it was set
 * after the thread started.  The loop thread owns all of this.
 */
#ifndef CORSCOPE_THREAD_IDS_H
#define CORSCOPE_THREAD_IDS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "agent/recorder.h"
#include "agent/thread_registry.h"
#include "common/map.h"
#include "common/visibility.h"

struct tid_entry {
    pid_t tid;
    uint32_t id;
    int managed;           /* the registry knows it: named from there */
    uint32_t name_version; /* registry name version written, +1 */
    uint32_t name_checks;  /* OS name reads */
};

struct thread_ids {
    struct map64 of_tid; /* tid -> index into v */
    struct map64 ended_id; /* tid -> id of the last thread with it that ended */
    struct map64 ended_at; /* tid -> when that was noticed, in 2^24 ns (17 ms) units */
    struct tid_entry *v;
    size_t count, cap;
    uint32_t next_id;
    struct thread_view *views;
    size_t views_cap;
};

HIDDEN void thread_ids_init(struct thread_ids *t);
HIDDEN void thread_ids_free(struct thread_ids *t);
/* The recording id of OS thread tid; a new one is written to the recording
 * with its OS name.  0 only when out of memory. */
HIDDEN uint32_t thread_ids_get(struct thread_ids *t, struct recorder *out, pid_t tid);
/* The same for an event that happened at `time` (CLOCK_MONOTONIC ns): an
 * event of a thread queued before its end was noticed (thread_ids_ended) but
 * handled after keeps the id the thread had. */
HIDDEN uint32_t thread_ids_get_at(struct thread_ids *t, struct recorder *out, pid_t tid, uint64_t time);
/* A thread's name learnt another way (the runtime's thread events): written
 * now, and not read again from the OS (a thread that ended has no name
 * there).  Returns its id (as thread_ids_get_at). */
HIDDEN uint32_t thread_ids_named(struct thread_ids *t, struct recorder *out, pid_t tid, uint64_t time,
                           const char *name);
/* The id of tid if it has one, else 0. */
HIDDEN uint32_t thread_ids_find(const struct thread_ids *t, pid_t tid);
/* The thread with this tid ended (noticed now). */
HIDDEN void thread_ids_ended(struct thread_ids *t, pid_t tid);
/* Renames threads whose names changed (call when thread_registry_changes() moved,
 * and now and then for native threads named late). */
HIDDEN void thread_ids_update_names(struct thread_ids *t, struct recorder *out);

#endif
