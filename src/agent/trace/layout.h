/*
 * layout: the byte offsets of the shadow stack's structures (shadow.h) that
 * the assembly hooks (elt_x64.S) read and write.  This header is included
 * by the assembly too, so it holds nothing but numbers; shadow.c checks
 * every one of them against the C structures with static assertions.
 */
#ifndef CORSCOPE_TRACE_LAYOUT_H
#define CORSCOPE_TRACE_LAYOUT_H

/* struct trace_frame: one activation on a thread's shadow stack */
#define TRF_NODE 0   /* struct trace_node * of the call path */
#define TRF_SP 8     /* the caller's stack pointer the JIT passed (with the id, the frame's key) */
#define TRF_T0 16    /* tick count at entry */
#define TRF_CHILD 24 /* ticks spent in callees that have returned */
#define TRF_SIZE 32
#define TRF_SHIFT 5

/* struct trace_node: one call path of one thread */
#define TRN_METHOD 0  /* client id of the method (methods.h) */
#define TRN_PARENT 8  /* struct trace_node *, the root's is NULL */
#define TRN_CALLS 16  /* activations begun */
#define TRN_INCL 24   /* ticks of the outermost activations that ended */
#define TRN_SELF 32   /* ticks inside the method itself (callees excluded) */
#define TRN_MAX 40    /* longest outermost activation, ticks */
#define TRN_ACTIVE 48 /* activations open now (a folded recursion opens several) */
#define TRN_SIZE 64

/* struct trace_thread: what the hooks find through the thread's TLS pointer */
#define TRT_DEPTH 0     /* frames in use */
#define TRT_CAP 8       /* frames that fit */
#define TRT_FRAMES 16   /* struct trace_frame *, [-1] is a sentinel holding the root */
#define TRT_SLOTS 24    /* struct trace_node **: the (parent, method) -> node table */
#define TRT_MASK 32     /* slots - 1 */
#define TRT_OVERFLOW 40 /* activations beyond cap, not on the stack */

/* The hash of (parent node, client id) into the slot table:
 * ((id * K) ^ parent) * K >> 32, masked. */
#define TRACE_HASH_K 0x2545F491

#endif
