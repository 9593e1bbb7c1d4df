#!/usr/bin/env bash
# The floor under the signal sampler's overhead: the cost to a busy thread
# of being signalled by its CPU-time clock, with an empty handler and no
# corscope at all (bench/sigcost.c), for the clocks the signal sampler uses
# (perf_event task-clock; POSIX thread-CPU-time timer, its fallback) at
# 10 ms and 1 ms; and what each clock adds to a context switch of the
# thread that has it (two threads on one CPU handing a byte back and forth,
# each with its own clock, enabled as the sampler's is; in the `none` row
# the process opens no event at all: the cost a program of short-running
# threads, a thread pool's, pays however rarely the clock fires).  Runs
# interleaved, medians of RUNS.
#
#   bench/sigcost.sh [RUNS]          (default 5)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
RUNS=${1:-5}
source "$ROOT/bench/lib.sh"
SIGCOST=$ROOT/build/sigcost
[ -x "$SIGCOST" ] || { echo "corscope: build/sigcost is missing: run make build/sigcost" >&2; exit 1; }
ITER=600000000
T=$(mktemp -d "${TMPDIR:-/tmp}/corscope-bench.XXXXXX")
trap 'rm -rf "$T"' EXIT

CONFIGS=("none 1" "perf 10000000" "perf 1000000" "posix 10000000" "posix 1000000")

SWITCH_CONFIGS=("none" "perf" "posix")
SWITCH_ROUNDS=200000

for c in "${!CONFIGS[@]}"; do : > "$T/r.$c"; done
for c in "${!SWITCH_CONFIGS[@]}"; do : > "$T/s.$c"; done
for _ in $(seq "$RUNS"); do
    for c in "${!CONFIGS[@]}"; do
        # shellcheck disable=SC2086
        "$SIGCOST" ${CONFIGS[$c]} "$ITER" >> "$T/r.$c"
    done
    for c in "${!SWITCH_CONFIGS[@]}"; do
        "$SIGCOST" switch "${SWITCH_CONFIGS[$c]}" 10000000 "$SWITCH_ROUNDS" >> "$T/s.$c"
    done
done
echo "machine: $(machine)"
echo "runs: $RUNS per cell, interleaved; median time of a fixed busy loop on one thread, empty handler"
echo
echo "| clock | interval | time | overhead | signals per s | cost per signal |"
echo "|---|---|---|---|---|---|"
base=$(awk '{ print $1 }' "$T/r.0" | median)
for c in "${!CONFIGS[@]}"; do
    read -r clock period <<< "${CONFIGS[$c]}"
    t=$(awk '{ print $1 }' "$T/r.$c" | median)
    n=$(awk '{ print $2 }' "$T/r.$c" | median)
    if [ "$clock" = none ]; then
        echo "| none | - | $t s | - | - | - |"
        continue
    fi
    awk -v t="$t" -v b="$base" -v n="$n" -v clock="$clock" -v p="$period" 'BEGIN {
        per = n > 0 ? sprintf("%.1f us", 1e6 * (t - b) / n) : "-"
        printf "| %s | %d ms | %s s | %+.1f%% | %.0f | %s |\n", clock, p / 1e6, t, 100 * (t - b) / b, n / t, per }'
done
echo
echo "Context switches: two threads on one CPU, $SWITCH_ROUNDS round trips (two switches each), each thread with its own clock at 10 ms (it hardly fires: what is measured is the switch)"
echo
echo "(unseen: the main thread's CPU time, the scheduler's count, that its own perf_event task-clock did not count, per switch of it: a round trip is one switch of each thread)"
echo
echo "| clock | time | per switch | added per switch | unseen by the clock per switch |"
echo "|---|---|---|---|---|"
sbase=$(awk '{ print $1 }' "$T/s.0" | median)
for c in "${!SWITCH_CONFIGS[@]}"; do
    t=$(awk '{ print $1 }' "$T/s.$c" | median)
    n=$(awk '{ print $2 }' "$T/s.$c" | median)
    u=$(awk '{ print $3 }' "$T/s.$c" | median)
    awk -v t="$t" -v b="$sbase" -v n="$n" -v u="$u" -v clock="${SWITCH_CONFIGS[$c]}" 'BEGIN {
        unseen = clock == "perf" ? sprintf("%.2f us", 2 * u / n / 1e3) : "-"
        printf "| %s | %s s | %.2f us | %+.2f us | %s |\n", clock, t, 1e6 * t / n, 1e6 * (t - b) / n, unseen }'
done
