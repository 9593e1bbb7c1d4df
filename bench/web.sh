#!/usr/bin/env bash
# What sampling costs a web application under load: tests/apps/WebApp
# (ASP.NET Core) driven by wrk on 127.0.0.1, the server's CPU time per
# request (user + system of the server process, every thread: the agent's
# included, from /proc/PID/stat over the measured window) without corscope
# and under `corscope record` at several settings.  CPU per request, not
# wall time or requests per second: on a machine shared with other work
# the requests a second swing with the load, the CPU each request takes
# hardly does.  Each round starts every configuration's server afresh (in
# turn: interleaved), warms it (WARM s of load, not measured), then
# measures SECONDS s of load over the four endpoints; medians over ROUNDS.
# After the table, the CPU clock each configuration's recordings used
# (`corscope check`: at 1 ms the agent chooses it at start unless
# --cpu-clock names one), one line per distinct answer.
#
#   bench/web.sh [ROUNDS] [SECONDS]      (default 5, 8; WARM=20 s: the runtime tiers up
#                                         for 10-20 s under load; PICK="0 2" only
#                                         those configurations; CORSCOPE=path
#                                         another build's corscope; SIDE=1 every
#                                         configuration's server up at once,
#                                         measured in turn in short windows;
#                                         BLOCK=N with SIDE: fresh servers every
#                                         N rounds)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
ROUNDS=${1:-5}
SECONDS_RUN=${2:-8}
WARM=${WARM:-20}
source "$ROOT/bench/lib.sh"
CORSCOPE=${CORSCOPE:-$ROOT/build/corscope}   # CORSCOPE=path: another build's
APP=$ROOT/build/apps/WebApp/WebApp.dll
T=$(mktemp -d "${TMPDIR:-/tmp}/corscope-bench.XXXXXX")
trap 'rm -rf "$T"' EXIT
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1
command -v wrk > /dev/null || { apt-get update -qq && apt-get install -y -qq wrk > /dev/null; } ||
    { echo "corscope: bench/web.sh needs wrk (apt-get install wrk)" >&2; exit 1; }

# label | corscope record options ("-" = no profiler)
CONFIGS=(
    "no profiler|-"
    "cpu, 10 ms (the default)|-e cpu -i 10ms"
    "cpu, 1 ms (clock chosen at start)|-e cpu -i 1ms"
    "cpu, 1 ms, posix clock|-e cpu -i 1ms --cpu-clock posix"
    "wall, 10 ms|-e wall"
    "cpu, 1 ms, perf_event clock|-e cpu -i 1ms --cpu-clock perf"
    "cpu, 10 ms, posix clock|-e cpu -i 10ms --cpu-clock posix"
    "cpu, 10 ms, perf_event clock|-e cpu -i 10ms --cpu-clock perf"
)
if [ -n "${PICK:-}" ]; then
    picked=()
    for i in $PICK; do picked+=("${CONFIGS[$i]}"); done
    CONFIGS=("${picked[@]}")
fi
PATHS=(/products "/search?q=product-1" /hash/200 /primes/3000)

cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }

# start_server C: configuration C's server, on a port of its own, waited
# for; sets PORT[C], PID[C] (the server) and REC[C] (what to wait for)
PORT=() PID=() REC=()
start_server() {
    local c=$1 opts=${CONFIGS[$1]#*|} port=$((20000 + RANDOM % 20000)) pid="" rec
    if [ "$opts" = - ]; then
        dotnet "$APP" "$port" > /dev/null 2>&1 &
        rec=$!
        pid=$rec
    else
        # shellcheck disable=SC2086
        "$CORSCOPE" record -q --force $opts -o "$T/web.$c.corscope" -- dotnet "$APP" "$port" > /dev/null 2>&1 &
        rec=$!
    fi
    for _ in $(seq 150); do curl -fs "http://127.0.0.1:$port/" > /dev/null 2>&1 && break; sleep 0.2; done
    [ -n "$pid" ] || pid=$(pgrep -P "$rec" -f "WebApp.dll $port" | head -1)
    [ -n "$pid" ] || { echo "corscope: bench/web.sh: no server on port $port" >&2; kill "$rec" 2> /dev/null; return 1; }
    PORT[c]=$port PID[c]=$pid REC[c]=$rec
}

# warm C: WARM s of load over the endpoints, not measured
warm() {
    local p w=$(( WARM / ${#PATHS[@]} > 0 ? WARM / ${#PATHS[@]} : 1 ))
    for p in "${PATHS[@]}"; do wrk -t1 -c16 -d"${w}s" "http://127.0.0.1:${PORT[$1]}$p" > /dev/null 2>&1 || true; done
}

# measure C: SECONDS_RUN s of load over the endpoints -> "cpu_us_per_request requests"
measure() {
    local p c0 c1 n=0 hz per=$(( SECONDS_RUN / ${#PATHS[@]} > 0 ? SECONDS_RUN / ${#PATHS[@]} : 1 ))
    c0=$(cpu_ticks "${PID[$1]}")
    for p in "${PATHS[@]}"; do
        wrk -t1 -c16 -d"${per}s" "http://127.0.0.1:${PORT[$1]}$p" > "$T/wrk.txt" 2>&1 || true
        n=$((n + $(awk '/requests in/ { print $1 }' "$T/wrk.txt")))
    done
    c1=$(cpu_ticks "${PID[$1]}")
    hz=$(getconf CLK_TCK)
    awk -v a="$c0" -v b="$c1" -v n="$n" -v hz="$hz" 'BEGIN { printf "%.1f %d\n", (b - a) / hz * 1e6 / n, n }'
}

# stop_server C: quits it; the CPU clock its recording used (chosen at
# start unless asked for) to $T/clock.C
stop_server() {
    local c=$1
    curl -fs "http://127.0.0.1:${PORT[$c]}/quit" > /dev/null 2>&1 || true
    wait "${REC[$c]}" || true
    [ "${CONFIGS[$c]#*|}" = - ] && return 0
    "$CORSCOPE" check "$T/web.$c.corscope" 2> /dev/null | sed -n 's/^  clock  *//p' >> "$T/clock.$c" || true
}

for c in "${!CONFIGS[@]}"; do : > "$T/r.$c"; : > "$T/clock.$c"; done
echo "machine: $(machine)"
echo "load average $(cut -d' ' -f1-3 /proc/loadavg) at the start"
if [ -n "${SIDE:-}" ]; then
    # every configuration's server at once, each measured in turn for a
    # short window, the order turning each round: the machine's drift
    # (other guests, the host's clock speed) moves all of them alike
    # (BLOCK=N: fresh servers every N rounds; a server's own state, how its
    # code tiered up, moves its CPU per request for its whole life)
    trap 'for c in "${!REC[@]}"; do kill "${REC[$c]}" 2> /dev/null; done; rm -rf "$T"' EXIT
    for r in $(seq "$ROUNDS"); do
        if [ $(( (r - 1) % ${BLOCK:-$ROUNDS} )) = 0 ]; then
            if [ "$r" != 1 ]; then for c in "${!CONFIGS[@]}"; do stop_server "$c"; done; fi
            for c in "${!CONFIGS[@]}"; do start_server "$c"; done
            for c in "${!CONFIGS[@]}"; do warm "$c"; done
        fi
        for k in "${!CONFIGS[@]}"; do
            c=$(( (k + r) % ${#CONFIGS[@]} ))
            measure "$c" >> "$T/r.$c"
        done
    done
    for c in "${!CONFIGS[@]}"; do stop_server "$c"; done
    trap 'rm -rf "$T"' EXIT
else
    for _ in $(seq "$ROUNDS"); do
        for c in "${!CONFIGS[@]}"; do
            start_server "$c"
            warm "$c"
            measure "$c" >> "$T/r.$c"
            stop_server "$c"
        done
    done
fi
echo "load average $(cut -d' ' -f1-3 /proc/loadavg) at the end"
echo
if [ -n "${SIDE:-}" ]; then
    echo "WebApp under wrk (1 thread, 16 connections, ${#PATHS[@]} endpoints), every configuration's server up at once, warmed $WARM s each, then $ROUNDS rounds of $SECONDS_RUN s on each in turn (the order turning; fresh servers every ${BLOCK:-$ROUNDS} rounds), medians:"
else
    echo "WebApp under wrk (1 thread, 16 connections, ${#PATHS[@]} endpoints, $SECONDS_RUN s measured after $WARM s of warm-up), $ROUNDS rounds interleaved, medians:"
fi
echo
echo "| configuration | server CPU per request | vs none | round by round (quartiles) | requests measured (median) | each round (us) |"
echo "|---|---:|---:|---:|---:|---|"
base=$(awk '{ print $1 }' "$T/r.0" | median 1)
for c in "${!CONFIGS[@]}"; do
    v=$(awk '{ print $1 }' "$T/r.$c" | median 1)
    n=$(awk '{ print $2 }' "$T/r.$c" | median 0)
    each=$(awk '{ printf "%s%s", sep, $1; sep = " " }' "$T/r.$c")
    # each round's ratio to the unprofiled server's in the same round
    rr=$(paste "$T/r.$c" "$T/r.0" | awk '{ print 100 * ($1 / $3 - 1) }' | spread %)
    echo "| ${CONFIGS[$c]%%|*} | $v us | $(awk -v v="$v" -v b="$base" 'BEGIN { printf "%+.1f%%", 100 * (v / b - 1) }') | $rr | $n | $each |"
done
echo
echo "The CPU clock each configuration's recordings used (corscope check), with how many rounds:"
echo
for c in "${!CONFIGS[@]}"; do
    [ -s "$T/clock.$c" ] || continue
    sort "$T/clock.$c" | uniq -c | sed 's/^ *\([0-9]*\) \(.*\)/\1x \2/' |
        while read -r line; do echo "- ${CONFIGS[$c]%%|*}: $line"; done
done
