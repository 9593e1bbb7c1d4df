/*
 * clrdesc: what the runtime says about its own data structures, read from
 * the contract descriptor it exports for diagnostic tools
 * (DotNetRuntimeContractDescriptor, .NET 10 and later: a JSON text of type
 * layouts and global values, plus a table of pointers).
 *
 * The agent needs the runtime's Frame chain, and whether a thread runs in
 * cooperative mode (Thread::m_fPreemptiveGCDisabled: async stacks read
 * the heap directly only then, signal/achain.h).  The Frame chain: each thread's innermost
 * explicit frame (Thread::m_pFrame) says how the thread entered the
 * runtime — through the prestub, an interface dispatch stub, a ReadyToRun
 * fixup, call counting, a GC hijack, an exception — and a transition frame
 * holds the return address into the managed caller.  The signal handler
 * reads that chain (activity.h) with the offsets and frame identifiers
 * found here, so nothing about the layout is hard-coded.  When the
 * descriptor or any needed entry is missing (older runtimes), the layout is
 * left unusable and labels come from the callbacks alone.
 */
#ifndef CORSCOPE_CLRDESC_H
#define CORSCOPE_CLRDESC_H

#include <stddef.h>
#include <stdint.h>

#include "common/visibility.h"

/* How the agent classifies the innermost frame of a thread. */
enum clr_frame_kind {
    CLR_FRAME_NONE = 0,
    CLR_FRAME_PRESTUB,       /* PrestubMethodFrame: a method's first call */
    CLR_FRAME_CALL_COUNTING, /* CallCountingHelperFrame: a method called often enough to tier up */
    CLR_FRAME_DISPATCH,      /* StubDispatchFrame: an interface call resolved */
    CLR_FRAME_EXTERNAL,      /* ExternalMethodFrame: a ReadyToRun call site bound */
    CLR_FRAME_FIXUP,         /* DynamicHelperFrame: a ReadyToRun fixup resolved */
    CLR_FRAME_SUSPENDED,     /* Hijack, Resumable, RedirectedThread: stopped for a GC */
    CLR_FRAME_EXCEPTION,     /* SoftwareException, FaultingException: an exception dispatched */
    CLR_FRAME_PINVOKE,       /* an active InlinedCallFrame: native code called from managed */
    CLR_FRAME_KIND_COUNT
};

#define CLRDESC_MAX_IDS 12

struct clrdesc_frames {
    int usable;
    uint32_t thread_frame;   /* Thread::m_pFrame; a frame's identifier is its first word */
    uint32_t thread_os_id;   /* Thread::m_OSThreadId */
    uint32_t fmf_transition; /* FramedMethodFrame::m_pTransitionBlock */
    uint32_t fmf_method;     /* FramedMethodFrame::m_pMD (the word after it; the size agrees) */
    uint32_t tb_return;      /* TransitionBlock::m_ReturnAddress */
    int32_t thread_coop;     /* Thread::m_fPreemptiveGCDisabled (nonzero: cooperative
                              * mode), -1 unknown; set even when the frames are not usable */
    uint32_t id_count;
    struct clrdesc_frame_id {
        uint64_t id;         /* the runtime's frame identifier */
        uint8_t kind;        /* enum clr_frame_kind */
        uint8_t transition;  /* a FramedMethodFrame: return address and method through it */
        uint32_t ret;        /* else the offset of the return address into managed code, 0 none */
    } ids[CLRDESC_MAX_IDS];
};

/* Reads the descriptor of the runtime loaded in this process into *out.
 * Returns 0 when the frame layout is usable, -1 otherwise (out->usable 0). */
HIDDEN int clrdesc_read_frames(struct clrdesc_frames *out);

/* The same from a descriptor's JSON text (tests). */
HIDDEN int clrdesc_parse_frames(const char *json, size_t len, struct clrdesc_frames *out);

#endif
