#!/usr/bin/env bash
# How fast `corscope report` is on a big recording, and how much memory it
# takes: a synthetic recording of SAMPLES samples over STACKS distinct
# stacks (bench/synth.c, written by the agent's own writer), each format
# timed (median of RUNS) with its peak resident memory, against the goals
# of under 2 s for collapsed, under 5 s for the flame graph, and memory
# under 10 times the recording's size.  Then the flame graph page itself in
# headless Chromium (tests/viewers/flame_speed.mjs, medians of RUNS page
# loads), when it is installed, against the goals of opening in under 2 s
# and redrawing a range selected on its timeline in under 200 ms.
#
#   bench/report_speed.sh [RUNS] [SAMPLES] [STACKS]     (default 3 1000000 100000)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
source "$ROOT/bench/lib.sh"
RUNS=${1:-3} SAMPLES=${2:-1000000} STACKS=${3:-100000}
CORSCOPE=$ROOT/build/corscope
T=$(mktemp -d "${TMPDIR:-/tmp}/corscope-bench.XXXXXX")
trap 'rm -rf "$T"' EXIT
[ -x "$ROOT/build/synth" ] || make -C "$ROOT" -s build/synth

"$ROOT/build/synth" "$T/big.corscope" "$SAMPLES" "$STACKS"
size=$(stat -c %s "$T/big.corscope")
echo "machine: $(machine)"
echo "recording: $SAMPLES samples, $STACKS distinct stacks, $(awk -v s="$size" 'BEGIN { printf "%.1f MiB", s / 1048576 }'); median of $RUNS runs"
echo
echo "| format | time | peak memory | memory / recording | output |"
echo "|---|---|---|---|---|"
for f in collapsed flamegraph top tree pprof speedscope chrome; do
    : > "$T/times"; : > "$T/mem"
    for _ in $(seq "$RUNS"); do
        /usr/bin/time -f "%e %M" -o "$T/tm" "$CORSCOPE" report -f "$f" -o "$T/out.$f" "$T/big.corscope" 2> /dev/null
        awk '{ print $1 }' "$T/tm" >> "$T/times"
        awk '{ print $2 }' "$T/tm" >> "$T/mem"
    done
    t=$(median 2 < "$T/times") m=$(median 2 < "$T/mem")
    out=$(stat -c %s "$T/out.$f")
    echo "| $f | $t s | $(awk -v m="$m" 'BEGIN { printf "%.0f MiB", m / 1024 }') | $(awk -v m="$m" -v s="$size" 'BEGIN { printf "%.1fx", m * 1024 / s }') | $(awk -v o="$out" 'BEGIN { printf "%.1f MiB", o / 1048576 }') |"
    [ "$f" = flamegraph ] && cp "$T/out.$f" "$T/flame.html"
    rm -f "$T/out.$f"
done
if command -v chromium > /dev/null && [ -d "$ROOT/tests/viewers/node_modules/playwright-core" ]; then
    echo
    echo "flame graph page in headless Chromium (median of $RUNS loads, ms): $(node "$ROOT/tests/viewers/flame_speed.mjs" "$T/flame.html" "$RUNS")"
fi
