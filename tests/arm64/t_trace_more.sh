# Tracing mode on arm64 under qemu-user, beyond make test's t_trace.sh: the
# counting hooks (--trace=counts, trace_enter_counts/trace_leave_counts) on
# the real runtime: Trace counts' exact calls on exact paths and Trace abi's
# arguments and return values unchanged in the same run; exceptions thrown
# through traced frames (caught two levels up, through a finally, a filter,
# thrown from a finally, rethrown): exact counts, and a call made after
# them hangs straight under its caller (every shadow stack back at its base);
# flat counts (--trace=flat): exact per method, two threads at once included.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/../e2e/trace_lib.sh"

rounds=3000
a64 "$A64_APPS/Trace" abi $rounds > "$T/abi_plain.txt"
grep -q "^abi: $rounds rounds" "$T/abi_plain.txt" || fail "Trace abi did not run: $(cat "$T/abi_plain.txt")"
CORSCOPE_TRACE=counts a64_record "$T/t.corscope" cpu Trace counts+abi $rounds > "$T/out.txt"
grep '^abi:' "$T/out.txt" | diff "$T/abi_plain.txt" - > "$T/abi.diff" ||
    fail "the counting hooks changed arguments or return values: $(cat "$T/abi.diff")"
check_trace_counts "$T/t.corscope" counts
note "counts: Leaf 1000000 under CallerA, 250000 under CallerB through Middle"
assert_eq "Abi.Mix calls" "$(calls_of "$T/calls.txt" TraceApp.Abi.Mix)" $rounds
note "counts: abi's $rounds rounds print the same traced and untraced"

rounds=100
CORSCOPE_TRACE=counts a64_record "$T/throws.corscope" cpu Trace throws $rounds > "$T/out.txt"
check_trace_throws "$T/throws.corscope" $rounds throws
note "throws: $rounds rounds of exceptions: counts exact, After under Run"

# flat counts (--trace=flat): the counter in each method's own code, an
# atomic add through Interlocked.Add (LSE or exclusive pairs on arm64):
# exact per method, two threads at once included
CORSCOPE_TRACE=flat a64_record "$T/flat.corscope" cpu Trace counts+race 200000 > "$T/out.txt"
cs report -f calls --limit 0 "$T/flat.corscope" > "$T/calls.txt"
assert_eq "flat: Leaf calls" "$(calls_of "$T/calls.txt" TraceApp.Calls.Leaf)" 1250000
assert_eq "flat: Middle calls" "$(calls_of "$T/calls.txt" TraceApp.Calls.Middle)" 250000
assert_eq "flat: Race.Hit calls from two threads" "$(calls_of "$T/calls.txt" TraceApp.Race.Hit)" 400000
note "flat: Leaf 1250000, Middle 250000, Race.Hit 400000 from two threads"
