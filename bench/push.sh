#!/usr/bin/env bash
# What continuous profiling to Pyroscope costs (docs/performance.md, "Push"):
# tests/apps/Bench's fixed work, and tests/apps/Fleet's service-like mix of
# events for a fixed time, each recorded to a file (the baseline) and pushed
# to a loopback stand-in of Pyroscope (tests/push/standin.mjs), by `record
# --push` and by the agent alone (CORSCOPE_PUSH); configurations interleaved
# run by run, medians of RUNS runs.
#
#   bench/push.sh [RUNS]      (default 5)
#
# Measures per run: the program's own work time (Bench); the CPU (user+sys)
# of everything the run started: the program, its agent, record or the
# agent's uploader (they are this script's children, reaped, so their
# time is counted); and the CPU of the push itself (reading the stream,
# making the profiles, sending them): record's push threads (its summary
# line), the agent's uploader process in all (its last line, CORSCOPE_LOG=info).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
RUNS=${1:-5}
source "$ROOT/bench/lib.sh"
CORSCOPE=$ROOT/build/corscope
APPS=$ROOT/build/apps
T=$(mktemp -d "${TMPDIR:-/tmp}/corscope-bench-push.XXXXXX")
SRV=
trap '[ -z "$SRV" ] || kill "$SRV" 2> /dev/null; rm -rf "$T"' EXIT
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1
[ -x /usr/bin/time ] || { echo "corscope: bench/push.sh needs /usr/bin/time" >&2; exit 1; }

node "$ROOT/tests/push/standin.mjs" "$T/srv" > "$T/srv.log" 2>&1 &
SRV=$!
for _ in $(seq 100); do [ -s "$T/srv/port" ] && break; sleep 0.05; done
URL=http://127.0.0.1:$(cat "$T/srv/port")
AGENT_ENV=(CORECLR_ENABLE_PROFILING=1 "CORECLR_PROFILER={14DE3B91-04FE-4EFB-B588-CD7BB380C74A}"
    "CORECLR_PROFILER_PATH=$ROOT/build/libcorscope.so")

# configurations: label | how
CONFIGS=(
    "no profiler|none"
    "record -o (the baseline)|record"
    "record --push, every 15 s|push 15s"
    "record --push, every 1 s|push 1s"
    "agent alone, CORSCOPE_OUTPUT (file)|alone-file"
    "agent alone, CORSCOPE_PUSH, every 15 s|alone-push 15s"
)

# run_once HOW EVENTS CMD... -> "work_s cpu_s session_cpu_s"
run_once() {
    local how=$1 events=$2
    shift 2
    local every=${how#* }
    rm -rf "$T/out" "$T/rec.corscope" "$T"/alone-*.corscope "$T/spool"
    case $how in
    none) /usr/bin/time -f "%U %S" -o "$T/time" "$@" > "$T/out" ;;
    record) /usr/bin/time -f "%U %S" -o "$T/time" "$CORSCOPE" record -q -e "$events" -o "$T/rec.corscope" \
        -- "$@" > "$T/out" ;;
    push*) /usr/bin/time -f "%U %S" -o "$T/time" "$CORSCOPE" record -e "$events" --push "$URL" \
        --push-every "$every" --push-spool "$T/spool" --service bench -- "$@" > "$T/out" 2> "$T/err" ;;
    alone-file) /usr/bin/time -f "%U %S" -o "$T/time" env "${AGENT_ENV[@]}" CORSCOPE_EVENT="$events" \
        CORSCOPE_OUTPUT="$T/alone-%p.corscope" "$@" > "$T/out" ;;
    alone-push*)
        # the uploader is the program's sibling: this bash's child, waited
        # for, so that /usr/bin/time counts it
        /usr/bin/time -f "%U %S" -o "$T/time" bash -c 'env "$@" > "$0/out"; while pgrep -f "corscope push --agent" -P $$ > /dev/null; do sleep 0.05; done' \
            "$T" "${AGENT_ENV[@]}" CORSCOPE_EVENT="$events" CORSCOPE_PUSH="$URL" CORSCOPE_PUSH_EVERY="$every" \
            CORSCOPE_PUSH_SPOOL="$T/spool" CORSCOPE_SERVICE=bench CORSCOPE_LOG=info "$@" 2> "$T/err" ;;
    esac
    local work session
    work=$(awk '/^bench threads/ { for (i = 1; i < NF; i++) if ($i == "ms") print $(i + 1) / 1000 }' "$T/out")
    session=$(sed -n 's/.*uploader CPU \([0-9.]*\) s.*/\1/p; s/.*the uploader used \([0-9.]*\) s of CPU.*/\1/p' \
        "$T/err" 2> /dev/null | tail -1 || true)
    awk -v w="${work:-0}" -v s="${session:--}" '{ printf "%.4f %.3f %s\n", w, $1 + $2, s }' "$T/time"
    : > "$T/err"
}

col() {
    local v
    v=$(awk -v c="$1" '$c != "-" { print $c }' "$2")
    if [ -n "$v" ]; then echo "$v" | median 3; else echo -; fi
}
pct() { awk -v m="$1" -v b="$2" 'BEGIN { printf "%+.1f%%", 100 * (m - b) / b }'; }

echo "machine: $(machine), .NET $(dotnet --list-runtimes | awk '/NETCore/ { v = $2 } END { print v }'), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "runs: $RUNS per cell, interleaved; medians; the stand-in on loopback"
echo
WORKLOADS=(
    "Bench, $(nproc) busy threads, -e cpu|cpu|dotnet $APPS/Bench/Bench.dll $(nproc) 60000 0"
    "Fleet for 20 s, -e cpu,alloc,exceptions,lock|cpu,alloc,exceptions,lock|dotnet $APPS/Fleet/Fleet.dll 20"
)
for w in "${WORKLOADS[@]}"; do
    IFS='|' read -r label events cmd <<< "$w"
    for c in "${!CONFIGS[@]}"; do : > "$T/times.$c"; done
    for _ in $(seq "$RUNS"); do
        for c in "${!CONFIGS[@]}"; do
            # shellcheck disable=SC2086
            run_once "${CONFIGS[$c]##*|}" "$events" $cmd >> "$T/times.$c"
        done
    done
    echo "**$label**"
    echo
    echo "| configuration | work | CPU of the run (user+sys) | vs no profiler | vs record -o | push session's CPU |"
    echo "|---|---|---|---|---|---|"
    bw=$(col 1 "$T/times.0") bc=$(col 2 "$T/times.0") rc=$(col 2 "$T/times.1")
    for c in "${!CONFIGS[@]}"; do
        mw=$(col 1 "$T/times.$c") mc=$(col 2 "$T/times.$c") ms=$(col 3 "$T/times.$c")
        work=$([ "$mw" = 0.0000 ] && echo - || echo "$mw s")
        echo "| ${CONFIGS[$c]%%|*} | $work | $mc s | $([ "$c" = 0 ] && echo - || pct "$mc" "$bc") | $([ "$c" -le 1 ] && echo - || pct "$mc" "$rc") | $([ "$ms" = - ] && echo - || echo "$ms s") |"
    done
    echo
done
echo "profiles received by the stand-in: $(ls "$T/srv"/req-*.json | wc -l), refused: $(ls "$T/srv" | grep -c refused || true)"
