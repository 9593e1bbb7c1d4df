#!/usr/bin/env bash
# What the agent costs a process at start-up, the price every process of a
# `dotnet build` or `dotnet test` tree pays.  Two parts, each interleaved
# (no profiler, this tree's agent, a base revision's agent), medians
# (a real `dotnet build` tree's wall time under record: bench/build.sh):
#
#  1. a program whose samples land inside the runtime (tests/apps/Memory
#     gcwork 1: a heap of a million objects collected; its walks go through
#     libcoreclr.so's collector, so the agent must know that library's
#     unwind rules from the first sample);
#  2. a program that does almost nothing (Memory exact 200), whose few
#     walks never enter the runtime's libraries: the measure that misled
#     (it never paid for their unwind tables), kept to show the difference.
#
# For 1 and 2, per run: the process's wall time, and from its recording
# agent_init_ns (how long Initialize held the main thread), sampling_start_ns
# (from Initialize until the first clocks ran: the program unsampled), unwind_tables_ns
# (the agent thread's CPU decoding unwind rules) and sampler_cpu_ns (the
# agent thread's CPU in all); the process's CPU time (user + sys), in
# microseconds from wait4's rusage (build/rusage: /usr/bin/time's
# hundredths of a second are coarser than what is measured here).
#
#   bench/startup.sh [RUNS] [BASE]   (default 11, 6ec35d4)
#   ASYNC=off bench/startup.sh ...    (default on: the environment `record`
#                                     gives every process it starts; before
#                                     session 7 this bench ran with the
#                                     agent's own default, off, and missed
#                                     what logical async stacks cost)
#
# The default base is main before the start-up and exit paths were cut
# (session 5); 36c5afd is the tree before unwind rules were decoded one
# function at a time (whole tables parsed by the agent's thread when a walk
# first entered a library).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
RUNS=${1:-11}
BASE=${2:-6ec35d4}
ASYNC=${ASYNC:-on}
source "$ROOT/bench/lib.sh"
T=$(mktemp -d "${TMPDIR:-/tmp}/corscope-bench.XXXXXX")
trap 'rm -rf "$T"' EXIT
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 DOTNET_SKIP_FIRST_TIME_EXPERIENCE=1
make -C "$ROOT" -s all build/rusage > /dev/null
RUSAGE=$ROOT/build/rusage
# the apps' solution rebuilds whole each time (minutes): only when missing
[ -f "$ROOT/build/apps/Memory/Memory.dll" ] || make -C "$ROOT" -s apps > /dev/null

rev=$(git -C "$ROOT" rev-parse --short "$BASE")
NEW=$ROOT/build/libcorscope.so OLD=$(base_agent "$rev")
MEMORY=$ROOT/build/apps/Memory/Memory.dll

# run TAG AGENT ARGS...: one run of the program, its wall and CPU ms, and
# the recording's counters, appended to $T/TAG.*
run() {
    local tag=$1 agent=$2 f=$T/r.corscope
    shift 2
    rm -f "$f" "$T/time"
    if [ -z "$agent" ]; then
        "$RUSAGE" "$T/time" dotnet "$@" > /dev/null
    else
        CORECLR_ENABLE_PROFILING=1 CORECLR_PROFILER='{14DE3B91-04FE-4EFB-B588-CD7BB380C74A}' \
            CORECLR_PROFILER_PATH="$agent" CORSCOPE_OUTPUT="$f" CORSCOPE_ASYNC="$ASYNC" \
            "$RUSAGE" "$T/time" dotnet "$@" > /dev/null
    fi
    awk '{ print $1 }' "$T/time" >> "$T/$tag.wall"
    awk '{ print ($2 + $3) / 1000 }' "$T/time" >> "$T/$tag.cpu"
    [ -z "$agent" ] && return
    # only key=value words: check's prose also has a bare "samples"
    "$ROOT/build/corscope" check "$f" | tr ' ' '\n' > "$T/counters"
    for k in agent_init_ns sampling_start_ns shutdown_ns unwind_tables_ns sampler_cpu_ns samples guessed_walks; do
        awk -F= -v k="$k" '$1 == k && NF == 2 { print (k ~ /_ns$/) ? $2 / 1e6 : $2 }' "$T/counters" >> "$T/$tag.$k"
    done
}
ms() { [ -s "$T/$1" ] && median 2 < "$T/$1" | awk '{ printf "%.2f ms\n", $1 }' || echo "-"; }
wall() { awk '{ print $1 / 1000 }' "$T/$1.wall" | median 2 | awk '{ printf "%.1f\n", $1 }'; }
cpu() { median 2 < "$T/$1.cpu" | awk '{ printf "%.1f\n", $1 }'; }
n() { [ -s "$T/$1" ] && median 1 < "$T/$1" || echo "-"; }

echo "machine: $(machine), .NET $(dotnet --list-runtimes | awk '/NETCore.App/ { v = $2 } END { print v }')"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "runs: $RUNS per configuration, interleaved; medians; + is the median of the"
echo "run-by-run differences from the run without a profiler just before, with their"
echo "quartiles; base: $rev; CORSCOPE_ASYNC=$ASYNC"

# row LABEL TAG: one configuration's line of the table
row() {
    local w c
    w=$(wall "$2") c=$(cpu "$2")
    if [ "$2" = "${2%.plain}" ]; then
        local p=${2%.*}.plain
        echo "| $1 | $w ms | $(paired "$2" "$p" wall 1000) ms | $c ms | $(paired "$2" "$p" cpu 1) ms | $(ms "$2.agent_init_ns") | $(ms "$2.sampling_start_ns") | $(ms "$2.shutdown_ns") | $(ms "$2.unwind_tables_ns") | $(ms "$2.sampler_cpu_ns") | $(n "$2.samples") | $(n "$2.guessed_walks") |"
    else
        echo "| $1 | $w ms | - | $c ms | - | - | - | - | - | - | - | - |"
    fi
}

program() { # NAME ARGS...: part 1 or 2
    local name=$1
    shift
    for _ in $(seq "$RUNS"); do
        run "$name.plain" "" "$MEMORY" "$@"
        run "$name.new" "$NEW" "$MEMORY" "$@"
        run "$name.base" "$OLD" "$MEMORY" "$@"
    done
    echo
    echo "Memory $*:"
    echo
    echo "| configuration | process wall time | + (quartiles) | process CPU | + (quartiles) | Initialize | sampling began | Shutdown | unwind rules, agent thread CPU | agent thread CPU in all | samples | guessed walks |"
    echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
    row "no profiler" "$name.plain"
    row "base ($rev)" "$name.base"
    row "this tree" "$name.new"
}
program runtime gcwork 1
program quiet exact 200
