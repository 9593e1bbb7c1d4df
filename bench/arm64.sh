#!/usr/bin/env bash
# arm64 under emulation: the arm64 agent in self-contained arm64 test
# programs run by qemu-user (tests/arm64), on this x86-64 machine.  Timings
# under qemu are not native timings (the program and the agent's C code are
# translated, the kernel's work is not), so only ratios and counts are
# reported:
#   - whole walks: samples, failed and guessed walks per program (CPU at
#     -i 2ms, the POSIX clock: perf_event does not exist under qemu-user);
#   - accuracy: CpuShares's three shares against its own thread clocks;
#   - overhead: tests/apps/Bench's fixed work (its own Stopwatch), the
#     whole process's wall time and its CPU time (user + system, every
#     thread: less moved by other work on the machine than wall times),
#     without the agent and with it at 10 ms and 1 ms, interleaved run by
#     run, median of RUNS, as ratios.
#
#   bench/arm64.sh [RUNS]      (default 5)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
source "$ROOT/bench/lib.sh"
RUNS=${1:-5}
A64=$ROOT/build/aarch64
APPS=$A64/apps
CORSCOPE=$ROOT/build/corscope
T=$(mktemp -d "${TMPDIR:-/tmp}/corscope-bench.XXXXXX")
trap 'rm -rf "$T"' EXIT
ARM64_APPS="CpuShares MixedStack WallClock Memory Events Boundaries Bench" "$ROOT/tests/arm64/apps.sh" >&2

# run OUT EVENTS INTERVAL APP ARGS...: one program under qemu, OUT "-" for
# no agent; with TIMES set, its CPU time ("user system") goes there
run() {
    local out=$1 events=$2 interval=$3 app=$4
    shift 4
    local timed=()
    [ -z "${TIMES:-}" ] || timed=(/usr/bin/time -f "%U %S" -o "$TIMES")
    if [ "$out" = - ]; then
        "${timed[@]}" qemu-aarch64 -L /usr/aarch64-linux-gnu "$APPS/$app" "$@"
    else
        rm -f "$out"
        CORECLR_ENABLE_PROFILING=1 CORECLR_PROFILER='{14DE3B91-04FE-4EFB-B588-CD7BB380C74A}' \
            CORECLR_PROFILER_PATH="$A64/libcorscope.so" CORSCOPE_OUTPUT="$out" CORSCOPE_EVENT="$events" \
            CORSCOPE_INTERVAL="$interval" "${timed[@]}" qemu-aarch64 -L /usr/aarch64-linux-gnu "$APPS/$app" "$@"
    fi
}

counters() { # FILE -> "samples failed guessed"
    "$CORSCOPE" check "$1" | awk '/counters/ {
        for (i = 2; i <= NF; i++) { split($i, kv, "="); c[kv[1]] = kv[2] }
        printf "%d %d %d\n", c["samples"], c["failed_walks"], c["guessed_walks"] }'
}

echo "machine: $(machine) (arm64 emulated by $(qemu-aarch64 --version | head -1)); load before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| program (under qemu-user) | samples | failed walks | guessed walks |"
echo "|---|---|---|---|"
walks() { # NAME EVENTS APP ARGS...
    local name=$1 events=$2
    shift 2
    run "$T/w.corscope" "$events" 2ms "$@" > /dev/null 2>&1
    counters "$T/w.corscope" | awk -v n="$name" '{ printf "| %s | %d | %d (%.2f%%) | %d (%.2f%%) |\n", n, $1, $2, $1 ? 100 * $2 / $1 : 0, $3, $1 ? 100 * $3 / $1 : 0 }'
}
walks "CpuShares (cpu)" cpu CpuShares 3
walks "MixedStack (cpu)" cpu MixedStack 3
walks "MixedStack (wall)" wall MixedStack 3
walks "WallClock (wall)" wall WallClock 2
walks "Boundaries, 14 families (cpu)" cpu Boundaries all 300

echo
run "$T/s.corscope" cpu 2ms CpuShares 3 > "$T/truth.txt" 2> /dev/null
"$CORSCOPE" report -f top --limit 0 "$T/s.corscope" > "$T/top.txt" 2> /dev/null
echo "| CpuShares method | measured share | sampled share |"
echo "|---|---|---|"
awk 'FNR == NR { if ($1 == "truth") t[$2] = $3; next }
     $NF in t && $(NF - 1) !~ /^\[/ { s[$NF] = $2 + 0; sum += $2 + 0 }
     END { for (m in t) printf "| %s | %.2f%% | %.2f%% |\n", m, t[m], 100 * s[m] / sum }' \
    "$T/truth.txt" "$T/top.txt" | sort

echo
CONFIGS=("no agent|-|" "cpu, 10 ms (POSIX clock)|cpu|10ms" "cpu, 1 ms (POSIX clock)|cpu|1ms")
for ((r = 0; r < RUNS; r++)); do
    for c in "${CONFIGS[@]}"; do
        IFS='|' read -r label events interval <<< "$c"
        out=-
        [ "$events" = - ] || out=$T/o.corscope
        s=$(date +%s.%N)
        ms=$(TIMES=$T/cpu.txt run "$out" "$events" "$interval" Bench 1 200 | awk '$1 == "bench" { print $7 }')
        e=$(date +%s.%N)
        cpu=$(awk 'END { printf "%.3f", $1 + $2 }' "$T/cpu.txt")
        echo "$label|$ms|$(awk -v a="$s" -v b="$e" 'BEGIN { printf "%.3f", b - a }')|$cpu" >> "$T/times.txt"
    done
done
base_work=$(awk -F'|' '$1 == "no agent" { print $2 }' "$T/times.txt" | median)
base_whole=$(awk -F'|' '$1 == "no agent" { print $3 }' "$T/times.txt" | median)
base_cpu=$(awk -F'|' '$1 == "no agent" { print $4 }' "$T/times.txt" | median)
echo "Bench 1 200 under qemu-user, median of $RUNS interleaved runs, as ratios to no agent"
echo
echo "| configuration | work (the program's Stopwatch) | whole process (wall) | whole process (CPU) |"
echo "|---|---|---|---|"
for c in "${CONFIGS[@]}"; do
    IFS='|' read -r label _ _ <<< "$c"
    w=$(awk -F'|' -v l="$label" '$1 == l { print $2 }' "$T/times.txt" | median)
    h=$(awk -F'|' -v l="$label" '$1 == l { print $3 }' "$T/times.txt" | median)
    cpu=$(awk -F'|' -v l="$label" '$1 == l { print $4 }' "$T/times.txt" | median)
    awk -v l="$label" -v w="$w" -v h="$h" -v c="$cpu" -v bw="$base_work" -v bh="$base_whole" -v bc="$base_cpu" \
        'BEGIN { printf "| %s | %.3f | %.3f | %.3f |\n", l, w / bw, h / bh, c / bc }'
done
echo
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
