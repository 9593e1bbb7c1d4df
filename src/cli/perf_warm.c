/*
 * perf_warm: see perf_warm.h.
 */
#include "cli/perf_warm.h"

#include <linux/perf_event.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

int perf_warm_open(const struct config *c)
{
    if (config_sampled(c) != CONFIG_EVENT_CPU || c->sampler != CONFIG_SAMPLER_SIGNAL ||
        c->cpu_clock == CONFIG_CPU_CLOCK_POSIX)
        return -1;
    struct perf_event_attr attr;
    memset(&attr, 0, sizeof attr);
    attr.size = sizeof attr;
    attr.type = PERF_TYPE_SOFTWARE;
    attr.config = PERF_COUNT_SW_DUMMY;
    attr.disabled = 1;
    attr.exclude_kernel = 1; /* allowed at perf_event_paranoid 2 */
    attr.exclude_hv = 1;
    return (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

void perf_warm_close(int fd)
{
    if (fd >= 0)
        close(fd);
}
