/*
 * fds: see fds.h.
 */
#include "agent/fds.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define SELECT_LIMIT 1024 /* FD_SETSIZE */
#define GROWER_WAIT_NS 5000000ll /* fds_grower's wait for a new thread to say */

static size_t soft_limit(void)
{
    struct rlimit lim;
    if (getrlimit(RLIMIT_NOFILE, &lim) < 0 || lim.rlim_cur == RLIM_INFINITY)
        return 1u << 20;
    return (size_t)lim.rlim_cur;
}

/* The lowest number the agent's long-lived descriptors take. */
static size_t high_floor(void)
{
    size_t limit = soft_limit();
    return limit >= 2 * SELECT_LIMIT ? SELECT_LIMIT : limit * 3 / 4;
}

/* The growing thread: set by its starter before the agent's thread is
 * created, read and cleared by whoever joins it (the agent's thread, or
 * the starter when that thread could not be made), so pthread_create
 * orders every access. */
static pthread_t grower;
static int grower_running;
static _Atomic pid_t grower_tid; /* 0 until the thread says */
static _Atomic int grower_done;  /* the table has grown (or could not): for good */

static void *grow(void *arg)
{
    (void)arg;
    prctl(PR_SET_NAME, "corscope-fds");
    atomic_store(&grower_tid, (pid_t)syscall(SYS_gettid));
    int fd = eventfd(0, EFD_CLOEXEC);
    if (fd >= 0) {
        int high = fcntl(fd, F_DUPFD_CLOEXEC, (int)high_floor());
        if (high >= 0)
            close(high);
        close(fd);
    }
    atomic_store(&grower_done, 1);
    return NULL;
}

void fds_grow_start(void)
{
    if (grower_running || atomic_load(&grower_done))
        return;
    /* every signal blocked: the caller's mask is inherited */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    /* without it the agent's thread grows the table at its first clock */
    grower_running = pthread_create(&grower, NULL, grow, NULL) == 0;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}

pid_t fds_grower(void)
{
    if (!grower_running)
        return 0;
    pid_t tid = atomic_load(&grower_tid);
    for (long long waited = 0; !tid && waited < GROWER_WAIT_NS; waited += 50000) {
        struct timespec pause = {0, 50000};
        nanosleep(&pause, NULL);
        tid = atomic_load(&grower_tid);
    }
    return tid;
}

void fds_grow_join(void)
{
    if (!grower_running)
        return;
    pthread_join(grower, NULL);
    grower_running = 0;
}

int fds_high_ready(void)
{
    return !grower_running || atomic_load(&grower_done);
}

int fds_is_low(int fd)
{
    return fd >= 0 && (size_t)fd < high_floor();
}

int fds_copy_high(int fd)
{
    if (fd < 0)
        return fd;
    size_t floor = high_floor();
    if (floor <= (size_t)fd)
        return fd;
    int copy = fcntl(fd, F_DUPFD_CLOEXEC, (int)floor);
    return copy < 0 ? fd : copy; /* nothing free up there: it stays where it is */
}

int fds_move_high(int fd)
{
    int moved = fds_copy_high(fd);
    if (moved != fd)
        close(fd);
    return moved;
}

size_t fds_clock_budget(void)
{
    size_t budget = soft_limit() / 4;
    return budget > 4096 ? 4096 : budget;
}
