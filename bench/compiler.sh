#!/usr/bin/env bash
# What the agent costs one process of a `dotnet build`, part by part: the C#
# compiler (csc) compiling Lib1 of bench/build.sh's tree, alone, many times.
# A whole build's ratio (bench/build.sh) moves by 2 to 4% between runs of
# the same build; one compiler's CPU time is steady enough that 30 paired
# runs resolve a few milliseconds, and the configurations below take the
# agent apart:
#   plain       no profiler
#   default     the agent as `corscope record` starts every process of a
#               build (environment only: CORSCOPE_ASYNC=on, the CPU clock
#               the agent chooses, every 10 ms)
#   posix       the same with --cpu-clock posix
#   unsampled   the same with nothing sampled (CORSCOPE_EVENT=none): what
#               the agent costs without its sampler (its start, its code
#               map, the async rewrite, the runtime's callbacks)
#   no async    unsampled, and CORSCOPE_ASYNC=off: without the async
#               rewrite and the ReJIT it needs (which makes the runtime
#               track every inlining); the unhandled-exception probe rides
#               on that ReJIT, so the exception callbacks are on instead
#   base        BASE's agent (a revision), as default
# Per configuration: the process's wall and CPU time (build/rusage), the
# median of the run-by-run differences from the plain run before each, and
# the agent thread's CPU (sampler_cpu_ns) and samples from its recording.
# The kernel's perf hooks are kept on with a perf event of its own for the
# whole bench, as `corscope record` keeps them (src/cli/perf_warm.h), so no
# run pays for switching them on.
#
#   bench/compiler.sh [RUNS] [BASE]   (default 30, no base)
#   KEEP=1 bench/compiler.sh ...       keeps its temporary directory (the
#                                     response file, each run's numbers)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
RUNS=${1:-30}
BASE=${2:-}
source "$ROOT/bench/lib.sh"
T=$(mktemp -d "${TMPDIR:-/tmp}/corscope-bench.XXXXXX")
HOLD=
trap '[ -n "$HOLD" ] && kill "$HOLD" 2> /dev/null; [ -n "${KEEP:-}" ] || rm -rf "$T"' EXIT
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 DOTNET_SKIP_FIRST_TIME_EXPERIENCE=1
make -C "$ROOT" -s all build/rusage > /dev/null
RUSAGE=$ROOT/build/rusage
NEW=$ROOT/build/libcorscope.so
OLD=
[ -n "$BASE" ] && OLD=$(base_agent "$(git -C "$ROOT" rev-parse --short "$BASE")")
W=$(bench_tree)

# The compiler's command line, as MSBuild gives it (a detailed build's log),
# into a response file: the /embed: of a generated file is left out (its
# name has a comma, which a response file would split at).
dotnet build "$W/Lib1" --no-restore --no-incremental -nodeReuse:false --disable-build-servers \
    -p:UseSharedCompilation=false -v:d > "$T/build.log"
CSC=$(grep -m1 -o '/[^ ]*/Roslyn/bincore/csc ' "$T/build.log" | tr -d ' ') ||
    { echo "corscope: no compiler command found in the build's log" >&2; exit 1; }
grep -m1 "$CSC " "$T/build.log" | python3 -c '
import shlex, sys
args = shlex.split(sys.stdin.read().split(sys.argv[1], 1)[1])
keep = [a for a in args if a != "/noconfig" and not a.startswith("/embed:")]
print("\n".join(("\"%s\"" % a) if any(c in a for c in " ,;") and not a.startswith("/") else a
                for a in keep))' "$CSC " > "$T/csc.rsp"
cd "$W/Lib1"
"$CSC" /noconfig "@$T/csc.rsp" > "$T/out" || { cat "$T/out" >&2; exit 1; }

if command -v perf > /dev/null; then
    sleep 100000 &
    HOLD=$!
    perf stat -e task-clock -p "$HOLD" -o /dev/null > /dev/null 2>&1 &
fi

# run TAG [AGENT [VAR=VALUE...]]: one compile, its times and counters
run() {
    local tag=$1 agent=${2:-} f=$T/r.corscope
    shift $(($# < 2 ? $# : 2))
    rm -f "$f"
    if [ -z "$agent" ]; then
        "$RUSAGE" "$T/time" "$CSC" /noconfig "@$T/csc.rsp" > /dev/null
    else
        env CORECLR_ENABLE_PROFILING=1 CORECLR_PROFILER='{14DE3B91-04FE-4EFB-B588-CD7BB380C74A}' \
            CORECLR_PROFILER_PATH="$agent" CORSCOPE_OUTPUT="$f" CORSCOPE_ASYNC=on "$@" \
            "$RUSAGE" "$T/time" "$CSC" /noconfig "@$T/csc.rsp" > /dev/null
    fi
    awk '{ print $1 / 1000 }' "$T/time" >> "$T/$tag.wall" # microseconds in, ms out
    awk '{ print ($2 + $3) / 1000 }' "$T/time" >> "$T/$tag.cpu"
    [ -z "$agent" ] && return
    "$ROOT/build/corscope" check "$f" | tr ' ' '\n' > "$T/counters"
    awk -F= '/^sampler_cpu_ns=/ { print $2 / 1e6 }' "$T/counters" >> "$T/$tag.agent"
    awk -F= '/^samples=/ { print $2 }' "$T/counters" >> "$T/$tag.samples"
}

echo "machine: $(machine), .NET SDK $(dotnet --version)${BASE:+; base: $BASE}"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for _ in $(seq "$RUNS"); do
    run plain
    run default "$NEW"
    run posix "$NEW" CORSCOPE_CPU_CLOCK=posix
    run unsampled "$NEW" CORSCOPE_EVENT=none
    run noasync "$NEW" CORSCOPE_EVENT=none CORSCOPE_ASYNC=off
    if [ -n "$OLD" ]; then run plain2; run base "$OLD"; fi
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"

num() { [ -s "$T/$1" ] && median 1 < "$T/$1" | awk '{ printf "%.1f\n", $1 }' || echo "-"; }
echo
echo "csc compiling Lib1 of the bench tree, $RUNS runs each, interleaved; medians, ms:"
echo
echo "| configuration | wall | + (quartiles) | CPU | + (quartiles) | agent thread CPU | samples |"
echo "|---|---:|---:|---:|---:|---:|---:|"
for c in "plain|no profiler|" "default|the agent, as record starts it|plain" \
    "posix|the same, --cpu-clock posix|plain" "unsampled|the same, nothing sampled|plain" \
    "noasync|nothing sampled, no async rewrite (no ReJIT)|plain" \
    "base|base ($BASE)|plain2"; do
    IFS='|' read -r tag label against <<< "$c"
    [ -s "$T/$tag.wall" ] || continue
    if [ -z "$against" ]; then
        echo "| $label | $(num "$tag.wall") | - | $(num "$tag.cpu") | - | - | - |"
    else
        echo "| $label | $(num "$tag.wall") | $(paired "$tag" "$against" wall 1) | $(num "$tag.cpu") |" \
            "$(paired "$tag" "$against" cpu 1) | $(num "$tag.agent") | $(num "$tag.samples") |"
    fi
done
