/*
 * callback_activity: see callback_activity.h.
 */
#include "agent/callback_activity.h"

#include <pthread.h>
#include <stdatomic.h>

#include "agent/agent_thread.h"

#define ACTIVITY_DEPTH AGENT_ACTIVITY_DEPTH

/* Bumped by every Initialize: a thread's stack from an earlier attach
 * (the library and its per-thread blocks outlive a detach) is stale. */
static _Atomic uint32_t run_number;

/* ---- loads ended on another thread -------------------------------------------
 * The runtime does not always end a load on the thread that began it: a
 * load is finished by whichever thread takes it through its last step
 * (seen on an ASP.NET Core app under load: AssemblyLoadStarted and
 * ModuleLoadStarted on one pool worker, both Finished on another), and
 * in .NET 10 a thread that lost a race to load an assembly gets its
 * Started and then only the unload callbacks of its discarded copy.  Left
 * alone, the first thread's samples were named after that load for as
 * long as it ran no other callback: a pool worker waiting for work had
 * 12% of a web app's CPU under "[load module] Microsoft.AspNetCore.
 * Metadata.dll".  So the loads in progress are kept with the thread that
 * began each; a load ended on another thread is handed to its thread,
 * which drops it at its next callback, and that thread's published words
 * are cleared at once if they name it (its samples meanwhile go
 * unlabelled, not mislabelled).  A lock, in callbacks only (never in the
 * handler), held for a few loads' worth of comparisons. */
#define OPEN_LOADS 256
#define HANDED_LOADS 64
struct load_owner {
    uint64_t word;
    pid_t tid;
};
static pthread_mutex_t loads_lock = PTHREAD_MUTEX_INITIALIZER;
static struct load_owner open_loads[OPEN_LOADS];
static size_t open_count;
static struct load_owner handed[HANDED_LOADS];
static size_t handed_count;
static _Atomic uint32_t handed_gen; /* bumped by each hand-over */

static int is_load(enum activity_kind kind)
{
    return kind == ACTIVITY_LOAD_ASSEMBLY || kind == ACTIVITY_LOAD_MODULE;
}

static void load_began(uint64_t word, pid_t tid)
{
    pthread_mutex_lock(&loads_lock);
    if (open_count < OPEN_LOADS)
        open_loads[open_count++] = (struct load_owner){word, tid};
    pthread_mutex_unlock(&loads_lock);
}

/* The load `word` ended on thread tid: forgotten, and handed to each
 * other thread that began it (two may wait on one load). */
static void load_ended(uint64_t word, pid_t tid)
{
    pid_t others[4];
    size_t n = 0;
    pthread_mutex_lock(&loads_lock);
    for (size_t i = open_count; i > 0; i--) {
        if (open_loads[i - 1].word != word)
            continue;
        pid_t owner = open_loads[i - 1].tid;
        open_loads[i - 1] = open_loads[--open_count];
        if (owner == tid)
            continue;
        if (handed_count == HANDED_LOADS) { /* the oldest, long over, make room */
            for (size_t k = 1; k < HANDED_LOADS; k++)
                handed[k - 1] = handed[k];
            handed_count--;
        }
        handed[handed_count++] = (struct load_owner){word, owner};
        if (n < sizeof others / sizeof others[0])
            others[n++] = owner;
    }
    /* before the words are cleared: an owner publishing after the clear
     * then sees the count moved (publish_activity) */
    if (n)
        atomic_fetch_add(&handed_gen, 1);
    pthread_mutex_unlock(&loads_lock);
    for (size_t i = 0; i < n; i++)
        activity_clear_named(others[i], word);
}

/* Removes one activity from the stack, keeping what was begun inside it
 * (a load ended elsewhere: the thread went on to other work). */
static void activity_remove(struct agent_activities *st, uint64_t word)
{
    uint32_t n = st->depth < ACTIVITY_DEPTH ? st->depth : ACTIVITY_DEPTH;
    for (uint32_t i = n; i > 0; i--) {
        if (st->words[i - 1] == word) {
            for (uint32_t k = i; k < n; k++) {
                st->words[k - 1] = st->words[k];
                st->frames[k - 1] = st->frames[k];
            }
            st->depth--;
            return;
        }
    }
}

/* Drops from the calling thread's stack the loads other threads ended.
 * Returns whether the count had moved since it last looked. */
static int take_handed(struct agent_activities *st, pid_t me)
{
    uint32_t gen = atomic_load(&handed_gen);
    if (gen == st->handed_seen)
        return 0;
    st->handed_seen = gen;
    pthread_mutex_lock(&loads_lock);
    for (size_t i = handed_count; i > 0; i--) {
        if (handed[i - 1].tid == me) {
            activity_remove(st, handed[i - 1].word);
            for (size_t k = i; k < handed_count; k++)
                handed[k - 1] = handed[k];
            handed_count--;
        }
    }
    pthread_mutex_unlock(&loads_lock);
    return 1;
}

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
        st->handed_seen = atomic_load(&handed_gen);
    }
    return st;
}

pid_t callback_activity_tid(void)
{
    return agent_thread_tid();
}

static void publish_words(const struct agent_activities *st, pid_t me)
{
    uint32_t n = st->depth < ACTIVITY_DEPTH ? st->depth : ACTIVITY_DEPTH;
    activity_set(me, n ? st->words[n - 1] : 0, n ? st->words[0] : 0);
}

/* Publishes the thread's words; a load handed to it meanwhile (its
 * words cleared just before this store, perhaps) is dropped and the words
 * published again. */
static void publish_activity(struct agent_activities *st)
{
    pid_t me = callback_activity_tid();
    publish_words(st, me);
    if (take_handed(st, me))
        publish_words(st, me);
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
    take_handed(st, callback_activity_tid());
    activity_unwind(st, frame);
    if (is_load(kind))
        load_began(activity_word(kind, subject), callback_activity_tid());
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
    int took = take_handed(st, callback_activity_tid());
    activity_unwind(st, frame);
    uint64_t word = activity_word(kind, subject);
    if (is_load(kind))
        load_ended(word, callback_activity_tid());
    if (!activity_pop(st, word) && st->depth > ACTIVITY_DEPTH)
        st->depth--; /* beyond what is kept */
    if (st->depth != before || took)
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
    pthread_mutex_lock(&loads_lock);
    open_count = handed_count = 0;
    pthread_mutex_unlock(&loads_lock);
    atomic_fetch_add(&run_number, 1);
}
