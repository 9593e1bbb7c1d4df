#!/usr/bin/env bash
# Tracing mode on arm64 under emulation: tests/apps/Trace's `loop` (an
# empty method called N times, timed by the program's own Stopwatch after a
# warm-up) run by qemu-user without the agent, with --trace=counts and with
# --trace (times), interleaved run by run, median of RUNS.  qemu translates
# the program and the hooks alike, so its nanoseconds are not arm64's: the
# table gives the traced loop's time per call as a ratio to the untraced
# one's, and the hooks' own cost as the agent measured it at start
# (trace_cost call_ns) as a ratio to the untraced call.  The same ratios
# native on x86-64 are bench/trace.sh's.
#
#   bench/arm64_trace.sh [RUNS] [CALLS]      (default 5, 10000000)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
source "$ROOT/bench/lib.sh"
RUNS=${1:-5}
CALLS=${2:-10000000}
A64=$ROOT/build/aarch64
APPS=$A64/apps
CORSCOPE=$ROOT/build/corscope
T=$(mktemp -d "${TMPDIR:-/tmp}/corscope-bench.XXXXXX")
trap 'rm -rf "$T"' EXIT
ARM64_APPS="Trace" "$ROOT/tests/arm64/apps.sh" >&2

# loop MODE -> ns per call the program measured (MODE: none, counts, times);
# with tracing, the recording is $T/t.corscope
loop() {
    if [ "$1" = none ]; then
        qemu-aarch64 -L /usr/aarch64-linux-gnu "$APPS/Trace" loop "$CALLS"
    else
        rm -f "$T/t.corscope"
        CORECLR_ENABLE_PROFILING=1 CORECLR_PROFILER='{14DE3B91-04FE-4EFB-B588-CD7BB380C74A}' \
            CORECLR_PROFILER_PATH="$A64/libcorscope.so" CORSCOPE_OUTPUT="$T/t.corscope" CORSCOPE_EVENT=cpu \
            CORSCOPE_TRACE="$1" qemu-aarch64 -L /usr/aarch64-linux-gnu "$APPS/Trace" loop "$CALLS"
    fi | awk '$1 == "loop:" { print $(NF - 3) }'
}

echo "machine: $(machine) (arm64 emulated by $(qemu-aarch64 --version | head -1)); load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for ((r = 0; r < RUNS; r++)); do
    for mode in none counts times; do
        echo "$mode $(loop $mode)" >> "$T/ns.txt"
        if [ $mode = times ]; then
            "$CORSCOPE" report -f calls "$T/t.corscope" 2> /dev/null |
                sed -n 's/.*own cost taken out, as measured at start.*: \([0-9.]*\) ns per traced call.*/\1/p' >> "$T/cost.txt"
        fi
    done
done
base=$(awk '$1 == "none" { print $2 }' "$T/ns.txt" | median)
echo
echo "Trace loop $CALLS under qemu-user, median of $RUNS interleaved runs, as ratios to the untraced call"
echo
echo "| configuration | time per call, ratio |"
echo "|---|---|"
for mode in none counts times; do
    v=$(awk -v m=$mode '$1 == m { print $2 }' "$T/ns.txt" | median)
    label=$mode
    [ $mode = none ] && label="no agent"
    [ $mode = counts ] && label="--trace=counts"
    [ $mode = times ] && label="--trace (times)"
    awk -v l="$label" -v v="$v" -v b="$base" 'BEGIN { printf "| %s | %.2f |\n", l, v / b }'
done
if [ -s "$T/cost.txt" ]; then
    c=$(median < "$T/cost.txt")
    awk -v c="$c" -v b="$base" 'BEGIN { printf "| the hooks'"'"' own cost measured at start (call_ns), per untraced call | %.2f |\n", c / b }'
fi
echo
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
