/*
 * callback_activity: see callback_activity.h.
 */
#include "agent/callback_activity.h"

#include <stdatomic.h>

#include "agent/agent_thread.h"

#define ACTIVITY_DEPTH AGENT_ACTIVITY_DEPTH

/* Bumped by every Initialize: a thread's stack from an earlier attach
 * (the library and its per-thread blocks outlive a detach) is stale. */
static _Atomic uint32_t run_number;

/* The calling thread's activities (agent_thread.h: outermost first, each
 * with the address of the callback frame that began it); NULL when it has no block (out of
 * memory: agent_thread counts it), and then nothing is followed. */
static struct agent_activities *own_activities(void)
{
    struct agent_thread *t = agent_thread_get();
    if (!t)
        return NULL;
    struct agent_activities *st = &t->activities;
    uint32_t run = atomic_load_explicit(&run_number, memory_order_relaxed);
    if (st->run != run) {
        st->run = run;
        st->depth = 0;
    }
    return st;
}

pid_t callback_activity_tid(void)
{
    return agent_thread_tid();
}

static void publish_activity(const struct agent_activities *st)
{
    uint32_t n = st->depth < ACTIVITY_DEPTH ? st->depth : ACTIVITY_DEPTH;
    activity_set(callback_activity_tid(), n ? st->words[n - 1] : 0, n ? st->words[0] : 0);
}

/* The runtime calls JITCachedFunctionSearchStarted and ...Finished from
 * the same function (ReadyToRunInfo::GetEntryPoint) through wrappers whose
 * frames differ by up to 16 bytes (measured on .NET 10); anything else it
 * does for that lookup runs deeper.  Other kinds are not unwound this way:
 * a module's or an assembly's load goes on in callers shallower than the
 * callback that began it (ModuleLoadFinished came up to 496 bytes higher
 * than its Started), and their ends are reported. */
#define R2R_FRAME_SLACK 64

/* Ends the ReadyToRun lookups begun deeper in the stack than `frame`:
 * the function that began them has returned. */
static void activity_unwind(struct agent_activities *st, uintptr_t frame)
{
    while (st->depth > 0 && st->depth <= ACTIVITY_DEPTH &&
           activity_kind_of(st->words[st->depth - 1]) == ACTIVITY_R2R_LOOKUP &&
           st->frames[st->depth - 1] + R2R_FRAME_SLACK < frame)
        st->depth--;
}

/* Ends the innermost activity of that kind and subject, and what was begun
 * inside it (work that failed may end without its own end).  Returns
 * whether it was found. */
static int activity_pop(struct agent_activities *st, uint64_t word)
{
    uint32_t n = st->depth < ACTIVITY_DEPTH ? st->depth : ACTIVITY_DEPTH;
    for (uint32_t i = n; i > 0; i--) {
        if (st->words[i - 1] == word) {
            st->depth = i - 1;
            return 1;
        }
    }
    return 0;
}

void callback_activity_begin(enum activity_kind kind, uint64_t subject, uintptr_t frame)
{
    struct agent_activities *st = own_activities();
    if (!st)
        return;
    activity_unwind(st, frame);
    /* ReadyToRun code rejected by its fixups: the method is compiled now */
    if (kind == ACTIVITY_JIT)
        activity_pop(st, activity_word(ACTIVITY_R2R_LOOKUP, subject));
    if (st->depth < ACTIVITY_DEPTH) {
        st->words[st->depth] = activity_word(kind, subject);
        st->frames[st->depth] = frame;
    }
    st->depth++;
    publish_activity(st);
}


void callback_activity_end(enum activity_kind kind, uint64_t subject, uintptr_t frame)
{
    struct agent_activities *st = own_activities();
    if (!st)
        return;
    uint32_t before = st->depth;
    activity_unwind(st, frame);
    if (!activity_pop(st, activity_word(kind, subject)) && st->depth > ACTIVITY_DEPTH)
        st->depth--; /* beyond what is kept */
    if (st->depth != before)
        publish_activity(st);
}

void callback_activity_pause_end(void)
{
    struct agent_activities *st = own_activities();
    if (!st)
        return;
    uint32_t n = st->depth < ACTIVITY_DEPTH ? st->depth : ACTIVITY_DEPTH;
    for (uint32_t i = n; i > 0; i--) {
        if (activity_kind_of(st->words[i - 1]) == ACTIVITY_PAUSE) {
            st->depth = i - 1;
            publish_activity(st);
            return;
        }
    }
}

static _Atomic uint32_t gc_seq;

void callback_activity_gc_started(int generations, const BOOL collected[],
                                  COR_PRF_GC_REASON reason)
{
    unsigned gen = 0;
    /* gen0, gen1, gen2, then the large and pinned object heaps, which
     * only a gen2 collection collects */
    for (int g = 0; g < generations && g <= 2; g++)
        if (collected && collected[g])
            gen = (unsigned)g;
    uint32_t seq = atomic_fetch_add(&gc_seq, 1) + 1;
    activity_gc_set(activity_gc_word(seq ? seq : 1, callback_activity_tid(),
                                     reason == COR_PRF_GC_INDUCED ? 1u : 0u, gen));
}

void callback_activity_new_run(void)
{
    atomic_fetch_add(&run_number, 1);
}
