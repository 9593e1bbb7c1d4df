#!/usr/bin/env bash
# What code coverage costs a test run: the CPU-bound tests of CoverTests
# (BenchTests over tests/apps/CoverLib/Work.cs: tokenizing, insertion sort,
# recursion, dictionaries, string building, Collatz) under `dotnet test`,
#   plain      dotnet test (no coverage)
#   corscope   corscope cover -- dotnet test
#   coverlet   dotnet test --collect:"XPlat Code Coverage" (coverlet.collector
#              6.0.4: the library rewritten on disk before the run)
# interleaved, RUNS times each; the medians of the whole command's wall
# time, and of the tests' own wall and CPU time (each test measures itself:
# COVER_BENCH_TIMES; CPU is the test host's, all threads), and the ratios
# to plain.  On a busy machine the CPU time is the steadier figure.  Prints
# a Markdown table for docs/performance.md.
#
#   bench/cover.sh [RUNS]      (default 5; needs make all apps)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
RUNS=${1:-5}
source "$ROOT/bench/lib.sh"
T=$(mktemp -d "${TMPDIR:-/tmp}/corscope-bench.XXXXXX")
trap 'rm -rf "$T"' EXIT
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 COVER_BENCH=1
PROJECT=$ROOT/tests/apps/CoverTests
FILTER=FullyQualifiedName~BenchTests
[ -f "$ROOT/build/apps/CoverTests/CoverTests.dll" ] || { echo "bench/cover.sh: make apps first" >&2; exit 1; }

# run NAME: one run in the project's directory, its wall and test ms
run() {
    local name=$1 t0 t1
    rm -rf "$T/results" "$T/times"
    export COVER_BENCH_TIMES=$T/times
    t0=$(date +%s%N)
    case $name in
    plain) (cd "$PROJECT" && dotnet test --no-build -c Release --filter "$FILTER") > "$T/out" 2>&1 ;;
    corscope) (cd "$PROJECT" && "$ROOT/build/corscope" cover -q -o "$T/c.xml" -- \
        dotnet test --no-build -c Release --filter "$FILTER") > "$T/out" 2>&1 ;;
    coverlet) (cd "$PROJECT" && dotnet test --no-build -c Release --filter "$FILTER" \
        --collect:"XPlat Code Coverage" --results-directory "$T/results") > "$T/out" 2>&1 ;;
    esac
    t1=$(date +%s%N)
    grep -q "Passed!  - Failed:     0, Passed:     6" "$T/out" || { echo "bench/cover.sh: $name failed:" >&2; tail -20 "$T/out" >&2; exit 1; }
    echo $(((t1 - t0) / 1000000)) >> "$T/$name.wall"
    awk '{ w += $1; c += $2 } END { print w; print c > "/dev/stderr" }' "$T/times" \
        >> "$T/$name.test" 2>> "$T/$name.cpu"
}

for i in $(seq "$RUNS"); do
    for name in plain corscope coverlet; do
        run "$name"
    done
done
pw=$(median 0 < "$T/plain.wall")
pt=$(median 0 < "$T/plain.test")
pc=$(median 0 < "$T/plain.cpu")
echo "CoverTests' BenchTests, $RUNS interleaved runs each, medians; $(machine); load $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| run | command wall (ms) | x plain | tests' wall (ms) | x plain | tests' CPU (ms) | x plain |"
echo "|---|---|---|---|---|---|---|"
for name in plain corscope coverlet; do
    w=$(median 0 < "$T/$name.wall")
    t=$(median 0 < "$T/$name.test")
    c=$(median 0 < "$T/$name.cpu")
    awk -v n="$name" -v w="$w" -v t="$t" -v c="$c" -v pw="$pw" -v pt="$pt" -v pc="$pc" \
        'BEGIN { printf "| %s | %d | %.2f | %d | %.2f | %d | %.2f |\n", n, w, w / pw, t, t / pt, c, c / pc }'
done
