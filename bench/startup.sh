#!/usr/bin/env bash
# What the agent costs a process at start-up, the price every process of a
# `dotnet build` or `dotnet test` tree pays: a program that does almost
# nothing (tests/apps/Memory exact 200) run without the profiler, under this
# tree's agent and under a base revision's (default: 4f302fd, the tree
# before the unwind tables were parsed lazily and Initialize stopped growing
# the descriptor table), interleaved, medians of RUNS:
#   - the whole process's wall time;
#   - agent_init_ns: how long Initialize held the program's main thread;
#   - unwind_tables_ns: the agent thread's CPU parsing unwind tables (the
#     base parsed them in Initialize, on the main thread: its agent_init_ns);
#   - sampler_cpu_ns: the agent thread's CPU in all.
#
#   bench/startup.sh [RUNS] [BASE]          (default 11, 4f302fd)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
RUNS=${1:-11}
BASE=${2:-4f302fd}
source "$ROOT/bench/lib.sh"
T=$(mktemp -d "${TMPDIR:-/tmp}/corscope-bench.XXXXXX")
trap 'rm -rf "$T"' EXIT
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1
make -C "$ROOT" -s all > /dev/null

rev=$(git -C "$ROOT" rev-parse --short "$BASE")
B=$ROOT/build/bench-base/$rev
if [ ! -f "$B/build/libcorscope.so" ]; then
    rm -rf "$B" && mkdir -p "$B"
    git -C "$ROOT" archive "$rev" | tar -x -C "$B"
    make -C "$B" -s build/libcorscope.so > /dev/null
fi

APP=("$ROOT/build/apps/Memory/Memory.dll" exact 200)
# run NAME AGENT: one run, its wall ms and the recording's counters
run() {
    local name=$1 agent=$2 f=$T/r.corscope t0 t1
    rm -f "$f"
    t0=$(date +%s%N)
    if [ -z "$agent" ]; then
        dotnet "${APP[@]}" > /dev/null
    else
        CORECLR_ENABLE_PROFILING=1 CORECLR_PROFILER='{14DE3B91-04FE-4EFB-B588-CD7BB380C74A}' \
            CORECLR_PROFILER_PATH="$agent" CORSCOPE_OUTPUT="$f" dotnet "${APP[@]}" > /dev/null
    fi
    t1=$(date +%s%N)
    echo $(((t1 - t0) / 1000)) >> "$T/$name.wall"
    [ -z "$agent" ] && return
    "$ROOT/build/corscope" check "$f" | tr ' ' '\n' > "$T/counters"
    for k in agent_init_ns unwind_tables_ns sampler_cpu_ns; do
        awk -F= -v k="$k" '$1 == k { print $2 / 1e6 }' "$T/counters" >> "$T/$name.$k"
    done
}
for _ in $(seq "$RUNS"); do
    run plain ""
    run new "$ROOT/build/libcorscope.so"
    run base "$B/build/libcorscope.so"
done
ms() { [ -s "$T/$1" ] && median 2 < "$T/$1" | awk '{ printf "%.2f\n", $1 }' || echo "-"; }
wall() { awk '{ print $1 / 1000 }' "$T/$1.wall" | median 1 | awk '{ printf "%.1f\n", $1 }'; }

echo "machine: $(machine), .NET $(dotnet --list-runtimes | awk '/NETCore.App/ { v = $2 } END { print v }')"
echo "runs: $RUNS per configuration, interleaved; medians; base: $rev"
echo
echo "| configuration | process wall time | Initialize (agent_init_ns) | unwind tables, agent thread CPU | agent thread CPU in all |"
echo "|---|---|---|---|---|"
echo "| no profiler | $(wall plain) ms | - | - | - |"
echo "| base ($rev: every table parsed in Initialize) | $(wall base) ms | (not counted then) | (in Initialize) | $(ms base.sampler_cpu_ns) ms |"
echo "| this tree | $(wall new) ms | $(ms new.agent_init_ns) ms | $(ms new.unwind_tables_ns) ms | $(ms new.sampler_cpu_ns) ms |"
