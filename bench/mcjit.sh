#!/usr/bin/env bash
# What losing multicore JIT costs a program that asks for it
# (src/agent/mcjit.h: the runtime ignores ProfileOptimization.SetProfileRoot
# while a profiler follows compilations).  A console program, generated once
# under build/bench-mcjit, calls METHODS distinct methods once each at its
# start (each compiled at tier 0: the start-up multicore JIT is for), after
# SetProfileRoot and StartProfile when asked; a first run writes the profile
# the later runs play.  Four configurations, interleaved run by run, medians
# of the process's wall time:
#   plain                     no multicore JIT, no profiler
#   plain, multicore JIT      the profile played: what the program gets alone
#   record                    no multicore JIT, under `corscope record`
#   record, multicore JIT     asked for, under record: the runtime ignores it
#
#   bench/mcjit.sh [RUNS] [METHODS]     (default 11 and 4000)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
RUNS=${1:-11}
METHODS=${2:-4000}
source "$ROOT/bench/lib.sh"
CORSCOPE=$ROOT/build/corscope
T=$(mktemp -d "${TMPDIR:-/tmp}/corscope-bench.XXXXXX")
trap 'rm -rf "$T"' EXIT
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 DOTNET_SKIP_FIRST_TIME_EXPERIENCE=1
make -C "$ROOT" -s all > /dev/null

W=$ROOT/build/bench-mcjit/$METHODS
if [ ! -f "$W/.ready" ]; then
    rm -rf "$W" && mkdir -p "$W"
    (
        cd "$W"
        dotnet new console -o App > /dev/null
        python3 - "$METHODS" > App/Program.cs << 'PY'
import sys
n = int(sys.argv[1])
print("using System; using System.Runtime;")
print("static class M {")
for i in range(n):
    # a little of everything the JIT works at: a loop, a branch, a call
    print(f"  static long F{i}(long x) {{ long s = {i}; for (int k = 0; k < 3; k++) "
          f"s += (x ^ k) % {i % 13 + 2} == 0 ? Math.Max(s, x) : s >> 1; return s + x * {i % 7}; }}")
print("  static int Main(string[] a) {")
print("    if (a.Length > 1 && a[0] == \"ask\") { ProfileOptimization.SetProfileRoot(a[1]); "
      "ProfileOptimization.StartProfile(\"app.profile\"); }")
print("    long s = 0;")
for i in range(n):
    print(f"    s += F{i}({i});")
print("    return (int)(s & 1); } }")
PY
        dotnet build -c Release -o bin App --source "${NUGET_PACKAGES:-$HOME/.nuget/packages}" \
            > "$T/build.log" 2>&1 || { cat "$T/build.log" >&2; exit 1; }
    )
    touch "$W/.ready"
fi
APP=$W/bin/App.dll
mkdir -p "$T/profile"
dotnet "$APP" ask "$T/profile" || true # writes the profile the runs play
[ -s "$T/profile/app.profile" ] || { echo "corscope: the program wrote no multicore JIT profile (fewer than two CPUs?)" >&2; exit 1; }

# one TAG RECORD ASK: one run's wall time, ms (RECORD 1: under record; ASK 1:
# multicore JIT asked for)
one() {
    local tag=$1 how=() args=(none) t0 t1
    [ "$2" = 1 ] && { how=("$CORSCOPE" record -q -o "$T/r.corscope" --); rm -f "$T/r.corscope"; }
    [ "$3" = 1 ] && args=(ask "$T/profile")
    t0=$(date +%s%N)
    "${how[@]}" dotnet "$APP" "${args[@]}" || true
    t1=$(date +%s%N)
    echo $(((t1 - t0) / 1000000)) >> "$T/$tag.wall"
}

echo "machine: $(machine), .NET SDK $(dotnet --version); $METHODS methods at start"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for _ in $(seq "$RUNS"); do
    one plain 0 0
    one plainmcj 0 1
    one record 1 0
    one recordmcj 1 1
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| configuration | wall (median of $RUNS) | x plain |"
echo "|---|---:|---:|"
p=$(median 0 < "$T/plain.wall")
for c in "plain|plain" "plainmcj|plain, multicore JIT (profile played)" "record|corscope record" \
    "recordmcj|corscope record, multicore JIT asked for (the runtime ignores it)"; do
    w=$(median 0 < "$T/${c%%|*}.wall")
    awk -v l="${c#*|}" -v w="$w" -v p="$p" 'BEGIN { printf "| %s | %d ms | %.3f |\n", l, w, w / p }'
done
for tag in plain plainmcj record recordmcj; do
    echo "each run, $tag, ms: $(tr '\n' ' ' < "$T/$tag.wall")"
done
