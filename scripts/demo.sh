#!/bin/sh
# The main job: profile the bundled demo program (tests/apps/Demo) and write
# reports of it into build/demo/, then show the top of the table.
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=$ROOT/build/demo
mkdir -p "$OUT"
CORSCOPE=$ROOT/build/corscope
# one report; what the recording lost is said once, by the last one
report() { "$CORSCOPE" report "$@" 2> "$OUT/.report-err" || { cat "$OUT/.report-err" >&2; exit 1; }; }
"$CORSCOPE" record --force -o "$OUT/demo.corscope" -- dotnet "$ROOT/build/apps/Demo/Demo.dll" 4
report -f flamegraph -o "$OUT/demo.html" "$OUT/demo.corscope"
report -f collapsed -o "$OUT/demo.collapsed" "$OUT/demo.corscope"
report -f tree -o "$OUT/demo.tree" "$OUT/demo.corscope"
report -f speedscope -o "$OUT/demo.speedscope.json" "$OUT/demo.corscope"
report -f pprof -o "$OUT/demo.pb.gz" "$OUT/demo.corscope"
report -f top --limit 0 -o "$OUT/demo-top.txt" "$OUT/demo.corscope"
"$CORSCOPE" report -f top --limit 25 "$OUT/demo.corscope"
echo
echo "reports in $OUT: demo.html (flame graph, open it in a browser), demo-top.txt, demo.tree,"
echo "demo.collapsed, demo.speedscope.json, demo.pb.gz, and demo.corscope (the recording)"
