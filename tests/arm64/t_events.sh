# make test
# The runtime's own stories on arm64, under qemu-user: allocations sampled
# by the runtime (Memory's Alpha and Beta allocate bytes 3:1: Alpha's share
# of the sampled bytes within 5 points of the truth the program measured),
# and exceptions counted exactly (Events throws 1,000 of two types from
# known methods; the report has exactly its counts, throw and catch sites).
# Their stacks are walked from the callbacks (walk_self) on arm64.
source "$(dirname "$0")/lib.sh"

a64_record "$T/a.corscope" alloc Memory split 300 > "$T/truth.txt"
cs check "$T/a.corscope" > "$T/check.txt" || fail "check: $(cat "$T/check.txt")"
grep -q "^  alloc        sampled (AllocationSampled" "$T/check.txt" ||
    fail "check does not say how allocations were sampled: $(grep alloc "$T/check.txt")"
cs report -f top --limit 0 --event alloc "$T/a.corscope" > "$T/top.txt" 2> /dev/null
truth_a=$(awk '$3 == "Memory.Work.Alpha" { print $4 }' "$T/truth.txt")
truth_b=$(awk '$3 == "Memory.Work.Beta" { print $4 }' "$T/truth.txt")
want_a=$(awk -v a="$truth_a" -v b="$truth_b" 'BEGIN { printf "%.2f", 100 * a / (a + b) }')
a=$(top_total "$T/top.txt" Memory.Work.Alpha)
b=$(top_total "$T/top.txt" Memory.Work.Beta)
got_a=$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.2f", 100 * a / (a + b) }')
assert_near "alloc: Alpha's share of the bytes" "$got_a" "$want_a" 5
cs report -f collapsed --event alloc "$T/a.corscope" > "$T/a.collapsed" 2> /dev/null
grep -q ';Memory.Work.Alpha;\[alloc\] System.Byte\[\] [0-9]*$' "$T/a.collapsed" ||
    fail "no [alloc] System.Byte[] leaf under Alpha"
grep -q '^\[start\];Memory.Program.Main;.*Memory.Work.Alpha;\[alloc\]' "$T/a.collapsed" ||
    fail "Alpha's allocations are not under Main"
assert_eq "alloc: failed walks" "$(counter "$T/check.txt" failed_walks)" 0

a64_record "$T/ex.corscope" exceptions Events exceptions 1000 > "$T/ex.out"
grep -q "^thrown 1000 rethrown 100$" "$T/ex.out" || fail "the program's own counts: $(cat "$T/ex.out")"
cs report -f exceptions "$T/ex.corscope" > "$T/ex.txt"
row() { awk -v s="$1" -v v="$2" -v c="$3" '$0 == s { on = 1; next } on && /^$/ { on = 0 }
        on && index($0, v) && substr($0, length($0) - length(v) + 1) == v { print $c; exit }' "$T/ex.txt"; }
grep -q "^# exceptions: 1000 thrown (900 new, 100 rethrown)" "$T/ex.txt" || fail "totals: $(head -1 "$T/ex.txt")"
grep -q "^#   1000 caught$" "$T/ex.txt" || fail "outcomes: $(head -6 "$T/ex.txt")"
grep -q "^#   400 filters ran" "$T/ex.txt" || fail "filters run"
assert_eq "type BadStateException thrown" "$(row 'by type' Events.BadStateException 1)" 600
assert_eq "type BadInputException thrown" "$(row 'by type' Events.BadInputException 1)" 400
assert_eq "site ThrowState" "$(row 'by throw site' 'Events.Throwers.ThrowState (Events.BadStateException)' 1)" 500
assert_eq "site ThrowInput" "$(row 'by throw site' 'Events.Throwers.ThrowInput (Events.BadInputException)' 1)" 400
assert_eq "caught in CatchState" "$(row 'by catch site' Events.Catchers.CatchState 1)" 400
assert_eq "caught in CatchInputFiltered" "$(row 'by catch site' Events.Catchers.CatchInputFiltered 1)" 200
cs report -f collapsed --event exceptions "$T/ex.corscope" > "$T/ex.collapsed" 2> /dev/null
assert_eq "collapsed: throws" "$(collapsed_total "$T/ex.collapsed")" 1000
cs check "$T/ex.corscope" > "$T/ex.check" || fail "check: $(cat "$T/ex.check")"
assert_eq "exceptions: failed walks" "$(counter "$T/ex.check" failed_walks)" 0
