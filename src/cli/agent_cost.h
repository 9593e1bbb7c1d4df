/*
 * agent_cost: what the profiler cost the process it recorded, from the
 * recording alone, so that every profile says what it cost to take.  Three
 * parts, each where it was paid, each counted by the agent:
 *
 *   - its own thread (sampler_cpu_ns): its CPU time, exact; it is never
 *     sampled, and runs beside the program (on another core, when one is
 *     free);
 *   - the signal handler (handler_ns): its time on the program's threads,
 *     from entry to return, exact (it does not block; on a machine busier
 *     than its cores, a thread preempted in the handler adds its wait for
 *     a core); no sample sees it, its own signal being blocked while it
 *     runs;
 *   - the callbacks and hooks (the runtime's calls into the agent on the
 *     program's threads: compiled code mapped, compilations and loads
 *     labelled, traced calls, rewritten async methods, and the runtime's
 *     work they ask for): estimated by the cpu samples whose walk passed
 *     through the agent's code (agent_code_samples, agent_code_ns), weighed
 *     as every cpu sample is.  The profile itself charges such a sample to
 *     the program's frame below the agent's (the agent's frames at the
 *     leaf are trimmed).
 *
 * Not in it: the kernel's side of each signal (delivery, return) and of
 * each clock (a perf_event clock's timer is stopped and started at every
 * switch of its thread: docs/performance.md), and the runtime's own work
 * for a profiler outside the agent's calls.  So the total is what the
 * agent's code cost, a floor of what profiling cost.  `check` prints it.
 * Two of the costs outside it are counted apart and said on lines of their
 * own: the runtime's exception callbacks, by the exceptions thrown, and the
 * perf_event clock's part in each context switch, by the switches.
 */
#ifndef CORSCOPE_AGENT_COST_H
#define CORSCOPE_AGENT_COST_H

#include <stddef.h>
#include <stdint.h>

#include "common/visibility.h"
#include "format/recording.h"

/* Under this many samples in the agent's code, the text says how much of
 * the total was counted and how much estimated from those samples. */
#define AGENT_COST_FEW_SAMPLES 10

struct agent_cost {
    uint64_t thread_ns;        /* the agent's own thread's CPU */
    uint64_t handler_ns;       /* the signal handler's time, 0 when not recorded */
    uint64_t samples;          /* samples written (the samples counter): in cpu
                                * mode, one a run of the handler */
    uint64_t program_ns;       /* CPU of the program's threads while sampled (the
                                * handler's and the callbacks' within), 0: unknown */
    int has_callbacks;         /* the recording counts samples in the agent's code */
    uint64_t callback_samples; /* cpu samples in the agent's code */
    uint64_t callback_ns;      /* their weight */
};

/* Fills `out`; returns -1 when the recording has no count of the agent's
 * own thread (not written by the agent, or by one older than the count). */
HIDDEN int agent_cost_read(const struct recording *r, struct agent_cost *out);

/* One line without newline, the parts the recording has: "its own thread
 * 55.1ms of CPU; its signal handler 13.8ms on the program's threads (183
 * samples, 75.4 us each); its callbacks and hooks in 2 of the 183 cpu
 * samples (23.2ms); in all 4.8% of the process's CPU". */
HIDDEN void agent_cost_text(const struct agent_cost *c, char *out, size_t size);

/* The runtime's exception callbacks, which -e exceptions takes (and before
 * .NET 10 every recording, to see an unhandled exception coming:
 * src/agent/unhandled_probe.h): the runtime calls the
 * agent at every frame of both passes of each throw, a cost no sample can
 * charge to the agent.  "100000 thrown (86000 a CPU-second): ..." with the
 * cost said from AGENT_COST_THROWS_NOTED a CPU-second on (0.1% of a core
 * at about 1 us a throw); returns 0 with no line when the recording
 * counted no throw (or is older than the count). */
#define AGENT_COST_THROWS_NOTED 1000
HIDDEN int agent_cost_exceptions_text(const struct recording *r, char *out, size_t size);
/* The program's context switches while recorded: "41000 (21900 a
 * CPU-second)".  Under the perf_event CPU clock each switch of a sampled
 * thread stops and starts the clock's timer, which virtual machines make
 * dear (bench/sigcost.sh: about 2 us more a switch on ours) and which no
 * sample sees; from AGENT_COST_SWITCHES_NOTED a CPU-second (1% of a core
 * at 2 us) the line says so, and that the POSIX timers do not pay it.  Returns 0 with no line when the recording counted
 * none (or is older than the count). */
#define AGENT_COST_SWITCHES_NOTED 5000
#define AGENT_COST_SWITCH_NS 2000.0
/* From this many a CPU-second (4% of a core at 2 us a switch) `record`'s
 * summary says it too, with the way out. */
#define AGENT_COST_SWITCHES_SAID 20000
HIDDEN int agent_cost_switches_text(const struct recording *r, char *out, size_t size);
/* The program's context switches per CPU-second while sampled, where its
 * threads had the perf_event clock (0: another clock, or not known): what
 * says whether switching cost more than the line above allows, and (the
 * clock does not count a thread's time in switching) why its samples may
 * have seen less than the CPU (cpu_share.h). */
HIDDEN double agent_cost_perf_switch_rate(const struct recording *r);

#endif
