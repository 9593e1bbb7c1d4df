/*
 * fds: see fds.h.
 */
#include "agent/fds.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#define SELECT_LIMIT 1024 /* FD_SETSIZE */

static size_t soft_limit(void)
{
    struct rlimit lim;
    if (getrlimit(RLIMIT_NOFILE, &lim) < 0 || lim.rlim_cur == RLIM_INFINITY)
        return 1u << 20;
    return (size_t)lim.rlim_cur;
}

int fds_move_high(int fd)
{
    if (fd < 0)
        return fd;
    size_t limit = soft_limit();
    size_t floor = limit >= 2 * SELECT_LIMIT ? SELECT_LIMIT : limit * 3 / 4;
    if (floor <= (size_t)fd)
        return fd;
    int moved = fcntl(fd, F_DUPFD_CLOEXEC, (int)floor);
    if (moved < 0)
        return fd; /* nothing free up there: it stays where it is */
    close(fd);
    return moved;
}

size_t fds_clock_budget(void)
{
    size_t budget = soft_limit() / 4;
    return budget > 4096 ? 4096 : budget;
}
