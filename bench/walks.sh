#!/usr/bin/env bash
# Whole walks: the share of samples whose walk stopped early (failed_walks,
# shown as [unknown]) and of those that crossed code with no unwind data by
# the RBP chain (guessed_walks), per test program at -i 1ms, and for an
# ASP.NET Core application (tests/apps/WebApp) under load from wrk
# (installed from Debian when missing).  Each program RUNS times; the
# table sums the runs.
#
#   bench/walks.sh [RUNS] [WEB_SECONDS]      (defaults 2 and 20; CORSCOPE=path
#                                             another build's corscope)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
source "$ROOT/bench/lib.sh"
RUNS=${1:-2}
WEB_SECONDS=${2:-20}
CORSCOPE=${CORSCOPE:-$ROOT/build/corscope}
APPS=$ROOT/build/apps
T=$(mktemp -d "${TMPDIR:-/tmp}/corscope-bench.XXXXXX")
trap 'rm -rf "$T"' EXIT
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1

# counters FILE -> "samples failed guessed hijacked"
counters() {
    "$CORSCOPE" check "$1" | awk '/counters/ {
        for (i = 2; i <= NF; i++) { split($i, kv, "="); c[kv[1]] = kv[2] }
        printf "%d %d %d %d\n", c["samples"], c["failed_walks"], c["guessed_walks"], c["hijacked_returns"] }'
}

row() { # NAME then lines of counters on standard input
    awk -v name="$1" '{ s += $1; f += $2; g += $3; h += $4 }
        END { printf "| %s | %d | %d (%.2f%%) | %d (%.2f%%) | %d |\n", name, s, f, s ? 100 * f / s : 0, g, s ? 100 * g / s : 0, h }'
}

echo "machine: $(machine)"
echo "runs: $RUNS per program at -i 1ms (cpu); the web application: $WEB_SECONDS s under wrk"
echo
echo "| program | samples | failed walks | guessed walks | hijacked returns put right |"
echo "|---|---|---|---|---|"

program() { # NAME ARGS...
    local name=$1
    shift
    for _ in $(seq "$RUNS"); do
        nice "$CORSCOPE" record -q --force -i 1ms -o "$T/p.corscope" -- "$@" > /dev/null
        counters "$T/p.corscope"
    done | row "$name"
}

program "Boundaries (14 families)" dotnet "$APPS/Boundaries/Boundaries.dll" all 300
program "MixedStack" dotnet "$APPS/MixedStack/MixedStack.dll" 20
program "Demo" dotnet "$APPS/Demo/Demo.dll" 4
program "CpuShares" dotnet "$APPS/CpuShares/CpuShares.dll" 3
program "DeepRecursion" dotnet "$APPS/DeepRecursion/DeepRecursion.dll" 1000 2
for mode in exceptions gc async pinvoke tiering dynamic; do
    program "Stress $mode" dotnet "$APPS/Stress/Stress.dll" "$mode"
done

# the web application under load
command -v wrk > /dev/null || { apt-get update -qq && apt-get install -y -qq wrk > /dev/null; }
port=$((20000 + RANDOM % 20000))
for _ in $(seq "$RUNS"); do
    nice "$CORSCOPE" record -q --force -i 1ms -o "$T/web.corscope" -- \
        dotnet "$APPS/WebApp/WebApp.dll" "$port" > /dev/null &
    rec=$!
    for _ in $(seq 100); do curl -fs "http://127.0.0.1:$port/" > /dev/null 2>&1 && break; sleep 0.2; done
    per=$(( WEB_SECONDS / 4 > 1 ? WEB_SECONDS / 4 : 1 ))
    for path in /products /search?q=product-1 /hash/200 /primes/3000; do
        wrk -t2 -c32 -d"${per}s" "http://127.0.0.1:$port$path" > "$T/wrk.txt" 2>&1 || true
        echo "$path: $(awk '/Requests\/sec/ { print $2 " requests/s" }' "$T/wrk.txt")" >&2
    done
    curl -fs "http://127.0.0.1:$port/quit" > /dev/null 2>&1 || true
    wait "$rec" || true
    counters "$T/web.corscope"
done | row "WebApp (ASP.NET Core) under wrk"
