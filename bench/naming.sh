#!/usr/bin/env bash
# How much of the runtime's own work the reports name, on three programs
# corscope was not written for: a cold start of the C# compiler (csc.dll from
# the SDK compiling a small file), the demo (tests/apps/Demo), and an
# ASP.NET Core app under load (tests/apps/MiniWeb, wrk on 127.0.0.1).
# For each: the share of samples in the runtime's own code and the share of
# those carrying a label (`corscope check`), the library!+0x rows among the
# 20 of `report -f top` with and without --native raw, and the depth of the
# main thread's first managed frame.
# Usage: bench/naming.sh [RUNS]   (csc is run RUNS times, default 5: medians)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
source "$ROOT/bench/lib.sh"
C=$ROOT/build/corscope
APPS=$ROOT/build/apps
RUNS=${1:-5}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

# shares FILE -> "RUNTIME% NAMED%" from check's "runtime work" line
shares() { "$C" check "$1" | awk '/runtime work cpu:/ { n = 0; for (i = 1; i <= NF; i++) if ($i ~ /%$/) { sub("%", "", $i); v[++n] = $i } print v[1], v[2] }'; }
# offsets FILE [OPTS] -> rows of the 20 of top naming library!+0x
offsets() { local f=$1; shift; "$C" report -f top --limit 20 "$@" "$f" 2> /dev/null | grep -c '!+0x' || true; }
# depth FILE -> deepest first managed frame (1-based) over the main thread's stacks
depth() {
    local pid
    pid=$("$C" check "$1" | awk '$1 == "pid" { print $2 }')
    "$C" report -f collapsed --thread "$pid" "$@" 2> /dev/null | awk '{
        sub(/ [0-9]+$/, ""); n = split($0, f, ";")
        for (i = 1; i <= n; i++) if (f[i] !~ /^\[/ && f[i] !~ /!/ && f[i] !~ /\.so(\.[0-9]+)*$/) { if (i > d) d = i; break }
    } END { print d + 0 }'
}
row() { # NAME FILE
    read -r rt named < <(shares "$2")
    printf '| %s | %s%% | %s%% | %s | %s | %s |\n' "$1" "$rt" "$named" "$(offsets "$2" --native raw)" \
        "$(offsets "$2")" "$(depth "$2")"
}

echo "machine: $(machine)"
echo "| program | samples in the runtime's code | of those, named | lib!+0x rows in top 20, raw | folded | main thread's first managed frame, depth |"
echo "|---|---|---|---|---|---|"

csc=$(ls /usr/share/dotnet/sdk/*/Roslyn/bincore/csc.dll | tail -1)
refs=$(ls -d /usr/share/dotnet/packs/Microsoft.NETCore.App.Ref/*/ref/net*/ | tail -1)
printf 'using System.Linq; static class P { static int Main() { var d = new System.Collections.Generic.Dictionary<string, int>(); foreach (var x in Enumerable.Range(0, 100).Select(i => i * i)) d[x.ToString()] = x; System.Console.WriteLine(d.Count); return 0; } }\n' > "$T/Hello.cs"
{ for f in "$refs"*.dll; do echo "-r:$f"; done; echo "-out:$T/Hello.dll"; echo "-nologo"; echo "$T/Hello.cs"; } > "$T/csc.rsp"
for i in $(seq "$RUNS"); do
    nice "$C" record -q --force -i 1ms -o "$T/csc$i.corscope" -- dotnet "$csc" "@$T/csc.rsp" > /dev/null
    shares "$T/csc$i.corscope" >> "$T/csc.shares"
done
rt=$(awk '{ print $1 }' "$T/csc.shares" | median 1)
named=$(awk '{ print $2 }' "$T/csc.shares" | median 1)
printf '| csc cold start (median of %s, 1 ms) | %s%% | %s%% (%s to %s) | %s | %s | %s |\n' "$RUNS" "$rt" "$named" \
    "$(awk '{ print $2 }' "$T/csc.shares" | sort -n | head -1)" "$(awk '{ print $2 }' "$T/csc.shares" | sort -n | tail -1)" \
    "$(offsets "$T/csc1.corscope" --native raw)" "$(offsets "$T/csc1.corscope")" "$(depth "$T/csc1.corscope")"

nice "$C" record -q --force -o "$T/demo.corscope" -- dotnet "$APPS/Demo/Demo.dll" 4 > /dev/null
row "demo (4 s)" "$T/demo.corscope"

port=$((20000 + RANDOM % 20000))
nice "$C" record -q --force -o "$T/web.corscope" -- dotnet "$APPS/MiniWeb/MiniWeb.dll" "$port" 12 > "$T/web.out" &
for _ in $(seq 100); do grep -q listening "$T/web.out" 2> /dev/null && break; sleep 0.1; done
wrk -t2 -c32 -d8s "http://127.0.0.1:$port/json" > "$T/wrk.out"
wait
row "MiniWeb under wrk ($(awk '/Requests\/sec/ { printf "%.0f", $2 }' "$T/wrk.out") req/s, 8 s)" "$T/web.corscope"
