#!/usr/bin/env bash
# Aliasing: tests/apps/Aliasing repeats a period of its own CPU time equal
# to the sampling interval, 25% in Phase.A and 75% in Phase.B.  A CPU clock
# that fires after exactly one interval (--cpu-period fixed) samples it at
# nearly the same phase every period; random periods (the default) do not.
# For each interval and each kind of period, RUNS runs of 3 s of CPU;
# prints the median and worst error of Phase.A's share, in points, against
# the share the program measured itself.
#
#   bench/aliasing.sh [RUNS]          (default 3)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
source "$ROOT/bench/lib.sh"
RUNS=${1:-3}
CORSCOPE=$ROOT/build/corscope
T=$(mktemp -d "${TMPDIR:-/tmp}/corscope-bench.XXXXXX")
trap 'rm -rf "$T"' EXIT
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1

# error INTERVAL_MS PERIOD -> |Phase.A's share - the truth|, in points
error() {
    nice "$CORSCOPE" record -q --force -i "$1ms" --cpu-period "$2" -o "$T/a.corscope" -- \
        dotnet "$ROOT/build/apps/Aliasing/Aliasing.dll" "${1}000" 25 3000 > "$T/truth.txt"
    "$CORSCOPE" report -f top --limit 0 "$T/a.corscope" > "$T/top.txt" 2> /dev/null
    awk '$1 == "truth" { sub("A=", "", $2); truth = $2; next }
         $NF == "Phase.A" && a == "" { a = $2; gsub("%", "", a) }
         $NF == "Phase.B" && b == "" { b = $2; gsub("%", "", b) }
         END { e = 100 * a / (a + b) - truth; printf "%.2f\n", e < 0 ? -e : e }' "$T/truth.txt" "$T/top.txt"
}

echo "machine: $(machine)"
echo "runs: $RUNS per row, 3 s of CPU each, the program's period equal to the interval"
echo
printf '| interval | periods | median error | worst error |\n|---|---|---|---|\n'
for iv in 2 10; do
    for period in fixed random; do
        for _ in $(seq "$RUNS"); do error "$iv" "$period"; done > "$T/errors.txt"
        printf '| %s ms | %s | %s points | %s points |\n' "$iv" "$period" \
            "$(median 2 < "$T/errors.txt")" "$(sort -n "$T/errors.txt" | tail -1)"
    done
done
