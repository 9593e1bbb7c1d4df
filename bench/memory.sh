#!/usr/bin/env bash
# Cost of memory profiling on an allocation-heavy program: tests/apps/AllocBench
# (text split, counted and formatted, about 0.7 GB allocated per 100,000
# units, collections of every generation) without a profiler, under corscope
# with -e alloc, -e live and -e gc, and under `dotnet-trace collect
# --profile gc-verbose` (and gc-collect), the configurations interleaved run
# by run so that drift of the machine hits all alike; medians of RUNS runs.
#
#   bench/memory.sh [RUNS] [UNITS]      (defaults 7, 100000)
#
# Measures per run: work (the CPU time of the program's thread around its
# work: what the work cost the thread that does it, the allocation callbacks
# and the collections it triggers included, and what the load of a shared
# machine disturbs least), work wall (its Stopwatch), whole (wall time of
# the process), CPU (user + system of every thread, the agent's and
# dotnet-trace's included).  -e live is also given per followed object: its
# extra work over -e alloc, divided by the objects it followed.  Prints markdown for
# docs/performance.md.  dotnet-trace is installed into build/tools when
# missing (a dotnet tool, from the NuGet feed).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
RUNS=${1:-7}
UNITS=${2:-100000}
source "$ROOT/bench/lib.sh"
CORSCOPE=$ROOT/build/corscope
APP="dotnet $ROOT/build/apps/AllocBench/AllocBench.dll"
TRACE=$ROOT/build/tools/dotnet-trace
[ -x /usr/bin/time ] || { echo "corscope: bench/memory.sh needs /usr/bin/time" >&2; exit 1; }
if [ ! -x "$TRACE" ]; then
    dotnet tool install dotnet-trace --tool-path "$ROOT/build/tools" > /dev/null ||
        { echo "corscope: cannot install dotnet-trace into build/tools" >&2; exit 1; }
fi
T=$(mktemp -d "${TMPDIR:-/tmp}/corscope-bench.XXXXXX")
trap 'rm -rf "$T"' EXIT
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1

# label | how: "-" no profiler, "trace:PROFILE" dotnet-trace, else record options
CONFIGS=(
    "no profiler|-"
    "corscope -e alloc (100 KiB, the runtime's rate)|-e alloc"
    "corscope -e alloc --alloc-interval 1MiB|-e alloc --alloc-interval 1MiB"
    "corscope -e alloc --alloc-interval 1GiB (the runtime samples, corscope keeps none)|-e alloc --alloc-interval 1GiB"
    "corscope -e live|-e live"
    "corscope -e gc|-e gc"
    "corscope -e cpu,alloc,gc|-e cpu,alloc,gc"
    "dotnet-trace --profile gc-verbose|trace:gc-verbose"
    "dotnet-trace --profile gc-collect|trace:gc-collect"
)

# run_once HOW -> "work_s whole_s cpu_s followed dropped"
run_once() {
    local how=$1 followed=0 dropped=0 per_sample=0
    local -a cmd=(/usr/bin/time -f "%e %U %S" -o "$T/time")
    case $how in
    -) "${cmd[@]}" $APP "$UNITS" > "$T/out" ;;
    trace:*)
        "${cmd[@]}" "$TRACE" collect --show-child-io --profile "${how#trace:}" -o "$T/t.nettrace" -- $APP "$UNITS" > "$T/out" 2> /dev/null ;;
    *)
        # shellcheck disable=SC2086
        "${cmd[@]}" "$CORSCOPE" record -q --force $how -o "$T/b.corscope" -- $APP "$UNITS" > "$T/out"
        "$CORSCOPE" check "$T/b.corscope" > "$T/check"
        followed=$(grep -o "live_tracked=[0-9]*" "$T/check" | cut -d= -f2)
        dropped=$(grep -o "dropped_events=[0-9]*" "$T/check" | cut -d= -f2)
        per_sample=$(awk '{ for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] } }
            END { if (v["alloc_callbacks_timed"] > 0) printf "%.2f", v["alloc_callback_ns"] / v["alloc_callbacks_timed"] / 1000; else print 0 }' "$T/check")
        ;;
    esac
    local work wall
    work=$(awk '/allocbench ms/ { for (i = 1; i < NF; i++) if ($i == "cpu_ms") print $(i + 1) / 1000 }' "$T/out")
    wall=$(awk '/allocbench ms/ { for (i = 1; i < NF; i++) if ($i == "ms") print $(i + 1) / 1000 }' "$T/out")
    [ -n "$work" ] || { echo "corscope: AllocBench printed no time: $(cat "$T/out")" >&2; exit 1; }
    awk -v w="$work" -v f="${followed:-0}" -v d="${dropped:-0}" -v s="$wall" -v c="$per_sample" \
        'END { printf "%.4f %.3f %.3f %d %d %.4f %s\n", w, $1, $2 + $3, f, d, s, c }' "$T/time"
}

col() { awk -v c="$1" '{ print $c }' "$2" | median; }
pct() { awk -v m="$1" -v b="$2" 'BEGIN { printf "%+.1f%%", 100 * (m - b) / b }'; }

echo "machine: $(machine), .NET $(dotnet --list-runtimes | awk '/NETCore/ { v = $2 } END { print v }'), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "runs: $RUNS per cell, interleaved; medians; AllocBench $UNITS units"
$APP 2000 > /dev/null # warm the disk cache
for c in "${!CONFIGS[@]}"; do : > "$T/times.$c"; done
for _ in $(seq "$RUNS"); do
    for c in "${!CONFIGS[@]}"; do
        run_once "${CONFIGS[$c]##*|}" >> "$T/times.$c"
    done
done
head -1 "$T/out" | sed 's/^/program: /'
echo
bw=$(col 1 "$T/times.0") bp=$(col 2 "$T/times.0") bc=$(col 3 "$T/times.0") bs=$(col 6 "$T/times.0")
echo "| configuration | work, thread CPU (s) | work | work, wall (s) | work wall | whole (s) | whole | CPU (s) | CPU | µs in corscope's callback per sample | samples dropped |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
for c in "${!CONFIGS[@]}"; do
    w=$(col 1 "$T/times.$c") p=$(col 2 "$T/times.$c") u=$(col 3 "$T/times.$c") d=$(col 5 "$T/times.$c") s=$(col 6 "$T/times.$c") k=$(col 7 "$T/times.$c")
    echo "| ${CONFIGS[$c]%%|*} | $w | $(pct "$w" "$bw") | $s | $(pct "$s" "$bs") | $p | $(pct "$p" "$bp") | $u | $(pct "$u" "$bc") | $k | $d |"
done
aw=$(col 1 "$T/times.1") lw=$(col 1 "$T/times.4") lf=$(col 4 "$T/times.4")
echo
echo "-e live followed $lf objects per run (median): $(awk -v l="$lw" -v a="$aw" -v f="$lf" 'BEGIN {
    if (f > 0) printf "%.2f us of the work thread CPU per followed object over -e alloc", 1e6 * (l - a) / f; else print "none" }')"
