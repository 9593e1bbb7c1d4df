# make test
# Tracing mode (--trace) on arm64, under qemu-user (which emulates every
# register and the generic timer exactly; its timings are not native ones):
#   - the hooks' own suite (tests/unit/test_trace.c) built for arm64: every
#     hook called the way the arm64 JIT calls it (trace_calls_arm64.S: X0-X8,
#     X19-X29, Q0-Q7, D8-D15 and SP filled with patterns and checked after the
#     call) on its fast and slow paths, mismatched returns, exceptions,
#     recursion past the stack's capacity, many paths, a thread that ends
#     with calls open, the calibration of the hooks' cost;
#   - exact call counts on exact paths on the real runtime (tests/apps/Trace
#     counts, --trace=counts): Calls.Leaf 1,000,000 times under CallerA and
#     250,000 under CallerB through Middle, as the x86-64 t_trace asserts;
#   - arguments and return values unchanged by the timed hooks (Trace abi:
#     more integer and float arguments than registers, a struct returned
#     through X8's buffer, a 16-byte struct, an HFA of four doubles, a
#     vector, float, double): the traced run prints what the untraced one
#     prints; exact counts of those calls, and times that add up;
#   - the arm64 CLI takes --trace.
source "$(dirname "$0")/lib.sh"

# calls_of FILE METHOD -> the calls column of `report -f calls` (0 if absent)
calls_of() { awk -v m="$2" '$NF == m { print $1; found = 1; exit } END { if (!found) print 0 }' "$1"; }
# ns_of FILE METHOD COLUMN -> a time column of `report -f calls` in ns
# (2: inclusive, 4: self)
ns_of() {
    awk -v m="$2" -v c="$3" '$NF == m { v = $c; u = $(c + 1)
        f = (u == "s") ? 1e9 : (u == "ms") ? 1e6 : (u == "us") ? 1e3 : 1
        printf "%.0f", v * f; found = 1; exit } END { if (!found) print -1 }' "$1"
}
TRACE_ENV=(CORSCOPE_TRACE_INCLUDE='^TraceApp\.')

# ---- the hooks, called as the JIT calls them --------------------------------------------
[ -x "$A64/shadow-tests" ] || fail "no $A64/shadow-tests (make unit-arm64)"
a64 "$A64/shadow-tests" > "$T/unit.txt" 2>&1 || fail "the arm64 tracing suite: $(tail -5 "$T/unit.txt")"
grep -q "^unit tests: [1-9][0-9]* run, 0 failed" "$T/unit.txt" || fail "the arm64 tracing suite: $(tail -5 "$T/unit.txt")"
note "hooks' suite under qemu: $(grep '^unit tests' "$T/unit.txt")"

# ---- exact counts on exact paths ----------------------------------------------------------
env "${TRACE_ENV[@]}" CORSCOPE_TRACE=counts a64_record "$T/counts.corscope" cpu Trace counts > "$T/out.txt"
grep -q "^counts: Leaf 1000000 from CallerA" "$T/out.txt" || fail "Trace counts did not run: $(cat "$T/out.txt")"
cs check "$T/counts.corscope" > "$T/check.txt" || fail "check: $(tail -3 "$T/check.txt")"
cs report -f calls --limit 0 "$T/counts.corscope" > "$T/calls.txt"
assert_eq "Leaf calls" "$(calls_of "$T/calls.txt" TraceApp.Calls.Leaf)" 1250000
assert_eq "Middle calls" "$(calls_of "$T/calls.txt" TraceApp.Calls.Middle)" 250000
cs report -f calls --include CallerA "$T/counts.corscope" > "$T/a.txt"
cs report -f calls --include CallerB "$T/counts.corscope" > "$T/b.txt"
assert_eq "Leaf calls under CallerA" "$(calls_of "$T/a.txt" TraceApp.Calls.Leaf)" 1000000
assert_eq "Leaf calls under CallerB" "$(calls_of "$T/b.txt" TraceApp.Calls.Leaf)" 250000
cs report -f collapsed --event calls "$T/counts.corscope" > "$T/collapsed.txt"
grep -q '^TraceApp.Program.Main;TraceApp.Calls.Run;TraceApp.Calls.CallerA;TraceApp.Calls.Leaf [0-9]*$' "$T/collapsed.txt" ||
    fail "no path Main;Run;CallerA;Leaf"
grep -q '^TraceApp.Program.Main;TraceApp.Calls.Run;TraceApp.Calls.CallerB;TraceApp.Calls.Middle;TraceApp.Calls.Leaf [0-9]*$' "$T/collapsed.txt" ||
    fail "no path Main;Run;CallerB;Middle;Leaf"
[ "$(grep -c 'Calls.Leaf [0-9]*$' "$T/collapsed.txt")" = 2 ] || fail "Leaf on other paths: $(grep 'Calls.Leaf [0-9]*$' "$T/collapsed.txt")"
grep -q "^  counters.* unmatched_returns=0" "$T/check.txt" || fail "returns that matched no call: $(grep counters "$T/check.txt")"
grep -q " [1-9][0-9]* inlinings of traced methods refused" "$T/calls.txt" ||
    fail "the JIT was never refused an inlining: $(grep inlinings "$T/calls.txt")"
note "counts: Leaf 1000000 under CallerA, 250000 under CallerB through Middle"

# ---- arguments and return values, timed hooks ---------------------------------------------
rounds=3000
a64 "$A64_APPS/Trace" abi $rounds > "$T/abi_plain.txt"
grep -q "^abi: $rounds rounds" "$T/abi_plain.txt" || fail "Trace abi did not run: $(cat "$T/abi_plain.txt")"
start=$(date +%s%N)
env "${TRACE_ENV[@]}" CORSCOPE_TRACE=times a64_record "$T/abi.corscope" cpu Trace abi $rounds > "$T/abi_traced.txt"
wall_ns=$(($(date +%s%N) - start))
diff "$T/abi_plain.txt" "$T/abi_traced.txt" > "$T/abi.diff" || fail "the hooks changed arguments or return values: $(cat "$T/abi.diff")"
cs check "$T/abi.corscope" > "$T/check.txt" || fail "check: $(tail -3 "$T/check.txt")"
cs report -f calls --limit 0 "$T/abi.corscope" > "$T/calls.txt"
for m in Mix Split Spread Blend Fsum Dsum; do
    assert_eq "Abi.$m calls" "$(calls_of "$T/calls.txt" TraceApp.Abi.$m)" $rounds
done
grep -q "unmatched_returns=0" "$T/check.txt" || fail "returns that matched no call: $(grep counters "$T/check.txt")"
grep -q "^# times: the tracer's own cost taken out" "$T/calls.txt" ||
    fail "no calibration of the hooks' cost: $(grep '^#' "$T/calls.txt")"
# times that add up: each method's self within its inclusive, the callees'
# inclusive within Abi.Run's, Abi.Run's within the program's wall time
run_incl=$(ns_of "$T/calls.txt" TraceApp.Abi.Run 2)
assert_ge "Abi.Run inclusive ns" "$run_incl" 1
sum=0
for m in Mix Split Spread Blend Fsum Dsum; do
    incl=$(ns_of "$T/calls.txt" TraceApp.Abi.$m 2)
    self=$(ns_of "$T/calls.txt" TraceApp.Abi.$m 4)
    assert_ge "Abi.$m inclusive ns" "$incl" 1
    [ "$self" -ge 0 ] && [ "$self" -le "$incl" ] || fail "Abi.$m: self $self ns outside its inclusive $incl ns"
    sum=$((sum + incl))
done
[ "$sum" -le "$run_incl" ] || fail "the callees' inclusive times ($sum ns) exceed Abi.Run's ($run_incl ns)"
[ "$run_incl" -le "$wall_ns" ] || fail "Abi.Run's inclusive time ($run_incl ns) exceeds the program's wall time ($wall_ns ns)"
note "abi: $rounds rounds print the same traced and untraced; 6 x $rounds calls; callees $((sum / 1000)) us of Abi.Run's $((run_incl / 1000)) us"

# ---- the arm64 CLI takes --trace ------------------------------------------------------------
a64_cs record --trace=counts -o "$T/cli.corscope" -- /bin/true > /dev/null 2> "$T/cli.txt" || true
! grep -q "tracing needs" "$T/cli.txt" || fail "the arm64 CLI refused --trace: $(cat "$T/cli.txt")"
a64_cs record --trace=bogus -o "$T/cli.corscope" -- /bin/true > /dev/null 2> "$T/cli.txt" && fail "the arm64 CLI took --trace=bogus"
grep -q "^corscope: .*unknown tracing mode" "$T/cli.txt" || fail "the CLI's words: $(cat "$T/cli.txt")"
note "the arm64 CLI takes --trace"
