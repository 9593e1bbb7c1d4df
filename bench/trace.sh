#!/usr/bin/env bash
# The cost of tracing mode (record --trace), in three measures:
#   1. the hooks alone, without the runtime (build/trace_hooks): ns per
#      Enter+Leave pair of hooks that only return, of the counting hooks and
#      of the timing hooks, and of one read of the time-stamp counter;
#   2. ns per traced call: an empty non-inlined method called N times in a
#      loop (tests/apps/Trace `loop`, the program's own timer), without the
#      agent and with it at several settings; by wall time, and by the loop
#      thread's CPU time (the median of nine parts of the loop, each timed
#      by the thread's CPU clock: what other work on a loaded machine
#      hardly moves);
#   3. a realistic call-heavy program: System.Text.Json round trips of a
#      small object graph for JSON_SECONDS (tests/apps/Trace `json`): the
#      program's time per round trip over the last third of the run (when
#      compilation has settled: tracing turns ReadyToRun code off, so
#      everything is compiled, first at tier 0), and the round trips done
#      in the whole run, start-up included, with the default scope (the
#      program's own code), with every method traced (--include .) and
#      with --include on the program's namespace; and, to tell the two
#      costs apart, without the agent but with ReadyToRun off;
#   4. start-up: the whole process's wall time for a program that does
#      almost nothing (Trace loop 1000), where tracing pays for compiling
#      what ReadyToRun code would have provided, and for naming each method
#      it compiles (the FunctionIDMapper2 decides with the method's name).
# Configurations interleaved run by run; medians of RUNS runs.
#
#   bench/trace.sh [RUNS] [PART]   (default 5 runs; PART: hooks, loop, start or
#                                   json runs that part alone, all by default)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
RUNS=${1:-5}
PART=${2:-all}
want() { [ "$PART" = all ] || [ "$PART" = "$1" ]; }
source "$ROOT/bench/lib.sh"
CORSCOPE=${CORSCOPE:-$ROOT/build/corscope} # another build's CLI (its agent beside it) for an A/B
HOOKS=$ROOT/build/trace_hooks
TRACE="dotnet $ROOT/build/apps/Trace/Trace.dll"
[ -x "$HOOKS" ] || { echo "corscope: build/trace_hooks is missing: run make build/trace_hooks" >&2; exit 1; }
T=$(mktemp -d "${TMPDIR:-/tmp}/corscope-bench.XXXXXX")
trap 'rm -rf "$T"' EXIT
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1
LOOP_CALLS=${LOOP_CALLS:-50000000}
JSON_SECONDS=${JSON_SECONDS:-6}

# label | corscope record options ("-" = no agent)
LOOP_CONFIGS=(
    "no agent|-"
    "sampling only (cpu, 10 ms)|-e cpu"
    "--trace=counts|--trace=counts"
    "--trace (calls and times)|--trace"
    "--trace=flat (calls per method, counted in its code)|--trace=flat"
    "--trace, the method left out (--exclude)|--trace --include ^TraceApp\\. --exclude Loop\\.Empty\$"
)
START_CONFIGS=(
    "no agent|-"
    "no agent, ReadyToRun off (DOTNET_ReadyToRun=0)|r2r-off"
    "sampling only (cpu, 10 ms)|-e cpu"
    "--trace --include of nothing (hooks nowhere)|--trace --include ^NoSuchNamespace\\."
    "--trace (the program's own code)|--trace"
    "--trace --include . (every method)|--trace --include ."
    "--trace=flat --include . (every method)|--trace=flat --include ."
)
JSON_CONFIGS=(
    "no agent|-"
    "no agent, ReadyToRun off (DOTNET_ReadyToRun=0)|r2r-off"
    "sampling only (cpu, 10 ms)|-e cpu"
    "--trace (default: the program's own code)|--trace"
    "--trace=counts (default: the program's own code)|--trace=counts"
    "--trace --include . (every method)|--trace --include ."
    "--trace=counts --include . (every method)|--trace=counts --include ."
    "--trace=flat (default: the program's own code)|--trace=flat"
    "--trace=flat --include . (every method)|--trace=flat --include ."
    "--trace --include '^TraceApp\\.Shop\\.' (the program's namespace)|--trace --include ^TraceApp\\.Shop\\."
    "--trace --include of nothing (hooks nowhere)|--trace --include ^NoSuchNamespace\\."
)

# run OPTS MODE ARG -> the program's line on stdout
run() {
    local opts=$1
    shift
    if [ "$opts" = "-" ]; then
        $TRACE "$@"
    elif [ "$opts" = r2r-off ]; then
        DOTNET_ReadyToRun=0 $TRACE "$@"
    else
        # shellcheck disable=SC2086
        "$CORSCOPE" record -q --force $opts -o "$T/t.corscope" -- $TRACE "$@"
    fi
}

: > "$T/hooks"
for c in "${!LOOP_CONFIGS[@]}"; do : > "$T/loop.$c"; : > "$T/loopcpu.$c"; done
for c in "${!JSON_CONFIGS[@]}"; do : > "$T/json.$c"; : > "$T/jsonwall.$c"; done
for c in "${!START_CONFIGS[@]}"; do : > "$T/start.$c"; done
for _ in $(seq "$RUNS"); do
    want hooks && "$HOOKS" 100000000 >> "$T/hooks"
    want loop && for c in "${!LOOP_CONFIGS[@]}"; do
        opts=${LOOP_CONFIGS[$c]#*|}
        run "$opts" loop "$LOOP_CALLS" > "$T/out"
        sed -n 's/^loop: .*, \([0-9.]*\) ns per call.*/\1/p' "$T/out" >> "$T/loop.$c"
        sed -n 's/^loop: .*thread CPU \([0-9.]*\) ns per call.*/\1/p' "$T/out" >> "$T/loopcpu.$c"
    done
    want start && for c in "${!START_CONFIGS[@]}"; do
        opts=${START_CONFIGS[$c]#*|}
        t0=$(date +%s.%N)
        run "$opts" loop 1000 > /dev/null
        awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.3f\n", b - a }' >> "$T/start.$c"
    done
    want json && for c in "${!JSON_CONFIGS[@]}"; do
        opts=${JSON_CONFIGS[$c]#*|}
        run "$opts" json "$JSON_SECONDS" > "$T/out"
        sed -n 's/^json: .* last third \([0-9.]*\) us each.*/\1/p' "$T/out" >> "$T/json.$c"
        sed -n 's/^json: \([0-9]*\) round trips.*/\1/p' "$T/out" >> "$T/jsonwall.$c"
    done
    : # (a part left out above is not a failure)
done

echo "machine: $(machine)"
echo "runs: $RUNS per cell, interleaved; medians"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg) at the end"
if want hooks; then
echo
echo "The hooks alone (build/trace_hooks, 100 million Enter+Leave pairs from one caller):"
echo
echo "| hooks | ns per call (Enter + Leave) |"
echo "|---|---:|"
for k in null counts timed rdtsc; do
    v=$(awk -v k=$k '$1 == k { print $2 }' "$T/hooks" | median 2)
    case $k in
    null) label="hooks that only return (the floor: two calls)" ;;
    counts) label="counting hooks (--trace=counts)" ;;
    timed) label="timing hooks (--trace)" ;;
    rdtsc) label="one read of the time-stamp counter (rdtsc), for scale" ;;
    esac
    echo "| $label | $v |"
done
fi
if want loop; then
echo
echo "An empty non-inlined method called $LOOP_CALLS times (Trace loop; the program's own timer):"
echo
echo "| configuration | ns per call (wall) | added per traced call | ns per call (thread CPU) | added per traced call |"
echo "|---|---:|---:|---:|---:|"
base=$(median 2 < "$T/loop.0")
basecpu=$(median 2 < "$T/loopcpu.0")
for c in "${!LOOP_CONFIGS[@]}"; do
    v=$(median 2 < "$T/loop.$c")
    vc=$(median 2 < "$T/loopcpu.$c")
    echo "| ${LOOP_CONFIGS[$c]%%|*} | $v | $(awk -v v="$v" -v b="$base" 'BEGIN { printf "%+.2f", v - b }') | $vc | $(awk -v v="$vc" -v b="$basecpu" 'BEGIN { printf "%+.2f", v - b }') |"
done
fi
if want json; then
echo
echo "System.Text.Json round trips for $JSON_SECONDS s (Trace json): time per round trip in the last third"
echo "(compilation settled), and round trips in the whole run (start-up and compilation included):"
echo
echo "| configuration | us per round trip, last third | slowdown | round trips in $JSON_SECONDS s |"
echo "|---|---:|---:|---:|"
base=$(median 2 < "$T/json.0")
for c in "${!JSON_CONFIGS[@]}"; do
    v=$(median 2 < "$T/json.$c")
    w=$(median 0 < "$T/jsonwall.$c")
    echo "| ${JSON_CONFIGS[$c]%%|*} | $v | $(awk -v v="$v" -v b="$base" 'BEGIN { printf "%.2fx", v / b }') | $w |"
done
fi
if want start; then
echo
echo "Start-up: wall time of a whole process that does almost nothing (Trace loop 1000):"
echo
echo "| configuration | s |"
echo "|---|---:|"
for c in "${!START_CONFIGS[@]}"; do
    echo "| ${START_CONFIGS[$c]%%|*} | $(median 3 < "$T/start.$c") |"
done
fi
