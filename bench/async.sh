#!/usr/bin/env bash
# What logical async stacks cost: tests/apps/AsyncBench without corscope,
# with it without and with --async, and with the alternative --async did
# not take, the runtime's task events (TplEventSource through EventPipe, to
# a file, as PerfView and dotnet-trace take them): its causality keywords,
# and the two lightest.  The configurations are interleaved run by run;
# medians (and minima) of RUNS runs.
#
#   bench/async.sh [RUNS]        (default 7)
#   BASE=DIR bench/async.sh ...  adds a row for the corscope (and agent) in
#                                DIR (another build's), --async, interleaved
#   RUNTIME=V bench/async.sh ... runs the program on .NET V (build/dotnet-V,
#                                from tests/apps/runtimes.sh --all V)
#
# With --async, what the rewrite cost the agent's thread once per process
# (the recording's async_rewrite_ns) is given too.
#
# Two workloads:
#   - the thread pool: two loops resuming async methods from the thread
#     pool, WORK_US microseconds of work each (about 100,000 resumptions a
#     second on two cores): resumptions per second over the program's
#     3-second window (its own clock), and the whole process's CPU time per
#     resumption (user + system, every thread: the agent's and the
#     runtime's included, start-up and exit too);
#   - the pump: one thread resuming async methods with no thread pool (an
#     awaiter the main thread runs), so that nothing but the resumption
#     itself is measured: the thread's CPU time per resumption, in ns.  On a
#     busy machine this is the steadier of the two.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
RUNS=${1:-7}
WORK_US=${WORK_US:-5}
PUMP=${PUMP:-3000000}
source "$ROOT/bench/lib.sh"
CORSCOPE=$ROOT/build/corscope
BASE=${BASE:-}
RUNTIME=${RUNTIME:-}
APP="dotnet $ROOT/build/apps/AsyncBench/AsyncBench.dll"
if [ -n "$RUNTIME" ]; then
    APP=$ROOT/build/rt$RUNTIME/apps/AsyncBench/AsyncBench
    [ -x "$APP" ] || { echo "corscope: no $APP (tests/apps/runtimes.sh --all $RUNTIME builds it)" >&2; exit 1; }
    export DOTNET_ROOT=$ROOT/build/dotnet-$RUNTIME
fi
[ -x /usr/bin/time ] || { echo "corscope: bench/async.sh needs /usr/bin/time (scripts/install-deps.sh installs it)" >&2; exit 1; }
T=$(mktemp -d "${TMPDIR:-/tmp}/corscope-bench.XXXXXX")
trap 'rm -rf "$T"' EXIT
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1

# TplEventSource keywords: TaskTransfer 0x1, Tasks 0x2, AsyncCausalityOperation
# 0x8, AsyncCausalityRelation 0x10, AsyncCausalitySynchronousWork 0x20,
# TasksFlowActivityIds 0x80, AsyncMethod 0x100
CONFIGS=(
    "no profiler|-"
    "corscope, cpu 10 ms, --async=off|-e cpu --async=off"
    "corscope, cpu 10 ms, --async|-e cpu --async"
    "corscope, cpu 1 ms, --async|-e cpu -i 1ms --async"
    "base build (\$BASE), cpu 10 ms, --async|base:-e cpu --async"
    "TPL events, causality (0x1BB)|tpl:0x1BB"
    "TPL events, TaskTransfer+Tasks (0x3)|tpl:0x3"
)

# run_once OPTS ARGS... -> the program's output line, and $T/time
run_once() {
    local opts=$1
    shift
    local -a cmd=(/usr/bin/time -f "%U %S" -o "$T/time")
    if [ "$opts" = "-" ]; then
        "${cmd[@]}" $APP "$@" > "$T/out"
    elif [[ "$opts" == tpl:* ]]; then
        DOTNET_EnableEventPipe=1 DOTNET_EventPipeOutputPath="$T/tpl.nettrace" \
            DOTNET_EventPipeConfig="System.Threading.Tasks.TplEventSource:${opts#tpl:}:5" \
            "${cmd[@]}" $APP "$@" > "$T/out"
    else
        local cli=$CORSCOPE
        [[ "$opts" == base:* ]] && cli=$BASE/corscope opts=${opts#base:}
        # shellcheck disable=SC2086
        "${cmd[@]}" "$cli" record -q --force $opts -o "$T/b.corscope" -- $APP "$@" > "$T/out"
        if [[ "$opts" == *--async* && "$opts" != *--async=off* ]]; then
            "$CORSCOPE" check "$T/b.corscope" | grep -o ' async_rewrite_ns=[0-9]*' | cut -d= -f2 >> "$T/rewrite.$cell"
        fi
    fi
    grep -q '^asyncbench' "$T/out" || { echo "corscope: AsyncBench printed nothing: $(cat "$T/out")" >&2; exit 1; }
}

# pool: "resumes_per_s cpu_us_per_resume"; pump: "ns_per_resume"
pool_once() {
    run_once "$1" 3 2 "$WORK_US"
    read -r rate iters < <(awk '/^asyncbench/ { print $3, $5 }' "$T/out")
    awk -v r="$rate" -v it="$iters" '{ printf "%.0f %.3f\n", r, 1e6 * ($1 + $2) / (3 * it) }' "$T/time"
}
pump_once() {
    # the task events cost a hundred times more per resumption: fewer of
    # them (the measure is per resumption)
    local n=$PUMP
    [[ "$1" == tpl:* ]] && n=$((PUMP / 200))
    run_once "$1" pump "$n"
    awk '/^asyncbench/ { print $3 }' "$T/out"
}

col() { awk -v c="$1" '{ print $c }' "$2" | median 3; }
low() { awk -v c="$1" '{ print $c }' "$2" | sort -n | head -1; }
pct() { awk -v m="$1" -v b="$2" 'BEGIN { printf "%+.1f%%", 100 * (m - b) / b }'; }

dotnet_version() {
    if [ -n "$RUNTIME" ]; then ls "$DOTNET_ROOT/shared/Microsoft.NETCore.App"; else
        dotnet --list-runtimes | awk '/NETCore/ { v = $2 } END { print v }'; fi
}
echo "machine: $(machine), .NET $(dotnet_version)${BASE:+; base: $BASE}"
echo "load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "runs: $RUNS per cell, interleaved; medians"
echo
for c in "${!CONFIGS[@]}"; do : > "$T/pool.$c"; : > "$T/pump.$c"; done
for c in "${!CONFIGS[@]}"; do : > "$T/rewrite.$c"; done
for _ in $(seq "$RUNS"); do
    for c in "${!CONFIGS[@]}"; do
        [[ "${CONFIGS[$c]##*|}" == base:* ]] && [ -z "$BASE" ] && continue
        cell=$c
        pool_once "${CONFIGS[$c]##*|}" >> "$T/pool.$c"
        pump_once "${CONFIGS[$c]##*|}" >> "$T/pump.$c"
    done
done

base_rate=$(col 1 "$T/pool.0") base_cpu=$(col 2 "$T/pool.0")
echo "**The thread pool**: $WORK_US us of work per resumption, 2 loops (no profiler: $base_rate resumptions/s)"
echo
echo "| configuration | resumptions/s | vs none | CPU us per resumption | vs none |"
echo "|---|---:|---:|---:|---:|"
for c in "${!CONFIGS[@]}"; do
    [ -s "$T/pool.$c" ] || continue
    rate=$(col 1 "$T/pool.$c") cpu=$(col 2 "$T/pool.$c")
    echo "| ${CONFIGS[$c]%%|*} | $rate | $(pct "$rate" "$base_rate") | $cpu | $(pct "$cpu" "$base_cpu") |"
done
echo
base=$(col 1 "$T/pump.0") base_low=$(low 1 "$T/pump.0")
echo "**The pump**: one thread, $((4 * PUMP)) resumptions ($((4 * PUMP / 200)) with task events), no thread pool (no profiler: $base ns each)"
echo
echo "| configuration | ns per resumption (median) | vs none | lowest | vs none |"
echo "|---|---:|---:|---:|---:|"
for c in "${!CONFIGS[@]}"; do
    [ -s "$T/pump.$c" ] || continue
    v=$(col 1 "$T/pump.$c") l=$(low 1 "$T/pump.$c")
    echo "| ${CONFIGS[$c]%%|*} | $v | $(pct "$v" "$base") | $l | $(pct "$l" "$base_low") |"
done
echo
echo "**The rewrite**: the agent thread's CPU for it, once per process (async_rewrite_ns), over both workloads' runs"
echo
echo "| configuration | median | lowest | highest |"
echo "|---|---:|---:|---:|"
for c in "${!CONFIGS[@]}"; do
    [ -s "$T/rewrite.$c" ] || continue
    awk '{ printf "%.2f\n", $1 / 1e6 }' "$T/rewrite.$c" > "$T/rw"
    echo "| ${CONFIGS[$c]%%|*} | $(median 2 < "$T/rw") ms | $(sort -n "$T/rw" | head -1) ms | $(sort -n "$T/rw" | tail -1) ms |"
done
echo
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
