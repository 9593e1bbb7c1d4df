#!/bin/sh
# static_tls.sh LIB BUDGET: fails (one line, exit 1) when the thread-local
# block (PT_TLS memsz) of shared library LIB is over BUDGET bytes.
#
# Why: the agent uses the initial-exec TLS model (signal-safe access, no
# __tls_get_addr), so the loader must place its whole PT_TLS block in the
# static TLS surplus that glibc reserves at start for libraries dlopen'd
# later, and the runtime dlopens the agent: over that surplus, dlopen fails
# ("cannot allocate memory in static TLS block") and the program runs
# unprofiled.  The Makefile's AGENT_TLS_BUDGET says how big the surplus is.
# READELF may name the readelf to use (any binutils readelf reads both
# machines' files).
set -eu
lib=$1
budget=$2
readelf=${READELF:-readelf}
size=$("$readelf" -lW "$lib" | awk '$1 == "TLS" { print $6 }')
[ -n "$size" ] || exit 0 # no thread-locals at all
bytes=$(printf '%d' "$size")
if [ "$bytes" -gt "$budget" ]; then
    echo "corscope: $lib: $bytes bytes of thread-locals (PT_TLS), over the budget of $budget" \
        "(glibc's static TLS surplus, see AGENT_TLS_BUDGET in the Makefile): move" \
        "per-thread state into struct agent_thread (src/agent/agent_thread.h)" >&2
    exit 1
fi
