#!/usr/bin/env bash
# What a live probe costs a call (`corscope watch`, issue 22): WatchApp's
# `bench` mode times N calls of Pricing.Mix(int, long, double) (never
# inlined, so every run makes the same call), in four settings:
#   plain       no agent
#   not-named   watch of another method (Pricing.Quote): the cost for a
#               method not named (goal: nothing)
#   over-rate   watch of Pricing.Mix at the default rate (1000 calls a
#               second shown): almost every call goes through both probes
#               and is turned away by the rate limit
#   taken       --rate 1000000: every call's arguments, result and time
#               are queued (until the agent's queue is full: then counted
#               as dropped, still through the probes)
#   filtered    --where 'a < 0' (never true here): every call goes through
#               both probes and is left out by the comparison, before the
#               rate
# interleaved, RUNS times each; the medians of ns per call (wall, and the
# calling thread's own CPU: the probes' work on it, without the agent's
# loop and corscope competing for the cores) and what the probes add to
# plain.  Those settings mix the paths (most calls of the loop are turned
# away by the rate or the full queue: the agent and corscope take a few
# tens of thousands of calls a second); build/watch_probe (bench/
# watch_probe.c) then times each path alone, the probes and the queue
# without the runtime: taken, over-rate, filtered, inactive.  Prints
# Markdown tables for docs/performance.md.
#
#   bench/watch.sh [RUNS] [CALLS]     (default 5 runs of 5000000 calls; make all apps build/watch_probe)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
RUNS=${1:-5}
CALLS=${2:-5000000}
T=$(mktemp -d "${TMPDIR:-/tmp}/corscope-bench.XXXXXX")
trap 'rm -rf "$T"' EXIT
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1
W=$ROOT/build/apps/WatchApp/WatchApp.dll
CS=$ROOT/build/corscope
[ -f "$W" ] || { echo "bench/watch.sh: make apps first" >&2; exit 1; }
PROBE=$ROOT/build/watch_probe
[ -x "$PROBE" ] || { echo "bench/watch.sh: make build/watch_probe first" >&2; exit 1; }

run() {
    case $1 in
    plain) dotnet "$W" bench "$CALLS" ;;
    not-named) "$CS" watch -q -- dotnet "$W" bench "$CALLS" 'Pricing.Quote' 2> "$T/err" ;;
    over-rate) "$CS" watch -q -- dotnet "$W" bench "$CALLS" 'Pricing.Mix' 2> "$T/err" ;;
    taken) "$CS" watch -q --rate 1000000 -- dotnet "$W" bench "$CALLS" 'Pricing.Mix' 2> "$T/err" ;;
    filtered) "$CS" watch -q --where 'a < 0' -- dotnet "$W" bench "$CALLS" 'Pricing.Mix' 2> "$T/err" ;;
    esac | awk '/^ns\/call/ { w = $2 } /^cpu-ns\/call/ { c = $2 } END { if (w != "") print w, c }'
}

settings="plain not-named over-rate taken filtered"
for _ in $(seq "$RUNS"); do
    for s in $settings; do
        v=$(run "$s")
        [ -n "$v" ] || { echo "bench/watch.sh: no time from the $s run" >&2; cat "$T/err" >&2; exit 1; }
        echo "${v% *}" >> "$T/$s"
        echo "${v#* }" >> "$T/$s.cpu"
    done
    "$PROBE" "$CALLS" > "$T/probe" || { echo "bench/watch.sh: build/watch_probe failed" >&2; exit 1; }
    for p in taken over-rate filtered inactive; do
        awk -v p="$p" '$1 == p { print $2 }' "$T/probe" >> "$T/probe.$p"
    done
done
median() { sort -g "$1" | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
base=$(median "$T/plain")
base_cpu=$(median "$T/plain.cpu")
echo "| setting | ns per call (median of $RUNS) | added to plain | calling thread's CPU ns per call | added to plain |"
echo "|---|---:|---:|---:|---:|"
for s in $settings; do
    m=$(median "$T/$s") c=$(median "$T/$s.cpu")
    awk -v s="$s" -v m="$m" -v b="$base" -v c="$c" -v bc="$base_cpu" \
        'BEGIN { printf "| %s | %.1f | %+.1f | %.1f | %+.1f |\n", s, m, m - b, c, c - bc }'
done
echo
echo "Each path alone (build/watch_probe $CALLS: both probes of a call with an int, a long"
echo "and a double read and a long result, no runtime; median of $RUNS):"
echo
echo "| path | ns per call (both probes) |"
echo "|---|---:|"
for p in taken over-rate filtered inactive; do
    echo "| $p | $(median "$T/probe.$p") |"
done
echo
echo "load: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores, $CALLS calls per run"
