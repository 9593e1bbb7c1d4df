# Shared by the tracing tests (tests/e2e/t_trace.sh; tests/arm64/t_trace.sh,
# t_trace_more.sh): sourced after lib.sh.  Truths of tests/apps/Trace.

# calls_of FILE METHOD -> the calls column of `report -f calls` (0 if absent)
calls_of() { awk -v m="$2" '$NF == m { print $1; found = 1; exit } END { if (!found) print 0 }' "$1"; }
# ns_of FILE METHOD COLUMN -> a time column of `report -f calls` in ns
# (2: inclusive, 4: self), -1 if absent
ns_of() {
    awk -v m="$2" -v c="$3" '$NF == m { v = $c; u = $(c + 1)
        f = (u == "s") ? 1e9 : (u == "ms") ? 1e6 : (u == "us") ? 1e3 : 1
        printf "%.0f", v * f; found = 1; exit } END { if (!found) print -1 }' "$1"
}

# check_trace_counts RECORDING LABEL: Trace counts' exact calls on their
# exact paths (Calls.Leaf 1,000,000 times under CallerA, 250,000 under
# CallerB through Middle), no return unmatched, inlinings refused; leaves
# check.txt, calls.txt and collapsed.txt in $T
check_trace_counts() {
    local rec=$1 label=$2
    cs check "$rec" > "$T/check.txt" || fail "$label: check: $(tail -3 "$T/check.txt")"
    cs report -f calls --limit 0 "$rec" > "$T/calls.txt"
    assert_eq "$label: Leaf calls" "$(calls_of "$T/calls.txt" TraceApp.Calls.Leaf)" 1250000
    assert_eq "$label: Middle calls" "$(calls_of "$T/calls.txt" TraceApp.Calls.Middle)" 250000
    cs report -f calls --include 'CallerA' "$rec" > "$T/a.txt"
    cs report -f calls --include 'CallerB' "$rec" > "$T/b.txt"
    assert_eq "$label: Leaf calls under CallerA" "$(calls_of "$T/a.txt" TraceApp.Calls.Leaf)" 1000000
    assert_eq "$label: Leaf calls under CallerB" "$(calls_of "$T/b.txt" TraceApp.Calls.Leaf)" 250000
    cs report -f collapsed --event calls --weight calls "$rec" > "$T/collapsed.txt"
    grep -q '^TraceApp.Program.Main;TraceApp.Calls.Run;TraceApp.Calls.CallerA;TraceApp.Calls.Leaf [0-9]*$' "$T/collapsed.txt" ||
        fail "$label: no path Main;Run;CallerA;Leaf"
    grep -q '^TraceApp.Program.Main;TraceApp.Calls.Run;TraceApp.Calls.CallerB;TraceApp.Calls.Middle;TraceApp.Calls.Leaf [0-9]*$' "$T/collapsed.txt" ||
        fail "$label: no path Main;Run;CallerB;Middle;Leaf"
    [ "$(grep -c 'Calls.Leaf [0-9]*$' "$T/collapsed.txt")" = 2 ] ||
        fail "$label: Leaf on other paths: $(grep 'Calls.Leaf [0-9]*$' "$T/collapsed.txt")"
    grep -q "^  counters.* unmatched_returns=0" "$T/check.txt" ||
        fail "$label: returns that matched no call: $(grep counters "$T/check.txt")"
    grep -q "traced methods were not inlined" "$T/calls.txt" || fail "$label: no note on inlining"
    grep -q " [1-9][0-9]* inlinings of traced methods refused" "$T/calls.txt" ||
        fail "$label: the JIT was never refused an inlining: $(grep inlinings "$T/calls.txt")"
}

# check_trace_throws RECORDING ROUNDS LABEL: Trace throws' exceptions
# through traced frames: exact counts, the finally's and the catch blocks'
# callees under the right callers, and a call made after them straight
# under its caller (every shadow stack back at its base)
check_trace_throws() {
    local rec=$1 rounds=$2 label=$3 R='TraceApp.Program.Main;TraceApp.Throws.Run' c
    cs check "$rec" > "$T/check.txt"
    cs report -f calls --limit 0 "$rec" > "$T/calls.txt"
    # weighed by calls: a path of no time (After, one call) is still a line
    cs report -f collapsed --event calls --weight calls "$rec" > "$T/collapsed.txt"
    assert_eq "$label: Thrower calls" "$(calls_of "$T/calls.txt" TraceApp.Throws.Thrower)" $((4 * rounds))
    assert_eq "$label: Handler calls" "$(calls_of "$T/calls.txt" TraceApp.Throws.Handler)" $((3 * rounds))
    assert_eq "$label: Filter calls" "$(calls_of "$T/calls.txt" TraceApp.Throws.Filter)" $rounds
    assert_eq "$label: FinallyWork calls" "$(calls_of "$T/calls.txt" TraceApp.Throws.FinallyWork)" $rounds
    grep -q "^$R;TraceApp.Throws.After [0-9]*$" "$T/collapsed.txt" ||
        fail "$label: After is not under Run: $(grep 'Throws.After' "$T/collapsed.txt")"
    [ "$(grep -c 'Throws.After [0-9]*$' "$T/collapsed.txt")" = 1 ] || fail "$label: After on more than one path"
    grep -q "^$R;TraceApp.Throws.Catcher;TraceApp.Throws.Mid2;TraceApp.Throws.Mid;TraceApp.Throws.FinallyWork [0-9]*$" "$T/collapsed.txt" ||
        fail "$label: the finally's callee is not under Mid"
    for c in Catcher ThrowInFinally CatchRethrown; do
        grep -q "^$R;TraceApp.Throws.$c;TraceApp.Throws.Handler [0-9]*$" "$T/collapsed.txt" ||
            fail "$label: the catch block's callee is not under $c"
    done
    # none of these methods recurses: one twice on a path is a frame left behind
    awk -F';' '{ sub(/ [0-9]+$/, "", $NF); delete seen
                 for (i = 1; i <= NF; i++) if ($i ~ /^TraceApp\./ && seen[$i]++) { print; bad = 1; next } }
               END { exit bad }' "$T/collapsed.txt" || fail "$label: a path with frames left behind"
    grep -q "unmatched_returns=0" "$T/check.txt" || fail "$label: returns that matched no call"
}
