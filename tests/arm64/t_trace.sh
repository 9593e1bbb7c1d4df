# make test
# Tracing mode (--trace) on arm64, under qemu-user (which emulates every
# register and the generic timer exactly; its timings are not native ones):
#   - the hooks' own suite (tests/unit/test_trace.c) built for arm64: every
#     hook called the way the arm64 JIT calls it (trace_calls_arm64.S: X0-X8,
#     X19-X29, Q0-Q7, D8-D15 and SP filled with patterns and checked after the
#     call) on its fast and slow paths, mismatched returns, exceptions,
#     recursion past the stack's capacity, many paths, a thread that ends
#     with calls open, the calibration of the hooks' cost; and, in the same
#     binary, pointer authentication (tests/unit/test_pac.c: qemu's CPU
#     signs return addresses, and the walker strips them back);
#   - on the real runtime, one run of tests/apps/Trace `counts+abi` with the
#     timed hooks: exact call counts on exact paths (Calls.Leaf 1,000,000
#     times under CallerA and 250,000 under CallerB through Middle, as the
#     x86-64 t_trace asserts); arguments and return values unchanged (Trace
#     abi: more integer and float arguments than registers, a struct
#     returned through X8's buffer, a 16-byte struct, an HFA of four
#     doubles, a vector, float, double: the traced run prints what an
#     untraced one prints), exact counts of those calls, times that add up;
#   - the arm64 CLI takes --trace.
# t_trace_more.sh (make test-arm64) does the same with the counting hooks,
# and exceptions through traced frames.
source "$(dirname "$0")/lib.sh"

source "$(dirname "$0")/../e2e/trace_lib.sh"

# ---- the hooks, called as the JIT calls them --------------------------------------------
[ -x "$A64/shadow-tests" ] || fail "no $A64/shadow-tests (make unit-arm64)"
a64 "$A64/shadow-tests" > "$T/unit.txt" 2>&1 || fail "the arm64 tracing suite: $(tail -5 "$T/unit.txt")"
grep -q "^unit tests: [1-9][0-9]* run, 0 failed" "$T/unit.txt" || fail "the arm64 tracing suite: $(tail -5 "$T/unit.txt")"
# 7 to 9: the suite's own bound (tests/unit/test_pac.c: a signature of
# zero comes once in about 3,600 runs of nine, with the random keys)
grep -Eq "^  pac: active: [7-9] of 9" "$T/unit.txt" || fail "pointer authentication was not exercised: $(grep pac "$T/unit.txt")"
note "hooks' and pointer authentication's suites under qemu: $(grep '^unit tests' "$T/unit.txt")"

# ---- one traced run: exact counts, arguments and returns, times ---------------------------
rounds=3000
a64 "$A64_APPS/Trace" abi $rounds > "$T/abi_plain.txt" & # the untraced run beside the traced one
plain=$!
start=$(date +%s%N)
CORSCOPE_TRACE=times a64_record "$T/t.corscope" cpu Trace counts+abi $rounds > "$T/out.txt"
wall_ns=$(($(date +%s%N) - start))
wait $plain || fail "Trace abi failed untraced"
grep -q "^abi: $rounds rounds" "$T/abi_plain.txt" || fail "Trace abi did not run: $(cat "$T/abi_plain.txt")"
grep -q "^counts: Leaf 1000000 from CallerA" "$T/out.txt" || fail "Trace counts did not run: $(cat "$T/out.txt")"
grep '^abi:' "$T/out.txt" | diff "$T/abi_plain.txt" - > "$T/abi.diff" ||
    fail "the hooks changed arguments or return values: $(cat "$T/abi.diff")"
check_trace_counts "$T/t.corscope" times
note "counts: Leaf 1000000 under CallerA, 250000 under CallerB through Middle"
cs report -f calls --limit 0 "$T/t.corscope" > "$T/calls.txt"
for m in Mix Split Spread Blend Fsum Dsum; do
    assert_eq "Abi.$m calls" "$(calls_of "$T/calls.txt" TraceApp.Abi.$m)" $rounds
done
grep -q "^# times: the tracer's own cost taken out" "$T/calls.txt" ||
    fail "no calibration of the hooks' cost: $(grep '^#' "$T/calls.txt")"
# times, sane.  As measured (collapsed: each path's self time, the hooks'
# cost included): every path of the methods called thousands of times has
# some, and the program's paths together stay within its wall time.  With
# the hooks' cost taken out (report -f calls): 0 <= self <= inclusive <=
# the inclusive time measured.  Under qemu the hooks cost about as much as
# these small calls and the cost measured at start overstates them on a
# busy machine (docs/performance.md), so what is taken out is of the size
# of what remains and a caller of a million calls can come out at 0: no
# truth of the times themselves here, and no sum of callees within callers
# after the correction.
cs report -f collapsed --event calls "$T/t.corscope" > "$T/collapsed.txt"
for m in Abi.Mix Abi.Split Abi.Spread Abi.Blend Abi.Fsum Abi.Dsum Calls.Leaf; do
    awk -v m="TraceApp.$m" '{ n = split($1, f, ";") } f[n] == m && $2 > 0 { ok = 1 } END { exit !ok }' "$T/collapsed.txt" ||
        fail "no time measured in $m: $(grep "$m " "$T/collapsed.txt")"
done
measured=$(awk '$1 ~ /^TraceApp\.Program\.Main/ { s += $2 } END { printf "%.0f", s }' "$T/collapsed.txt")
[ "$measured" -le "$wall_ns" ] || fail "the traced paths' time ($measured ns) exceeds the program's wall time ($wall_ns ns)"
for m in Program.Main Calls.Run Calls.CallerA Calls.CallerB Calls.Middle Calls.Leaf Abi.Run Abi.Mix Abi.Split \
        Abi.Spread Abi.Blend Abi.Fsum Abi.Dsum; do
    m=TraceApp.$m
    incl=$(ns_of "$T/calls.txt" $m 2)
    self=$(ns_of "$T/calls.txt" $m 4)
    # what was measured in paths through m (none of these methods recurses)
    raw=$(awk -v m="$m" '{ n = split($1, f, ";"); for (i = 1; i <= n; i++) if (f[i] == m) { s += $2; break } }
                         END { printf "%.0f", s * 1.001 + 1000 }' "$T/collapsed.txt")
    [ "$self" -ge 0 ] && [ "$self" -le "$incl" ] && [ "$incl" -le "$raw" ] ||
        fail "$m: self $self ns, inclusive $incl ns, measured $raw ns: not 0 <= self <= inclusive <= measured"
done
note "times: the paths measured $((measured / 1000000)) ms of the program's $((wall_ns / 1000000)) ms; Abi.Run $(($(ns_of "$T/calls.txt" TraceApp.Abi.Run 2) / 1000000)) ms with the hooks' cost taken out"
note "abi: $rounds rounds print the same traced and untraced; 6 x $rounds calls"

# ---- the arm64 CLI takes --trace ------------------------------------------------------------
a64_cs record --trace=counts -o "$T/cli.corscope" -- /bin/true > /dev/null 2> "$T/cli.txt" || true
! grep -q "tracing needs" "$T/cli.txt" || fail "the arm64 CLI refused --trace: $(cat "$T/cli.txt")"
a64_cs record --trace=bogus -o "$T/cli.corscope" -- /bin/true > /dev/null 2> "$T/cli.txt" && fail "the arm64 CLI took --trace=bogus"
grep -q "^corscope: .*unknown tracing mode" "$T/cli.txt" || fail "the CLI's words: $(cat "$T/cli.txt")"
note "the arm64 CLI takes --trace"
