#!/usr/bin/env bash
# What the agent costs a process that waits: tests/apps/Fleet with no work,
# polling for a file every 50 ms (an idle service), under this tree's agent
# and a base revision's, interleaved run by run (environment only, as a
# service gets it).  Per run, over WINDOW seconds after 2 s of start-up:
# the agent thread's CPU (/proc/PID/task/TID/schedstat) and its wake-ups
# (voluntary context switches), and the whole process's CPU (the program's
# threads the agent woke included); medians.
#
#   bench/idle.sh [RUNS] [BASE] [WINDOW]   (default 5, 1e5e112, 5)
#   EVENT=wall bench/idle.sh ...   the agent in wall mode (default: its default)
#   BUSY=1 bench/idle.sh ...   the other end: tests/apps/CpuShares, its
#                              threads busy the whole time (samples, no
#                              events), run 2 s longer than the window
#
# The default base is main before the loop slept longer while quiet
# (loop_wake.h): every 10 ms, whatever arrived; for BUSY=1, take b3c37d0,
# before it slept longer while only samples arrive.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
RUNS=${1:-5}
BASE=${2:-1e5e112}
WINDOW=${3:-5}
BUSY=${BUSY:-}
EVENT=${EVENT:-}
source "$ROOT/bench/lib.sh"
T=$(mktemp -d "${TMPDIR:-/tmp}/corscope-bench.XXXXXX")
trap 'rm -rf "$T"; [ -n "${pid:-}" ] && kill "$pid" 2> /dev/null; true' EXIT
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 DOTNET_SKIP_FIRST_TIME_EXPERIENCE=1
make -C "$ROOT" -s all > /dev/null
[ -f "$ROOT/build/apps/Fleet/Fleet.dll" ] || make -C "$ROOT" -s apps > /dev/null
if [ -n "$BUSY" ]; then
    PROGRAM=("$ROOT/build/apps/CpuShares/CpuShares.dll" "$((WINDOW + 3))")
else
    PROGRAM=("$ROOT/build/apps/Fleet/Fleet.dll" 0 wait-file "$T/never")
fi

rev=$(git -C "$ROOT" rev-parse --short "$BASE")
OLD=$(base_agent "$rev")

# run TAG AGENT: one program (an idle Fleet, or busy CpuShares); its agent
# thread's CPU (ms) and wake-ups over the window, appended to $T/TAG.*
run() {
    local tag=$1 agent=$2 tid= a b c1 c2 p1 p2
    env ${EVENT:+CORSCOPE_EVENT=$EVENT} CORECLR_ENABLE_PROFILING=1 CORECLR_PROFILER='{14DE3B91-04FE-4EFB-B588-CD7BB380C74A}' \
        CORECLR_PROFILER_PATH="$agent" CORSCOPE_OUTPUT="$T/r-$tag-$RANDOM.corscope" \
        dotnet "${PROGRAM[@]}" > /dev/null 2>&1 &
    pid=$!
    sleep 2
    tid=$(grep -lx corscope /proc/"$pid"/task/*/comm | head -1 | cut -d/ -f5)
    a=$(awk '{ print $1 }' /proc/"$pid"/task/"$tid"/schedstat)
    c1=$(awk '/^voluntary_ctxt_switches/ { print $2 }' /proc/"$pid"/task/"$tid"/status)
    p1=$(awk '{ print $14 + $15 }' /proc/"$pid"/stat)
    sleep "$WINDOW"
    p2=$(awk '{ print $14 + $15 }' /proc/"$pid"/stat)
    b=$(awk '{ print $1 }' /proc/"$pid"/task/"$tid"/schedstat)
    c2=$(awk '/^voluntary_ctxt_switches/ { print $2 }' /proc/"$pid"/task/"$tid"/status)
    touch "$T/never"
    wait "$pid" || true
    rm -f "$T/never"
    pid=
    awk -v a="$a" -v b="$b" -v w="$WINDOW" 'BEGIN { print (b - a) / 1e6 / w }' >> "$T/$tag.cpu"
    awk -v a="$c1" -v b="$c2" -v w="$WINDOW" 'BEGIN { print (b - a) / w }' >> "$T/$tag.wakes"
    awk -v a="$p1" -v b="$p2" -v w="$WINDOW" -v hz="$(getconf CLK_TCK)" 'BEGIN { print (b - a) * 1000 / hz / w }' >> "$T/$tag.proc"
}

machine
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for _ in $(seq "$RUNS"); do
    run base "$OLD"
    run tree "$ROOT/build/libcorscope.so"
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "runs: $RUNS per agent, interleaved, a ${WINDOW} s $([ -n "$BUSY" ] && echo busy || echo idle) window each${EVENT:+, CORSCOPE_EVENT=$EVENT}; medians"
echo
echo "| agent | agent thread CPU, ms per second | wake-ups per second | process CPU, ms per second |"
echo "|---|---:|---:|---:|"
for tag in base tree; do
    name=$([ "$tag" = base ] && echo "base ($rev)" || echo "this tree")
    printf "| %s | %.2f | %.1f | %.1f |\n" "$name" "$(median < "$T/$tag.cpu")" "$(median < "$T/$tag.wakes")" "$(median < "$T/$tag.proc")"
done
