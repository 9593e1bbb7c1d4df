#!/usr/bin/env bash
# Tries to reproduce the runtime faults of tests/stress/known, which the
# stress suite leaves out (rarely: none in 500 runs on 2026-11-28): the
# exception storm (build/apps/Stress exceptions 20, 400,000 exceptions
# caught by a filter on 4 threads) under the
# stop-the-world sampler, suspending the runtime every millisecond, two
# runs at a time (a busy machine makes it likelier).  A run fails when its
# output or exit status differ from a run without the profiler: the fault
# shows as "Unhandled exception. System.InvalidOperationException: storm N"
# with the catching frame on the stack.  Prints how many runs failed; exits
# 0 either way (it measures the runtime, it does not test corscope).
#
#   tests/stress/known.sh [RUNS]      RUNS per lane, 2 lanes (default 100)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$here/../.." && pwd)
CORSCOPE=${CORSCOPE:-$ROOT/build/corscope}
RUNS=${1:-100}
T=$(mktemp -d "${TMPDIR:-/tmp}/corscope-known.XXXXXX")
trap 'rm -rf "$T"' EXIT
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1
STRESS="dotnet $ROOT/build/apps/Stress/Stress.dll exceptions 20"
$STRESS > "$T/plain.out" 2> /dev/null || { echo "known: the program fails without the profiler" >&2; exit 1; }

lane() {
    local bad=0
    for _ in $(seq 1 "$RUNS"); do
        # shellcheck disable=SC2086
        if ! timeout -k 5 120 "$CORSCOPE" record -q --force --sampler suspend -e wall -i 1ms \
                -o "$T/r$1.corscope" -- $STRESS > "$T/out$1" 2> "$T/err$1" ||
           ! cmp -s "$T/out$1" "$T/plain.out"; then
            bad=$((bad + 1))
            head -1 "$T/err$1" > "$T/first$1.$bad"
        fi
    done
    echo "$bad" > "$T/bad$1"
}
start=$(date +%s)
lane 1 & lane 2 & wait
bad=$(( $(cat "$T/bad1") + $(cat "$T/bad2") ))
echo "known: exceptions / --sampler suspend -e wall -i 1ms: $bad of $((2 * RUNS)) runs failed in $(( $(date +%s) - start )) s"
# how the failed runs began, if any failed
if [ "$bad" -gt 0 ]; then
    cat "$T"/first* | sort | uniq -c | sed 's/^/  /' | head -5
fi
exit 0
