# Every report format, checked by the tools people load them into
# (tests/viewers/check.mjs: pprof-format, the speedscope schema, headless
# Chromium on the flame graph and its timeline (a dragged range against
# report --from/--to), also on a recording of several events), plus
# the text formats, --min, --diff, `record -o app.html`, and the timeline's
# marks of throws, lock waits and compilations against the text reports'
# counts.  Screenshots of the flame graph are kept in build/viewers/.
source "$(dirname "$0")/lib.sh"

VIEWERS=$ROOT/tests/viewers
[ -d "$VIEWERS/node_modules/playwright-core" ] || fail "tests/viewers has no node_modules: run scripts/install-deps.sh"
command -v chromium > /dev/null || fail "chromium is not installed: run scripts/install-deps.sh"

cs record -q -i 1ms -o "$T/r.corscope" -- $(app CpuShares) 2 > /dev/null
mkdir -p "$T/v"
# the extension picks the format
for ext in collapsed tree html speedscope.json pb.gz trace.json; do
    cs report -o "$T/v/report.$ext" "$T/r.corscope" 2> /dev/null || fail "report -o report.$ext failed"
done
# several events in one recording: pprof's sample types, speedscope's
# profiles and the flame graph's event selector (reported with --event alloc)
# an output that is not a file (a FIFO here; /dev/null alike) is written in
# place, never replaced by a file renamed over it (as root, `report -o
# /dev/null` once made /dev/null a regular file for the whole machine)
mkfifo "$T/pipe"
timeout 60 cat "$T/pipe" > "$T/piped" &
reader=$!
cs report -f collapsed -o "$T/pipe" "$T/r.corscope" 2> "$T/pipe.err" || fail "report -o FIFO: $(cat "$T/pipe.err")"
wait "$reader" || fail "report -o FIFO: nothing came through it (the FIFO was replaced?)"
[ -p "$T/pipe" ] || fail "report -o FIFO: the FIFO was replaced by a file"
cs report -f collapsed "$T/r.corscope" 2> /dev/null | cmp -s - "$T/piped" || fail "report -o FIFO: not the report"
note "report -o FIFO: written in place, $(wc -l < "$T/piped") lines"

cs record -q -e cpu,live,gc -i 1ms -o "$T/ev.corscope" -- $(app Memory) live 20 80 > /dev/null
for ext in html speedscope.json pb.gz; do
    cs report --event alloc -o "$T/v/events.$ext" "$T/ev.corscope" 2> /dev/null || fail "report --event alloc -o events.$ext failed"
done
for ev in alloc live; do
    cs report -f collapsed --event $ev "$T/ev.corscope" > "$T/v/events.$ev.collapsed" 2> /dev/null
done
cs report -f gc "$T/ev.corscope" > "$T/v/events.gc.txt" 2> /dev/null
CORSCOPE=$CORSCOPE node "$VIEWERS/check.mjs" "$T/v" CpuShares.Work.Alpha "$ROOT/build/viewers" "$T/r.corscope" ||
    fail "viewer checks failed"

# the timeline's marks: every throw, lock wait and compilation the text
# reports count, marked on the page (GC pauses are checked by check.mjs)
cs record -q -e cpu,exceptions,lock,jit -o "$T/marks.corscope" -- $(app Fleet) 2 > /dev/null ||
    fail "record Fleet for the marks"
cs report -f flamegraph -o "$T/marks.html" "$T/marks.corscope" 2> /dev/null || fail "flame graph of Fleet"
node -e '
const text = require("fs").readFileSync(process.argv[1], "utf8");
const re = /"kind":"(\w+)","name":"[^"]*","spans":\[([0-9,]*)\]/g;
const n = {};
for (let m; (m = re.exec(text)); ) {
  const v = m[2] ? m[2].split(",").map(Number) : [];
  let c = 0;
  for (let j = 2; j < v.length; j += 4) c += v[j];
  n[m[1]] = c;
}
for (const k of ["exception", "lock", "jit"]) console.log(k, n[k] ?? 0);
' "$T/marks.html" > "$T/marks.txt"
marked() { awk -v k="$1" '$1 == k { print $2 }' "$T/marks.txt"; }
thrown=$(cs report -f exceptions "$T/marks.corscope" 2> /dev/null | sed -n 's/^# exceptions: \([0-9]*\) thrown.*/\1/p')
waits=$(cs report -f locks "$T/marks.corscope" 2> /dev/null | sed -n 's/^# lock contention: \([0-9]*\) waits.*/\1/p')
compiles=$(cs report -f jit "$T/marks.corscope" 2> /dev/null | sed -n 's/^# JIT: \([0-9]*\) compiles.*/\1/p')
# (Fleet throws three times every 100 ms and contends for its lock each
# round while the other thread holds it; the waits are counted, not
# required: the marks must agree with the text reports whatever they are)
assert_ge "throws in Fleet 2" "${thrown:-0}" 1
assert_ge "compilations in Fleet 2" "${compiles:-0}" 1
assert_eq "throws marked on the timeline" "$(marked exception)" "$thrown"
assert_eq "lock waits marked on the timeline" "$(marked lock)" "${waits:-0}"
assert_eq "compilations marked on the timeline" "$(marked jit)" "$compiles"
note "timeline marks: $thrown throws, $waits lock waits, $compiles compilations, as the text reports count them"

# tree: shares add up, and --min prunes
cs report -f tree --min 0 "$T/r.corscope" > "$T/tree0.txt" 2> /dev/null
cs report -f tree --min 5 "$T/r.corscope" > "$T/tree5.txt" 2> /dev/null
grep -Eq '^ +[0-9.]+% +[0-9.]+% +CpuShares\.Work\.Alpha$' "$T/tree5.txt" || fail "tree lacks Alpha: $(head "$T/tree5.txt")"
[ "$(wc -l < "$T/tree5.txt")" -lt "$(wc -l < "$T/tree0.txt")" ] || fail "--min 5 pruned nothing"
grep -q "more below 5.00%" "$T/tree5.txt" || fail "tree does not say what it left out"
awk '$NF ~ /Work\.(Alpha|Beta|Gamma)$/ { gsub("%", "", $2); s += $2 } END { exit !(s > 80) }' "$T/tree0.txt" ||
    fail "tree self shares of the three methods do not add up"
cs report -f tree --min 101 "$T/r.corscope" > /dev/null 2>&1 && fail "--min 101 accepted"

# differential flame graph: the two recordings' paths in one tree
cs record -q -i 1ms -o "$T/b.corscope" -- $(app CpuShares) 1 1 1 1 > /dev/null
cs report -f flamegraph --diff "$T/b.corscope" -o "$T/diff.html" "$T/r.corscope" 2> /dev/null
grep -q '"base":\[[0-9]' "$T/diff.html" || fail "diff flame graph has no baseline"
cs report -f top --diff "$T/b.corscope" "$T/r.corscope" > /dev/null 2>&1 && fail "--diff accepted with -f top"

# record -o app.html: recording beside it, flame graph written at the end
(cd "$T" && cs record -q -o app.html -- $(app CpuShares) 0.5 > /dev/null)
[ -s "$T/app.corscope" ] || fail "record -o app.html left no app.corscope"
grep -q "CpuShares.Work.Alpha" "$T/app.html" || fail "record -o app.html wrote no flame graph"
(cd "$T" && cs record -q -o app.html -- $(app CpuShares) 0.1 > /dev/null 2>&1) && fail "record -o app.html overwrote an existing report"
note "all formats checked; screenshots in build/viewers"
