#!/usr/bin/env bash
# What wall-clock sampling costs per thread: tests/apps/Bench with one busy
# thread and 0, 100 or 500 idle (blocked) threads, without corscope and with
# `-e wall` at 10 ms under each sampler, runs interleaved, medians of RUNS.
# Also prints the sampler thread's own CPU (the sampler_cpu_ns counter of the
# recording) per second of recording and per thread.
#
#   bench/wall.sh [RUNS]          (default 3)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
RUNS=${1:-3}
source "$ROOT/bench/lib.sh"
CORSCOPE=$ROOT/build/corscope
BENCH="dotnet $ROOT/build/apps/Bench/Bench.dll"
T=$(mktemp -d "${TMPDIR:-/tmp}/corscope-bench.XXXXXX")
trap 'rm -rf "$T"' EXIT
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1

CONFIGS=("no profiler|-" "signal sampler, wall, 10 ms|--sampler signal" "suspend sampler, wall, 10 ms|--sampler suspend")
IDLE=(0 100 500)
UNITS=20000

now() { date +%s.%N; }

echo "machine: $(machine)"
echo "runs: $RUNS per cell, interleaved; wall time of the whole process, median; 1 busy thread, $UNITS units"
echo
echo "| idle threads | configuration | median wall time | overhead | sampler CPU per s | per thread per s |"
echo "|---|---|---|---|---|---|"
for idle in "${IDLE[@]}"; do
    for c in "${!CONFIGS[@]}"; do : > "$T/times.$c"; : > "$T/cpu.$c"; done
    for _ in $(seq "$RUNS"); do
        for c in "${!CONFIGS[@]}"; do
            opts=${CONFIGS[$c]##*|}
            t0=$(now)
            if [ "$opts" = "-" ]; then
                $BENCH 1 "$UNITS" "$idle" > /dev/null
            else
                # shellcheck disable=SC2086
                "$CORSCOPE" record -q --force -e wall -i 10ms $opts -o "$T/w.corscope" -- $BENCH 1 "$UNITS" "$idle" > /dev/null
                "$CORSCOPE" check "$T/w.corscope" | awk '
                    /^  duration/ { d = $2 }
                    /^  tables/ { n = $2 }
                    /^  counters/ { for (i = 2; i <= NF; i++) if ($i ~ /^sampler_cpu_ns=/) { split($i, a, "="); c = a[2] } }
                    END { printf "%.6f %d\n", (c / 1e9) / d, n }' >> "$T/cpu.$c"
            fi
            t1=$(now)
            awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f\n", b - a }' >> "$T/times.$c"
        done
    done
    base=$(median 3 < "$T/times.0")
    for c in "${!CONFIGS[@]}"; do
        m=$(median 3 < "$T/times.$c")
        if [ "$c" = 0 ]; then
            echo "| $idle | ${CONFIGS[$c]%%|*} | $m s | - | - | - |"
            continue
        fi
        over=$(awk -v m="$m" -v b="$base" 'BEGIN { printf "%+.1f%%", 100 * (m - b) / b }')
        cpu=$(awk '{ print $1 }' "$T/cpu.$c" | median 3)
        threads=$(awk '{ print $2 }' "$T/cpu.$c" | median 3)
        per=$(awk -v c="$cpu" -v n="$threads" 'BEGIN { printf "%.1f us (%d threads)", 1e6 * c / n, n }')
        echo "| $idle | ${CONFIGS[$c]%%|*} | $m s | $over | $(awk -v c="$cpu" 'BEGIN { printf "%.1f ms", 1000 * c }') | $per |"
    done
done
