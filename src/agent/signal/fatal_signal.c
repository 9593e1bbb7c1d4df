/*
 * fatal_signal: see fatal_signal.h.
 */
#include "agent/signal/fatal_signal.h"

#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "agent/signal/loop_wake.h"

static const int fatal_signal_signals[] = {SIGABRT, SIGSEGV, SIGBUS, SIGILL, SIGFPE,
                                     SIGTERM, SIGINT,  SIGHUP, SIGQUIT};
#define SIGNAL_COUNT (sizeof fatal_signal_signals / sizeof fatal_signal_signals[0])

static struct sigaction previous[SIGNAL_COUNT];
static int previous_ends[SIGNAL_COUNT]; /* what we chain to ends the process */
static _Atomic int installed[SIGNAL_COUNT];
static _Atomic int armed;
static _Atomic pid_t loop_tid;
static _Atomic int ending; /* the first ending signal */
static _Atomic int done;

static int index_of(int sig)
{
    for (size_t i = 0; i < SIGNAL_COUNT; i++)
        if (fatal_signal_signals[i] == sig)
            return (int)i;
    return -1;
}

static int is_fault(int sig)
{
    return sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE;
}

static int is_default(const struct sigaction *sa)
{
    return !(sa->sa_flags & SA_SIGINFO) && sa->sa_handler == SIG_DFL;
}

static void on_ending(int sig, siginfo_t *si, void *uc);

static void call_previous(int at, int sig, siginfo_t *si, void *uc)
{
    const struct sigaction *p = &previous[at];
    if (p->sa_flags & SA_SIGINFO) {
        if (p->sa_sigaction)
            p->sa_sigaction(sig, si, uc);
    } else if (p->sa_handler != SIG_DFL && p->sa_handler != SIG_IGN && p->sa_handler) {
        p->sa_handler(sig);
    }
}

/* Asks the loop to finish the recording and waits for it, bounded. */
static void finish(int sig)
{
    int expected = 0;
    atomic_compare_exchange_strong(&ending, &expected, sig);
    if (!atomic_load(&armed) || (pid_t)syscall(SYS_gettid) == atomic_load(&loop_tid))
        return;
    loop_wake(); /* the loop may sleep 100 ms when quiet */
    struct timespec step = {0, 1000000};
    for (uint64_t waited = 0; waited < FATAL_SIGNAL_WAIT_NS && !atomic_load(&done) &&
                              atomic_load(&armed);
         waited += 1000000)
        nanosleep(&step, NULL);
}

static void on_ending(int sig, siginfo_t *si, void *uc)
{
    int saved_errno = errno;
    int at = index_of(sig);
    if (at < 0) {
        errno = saved_errno;
        return;
    }
    if (is_fault(sig)) {
        /* the runtime first: most faults in managed code are exceptions */
        call_previous(at, sig, si, uc);
        struct sigaction now;
        if (sigaction(sig, NULL, &now) == 0 && (now.sa_flags & SA_SIGINFO) &&
            now.sa_sigaction == on_ending) {
            errno = saved_errno;
            return; /* handled: the program goes on */
        }
        /* the runtime gave up and restored the default action: the fault
         * comes again when we return, and ends the process */
        finish(sig);
        errno = saved_errno;
        return;
    }
    if (previous_ends[at])
        finish(sig);
    if (is_default(&previous[at])) {
        /* as without us: the default action, for this very signal */
        struct sigaction dfl;
        memset(&dfl, 0, sizeof dfl);
        dfl.sa_handler = SIG_DFL;
        sigemptyset(&dfl.sa_mask);
        sigaction(sig, &dfl, NULL);
        syscall(SYS_tgkill, getpid(), (pid_t)syscall(SYS_gettid), sig);
    } else {
        call_previous(at, sig, si, uc);
    }
    errno = saved_errno;
}

/* Does this action end the process: the default one, or the runtime's
 * own handler (which ends it the runtime's way)?  A handler of the
 * program's may handle the signal and go on: then we only chain. */
static int ends_process(const struct sigaction *sa)
{
    if (is_default(sa))
        return 1;
    Dl_info info;
    void *fn = (sa->sa_flags & SA_SIGINFO) ? (void *)sa->sa_sigaction : (void *)sa->sa_handler;
    if (!fn || !dladdr(fn, &info) || !info.dli_fname)
        return 0;
    return strstr(info.dli_fname, "libcoreclr.so") || strstr(info.dli_fname, "libSystem.Native.so");
}

void fatal_signal_install(void)
{
    for (size_t i = 0; i < SIGNAL_COUNT; i++) {
        int sig = fatal_signal_signals[i];
        struct sigaction old;
        if (atomic_load(&installed[i]) || sigaction(sig, NULL, &old) < 0)
            continue;
        if (!(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_IGN)
            continue; /* ignored stays ignored (and so for the children) */
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        if (is_default(&old)) {
            sa.sa_flags = SA_RESTART;
            sigemptyset(&sa.sa_mask);
        } else {
            /* the flags and mask of the handler we go in front of: the
             * runtime's fault handlers run on the alternate stack */
            sa.sa_flags = old.sa_flags & ~SA_RESETHAND;
            sa.sa_mask = old.sa_mask;
        }
        sa.sa_flags |= SA_SIGINFO;
        sa.sa_sigaction = on_ending;
        previous[i] = old;
        previous_ends[i] = ends_process(&old);
        if (sigaction(sig, &sa, NULL) == 0)
            atomic_store(&installed[i], 1);
    }
}

void fatal_signal_arm(pid_t tid)
{
    atomic_store(&loop_tid, tid);
    atomic_store(&armed, 1);
}

void fatal_signal_disarm(void)
{
    atomic_store(&armed, 0);
}

int fatal_signal_signal(void)
{
    return atomic_load(&ending);
}

void fatal_signal_done(void)
{
    atomic_store(&done, 1);
}

const char *fatal_signal_describe(int sig)
{
    switch (sig) {
    case SIGABRT: return "SIGABRT (abort() was called)";
    case SIGSEGV: return "SIGSEGV (a crash: invalid memory access)";
    case SIGBUS: return "SIGBUS (a crash: bus error)";
    case SIGILL: return "SIGILL (a crash: illegal instruction)";
    case SIGFPE: return "SIGFPE (a crash: arithmetic fault)";
    case SIGTERM: return "SIGTERM (not handled by the program)";
    case SIGINT: return "SIGINT (not handled by the program)";
    case SIGHUP: return "SIGHUP (not handled by the program)";
    case SIGQUIT: return "SIGQUIT (not handled by the program)";
    default: return "a signal";
    }
}
