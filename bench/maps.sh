#!/usr/bin/env bash
# What placing an address among a .NET process's mappings costs (see
# bench/maps_cost.c): a whole read of its /proc/PID/maps through stdio (the
# agent before session 14, and glibc for a main thread's stack), the same in
# large read()s (the agent's path on kernels before 6.11), and one
# PROCMAP_QUERY ioctl (the agent's path on 6.11 and later), against an idle
# tests/apps/Fleet (its runtime started, its threads waiting), ROUNDS times.
#
#   bench/maps.sh [RUNS] [ROUNDS]   (default 51, 3)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
RUNS=${1:-51}
ROUNDS=${2:-3}
T=$(mktemp -d "${TMPDIR:-/tmp}/corscope-bench.XXXXXX")
trap 'touch "$T/stop"; rm -rf "$T"' EXIT
make -C "$ROOT" -s build/maps_cost > /dev/null
[ -f "$ROOT/build/apps/Fleet/Fleet.dll" ] || make -C "$ROOT" -s apps > /dev/null
dotnet "$ROOT/build/apps/Fleet/Fleet.dll" 0 wait-file "$T/stop" > /dev/null &
pid=$!
sleep 2
echo "machine: $(nproc) cores, $(uname -r); load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "medians of $RUNS, microseconds of CPU of the reader"
echo
echo "| round | mappings | stdio (fgets, sscanf) | read() whole, parsed | PROCMAP_QUERY |"
echo "|---|---|---|---|---|"
for r in $(seq "$ROUNDS"); do
    "$ROOT/build/maps_cost" "$pid" "$RUNS" |
        awk -v r="$r" '{ v[$1] = $2 } END { printf "| %d | %s | %s us | %s us | %s us |\n", r, v["lines"], v["stdio"], v["read"], v["query"] }'
done
touch "$T/stop"
wait "$pid" || true
