/*
 * sighandler: see sighandler.h.
 */
#include "agent/signal/handler.h"

#include <errno.h>
#include <signal.h>
#include <linux/perf_event.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "agent/signal/nativeunwind.h"
#include "agent/signal/slots.h"
#include "agent/signal/stackmaps.h"
#include "common/visibility.h"

/* Reads the word at addr if [addr, addr+8) lies in [lo, hi). */
NO_ASAN static int read_word(uintptr_t addr, uintptr_t lo, uintptr_t hi, uint64_t *out)
{
    if (addr < lo || addr > hi - 8 || (addr & 7))
        return 0;
    *out = *(const uint64_t *)addr;
    return 1;
}

/* One step along the frame-pointer chain: the caller's return address is
 * at fp+8, its frame pointer at fp, its stack pointer fp+16.  The chain
 * must move up the stack. */
NO_ASAN static int fp_step(uintptr_t *pc, uintptr_t *sp, uintptr_t *fp, uintptr_t hi)
{
    uint64_t ret, saved;
    if (*fp < *sp || !read_word(*fp + 8, *sp, hi, &ret) || !read_word(*fp, *sp, hi, &saved))
        return 0;
    *sp = *fp + 16;
    *fp = (uintptr_t)saved;
    *pc = (uintptr_t)ret;
    return 1;
}

static void put(struct sthread *t, uint64_t at, uint64_t word)
{
    t->ring[at & t->ring_mask] = word;
}

NO_ASAN static void sample(struct sthread *t, const siginfo_t *si, const ucontext_t *uc)
{
    uintptr_t pc = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
    uintptr_t sp = (uintptr_t)uc->uc_mcontext.gregs[REG_RSP];
    uintptr_t fp = (uintptr_t)uc->uc_mcontext.gregs[REG_RBP];
    uint64_t weight = 1;
    /* a CPU-time tick: a POSIX timer's (with the periods it missed), or a
     * perf_event overflow (si_code POLL_*, re-armed for one more) */
    int from_timer = si->si_code == SI_TIMER || si->si_code > 0;
    if (si->si_code == SI_TIMER)
        weight += (uint64_t)(unsigned)si->si_overrun;
    else if (si->si_code > 0 && si->si_fd == t->perf_fd) {
        if (atomic_exchange(&t->perf_first, 0))
            ioctl(si->si_fd, PERF_EVENT_IOC_PERIOD, &t->perf_period);
        ioctl(si->si_fd, PERF_EVENT_IOC_REFRESH, 1);
    }
    else {
        uint64_t w = atomic_exchange(&t->wall_weight, 0);
        if (w)
            weight = w;
    }
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);

    uint32_t flags = 0;
    uintptr_t lo = 0, hi = 0;
    if (sp >= t->stack_lo && sp < t->stack_hi) {
        hi = t->stack_hi;
    } else if (stackmaps_find(sp, &lo, &hi, t->maps_generation)) {
        t->stack_lo = lo;
        t->stack_hi = hi;
    } else {
        flags |= HANDLER_NO_STACK;
        hi = 0;
    }

    uint64_t head = atomic_load_explicit(&t->head, memory_order_relaxed);
    uint64_t tail = atomic_load_explicit(&t->tail, memory_order_acquire);
    uint64_t free_words = t->ring_mask + 1 - (head - tail);
    uint64_t top = 0;
    if (hi > sp)
        top = (hi - sp) / 8 < SLOTS_TOP_WORDS ? (hi - sp) / 8 : SLOTS_TOP_WORDS;
    if (free_words < SLOTS_HEADER_WORDS + top + 1) {
        atomic_fetch_add_explicit(&t->dropped, 1, memory_order_relaxed);
        return;
    }
    uint64_t room = free_words - SLOTS_HEADER_WORDS - top;
    uint64_t max_depth = room < t->max_depth ? room : t->max_depth;

    uint64_t at = head + SLOTS_HEADER_WORDS;
    for (uint64_t i = 0; i < top; i++)
        put(t, at++, ((const uint64_t *)sp)[i]);

    uint64_t depth = 0;
    put(t, at + depth++, pc);
    int leaf = 1;
    while (hi) {
        uintptr_t npc = pc, nsp = sp, nfp = fp;
        enum nu_status st = nativeunwind_step(&npc, &nsp, &nfp, sp, hi, leaf);
        if (st == NU_NO_CFI) {
            if (!fp_step(&npc, &nsp, &nfp, hi)) {
                flags |= HANDLER_STOP_BOUNDS;
                break;
            }
        } else if (st != NU_OK) {
            flags |= st == NU_BOUNDS ? HANDLER_STOP_BOUNDS : HANDLER_STOP_RULE;
            break;
        } else if (leaf) {
            flags |= HANDLER_LEAF_CFI;
        }
        leaf = 0;
        if (npc == 0)
            break; /* the outermost frame */
        if (nsp <= sp) {
            flags |= HANDLER_STOP_BOUNDS; /* no progress up the stack */
            break;
        }
        if (depth == max_depth) {
            flags |= HANDLER_TRUNCATED;
            break;
        }
        pc = npc;
        sp = nsp;
        fp = nfp;
        put(t, at + depth++, pc);
    }

    uint64_t total = SLOTS_HEADER_WORDS + top + depth;
    put(t, head, total | (depth << 32) | ((uint64_t)flags << 48));
    put(t, head + 1, (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec);
    put(t, head + 2, (weight & 0xffffffffu) | (top << 32));
    put(t, head + 3, (uint64_t)uc->uc_mcontext.gregs[REG_RSP]);
    put(t, head + 4, (uint64_t)uc->uc_mcontext.gregs[REG_RBP]);
    uint64_t cpu = 0;
    if (!from_timer && clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) == 0)
        cpu = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
    put(t, head + 5, cpu);
    atomic_store_explicit(&t->head, head + total, memory_order_release);
}

static void on_signal(int sig, siginfo_t *si, void *uc)
{
    (void)sig;
    int saved_errno = errno;
    pid_t tid = (pid_t)syscall(SYS_gettid);
    struct sthread *t = slots_handler_enter(tid);
    if (t) {
        sample(t, si, uc);
        slots_handler_leave(tid);
    }
    errno = saved_errno;
}

int handler_install(int signal)
{
    struct sigaction old;
    if (sigaction(signal, NULL, &old) < 0)
        return -1;
    if ((old.sa_flags & SA_SIGINFO) && old.sa_sigaction == on_signal)
        return 0;
    if (!(old.sa_flags & SA_SIGINFO) && old.sa_handler != SIG_DFL && old.sa_handler != SIG_IGN)
        return -1;
    if (old.sa_flags & SA_SIGINFO)
        return -1;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_signal;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    return sigaction(signal, &sa, NULL);
}
