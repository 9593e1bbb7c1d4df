#!/usr/bin/env bash
# Overhead of the profiler on a CPU-bound program: wall time of
# tests/apps/Bench (a fixed amount of work) without corscope and with it at
# several settings, the configurations interleaved run by run so that drift
# of the machine hits all alike, and the median of RUNS runs of each.
#
#   bench/overhead.sh [RUNS]          (default 5)
#
# Prints a markdown table (for docs/performance.md) and the machine it ran on.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
RUNS=${1:-5}
CORSCOPE=$ROOT/build/corscope
BENCH="dotnet $ROOT/build/apps/Bench/Bench.dll"
T=$(mktemp -d "${TMPDIR:-/tmp}/corscope-bench.XXXXXX")
trap 'rm -rf "$T"' EXIT
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1

# configurations: label | corscope record options ("-" = no profiler,
# "eventpipe" = the runtime's own sample profiler, enabled by environment)
CONFIGS=(
    "no profiler|-"
    "signal sampler, cpu, 10 ms|-e cpu -i 10ms"
    "signal sampler, cpu, 1 ms|-e cpu -i 1ms"
    "suspend sampler, cpu, 10 ms|-e cpu -i 10ms --sampler suspend"
    "EventPipe SampleProfiler (1 ms, built in)|eventpipe"
)
# workloads: busy threads | units of work | idle threads
WORKLOADS=("1|20000|0" "1|60000|0" "$(nproc)|40000|0" "$(nproc)|120000|0" "1|20000|500")

now() { date +%s.%N; }

# run_once OPTS THREADS UNITS IDLE -> wall seconds of the whole process
run_once() {
    local opts=$1 threads=$2 units=$3 idle=$4 t0 t1
    t0=$(now)
    if [ "$opts" = "-" ]; then
        $BENCH "$threads" "$units" "$idle" > /dev/null
    elif [ "$opts" = eventpipe ]; then
        DOTNET_EnableEventPipe=1 DOTNET_EventPipeOutputPath="$T/ep.nettrace" \
            DOTNET_EventPipeConfig=Microsoft-DotNETCore-SampleProfiler:0:5,Microsoft-Windows-DotNETRuntime:4c14fccbd:5 \
            $BENCH "$threads" "$units" "$idle" > /dev/null
    else
        # shellcheck disable=SC2086
        "$CORSCOPE" record -q --force $opts -o "$T/b.corscope" -- $BENCH "$threads" "$units" "$idle" > /dev/null
    fi
    t1=$(now)
    awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f\n", b - a }'
}

median() { sort -n | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

echo "machine: $(nproc) cores, $(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo), $(uname -r), .NET $(dotnet --list-runtimes | awk '/NETCore/ { v = $2 } END { print v }')"
echo "runs: $RUNS per cell, interleaved; wall time of the whole process, median"
echo
for w in "${WORKLOADS[@]}"; do
    IFS='|' read -r threads units idle <<< "$w"
    for c in "${!CONFIGS[@]}"; do : > "$T/times.$c"; done
    $BENCH "$threads" 200 > /dev/null # warm the disk cache
    for _ in $(seq "$RUNS"); do
        for c in "${!CONFIGS[@]}"; do
            run_once "${CONFIGS[$c]##*|}" "$threads" "$units" "$idle" >> "$T/times.$c"
        done
    done
    base=$(median < "$T/times.0")
    echo "**$threads busy thread(s), $idle idle threads**, $units units of work"
    echo
    echo "| configuration | median wall time | overhead |"
    echo "|---|---|---|"
    for c in "${!CONFIGS[@]}"; do
        m=$(median < "$T/times.$c")
        over=$(awk -v m="$m" -v b="$base" 'BEGIN { printf "%+.1f%%", 100 * (m - b) / b }')
        echo "| ${CONFIGS[$c]%%|*} | ${m} s | $([ "$c" = 0 ] && echo - || echo "$over") |"
    done
    echo
done
