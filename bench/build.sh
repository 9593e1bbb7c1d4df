#!/usr/bin/env bash
# What recording a real `dotnet build` costs (issue 28 item 1's goal: wall
# time under `record` at most 1.05x plain).  A four-project solution
# (Lib1; Lib2 and Lib3 on Lib1; App on Lib2 and Lib3), generated once with
# `dotnet new` under build/bench-build/tree and restored offline (no
# package source but the local NuGet cache: a classlib and a console need
# only the SDK's own packs); every run rebuilds it whole (--no-incremental)
# without build servers or node reuse, so the MSBuild nodes and each csc are
# processes of the tree, each paying the agent's start-up and its share of
# the sampling.  Three configurations, interleaved run by run:
#   plain                                  no profiler
#   corscope record                        the default (the application's
#                                          processes only: for a build,
#                                          none of the SDK's)
#   corscope record --all-processes        every .NET process of the tree
#   corscope record --cpu-clock posix      the default with the POSIX timers:
#                                          what the precise clock's timer
#                                          costs this machine (a virtual
#                                          machine pays at every switch)
# Per configuration: the median wall time, the median CPU time of the whole
# tree (user + sys of the build and every process it waited for), the
# median of the run-by-run wall ratios to the plain build just before (with
# quartiles: the machine's drift moves both builds of a round alike), and
# the recordings written.  The load average before and after, since this
# is a machine shared with others.
#
#   bench/build.sh [RUNS]     (default 5)
#   BASE=DIR bench/build.sh   adds `record` with the corscope (and agent) in
#                             DIR (another build's), interleaved with the rest
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
RUNS=${1:-5}
source "$ROOT/bench/lib.sh"
CORSCOPE=${CORSCOPE:-$ROOT/build/corscope}
BASE=${BASE:-}
T=$(mktemp -d "${TMPDIR:-/tmp}/corscope-bench.XXXXXX")
trap 'rm -rf "$T"' EXIT
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 DOTNET_SKIP_FIRST_TIME_EXPERIENCE=1
make -C "$ROOT" -s all > /dev/null

W=$(bench_tree)
BUILD=(dotnet build "$W" --no-restore --no-incremental -nodeReuse:false --disable-build-servers
    -p:UseSharedCompilation=false -v:q -clp:NoSummary)

# one TAG [RECORD OPTIONS...]: one build (under record when options are
# given; "-" alone is record's default), its wall ms, CPU ms and recordings
one() {
    local tag=$1 t0 t1
    shift
    rm -rf "$T/rec" && mkdir -p "$T/rec"
    t0=$(date +%s%N)
    if [ $# = 0 ]; then
        /usr/bin/time -f '%U %S' -o "$T/time" "${BUILD[@]}" > /dev/null
    else
        [ "$1" = - ] && shift
        /usr/bin/time -f '%U %S' -o "$T/time" "${CLI:-$CORSCOPE}" record -q "$@" -o "$T/rec/b.corscope" -- \
            "${BUILD[@]}" > /dev/null 2> "$T/rec/log" || true
    fi
    t1=$(date +%s%N)
    echo $(((t1 - t0) / 1000000)) >> "$T/$tag.wall"
    awk '{ print ($1 + $2) * 1000 }' "$T/time" >> "$T/$tag.cpu"
    find "$T/rec" -name '*.corscope' | wc -l >> "$T/$tag.procs"
}

echo "machine: $(machine), .NET SDK $(dotnet --version)${BASE:+; base: $BASE}"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
"${BUILD[@]}" > /dev/null # a first build, not counted (disk caches)
for _ in $(seq "$RUNS"); do
    one plain
    one default -
    one all --all-processes
    one posix - --cpu-clock posix
    if [ -n "$BASE" ]; then CLI=$BASE/corscope one base -; fi
done
wall() { median 0 < "$T/$1.wall"; }
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "dotnet build of four projects (--no-incremental, no build servers), $RUNS runs each, interleaved; medians:"
echo
echo "| configuration | wall time | x plain | x plain, round by round (quartiles) | tree CPU | x plain | recordings |"
echo "|---|---:|---:|---:|---:|---:|---:|"
p=$(wall plain)
pc=$(median 0 < "$T/plain.cpu")
# rounds TAG: the median and quartiles of TAG's wall time over the plain
# build of the same round, "1.052 (1.031 .. 1.080)"
rounds() {
    [ "$1" = plain ] && { echo "-"; return; }
    paste "$T/$1.wall" "$T/plain.wall" | awk '{ print $1 / $2 }' | sort -n |
        awk '{ v[NR] = $1 } END { q1 = v[int((NR + 3) / 4)]; q3 = v[int((3 * NR + 3) / 4)]
            m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
            printf "%.3f (%.3f .. %.3f)\n", m, q1, q3 }'
}
for c in "plain|no profiler" "default|corscope record" "all|corscope record --all-processes" \
    "posix|corscope record --cpu-clock posix" "base|corscope record, base build"; do
    tag=${c%%|*}
    [ -s "$T/$tag.wall" ] || continue
    w=$(wall "$tag")
    cpu=$(median 0 < "$T/$tag.cpu")
    awk -v l="${c#*|}" -v w="$w" -v p="$p" -v r="$(rounds "$tag")" -v c="$cpu" -v pc="$pc" \
        -v n="$(median 0 < "$T/$tag.procs")" \
        'BEGIN { printf "| %s | %.1f s | %.3f | %s | %.1f s | %.3f | %s |\n", l, w / 1000, w / p, r, c / 1000, c / pc, n }'
done
echo
for tag in plain default all posix base; do
    [ -s "$T/$tag.wall" ] || continue
    echo "each run, $tag, s: $(awk '{ printf "%.1f ", $1 / 1000 }' "$T/$tag.wall")"
done
