/*
 * agent_probe: whether this machine's loader can load the agent, and if
 * not, why, in the loader's words.  When a program ran but no recording
 * came, the runtime said nothing: it logs a failed profiler load nowhere a
 * user sees.  Its load is a dlopen() like any other, so a dlopen() of the
 * same file here, in the same environment (GLIBC_TUNABLES, LD_LIBRARY_PATH),
 * fails the same way for what the file and the machine decide: a missing
 * library, a foreign machine, thread-locals over glibc's static TLS surplus
 * ("cannot allocate memory in static TLS block").  It runs in a child
 * process: the agent is linked -z nodelete and must not stay in the CLI.
 * Call it only where the CLI runs no other thread (record's push reader has
 * been joined by then): the child of a fork may only call dlopen when the
 * parent had one thread.
 *
 * A load that works here may still have failed in the runtime, whose own
 * libraries can take part of that surplus first (arm64's TLSDESC): the
 * answer then says how much of it the agent needs.
 */
#ifndef CORSCOPE_AGENT_PROBE_H
#define CORSCOPE_AGENT_PROBE_H

#include <stddef.h>

/* Loads `agent` in a child.  Returns 0 when it loads, -1 when it does not
 * (`why` then holds the loader's message, one line), and in both cases
 * writes the agent's thread-local bytes (PT_TLS) to *tls_bytes when known
 * (0 otherwise). */
int agent_probe(const char *agent, char *why, size_t size, size_t *tls_bytes);

/* Says on stderr (cli_error) why the agent did not load, when the probe
 * finds a reason; nothing when it loads here. */
void agent_probe_explain(const char *agent);

#endif
