#!/usr/bin/env bash
# The signal handler's time per sample, this tree's agent against a base
# revision's, from each recording's own counters (handler_ns / samples:
# entry to return on the program's threads, docs/format.md).  The
# process's wall and CPU times move by more than a handler's microseconds
# on this machine; the handler's own clock does not.  Interleaved runs of
# one program under the agent as `record` starts it (environment only,
# CORSCOPE_ASYNC=on), at 1 ms with the perf_event clock (every sample a
# walk); each run's number, then the medians.
#
#   bench/handler.sh [RUNS] [BASE] [ARGS...]   (default 5, HEAD~1,
#                                               AsyncChain all 500)
#   RUNTIME=8 bench/handler.sh ...   the program on .NET 8 (or 9: build/dotnet-V
#                                    and build/rtV from tests/apps/runtimes.sh V),
#                                    where every async chain is read
#                                    through the kernel
# ARGS: a program of tests/apps and its arguments.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
RUNS=${1:-5}
BASE=${2:-HEAD~1}
shift $(($# < 2 ? $# : 2))
[ $# -gt 0 ] || set -- AsyncChain all 500
RUNTIME=${RUNTIME:-10}
source "$ROOT/bench/lib.sh"
T=$(mktemp -d "${TMPDIR:-/tmp}/corscope-bench.XXXXXX")
trap 'rm -rf "$T"' EXIT
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1
make -C "$ROOT" -s all > /dev/null
rev=$(git -C "$ROOT" rev-parse --short "$BASE")
NEW=$ROOT/build/libcorscope.so OLD=$(base_agent "$rev")
app=$1
shift
if [ "$RUNTIME" = 10 ]; then
    [ -f "$ROOT/build/apps/$app/$app.dll" ] || make -C "$ROOT" -s apps > /dev/null
    CMD=(dotnet "$ROOT/build/apps/$app/$app.dll" "$@")
else
    export DOTNET_ROOT=$ROOT/build/dotnet-$RUNTIME
    [ -f "$DOTNET_ROOT/.ready" ] && [ -x "$ROOT/build/rt$RUNTIME/apps/$app/$app" ] ||
        { echo "corscope: bench/handler.sh: no .NET $RUNTIME build of $app (make runtimes)" >&2; exit 1; }
    CMD=("$ROOT/build/rt$RUNTIME/apps/$app/$app" "$@")
fi

run() { # TAG AGENT: one run, its handler's us per sample appended to $T/TAG
    rm -f "$T/r.corscope"
    CORECLR_ENABLE_PROFILING=1 CORECLR_PROFILER='{14DE3B91-04FE-4EFB-B588-CD7BB380C74A}' \
        CORECLR_PROFILER_PATH="$2" CORSCOPE_OUTPUT="$T/r.corscope" CORSCOPE_ASYNC=on \
        CORSCOPE_INTERVAL=1ms CORSCOPE_CPU_CLOCK=perf "${CMD[@]}" > /dev/null
    "$ROOT/build/corscope" check "$T/r.corscope" | tr ' ' '\n' |
        awk -F= 'NF == 2 && $1 == "handler_ns" { h = $2 } NF == 2 && $1 == "samples" { s = $2 }
            END { if (s) printf "%.1f\n", h / s / 1000 }' >> "$T/$1"
}

echo "machine: $(machine), .NET $RUNTIME; load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for _ in $(seq "$RUNS"); do
    run base "$OLD"
    run new "$NEW"
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "$app $* at 1 ms, the handler's us per sample, $RUNS runs each, interleaved:"
echo
echo "| agent | each run (sorted) | median |"
echo "|---|---|---|"
echo "| base ($rev) | $(sort -n "$T/base" | tr '\n' ' ')| $(median 1 < "$T/base") |"
echo "| this tree | $(sort -n "$T/new" | tr '\n' ' ')| $(median 1 < "$T/new") |"
