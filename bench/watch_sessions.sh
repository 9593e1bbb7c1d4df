#!/usr/bin/env bash
# In and out (`corscope watch -p`, issue 22, item 3): does a service pay
# anything after a watch has ended?  tests/apps/WebApp under wrk
# (GET /hash/300: a string join, SHA256.HashData, Convert.ToHexString);
# the service's CPU time (utime + stime, /proc/PID/stat) per request over a
# wrk run of SECONDS, measured
#   before      three times before any watch (the unprofiled level)
#   after i     after watch session i (-d 2s, patterns alternating between
#               the two methods each request calls, under wrk's load) has
#               reverted its methods, with the agent dormant in between
# Prints a Markdown table for docs/performance.md.
#
#   bench/watch_sessions.sh [SESSIONS] [SECONDS]     (default 10 and 5; make apps)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
source "$ROOT/bench/lib.sh"
SESSIONS=${1:-10}
SECONDS_EACH=${2:-5}
T=$(mktemp -d "${TMPDIR:-/tmp}/corscope-bench.XXXXXX")
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1
CS=$ROOT/build/corscope
WEB=$ROOT/build/apps/WebApp/WebApp.dll
[ -f "$WEB" ] || { echo "bench/watch_sessions.sh: make apps first" >&2; exit 1; }
command -v wrk > /dev/null || { echo "bench/watch_sessions.sh: needs wrk" >&2; exit 1; }

port=$((20000 + RANDOM % 20000))
url=http://127.0.0.1:$port
dotnet "$WEB" "$port" > /dev/null 2>&1 &
web=$!
trap 'kill $web 2> /dev/null; wait 2> /dev/null; rm -rf "$T"' EXIT
for _ in $(seq 200); do curl -fs "$url/" > /dev/null 2>&1 && break; sleep 0.1; done
tck=$(getconf CLK_TCK)
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$web/stat"; }

# measure -> microseconds of the service's CPU per request, and requests/s
measure() {
    local c0 c1
    c0=$(cpu_ticks)
    wrk -t1 -c8 -d"${SECONDS_EACH}s" "$url/hash/300" > "$T/wrk" 2>&1
    c1=$(cpu_ticks)
    awk -v c=$((c1 - c0)) -v t="$tck" '/requests in/ { n = $1 } /Requests\/sec/ { r = $2 }
        END { if (n > 0) printf "%.1f %.0f\n", c * 1e6 / t / n, r }' "$T/wrk"
}

wrk -t1 -c8 -d3s "$url/hash/300" > /dev/null 2>&1 # warm up (tiering)
for i in 1 2 3; do measure >> "$T/before"; done
patterns=('System.Convert.ToHexString' 'System.Security.Cryptography.SHA256.HashData')
for i in $(seq "$SESSIONS"); do
    wrk -t1 -c4 -d4s "$url/hash/300" > /dev/null 2>&1 &
    load=$!
    "$CS" watch -q -p "$web" -d 2s --count 20 "${patterns[$((i % 2))]}" > "$T/calls$i" 2> "$T/err$i" ||
        { echo "bench/watch_sessions.sh: session $i failed: $(cat "$T/err$i")" >&2; exit 1; }
    wait "$load" || true
    echo "$i $(grep -c '^[0-9]' "$T/calls$i") $(measure)" >> "$T/after"
done

base=$(awk '{ print $1 }' "$T/before" | median 1)
echo "| when | service CPU per request (us) | requests/s | vs before |"
echo "|---|---:|---:|---:|"
awk '{ printf "| before %d | %s | %s | |\n", NR, $1, $2 }' "$T/before"
awk -v b="$base" '{ printf "| after session %d (%d calls shown) | %s | %s | %+.1f%% |\n", $1, $2, $3, $4, ($3 - b) * 100 / b }' "$T/after"
after=$(awk '{ print $3 }' "$T/after" | median 1)
awk -v a="$after" -v b="$base" 'BEGIN { printf "| median after / before | %s / %s | | %+.1f%% |\n", a, b, (a - b) * 100 / b }'
echo
echo "load: $(cut -d' ' -f1-3 /proc/loadavg); $(machine); wrk -t1 -c8 for ${SECONDS_EACH} s each"
curl -fs "$url/quit" > /dev/null 2>&1 || true
