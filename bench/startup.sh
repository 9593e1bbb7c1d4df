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
# agent_init_ns (how long Initialize held the main thread), unwind_tables_ns
# (the agent thread's CPU decoding unwind rules) and sampler_cpu_ns (the
# agent thread's CPU in all); the process's CPU time (user + sys).
#
#   bench/startup.sh [RUNS] [BASE]   (default 11, 36c5afd)
#
# The default base is the tree before unwind rules were decoded one
# function at a time (whole tables parsed by the agent's thread when a walk
# first entered a library).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
RUNS=${1:-11}
BASE=${2:-36c5afd}
source "$ROOT/bench/lib.sh"
T=$(mktemp -d "${TMPDIR:-/tmp}/corscope-bench.XXXXXX")
trap 'rm -rf "$T"' EXIT
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 DOTNET_SKIP_FIRST_TIME_EXPERIENCE=1
make -C "$ROOT" -s all > /dev/null
# the apps' solution rebuilds whole each time (minutes): only when missing
[ -f "$ROOT/build/apps/Memory/Memory.dll" ] || make -C "$ROOT" -s apps > /dev/null

rev=$(git -C "$ROOT" rev-parse --short "$BASE")
B=$ROOT/build/bench-base/$rev
if [ ! -f "$B/build/libcorscope.so" ]; then
    rm -rf "$B" && mkdir -p "$B"
    git -C "$ROOT" archive "$rev" | tar -x -C "$B"
    make -C "$B" -s build/libcorscope.so > /dev/null
fi
NEW=$ROOT/build/libcorscope.so OLD=$B/build/libcorscope.so
MEMORY=$ROOT/build/apps/Memory/Memory.dll

# run TAG AGENT ARGS...: one run of the program, its wall and CPU ms, and
# the recording's counters, appended to $T/TAG.*
run() {
    local tag=$1 agent=$2 f=$T/r.corscope t0 t1
    shift 2
    rm -f "$f" "$T/time"
    t0=$(date +%s%N)
    if [ -z "$agent" ]; then
        /usr/bin/time -f '%U %S' -o "$T/time" dotnet "$@" > /dev/null
    else
        CORECLR_ENABLE_PROFILING=1 CORECLR_PROFILER='{14DE3B91-04FE-4EFB-B588-CD7BB380C74A}' \
            CORECLR_PROFILER_PATH="$agent" CORSCOPE_OUTPUT="$f" \
            /usr/bin/time -f '%U %S' -o "$T/time" dotnet "$@" > /dev/null
    fi
    t1=$(date +%s%N)
    echo $(((t1 - t0) / 1000)) >> "$T/$tag.wall"
    awk '{ print ($1 + $2) * 1000 }' "$T/time" >> "$T/$tag.cpu"
    [ -z "$agent" ] && return
    "$ROOT/build/corscope" check "$f" | tr ' ' '\n' > "$T/counters"
    for k in agent_init_ns unwind_tables_ns sampler_cpu_ns samples guessed_walks; do
        awk -F= -v k="$k" '$1 == k { print (k ~ /_ns$/) ? $2 / 1e6 : $2 }' "$T/counters" >> "$T/$tag.$k"
    done
}
ms() { [ -s "$T/$1" ] && median 2 < "$T/$1" | awk '{ printf "%.2f\n", $1 }' || echo "-"; }
wall() { awk '{ print $1 / 1000 }' "$T/$1.wall" | median 1 | awk '{ printf "%.1f\n", $1 }'; }
cpu() { median 1 < "$T/$1.cpu" | awk '{ printf "%.0f\n", $1 }'; }
n() { [ -s "$T/$1" ] && median 1 < "$T/$1" || echo "-"; }

echo "machine: $(machine), .NET $(dotnet --list-runtimes | awk '/NETCore.App/ { v = $2 } END { print v }')"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "runs: $RUNS per configuration, interleaved; medians; base: $rev"

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
    echo "| configuration | process wall time | process CPU | Initialize | unwind rules, agent thread CPU | agent thread CPU in all | samples | guessed walks |"
    echo "|---|---|---|---|---|---|---|---|"
    echo "| no profiler | $(wall "$name.plain") ms | $(cpu "$name.plain") ms | - | - | - | - | - |"
    echo "| base ($rev: whole tables) | $(wall "$name.base") ms | $(cpu "$name.base") ms | $(ms "$name.base.agent_init_ns") ms | $(ms "$name.base.unwind_tables_ns") ms | $(ms "$name.base.sampler_cpu_ns") ms | $(n "$name.base.samples") | $(n "$name.base.guessed_walks") |"
    echo "| this tree | $(wall "$name.new") ms | $(cpu "$name.new") ms | $(ms "$name.new.agent_init_ns") ms | $(ms "$name.new.unwind_tables_ns") ms | $(ms "$name.new.sampler_cpu_ns") ms | $(n "$name.new.samples") | $(n "$name.new.guessed_walks") |"
}
program runtime gcwork 1
program quiet exact 200

