#!/usr/bin/env bash
# Long runs: does the agent's memory stay flat and small?  Three programs
# run for MINUTES each under `corscope record` (cpu, 10 ms), the process's
# resident memory (VmRSS) read every 15 s, and again without the profiler
# for a shorter while (its own memory is flat: the difference is the
# agent's, give or take the runtime's own wobble):
#   - tests/apps/Bench with 8 busy threads;
#   - tests/apps/Bench with 500 busy threads;
#   - tests/apps/ExprLoop: compiles expressions and Regexes under new names
#     for as long as it runs (every table of the agent meets new entries).
# Prints a markdown table for docs/performance.md: RSS with and without the
# agent at the end, RSS with the agent after one minute and at the end
# (flat?), the most heap the agent held (max_agent_heap_bytes), samples and
# drops.
#
#   bench/long.sh [MINUTES] [BASE_MINUTES] [ROWS]   (default 10, 2, all;
#                                                    ROWS: e.g. "2 3")
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
MIN=${1:-10}
BASE_MIN=${2:-2}
ROWS=${3:-}
source "$ROOT/bench/lib.sh"
CORSCOPE=$ROOT/build/corscope
T=$(mktemp -d "${TMPDIR:-/tmp}/corscope-bench.XXXXXX")
trap 'rm -rf "$T"' EXIT
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1

CONFIGS=(
    "8 busy threads|$ROOT/build/apps/Bench/Bench.dll 8 0 0 SECONDS"
    "500 busy threads|$ROOT/build/apps/Bench/Bench.dll 500 0 0 SECONDS"
    "ExprLoop (compiles code under new names)|$ROOT/build/apps/ExprLoop/ExprLoop.dll SECONDS"
)

rss_kb() { awk '/^VmRSS/ { print $2 }' "/proc/$1/status" 2> /dev/null || true; }

# run LABEL MINUTES PROFILED ARGS...: samples RSS every 15 s into $T/rss
run() {
    local minutes=$1 profiled=$2 out=$T/r.corscope
    shift 2
    local args
    args=$(echo "$*" | sed "s/SECONDS/$((minutes * 60))/")
    rm -f "$out" "$T/rss"
    if [ "$profiled" = 1 ]; then
        # shellcheck disable=SC2086
        nice "$CORSCOPE" record -q -o "$out" -- dotnet $args > /dev/null &
    else
        # shellcheck disable=SC2086
        nice dotnet $args > /dev/null &
    fi
    local job=$! pid="" t0 now
    t0=$(date +%s)
    for _ in $(seq 200); do
        if [ "$profiled" = 1 ]; then
            pid=$("$CORSCOPE" check "$out" 2> /dev/null | awk '$1 == "pid" { print $2 }') || true
        else
            pid=$job
        fi
        [ -n "$pid" ] && break
        sleep 0.1
    done
    while kill -0 "$job" 2> /dev/null; do
        now=$(( $(date +%s) - t0 ))
        r=$(rss_kb "$pid")
        [ -n "$r" ] && echo "$now $r" >> "$T/rss"
        sleep 15
    done
    wait "$job" || true
    echo $(( $(date +%s) - t0 ))
}

echo "machine: $(machine)"
echo "runs: one per row, $MIN min with the profiler (cpu, 10 ms), $BASE_MIN min without; RSS every 15 s"
echo
echo "| program | wall | RSS without | RSS with, at 1 min | RSS with, at the end | agent heap (most) | samples | dropped |"
echo "|---|---|---|---|---|---|---|---|"
for i in "${!CONFIGS[@]}"; do
    c=${CONFIGS[$i]}
    [ -n "$ROWS" ] && [[ " $ROWS " != *" $((i + 1)) "* ]] && continue
    label=${c%%|*}
    args=${c#*|}
    run "$BASE_MIN" 0 "$args" > /dev/null
    base=$(tail -1 "$T/rss" | awk '{ printf "%.1f", $2 / 1024 }')
    wall=$(run "$MIN" 1 "$args")
    at1=$(awk '$1 >= 60 { printf "%.1f", $2 / 1024; exit }' "$T/rss")
    last=$(tail -1 "$T/rss" | awk '{ printf "%.1f", $2 / 1024 }')
    stats=$("$CORSCOPE" check "$T/r.corscope" | tr ' ' '\n')
    heap=$(echo "$stats" | awk -F= '$1 == "max_agent_heap_bytes" { printf "%.1f", $2 / 1048576 }')
    samples=$(echo "$stats" | awk -F= 'NF == 2 && $1 == "samples" { print $2 }')
    dropped=$(echo "$stats" | awk -F= '$1 == "dropped_samples" { print $2 }')
    echo "| $label | $((wall / 60)) min $((wall % 60)) s | $base MB | ${at1:--} MB | $last MB | $heap MB | $samples | $dropped |"
done
