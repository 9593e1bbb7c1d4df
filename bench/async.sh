#!/usr/bin/env bash
# What logical async stacks cost: tests/apps/AsyncBench (async methods
# resumed from the thread pool, three per iteration, a few microseconds of
# work each) without corscope, with it without and with --async, and with
# the alternative --async did not take, the runtime's task events
# (TplEventSource's causality keywords through EventPipe, as PerfView and
# Visual Studio follow async work).  The configurations are interleaved run
# by run; medians of RUNS runs.
#
#   bench/async.sh [RUNS]        (default 7)
#
# Two workloads: WORK_US microseconds of work per resumption (about 100,000
# resumptions per second on two cores) and none at all (the most
# resumptions the machine makes: the per-resumption cost laid bare).  Two
# measures per run: resumptions per second over the program's 3-second
# window (its own clock), and the whole process's CPU time per resumption
# (user + system, every thread: the agent's and the runtime's included).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
RUNS=${1:-7}
WORK_US=${WORK_US:-5}
source "$ROOT/bench/lib.sh"
CORSCOPE=$ROOT/build/corscope
APP="dotnet $ROOT/build/apps/AsyncBench/AsyncBench.dll"
[ -x /usr/bin/time ] || { echo "corscope: bench/async.sh needs /usr/bin/time (scripts/install-deps.sh installs it)" >&2; exit 1; }
T=$(mktemp -d "${TMPDIR:-/tmp}/corscope-bench.XXXXXX")
trap 'rm -rf "$T"' EXIT
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1

# TplEventSource keywords: TaskTransfer 0x1, Tasks 0x2, AsyncCausalityOperation
# 0x8, AsyncCausalityRelation 0x10, AsyncCausalitySynchronousWork 0x20,
# TasksFlowActivityIds 0x80, AsyncMethod 0x100
TPL=System.Threading.Tasks.TplEventSource:0x1BB:5
CONFIGS=(
    "no profiler|-"
    "corscope, cpu 10 ms|-e cpu"
    "corscope, cpu 10 ms, --async|-e cpu --async"
    "corscope, cpu 1 ms, --async|-e cpu -i 1ms --async"
    "TPL task events (EventPipe, to a file)|tpl"
)
WORKLOADS=("$WORK_US" 0)

# run_once OPTS WORK -> "resumes_per_s cpu_us_per_resume"
run_once() {
    local opts=$1 work=$2
    local -a cmd=(/usr/bin/time -f "%U %S" -o "$T/time")
    if [ "$opts" = "-" ]; then
        "${cmd[@]}" $APP 3 2 "$work" > "$T/out"
    elif [ "$opts" = tpl ]; then
        DOTNET_EnableEventPipe=1 DOTNET_EventPipeOutputPath="$T/tpl.nettrace" \
            DOTNET_EventPipeConfig="$TPL" "${cmd[@]}" $APP 3 2 "$work" > "$T/out"
    else
        # shellcheck disable=SC2086
        "${cmd[@]}" "$CORSCOPE" record -q --force $opts -o "$T/b.corscope" -- $APP 3 2 "$work" > "$T/out"
    fi
    awk '/^asyncbench/ { print $3, $5 }' "$T/out" > "$T/rate"
    [ -s "$T/rate" ] || { echo "corscope: AsyncBench printed nothing: $(cat "$T/out")" >&2; exit 1; }
    # CPU per resumption: the process's CPU over every resumption it made
    # (warm-up and exit included, so the number is an upper bound)
    read -r rate iters < "$T/rate"
    awk -v r="$rate" -v it="$iters" '{ printf "%.0f %.3f\n", r, 1e6 * ($1 + $2) / (3 * it) }' "$T/time"
}

col() { awk -v c="$1" '{ print $c }' "$2" | median 3; }
pct() { awk -v m="$1" -v b="$2" 'BEGIN { printf "%+.1f%%", 100 * (m - b) / b }'; }

echo "machine: $(machine), .NET $(dotnet --list-runtimes | awk '/NETCore/ { v = $2 } END { print v }')"
echo "load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "runs: $RUNS per cell, interleaved; medians"
echo
for work in "${WORKLOADS[@]}"; do
    for c in "${!CONFIGS[@]}"; do : > "$T/r.$c"; done
    for _ in $(seq "$RUNS"); do
        for c in "${!CONFIGS[@]}"; do
            run_once "${CONFIGS[$c]##*|}" "$work" >> "$T/r.$c"
        done
    done
    base_rate=$(col 1 "$T/r.0") base_cpu=$(col 2 "$T/r.0")
    echo "**$work us of work per resumption**, 2 loops (no profiler: $base_rate resumptions/s)"
    echo
    echo "| configuration | resumptions/s | vs none | CPU us per resumption | vs none |"
    echo "|---|---:|---:|---:|---:|"
    for c in "${!CONFIGS[@]}"; do
        rate=$(col 1 "$T/r.$c") cpu=$(col 2 "$T/r.$c")
        echo "| ${CONFIGS[$c]%%|*} | $rate | $(pct "$rate" "$base_rate") | $cpu | $(pct "$cpu" "$base_cpu") |"
    done
    echo
done
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
