# Tracing mode on arm64 under qemu-user, beyond make test's t_trace.sh: the
# counting hooks (--trace=counts, trace_enter_counts/trace_leave_counts) on
# the real runtime: Trace counts' exact calls on exact paths and Trace abi's
# arguments and return values unchanged in the same run; exceptions thrown
# through traced frames (caught two levels up, through a finally, a filter,
# thrown from a finally, rethrown): exact counts, and a call made after
# them hangs straight under its caller (every shadow stack back at its base).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/trace_lib.sh"

rounds=3000
a64 "$A64_APPS/Trace" abi $rounds > "$T/abi_plain.txt"
grep -q "^abi: $rounds rounds" "$T/abi_plain.txt" || fail "Trace abi did not run: $(cat "$T/abi_plain.txt")"
CORSCOPE_TRACE=counts a64_record "$T/t.corscope" cpu Trace counts+abi $rounds > "$T/out.txt"
grep '^abi:' "$T/out.txt" | diff "$T/abi_plain.txt" - > "$T/abi.diff" ||
    fail "the counting hooks changed arguments or return values: $(cat "$T/abi.diff")"
check_counts "$T/t.corscope"
assert_eq "Abi.Mix calls" "$(calls_of "$T/calls.txt" TraceApp.Abi.Mix)" $rounds
note "counts: abi's $rounds rounds print the same traced and untraced"

rounds=100
CORSCOPE_TRACE=counts a64_record "$T/throws.corscope" cpu Trace throws $rounds > "$T/out.txt"
cs check "$T/throws.corscope" > "$T/check.txt"
cs report -f calls --limit 0 "$T/throws.corscope" > "$T/calls.txt"
cs report -f collapsed --event calls "$T/throws.corscope" > "$T/collapsed.txt"
assert_eq "Thrower calls" "$(calls_of "$T/calls.txt" TraceApp.Throws.Thrower)" $((4 * rounds))
assert_eq "Handler calls" "$(calls_of "$T/calls.txt" TraceApp.Throws.Handler)" $((3 * rounds))
assert_eq "Filter calls" "$(calls_of "$T/calls.txt" TraceApp.Throws.Filter)" $rounds
assert_eq "FinallyWork calls" "$(calls_of "$T/calls.txt" TraceApp.Throws.FinallyWork)" $rounds
R='TraceApp.Program.Main;TraceApp.Throws.Run'
grep -q "^$R;TraceApp.Throws.After [0-9]*$" "$T/collapsed.txt" ||
    fail "After is not under Run: $(grep 'Throws.After' "$T/collapsed.txt")"
grep -q "^$R;TraceApp.Throws.Catcher;TraceApp.Throws.Mid2;TraceApp.Throws.Mid;TraceApp.Throws.FinallyWork [0-9]*$" "$T/collapsed.txt" ||
    fail "the finally's callee is not under Mid"
for c in Catcher ThrowInFinally CatchRethrown; do
    grep -q "^$R;TraceApp.Throws.$c;TraceApp.Throws.Handler [0-9]*$" "$T/collapsed.txt" ||
        fail "the catch block's callee is not under $c"
done
grep -q "unmatched_returns=0" "$T/check.txt" || fail "returns that matched no call"
note "throws: $rounds rounds of exceptions: counts exact, After under Run"
