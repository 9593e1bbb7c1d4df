#!/usr/bin/env bash
# Attaching to a running service: what it costs while attached, beside
# dotnet-trace's attach, and how soon the first sample comes.
#
# The service is tests/apps/AttachService under a fixed open-loop load on the
# loopback (RATE requests a second, each about half a millisecond of its CPU).
# Each round measures SECONDS of load in three phases, in turn:
#   none          nothing attached
#   corscope      `corscope record -p PID` (cpu, 10 ms, the signal sampler,
#                 perf_event clocks)
#   corscope-posix  the same with --cpu-clock posix
#   dotnet-trace  `dotnet-trace collect -p PID` with the sample profiler and
#                 the runtime's default keywords (trace_attach.md B8)
# and reports, as medians over ROUNDS rounds: the service's own CPU time per
# request (what it measures around the work), the whole process's CPU per
# request (/proc/PID/stat: the work, the server, and the profiler inside
# it), the tool's own CPU per second (corscope, or dotnet-trace, outside the
# service), and the latency's median and 90th percentile.
#
# Then ATTACHES times: the time from starting `corscope record -p` to the
# recording's first sample (its start time plus the first sample's offset),
# and to corscope's "attached" line (the runtime's answer).
#
#   bench/attach.sh [ROUNDS] [SECONDS]        (default 3 rounds of 5 s)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$here/.." && pwd)
source "$here/lib.sh"
ROUNDS=${1:-3}
SECONDS_EACH=${2:-5}
RATE=${RATE:-200}
ATTACHES=${ATTACHES:-10}
CORSCOPE=$ROOT/build/corscope
APP="dotnet $ROOT/build/apps/AttachService/AttachService.dll"
TRACE=$ROOT/build/tools/dotnet-trace
if [ ! -x "$TRACE" ]; then
    dotnet tool install dotnet-trace --tool-path "$ROOT/build/tools" > /dev/null ||
        { echo "corscope: cannot install dotnet-trace into build/tools" >&2; exit 1; }
fi
T=$(mktemp -d "${TMPDIR:-/tmp}/corscope-bench.XXXXXX")
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1

nice $APP serve > "$T/svc.out" 2> "$T/svc.err" &
SVC=$!
trap 'kill $SVC 2> /dev/null || true; rm -rf "$T"' EXIT
for _ in $(seq 100); do grep -q listening "$T/svc.out" && break; sleep 0.1; done
URL=$(awk '/^listening on/ { print $3 }' "$T/svc.out")
TICKS=$(getconf CLK_TCK)
# started with SIGINT at its default (a script's background jobs have it
# ignored), so that both tools can be stopped as with Ctrl-C
with_sigint() {
    exec python3 -c 'import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_DFL)
os.execvp(sys.argv[1], sys.argv[1:])' "$@"
}
proc_cpu_ms() { awk -v t="$TICKS" '{ sub(/.*\) /, ""); print ($12 + $13) * 1000 / t }' /proc/"$1"/stat; }
# warm-up: the service's code tiered up, the load's too
nice $APP load "$URL" 3 "$RATE" > /dev/null

echo "# attach: $(machine); load $RATE req/s for $SECONDS_EACH s per phase, $ROUNDS rounds (medians)"
: > "$T/rows"
for round in $(seq "$ROUNDS"); do
    for phase in none corscope corscope-posix dotnet-trace; do
        tool=
        case $phase in
        corscope*)
            clock=perf
            [ "$phase" = corscope-posix ] && clock=posix
            with_sigint nice "$CORSCOPE" record -q -p "$SVC" --cpu-clock "$clock" -o "$T/r.corscope" \
                --force > /dev/null 2>&1 &
            tool=$!
            sleep 1 ;;
        dotnet-trace)
            with_sigint nice "$TRACE" collect -p "$SVC" -o "$T/t.nettrace" \
                --providers Microsoft-DotNETCore-SampleProfiler,Microsoft-Windows-DotNETRuntime:0x14C14FCCBD:4 \
                > /dev/null 2>&1 &
            tool=$!
            sleep 4 ;; # it is a .NET program itself: seconds to start and connect
        esac
        svc0=$(proc_cpu_ms "$SVC")
        tool0=$([ -n "$tool" ] && proc_cpu_ms "$tool" || echo 0)
        t0=$(date +%s%N)
        nice $APP load "$URL" "$SECONDS_EACH" "$RATE" > "$T/load.out"
        t1=$(date +%s%N)
        svc1=$(proc_cpu_ms "$SVC")
        tool1=$([ -n "$tool" ] && proc_cpu_ms "$tool" || echo 0)
        if [ -n "$tool" ]; then
            kill -INT "$tool"
            wait "$tool" || true
        fi
        if [ "$phase" = corscope ] || [ "$phase" = corscope-posix ]; then
            # the agent's own thread, from the recording
            "$CORSCOPE" check "$T/r.corscope" | grep -o 'sampler_cpu_ns=[0-9]*' | cut -d= -f2 \
                | awk -v p="$phase" -v s="$SECONDS_EACH" '{ printf "%s %.1f\n", p, $1 / 1e6 / (s + 1) }' >> "$T/agent"
        fi
        read -r _ count errors < <(grep '^total' "$T/load.out")
        [ "$errors" = 0 ] || { echo "corscope: $errors wrong responses under $phase" >&2; exit 1; }
        awk -v phase="$phase" -v count="$count" -v svc="$((${svc1%.*} - ${svc0%.*}))" \
            -v tool="$(awk -v a="$tool0" -v b="$tool1" 'BEGIN { print b - a }')" \
            -v secs="$(( (t1 - t0) / 1000000 ))" '
            $1 == "w" { lat[n] = $5; p90[n] = $6; cpu[n++] = $8 }
            function med(a, k,   i, j, t) { for (i = 1; i < k; i++) for (j = i; j > 0 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t } return a[int(k / 2)] }
            END { printf "%s %.1f %.1f %.1f %d %d\n", phase, med(cpu, n) / 1000, svc * 1000 / count,
                  tool * 1000 / secs, med(lat, n), med(p90, n) }' "$T/load.out" >> "$T/rows"
    done
done
printf '%-13s %16s %18s %14s %12s %12s\n' phase "work us/request" "process us/request" "tool ms/s" "latency us" "p90 us"
for phase in none corscope corscope-posix dotnet-trace; do
    col() { awk -v p="$phase" -v c="$1" '$1 == p { print $c }' "$T/rows" | median 1; }
    printf '%-13s %16s %18s %14s %12s %12s\n' "$phase" "$(col 2)" "$(col 3)" "$(col 4)" "$(col 5)" "$(col 6)"
done

for phase in corscope corscope-posix; do
    echo "# $phase: the agent's own thread, ms of CPU per second attached: $(awk -v p="$phase" '$1 == p { print $2 }' "$T/agent" | median 1)"
done

# time to the first sample, and to the runtime's answer, under the load
nice $APP load "$URL" $((ATTACHES * 4 + 5)) "$RATE" > /dev/null &
LOAD=$!
sleep 2
: > "$T/first"
for i in $(seq "$ATTACHES"); do
    t0=$(date +%s%N)
    "$CORSCOPE" record -p "$SVC" -d 1s -o "$T/f.corscope" --force 2> "$T/f.err" > /dev/null
    start=$("$CORSCOPE" check "$T/f.corscope" | awk '$1 == "started" { print $2 }')
    "$CORSCOPE" report -f chrome -o "$T/f.json" "$T/f.corscope" 2> /dev/null
    first_us=$(grep -o '"ph":"X"[^}]*"ts":[0-9.]*' "$T/f.json" | sed 's/.*"ts"://' | sort -n | head -1)
    answered=$(grep -o 'in [0-9]* ms' "$T/f.err" | awk '{ print $2 }')
    awk -v s="$start" -v f="$first_us" -v t="$t0" -v a="$answered" \
        'BEGIN { printf "%.1f %s\n", (s + f * 1000 - t) / 1e6, a }' >> "$T/first"
done
wait "$LOAD" || true
echo "# record -p to the first sample, ms (median of $ATTACHES): $(awk '{ print $1 }' "$T/first" | median 1)" \
    "(min $(awk '{ print $1 }' "$T/first" | sort -n | head -1), max $(awk '{ print $1 }' "$T/first" | sort -n | tail -1));" \
    "to the runtime's answer: $(awk '{ print $2 }' "$T/first" | median 1) ms"
