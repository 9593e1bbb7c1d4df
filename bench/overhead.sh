#!/usr/bin/env bash
# Overhead of the profiler on a CPU-bound program: tests/apps/Bench (a fixed
# amount of work) without corscope and with it at several settings, the
# configurations interleaved run by run so that drift of the machine hits all
# alike, and the median of RUNS runs of each.
#
#   bench/overhead.sh [RUNS]          (default 7)
#   PICK="0 1" WORK="1|17000|0" bench/overhead.sh RUNS
#                                     (only the configurations numbered in
#                                     PICK, from 0 in the list below; WORK:
#                                     the workloads, "threads|units|idle"
#                                     separated by spaces: 17,000 units is
#                                     about 1.5 s of one thread here)
#
# Three measures per run, because a profiler's cost has two parts that a
# single ratio mixes up, a rate (while the program runs) and a fixed cost
# (start-up and exit), and because wall time hides work done on other cores:
#   - work: the program's own timer around its work (Stopwatch), the rate;
#   - whole: wall time of the whole process, from `corscope record` to its
#     exit (runtime start-up, the agent's start-up, the final flush);
#   - CPU: user + system time of the whole process, every thread, the
#     agent's own thread included.
# Whole and CPU are the kernel's microseconds (build/rusage: /usr/bin/time
# gave hundredths, so that 1.007x was one step of its clock).  Besides the
# ratio of medians, the median of the run-by-run ratios to the unprofiled
# run of the same round (with quartiles): the machine's drift moves both
# runs of a round alike.
# Prints markdown tables (for docs/performance.md) and the machine.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
RUNS=${1:-7}
source "$ROOT/bench/lib.sh"
CORSCOPE=$ROOT/build/corscope
BENCH="dotnet $ROOT/build/apps/Bench/Bench.dll"
make -C "$ROOT" -s build/rusage > /dev/null
RUSAGE=$ROOT/build/rusage
T=$(mktemp -d "${TMPDIR:-/tmp}/corscope-bench.XXXXXX")
trap 'rm -rf "$T"' EXIT
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1

# configurations: label | corscope record options ("-" = no profiler,
# "eventpipe" = the runtime's own sample profiler, enabled by environment)
CONFIGS=(
    "no profiler|-"
    "signal sampler, cpu, 10 ms|-e cpu -i 10ms"
    "signal sampler, cpu, 1 ms|-e cpu -i 1ms"
    "signal sampler, cpu, 10 ms, posix clock|-e cpu -i 10ms --cpu-clock posix"
    "signal sampler, cpu, 1 ms, posix clock|-e cpu -i 1ms --cpu-clock posix"
    "suspend sampler, cpu, 10 ms|-e cpu -i 10ms --sampler suspend"
    "EventPipe SampleProfiler (1 ms, built in)|eventpipe"
)
# workloads: busy threads | units of work | idle threads
WORKLOADS=("1|60000|0" "$(nproc)|120000|0" "1|60000|500")
if [ -n "${WORK:-}" ]; then read -r -a WORKLOADS <<< "$WORK"; fi
if [ -n "${PICK:-}" ]; then
    picked=()
    for i in $PICK; do picked+=("${CONFIGS[$i]}"); done
    CONFIGS=("${picked[@]}")
fi

# run_once OPTS THREADS UNITS IDLE -> "work_s whole_s cpu_s"
run_once() {
    local opts=$1 threads=$2 units=$3 idle=$4
    local -a cmd=("$RUSAGE" "$T/time")
    if [ "$opts" = "-" ]; then
        "${cmd[@]}" $BENCH "$threads" "$units" "$idle" > "$T/out"
    elif [ "$opts" = eventpipe ]; then
        DOTNET_EnableEventPipe=1 DOTNET_EventPipeOutputPath="$T/ep.nettrace" \
            DOTNET_EventPipeConfig=Microsoft-DotNETCore-SampleProfiler:0:5,Microsoft-Windows-DotNETRuntime:4c14fccbd:5 \
            "${cmd[@]}" $BENCH "$threads" "$units" "$idle" > "$T/out"
    else
        # shellcheck disable=SC2086
        "${cmd[@]}" "$CORSCOPE" record -q --force $opts -o "$T/b.corscope" -- $BENCH "$threads" "$units" "$idle" > "$T/out"
    fi
    local work
    work=$(awk '/^bench threads/ { for (i = 1; i < NF; i++) if ($i == "ms") print $(i + 1) / 1000 }' "$T/out")
    [ -n "$work" ] || { echo "corscope: Bench printed no time: $(cat "$T/out")" >&2; exit 1; }
    awk -v w="$work" 'END { printf "%.4f %.4f %.4f\n", w, $1 / 1e6, ($2 + $3) / 1e6 }' "$T/time"
}

col() { awk -v c="$1" '{ print $c }' "$2" | median; }
# the median of the run-by-run ratios of column C of config N to config 0's
# (quartiles in brackets)
ratios() {
    paste "$T/times.$2" "$T/times.0" | awk -v c="$1" '{ print $c / $(c + 3) }' | sort -n |
        awk '{ v[NR] = $1 } END { q1 = v[int((NR + 3) / 4)]; q3 = v[int((3 * NR + 3) / 4)]
            m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
            printf "%.3fx (%.3f .. %.3f)\n", m, q1, q3 }'
}
pct() { awk -v m="$1" -v b="$2" 'BEGIN { printf "%+.1f%%", 100 * (m - b) / b }'; }

echo "machine: $(machine), .NET $(dotnet --list-runtimes | awk '/NETCore/ { v = $2 } END { print v }')"
echo "runs: $RUNS per cell, interleaved; medians; load average $(cut -d' ' -f1-3 /proc/loadavg) at the start"
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
    bw=$(col 1 "$T/times.0") bp=$(col 2 "$T/times.0") bc=$(col 3 "$T/times.0")
    spread=$(awk '{ print $1 }' "$T/times.0" | sort -n | awk 'NR == 1 { lo = $1 } { hi = $1 } END { printf "%.3f to %.3f s", lo, hi }')
    echo "**$threads busy thread(s), $idle idle threads**, $units units of work (no profiler, work: $spread over $RUNS runs)"
    echo
    echo "| configuration | work | overhead | whole process | x none | round by round | fixed cost | CPU (user+sys) | overhead |"
    echo "|---|---|---|---|---|---|---|---|---|"
    for c in "${!CONFIGS[@]}"; do
        mw=$(col 1 "$T/times.$c") mp=$(col 2 "$T/times.$c") mc=$(col 3 "$T/times.$c")
        if [ "$c" = 0 ]; then
            echo "| ${CONFIGS[$c]%%|*} | $mw s | - | $mp s | - | - | - | $mc s | - |"
            continue
        fi
        # what the whole process lost beyond what the work lost: start-up and exit
        fixed=$(awk -v mp="$mp" -v bp="$bp" -v mw="$mw" -v bw="$bw" 'BEGIN { printf "%+.0f ms", 1000 * ((mp - bp) - (mw - bw)) }')
        ratio=$(awk -v m="$mp" -v b="$bp" 'BEGIN { printf "%.3fx", m / b }')
        echo "| ${CONFIGS[$c]%%|*} | $mw s | $(pct "$mw" "$bw") | $mp s | $ratio | $(ratios 2 "$c") | $fixed | $mc s | $(pct "$mc" "$bc") |"
    done
    echo
done
echo "load average $(cut -d' ' -f1-3 /proc/loadavg) at the end"
