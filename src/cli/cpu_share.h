/*
 * cpu_share: how much of the CPU a process used while it was sampled its
 * cpu samples saw.  The agent counts the CPU time of the process's threads
 * from the sampler's start to its stop (cpu_while_sampled_ns; its own
 * thread, never sampled, left out); each sample weighs the CPU time it
 * stands for, so the weights add up to that time, give or take a period
 * per thread, unless some of the CPU was in no sample at all: a clock that
 * could not see it (a clock of user time only), samples dropped, threads
 * without a clock or found late.
 *
 * A POSIX timer's sample weighs all of its thread's CPU since the last
 * one: where ticks missed a thread for long (its bursts fell between
 * them), one sample carries what no tick saw, charged to wherever the
 * tick found the thread.  So a sample is taken to have seen at most
 * SEEN_CAP intervals (and at least 20 ms, a slow tick's two periods); the
 * rest of its weight is counted as charged late, not as seen.
 *
 * `check` prints the share; `record` says so when the profile is thin, so
 * that a profile that shows less than the program did is never silent.
 */
#ifndef CORSCOPE_CPU_SHARE_H
#define CORSCOPE_CPU_SHARE_H

#include <stddef.h>
#include <stdint.h>

#include "common/visibility.h"
#include "format/recording.h"

struct cpu_share {
    uint64_t seen_ns;      /* the cpu samples' weight, each capped (above) */
    uint64_t late_ns;      /* the weight above the caps */
    uint64_t late_samples; /* samples whose weight was capped */
    uint64_t cpu_ns;       /* the CPU they stand for (the agent's count) */
    uint64_t interval_ns;  /* the sampling interval */
};

/* Fills `out` for a recording with cpu samples and the agent's count;
 * returns -1 when there is nothing to compare (wall mode, another
 * sampler, a recording older than the count). */
HIDDEN int cpu_share_read(const struct recording *r, struct cpu_share *out);

/* 1 when the samples saw less than three quarters of the CPU, missing at least 20
 * intervals' worth (so that a short run's few samples, each an interval
 * or a miss, are not taken for a thin profile). */
HIDDEN int cpu_share_thin(const struct cpu_share *s);

/* One line, without newline: "the cpu samples saw 0.41 s of the 0.43 s of
 * CPU the process used while sampled (95.3%)", and what was charged late. */
HIDDEN void cpu_share_text(const struct cpu_share *s, char *out, size_t size);

/* For a thin profile: what the recording says could have left CPU out of
 * the samples, "; "-separated (never empty). */
HIDDEN void cpu_share_causes(const struct recording *r, char *out, size_t size);

#endif
