# Shared by the arm64 tracing tests (t_trace.sh, t_trace_more.sh): sourced
# after lib.sh.

# calls_of FILE METHOD -> the calls column of `report -f calls` (0 if absent)
calls_of() { awk -v m="$2" '$NF == m { print $1; found = 1; exit } END { if (!found) print 0 }' "$1"; }
# ns_of FILE METHOD COLUMN -> a time column of `report -f calls` in ns
# (2: inclusive, 4: self)
ns_of() {
    awk -v m="$2" -v c="$3" '$NF == m { v = $c; u = $(c + 1)
        f = (u == "s") ? 1e9 : (u == "ms") ? 1e6 : (u == "us") ? 1e3 : 1
        printf "%.0f", v * f; found = 1; exit } END { if (!found) print -1 }' "$1"
}

# check_counts RECORDING: Trace counts' exact calls on their exact paths
check_counts() {
    cs check "$1" > "$T/check.txt" || fail "check: $(tail -3 "$T/check.txt")"
    cs report -f calls --limit 0 "$1" > "$T/calls.txt"
    assert_eq "Leaf calls" "$(calls_of "$T/calls.txt" TraceApp.Calls.Leaf)" 1250000
    assert_eq "Middle calls" "$(calls_of "$T/calls.txt" TraceApp.Calls.Middle)" 250000
    cs report -f calls --include CallerA "$1" > "$T/a.txt"
    cs report -f calls --include CallerB "$1" > "$T/b.txt"
    assert_eq "Leaf calls under CallerA" "$(calls_of "$T/a.txt" TraceApp.Calls.Leaf)" 1000000
    assert_eq "Leaf calls under CallerB" "$(calls_of "$T/b.txt" TraceApp.Calls.Leaf)" 250000
    cs report -f collapsed --event calls "$1" > "$T/collapsed.txt"
    grep -q '^TraceApp.Program.Main;TraceApp.Calls.Run;TraceApp.Calls.CallerA;TraceApp.Calls.Leaf [0-9]*$' "$T/collapsed.txt" ||
        fail "no path Main;Run;CallerA;Leaf"
    grep -q '^TraceApp.Program.Main;TraceApp.Calls.Run;TraceApp.Calls.CallerB;TraceApp.Calls.Middle;TraceApp.Calls.Leaf [0-9]*$' "$T/collapsed.txt" ||
        fail "no path Main;Run;CallerB;Middle;Leaf"
    [ "$(grep -c 'Calls.Leaf [0-9]*$' "$T/collapsed.txt")" = 2 ] || fail "Leaf on other paths: $(grep 'Calls.Leaf [0-9]*$' "$T/collapsed.txt")"
    grep -q "^  counters.* unmatched_returns=0" "$T/check.txt" || fail "returns that matched no call: $(grep counters "$T/check.txt")"
    grep -q " [1-9][0-9]* inlinings of traced methods refused" "$T/calls.txt" ||
        fail "the JIT was never refused an inlining: $(grep inlinings "$T/calls.txt")"
    note "counts: Leaf 1000000 under CallerA, 250000 under CallerB through Middle"
}
