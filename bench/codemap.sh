#!/usr/bin/env bash
# The code map at the scale of a big application (bench/codemap.c), this
# tree against a base revision (default: main) built from the same
# benchmark: 200,000 ranges inserted one by one in random order with a
# lookup after each; random lookups; collectible modules of 50 methods
# loaded, looked up and unloaded on top of them.  Then a real program that
# loads and unloads many modules (tests/apps/Stress alc: 1,500 collectible
# contexts) under the agent: the agent thread's CPU time (sampler_cpu_ns).
# Runs interleaved, medians.
#
#   bench/codemap.sh [RUNS] [BASE]          (default 5, main)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
RUNS=${1:-5}
BASE=${2:-main}
source "$ROOT/bench/lib.sh"
T=$(mktemp -d "${TMPDIR:-/tmp}/corscope-bench.XXXXXX")
trap 'rm -rf "$T"' EXIT
make -C "$ROOT" -s build/codemap-bench all > /dev/null

# the base: its whole tree, built once per revision under build/bench-base
rev=$(git -C "$ROOT" rev-parse --short "$BASE")
B=$ROOT/build/bench-base/$rev
if [ ! -x "$B/build/codemap-bench" ]; then
    rm -rf "$B" && mkdir -p "$B"
    git -C "$ROOT" archive "$rev" | tar -x -C "$B"
    cp "$ROOT/bench/codemap.c" "$B/bench/codemap.c"
    grep -q codemap-bench "$B/Makefile" || cat >> "$B/Makefile" <<'MK'

$(BUILD)/codemap-bench: $(call obj,bench/codemap.c) $(AGENT_OBJ)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LIBS)
MK
    make -C "$B" -s build/codemap-bench build/libcorscope.so > /dev/null
fi

for _ in $(seq "$RUNS"); do
    nice "$ROOT/build/codemap-bench" 200000 2000 1 > "$T/new.$RANDOM"
    nice "$B/build/codemap-bench" 200000 2000 1 > "$T/base.$RANDOM"
done
val() { cat "$T"/$1.* | awk -v k="$2" '$1 == k { print $2 }' | median 1; }

APP="dotnet $ROOT/build/apps/Stress/Stress.dll alc 15"
agent_cpu() { # AGENT -> ms of the agent thread's CPU
    local f=$T/r.corscope
    rm -f "$f"
    CORECLR_ENABLE_PROFILING=1 CORECLR_PROFILER='{14DE3B91-04FE-4EFB-B588-CD7BB380C74A}' \
        CORECLR_PROFILER_PATH="$1" CORSCOPE_OUTPUT="$f" CORSCOPE_INTERVAL=1ms nice $APP > /dev/null
    "$ROOT/build/corscope" check "$f" | tr ' ' '\n' | awk -F= '$1 == "sampler_cpu_ns" { printf "%.1f\n", $2 / 1e6 }'
}
for _ in $(seq "$RUNS"); do
    agent_cpu "$ROOT/build/libcorscope.so" >> "$T/app.new"
    agent_cpu "$B/build/libcorscope.so" >> "$T/app.base"
done

echo "machine: $(machine)"
echo "runs: $RUNS per cell, interleaved; medians; base: $BASE ($rev)"
echo
echo "| measure | base | this tree |"
echo "|---|---|---|"
echo "| insert one of 200,000 ranges (random order, a lookup after each) | $(val base insert_ns) ns | $(val new insert_ns) ns |"
echo "| look up an address among 200,000 ranges | $(val base lookup_ns) ns | $(val new lookup_ns) ns |"
echo "| load, look up and unload a module of 50 methods over 200,000 ranges | $(val base module_us) µs | $(val new module_us) µs |"
echo "| Stress alc 15 (1,500 collectible contexts) at 1 ms: the agent thread's CPU | $(median 1 < "$T/app.base") ms | $(median 1 < "$T/app.new") ms |"
