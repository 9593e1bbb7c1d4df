# corscope async -p PID: the pending async operations of a running
# process.  AsyncChain pending leaves known operations waiting for a task
# that never completes: three chains Root -> Mid -> Leaf that nothing
# awaits, one more awaited by a thread blocked in Wait(), and Fan awaiting
# Task.WhenAll of two Branch.  The forest must show exactly those, counted,
# at the right awaits, under the right parents, with how long they waited
# (at least the snapshots' span); the process runs on after the agent
# detached, and a second look finds the same.
source "$(dirname "$0")/lib.sh"

$(app AsyncChain) pending 120 > "$T/app.out" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; rm -rf "$T"' EXIT
for _ in $(seq 100); do grep -q ready "$T/app.out" && break; sleep 0.1; done
grep -q ready "$T/app.out" || fail "AsyncChain pending did not start: $(cat "$T/app.out")"

cs async -p "$pid" -d 2s -o "$T/ops.corscope" > "$T/ops.txt" 2> "$T/err.txt" ||
    fail "corscope async: $(cat "$T/err.txt")"
# before .NET 9 the runtime cannot enumerate its heap: the command says so
if [ "$RUNTIME" -lt 9 ]; then
    grep -q "^# no snapshot of pending async operations: async off (snapshots of pending operations need ICorProfilerInfo15: .NET 9 or later)$" "$T/ops.txt" ||
        fail ".NET $RUNTIME: $(cat "$T/ops.txt" "$T/err.txt")"
    kill -0 "$pid" 2> /dev/null || fail "the process did not survive the attach"
    note ".NET $RUNTIME: $(head -1 "$T/ops.txt")"
    exit 0
fi
cat "$T/ops.txt" | sed 's/^/    /'
kill -0 "$pid" 2> /dev/null || fail "the process did not survive the snapshots"

grep -q '^# pending async operations at .*: 16 in 5 chains$' "$T/ops.txt" ||
    fail "not 16 operations in 5 chains: $(head -1 "$T/ops.txt")"
# line COUNT INDENT RE: a line of COUNT operations whose method (from
# column 25, after the count and the pending time) is indented by INDENT
# and matches RE
line() {
    awk -v n="$1" -v ind="$2" -v re="$3" '
        $1 == n { m = substr($0, 25); k = match(m, /[^ ]/) - 1
                  if (k == ind && substr(m, k + 1) ~ ("^" re "$")) found = 1 }
        END { exit !found }' "$T/ops.txt"
}
line 3 0 'AsyncChain\.Pending\.Root  \(await #0\)' || fail "no line of 3 Root at await #0 (nothing awaits them)"
line 3 2 'AsyncChain\.Pending\.Mid  \(await #0\)' || fail "no line of 3 Mid under them"
line 3 4 'AsyncChain\.Pending\.Leaf  \(await #0\)' || fail "no line of 3 Leaf under them"
line 1 0 'AsyncChain\.Pending\.Fan  \(await #0\)' || fail "no Fan"
line 1 2 '\[async\] Task\.WhenAll' || fail "no WhenAll under Fan"
line 2 4 'AsyncChain\.Pending\.Branch  \(await #1\)' || fail "no 2 Branch at their second await under WhenAll"
line 1 0 '\[blocking wait\]' || fail "no [blocking wait] root"
line 1 2 'AsyncChain\.Pending\.Root  \(await #0\)' || fail "no Root under [blocking wait]"
line 1 6 'AsyncChain\.Pending\.Leaf  \(await #0\)' || fail "no Leaf under the blocked Root"
# how long: the span of the snapshots at least (-d 2s: 1.9 s idle, 0.56 s
# seen at -d 1s beside busy processes;
# the first snapshot comes once the agent runs)
leaf=$(awk '/Pending\.Leaf/ && $1 == 3 { v = $2 == ">=" ? $3 : $2; u = $2 == ">=" ? $4 : $3;
            print (u == "s" ? v : (u == "ms" ? v / 1000 : 0)) }' "$T/ops.txt")
assert_ge "Leaf's time at its await, s" "$leaf" 0.5
grep -Eq '^ +3  >=' <(grep 'Pending\.Leaf' "$T/ops.txt") || fail "the Leafs, there before the first snapshot, are not marked >="
grep -Eq '^# [0-9]+ snapshots of a heap of [0-9]+ objects; the program stopped' "$T/ops.txt" ||
    fail "no line on what the snapshots cost"
# the recording kept with -o says the same through report -f async
cs report -f async "$T/ops.corscope" > "$T/again.txt" 2> /dev/null
diff -q "$T/ops.txt" "$T/again.txt" > /dev/null || fail "report -f async differs from corscope async's output"

# a second attach, after the first detached: the same operations
cs async -p "$pid" -d 500ms > "$T/ops2.txt" 2> "$T/err2.txt" || fail "second corscope async: $(cat "$T/err2.txt")"
grep -q ': 16 in 5 chains$' "$T/ops2.txt" || fail "second look: $(head -1 "$T/ops2.txt")"
kill -0 "$pid" 2> /dev/null || fail "the process did not survive the second look"

# bad input: one line, non-zero
! cs async > /dev/null 2> "$T/e1.txt" && grep -q '^corscope: -p PID names the process' "$T/e1.txt" ||
    fail "async without -p: $(cat "$T/e1.txt")"
