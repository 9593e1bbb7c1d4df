/*
 * shadow: per-thread shadow stacks and call trees, kept by the runtime's
 * Enter/Leave/Tailcall hooks (tracing mode, `record --trace`).
 *
 * Each thread that runs a traced method gets, on first use and on the
 * thread itself, a state reached through one initial-exec TLS pointer: a
 * stack of frames (one per open activation: its call-path node, the
 * caller's stack pointer the JIT passes, the tick count at entry and the
 * ticks of its callees that returned) and a call tree whose nodes are keyed
 * by (parent node, method), so a node is one call path and the path itself
 * is implicit.  The hooks (elt_x64.S, elt_arm64.S) find the node of (top of stack,
 * method) in a hash table of the thread's own, count the call and push a
 * frame; a Leave adds the activation's inclusive time, its self time
 * (inclusive minus its callees') and its maximum, and marks the frame
 * returned (SP 0): the next call at that depth takes its place, and every
 * other path pops it first, so only the top frame can be one that
 * returned.  That fast path is
 * assembly and touches nothing but the thread's own memory: no lock, no
 * allocation, no runtime call.  What it cannot do (a thread's first call,
 * a path not seen before, a Leave that does not match the top frame) goes
 * to the C slow paths here, which save every register the JIT expects kept.
 *
 * The shadow stack stays right where the runtime skips Leave hooks:
 *   - a Leave or Tailcall whose (method, caller SP) is not on top closes the
 *     frames above its own (they were abandoned) and then its own;
 *   - an exception: ExceptionUnwindFunctionLeave closes the frames down to
 *     and including the unwound method's top-most frame, and
 *     ExceptionCatcherEnter the frames above the catcher's (so the catch
 *     block's callees get the catcher as parent; this also removes the
 *     runtime's own EH frames that .NET 9 enters and never leaves);
 *   - a thread that ends with frames open: a thread-specific key's
 *     destructor closes them on the thread, counted;
 *   - threads still running at the end: the loop reads their open frames
 *     (shadow_open_frames) and counts them closed then.
 * Calls deeper than the path-depth limit are kept as children of the node
 * at the limit's parent (the path is cut there, the counts stay exact);
 * activations deeper than the frame capacity are counted, not stacked.
 *
 * The loop reads the trees while their threads update them: nodes never
 * move (chunks of nodes, published by a release store of the count), each
 * counter is a 64-bit word written only by its thread, so every read sees a
 * value the counter had.  The loop reports differences since its last read
 * (sources/trace.c) and frees a thread's state only after the thread ended.
 * Hooks keep running after Shutdown: live threads' states are never freed.
 *
 * x86-64 and arm64: the hooks are assembly for each JIT's register
 * contract (elt_x64.S, elt_arm64.S); other machines refuse --trace.
 */
#ifndef CORSCOPE_TRACE_SHADOW_H
#define CORSCOPE_TRACE_SHADOW_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "clr/clr_interfaces.h"
#include "common/visibility.h"

/* Nodes per chunk, chunks per thread. */
#define SHADOW_CHUNK_NODES 1024u
#define SHADOW_MAX_CHUNKS 2048u
/* Frames of a thread's shadow stack (address space reserved, touched as used). */
#define SHADOW_FRAMES (128u * 1024u)
/* Memory of every thread's nodes and tables together. */
#define SHADOW_BUDGET (256ull << 20)
/* Node 0 of every thread is its root; node 1 stands for calls that found
 * no room for a path of their own (the budget was spent). */
#define SHADOW_ROOT 0u
#define SHADOW_LOST 1u

struct trace_node;

struct trace_frame {
    struct trace_node *node;
    uint64_t sp;
    uint64_t t0;
    uint64_t child;
};

struct trace_node {
    uint64_t method;           /* client id (methods.h); 0 for the root and the lost node */
    struct trace_node *parent; /* NULL for the root */
    uint64_t calls;
    uint64_t incl;
    uint64_t self;
    uint64_t max;
    uint64_t active;
    uint32_t index; /* in its thread's nodes */
    uint32_t depth; /* the root's is 0 */
};

struct trace_slot {
    struct trace_node *parent; /* key, with node->method */
    struct trace_node *node;   /* NULL: empty */
};

struct trace_thread {
    /* what the hooks read and write (layout.h) */
    uint64_t depth;
    uint64_t cap;
    struct trace_frame *frames;
    struct trace_slot *slots;
    uint64_t mask;
    uint64_t overflow;
    /* the thread's own */
    uint64_t slot_used;
    FunctionID unwinding; /* ExceptionUnwindFunctionEnter's function */
    size_t map_bytes;     /* of the mapping holding this and the frames */
    /* counters, written by the thread, read by the loop */
    uint64_t untracked;     /* calls in no path of their own (budget, capacity) */
    uint64_t closed_at_end; /* frames closed because the thread ended */
    uint64_t abandoned;     /* frames closed by a Leave or an unwind further down */
    uint64_t unmatched;     /* Leaves that matched no frame */
    /* shared with the loop */
    pid_t tid;
    _Atomic uint32_t node_count;
    _Atomic int ended;
    struct trace_node *chunks[SHADOW_MAX_CHUNKS];
    void *loop_data;            /* the loop's, freed with loop_free */
    int reaped;                 /* the loop's: read after the end, to be freed */
    struct trace_thread *next;  /* the list, under its lock */
};

/* Initialize: the hooks start keeping stacks.  timed: measure times (a
 * tick count at every Enter and Leave) or only count calls; path_depth:
 * the deepest call path kept (>= 2).  Returns 0, or -1 when this machine
 * cannot trace (logged). */
HIDDEN int shadow_init(int timed, uint32_t path_depth);
/* The hooks to hand the runtime (SetEnterLeaveFunctionHooks3). */
HIDDEN void shadow_hooks(FunctionEnter3 **enter, FunctionLeave3 **leave, FunctionTailcall3 **tail);
/* Is tracing timed?  The ticks per second of the clock (calibrated by the
 * loop with shadow_calibrate). */
HIDDEN int shadow_timed(void);
HIDDEN uint64_t shadow_ticks(void);

/* Initialize, timed: what the hooks cost, measured on the calling thread
 * (its own state set aside and restored) by `rounds` rounds of a traced
 * method making `calls` calls of an empty traced method through the same
 * hooks (elt_x64.S, elt_arm64.S): the median over rounds, in ticks, of what one such
 * call adds to its caller's inclusive time (*call_ticks: both hooks, the
 * call, the frame) and to its own (*own_ticks: what lies between the two
 * readings of the clock in an empty method).  Returns 0, or -1 (counts
 * only, a machine without hooks, no memory). */
HIDDEN int shadow_calibrate(uint32_t calls, uint32_t rounds, double *call_ticks,
                            double *own_ticks);

/* The thread's callbacks (exceptions), on the thread. */
HIDDEN void shadow_unwind_enter(FunctionID function);
HIDDEN void shadow_unwind_leave(void);
HIDDEN void shadow_catcher_enter(FunctionID function);

/* Loop: calls fn for every thread's state (ended is 1 when the thread has
 * ended: its counters are final); an ended one for which fn returns 1 is
 * then freed (loop_free(loop_data) first).  With ended_only, live threads
 * are skipped. */
HIDDEN void shadow_each(int (*fn)(void *ctx, struct trace_thread *t, int ended), void *ctx,
                        int ended_only, void (*loop_free)(void *loop_data));
/* Loop: the nodes published so far, and one of them. */
static inline uint32_t shadow_node_count(struct trace_thread *t)
{
    return atomic_load_explicit(&t->node_count, memory_order_acquire);
}
static inline struct trace_node *shadow_node(const struct trace_thread *t, uint32_t i)
{
    return &t->chunks[i / SHADOW_CHUNK_NODES][i % SHADOW_CHUNK_NODES];
}
/* Loop: a counter another thread writes. */
static inline uint64_t shadow_read(const uint64_t *counter)
{
    return __atomic_load_n(counter, __ATOMIC_RELAXED);
}
/* Loop: a copy of a live thread's open frames, outermost first (racy: the
 * thread runs on; each frame is one it had).  Returns their number. */
HIDDEN uint32_t shadow_open_frames(struct trace_thread *t, struct trace_frame *out, uint32_t max);
/* Loop, at the end: the states that could not be made (memory), and the
 * calls of threads whose state could not be made. */
HIDDEN uint64_t shadow_failed_threads(void);

/* The assembly's way into C (elt_x64.S, elt_arm64.S), and tests: */
HIDDEN void shadow_slow_enter(uint64_t id, uint64_t sp);
HIDDEN void shadow_slow_leave(uint64_t id, uint64_t sp);
/* Tests: the calling thread ends (what the key's destructor does), and
 * everything is forgotten (ended states freed; live ones leak). */
HIDDEN void shadow_thread_end_for_test(void);
HIDDEN void shadow_reset_for_test(void);
/* Tests: the calling thread's state, NULL before its first call; a
 * state's open frames (the top may be a call that returned). */
HIDDEN struct trace_thread *shadow_self(void);
HIDDEN uint64_t shadow_depth(const struct trace_thread *t);

#endif
