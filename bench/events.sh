#!/usr/bin/env bash
# Cost of the runtime's events (-e exceptions, -e lock, -e jit), each on the
# workload it is for, beside the same workload without a profiler and with
# dotnet-trace collecting the same events (EventPipe to a file, with stacks):
#   - exceptions: tests/apps/Events throw-bench, one thread doing a little
#     work and one throw (caught five frames up) per iteration, about 100,000
#     throws a second of its CPU here;
#   - lock: tests/apps/Events lock-bench, four threads taking one lock with
#     20 us holds (a contention storm), with the default --lock-min (10 us)
#     and with every wait recorded (--lock-min 0);
#   - jit: tests/apps/WebStartup, an ASP.NET Core app's start-up (Kestrel, two
#     requests to itself, exit).
# The configurations alternate run by run; each cell is the median of RUNS.
# Measures: the program's own threads' CPU for its work (what the events
# cost the program's threads, immune to the machine's load), and the whole
# process's CPU (user + system, every thread: the agent's included) and
# wall time.
#
#   bench/events.sh [RUNS] [WHICH]   (default 7, all; WHICH: exceptions, lock
#                               or jit; dotnet-trace from PATH, $DOTNET_TRACE,
#                               or installed into build/tools when missing)
#   BASE=DIR bench/events.sh ... adds rows for the corscope (and agent) in DIR
#                               (another build's corscope and libcorscope.so),
#                               interleaved with the rest
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
RUNS=${1:-7}
WHICH=${2:-all}
BASE=${BASE:-}
source "$ROOT/bench/lib.sh"
CORSCOPE=$ROOT/build/corscope
EVENTS="dotnet $ROOT/build/apps/Events/Events.dll"
WEB="dotnet $ROOT/build/apps/WebStartup/WebStartup.dll"
[ -x /usr/bin/time ] || { echo "corscope: bench/events.sh needs /usr/bin/time" >&2; exit 1; }
T=$(mktemp -d "${TMPDIR:-/tmp}/corscope-bench.XXXXXX")
trap 'rm -rf "$T"' EXIT
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1

TRACE=${DOTNET_TRACE:-$(command -v dotnet-trace || true)}
if [ -z "$TRACE" ] && [ -x "$ROOT/build/tools/dotnet-trace" ]; then TRACE=$ROOT/build/tools/dotnet-trace; fi
[ "${DOTNET_TRACE:-}" = none ] && TRACE=   # DOTNET_TRACE=none: no dotnet-trace rows
if [ -z "$TRACE" ] && [ "${DOTNET_TRACE:-}" != none ]; then
    echo "bench/events.sh: installing dotnet-trace into build/tools" >&2
    dotnet tool install --tool-path "$ROOT/build/tools" dotnet-trace > /dev/null 2>&1 &&
        TRACE=$ROOT/build/tools/dotnet-trace || echo "bench/events.sh: no dotnet-trace; its column is left out" >&2
fi

# run_once WHAT OPTS CMD... -> "work_cpu_ms whole_cpu_s wall_s"
#   OPTS: "-" no profiler, "trace:PROVIDERS" dotnet-trace, else corscope's
run_once() {
    local opts=$1; shift
    local -a time=(/usr/bin/time -f "%e %U %S" -o "$T/time")
    case $opts in
        -) "${time[@]}" "$@" > "$T/out" ;;
        base:*) # shellcheck disable=SC2086
           "${time[@]}" "$BASE/corscope" record -q --force ${opts#base:} -o "$T/b.corscope" -- "$@" > "$T/out" ;;
        trace:*) "${time[@]}" "$TRACE" collect --show-child-io --providers "${opts#trace:}" -o "$T/t.nettrace" -- "$@" \
                     > "$T/out" 2> /dev/null ;;
        *) # shellcheck disable=SC2086
           "${time[@]}" "$CORSCOPE" record -q --force $opts -o "$T/b.corscope" -- "$@" > "$T/out" ;;
    esac
    local work
    work=$(awk '{ for (i = 1; i < NF; i++) if ($i == "cpu_ms") print $(i + 1) }' "$T/out" | head -1)
    awk -v w="${work:--}" 'END { printf "%s %.3f %.3f\n", w, $2 + $3, $1 }' "$T/time"
}

# bench NAME "CMD" "LABEL|OPTS"...: a markdown table of medians
bench() {
    local name=$1 cmd=$2; shift 2
    local -a configs=("$@")
    rm -f "$T"/r.*
    for ((r = 0; r < RUNS; r++)); do
        for i in "${!configs[@]}"; do
            local opts=${configs[$i]#*|}
            [[ $opts == trace:* ]] && [ -z "$TRACE" ] && continue
            [[ $opts == base:* ]] && [ -z "$BASE" ] && continue
            # shellcheck disable=SC2086
            run_once "$opts" $cmd >> "$T/r.$i"
        done
    done
    echo
    echo "**$name** (median of $RUNS runs)"
    echo
    echo "| configuration | program threads' CPU | vs none | whole process CPU | vs none | wall | vs none |"
    echo "|---|---|---|---|---|---|---|"
    local base_work base_cpu base_wall
    for i in "${!configs[@]}"; do
        [ -s "$T/r.$i" ] || continue
        local work cpu wall
        work=$(awk '{ print $1 }' "$T/r.$i" | median 1)
        cpu=$(awk '{ print $2 }' "$T/r.$i" | median 3)
        wall=$(awk '{ print $3 }' "$T/r.$i" | median 3)
        if [ "$i" -eq 0 ]; then base_work=$work base_cpu=$cpu base_wall=$wall; fi
        ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "-" || b == "-" || b == 0) print "-"; else printf "%+.1f%%", 100 * (a / b - 1) }'; }
        printf '| %s | %s | %s | %s s | %s | %s s | %s |\n' "${configs[$i]%%|*}" \
            "$([ "$work" = - ] && echo - || echo "$work ms")" "$(ratio "$work" "$base_work")" \
            "$cpu" "$(ratio "$cpu" "$base_cpu")" "$wall" "$(ratio "$wall" "$base_wall")"
    done
}

echo "Machine: $(machine), load average $(cut -d' ' -f1-3 /proc/loadavg) at the start."
want() { [ "$WHICH" = all ] || [ "$WHICH" = "$1" ]; }
want exceptions &&
bench "Exceptions: 100,000 throw-bench iterations (a throw each)" "$EVENTS throw-bench 100000" \
    "no profiler|-" \
    "corscope -e cpu (the default: on .NET 10 no exception callbacks, unhandled_probe.h)|-e cpu" \
    "corscope -e cpu, $BASE|base:-e cpu" \
    "corscope -e exceptions|-e exceptions" \
    "corscope -e exceptions, $BASE|base:-e exceptions" \
    "corscope -e cpu,exceptions|-e cpu,exceptions" \
    "dotnet-trace, Exception keyword (0x8000), level 4|trace:Microsoft-Windows-DotNETRuntime:0x8000:4"
want lock &&
bench "Lock contention: 4 threads x 5,000 lock-bench sections (20 us holds)" "$EVENTS lock-bench 5000" \
    "no profiler|-" \
    "corscope -e lock (--lock-min 10us)|-e lock" \
    "corscope -e lock --lock-min 0|-e lock --lock-min 0" \
    "dotnet-trace, Contention keyword (0x4000), level 4|trace:Microsoft-Windows-DotNETRuntime:0x4000:4"
want jit &&
bench "JIT: an ASP.NET Core app's start-up (WebStartup)" "$WEB" \
    "no profiler|-" \
    "corscope -e jit|-e jit" \
    "corscope -e cpu|-e cpu" \
    "dotnet-trace, JIT + Loader keywords (0x18), level 5|trace:Microsoft-Windows-DotNETRuntime:0x18:5"
echo
echo "load average $(cut -d' ' -f1-3 /proc/loadavg) at the end."
