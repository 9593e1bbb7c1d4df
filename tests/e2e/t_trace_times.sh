# Tracing's times are the program's, not the tracer's: tests/apps/TraceTimes
# measures its own methods' times with its Stopwatch where they are spent
# (Outer.Round spins, Small.Unit computes between two readings of the
# clock) while Outer.Round and Many.Run make many small traced calls of
# Small.Unit; `report -f calls`, which takes the hooks' own cost (measured
# by the agent at start, stretched by the traced threads' waits for a
# processor) out of inclusive and self times, must give every one of them
# within 10% of what the program measured.  The program's own numbers are
# the truth, not nominal ones, so a busy machine that stretches the run
# stretches the truth alike; what it cannot stretch alike is a preemption
# that lands in the hooks' share of a method's time, a few per run, so the
# run is long enough (10,000 rounds) and the spin long enough (40 us a
# round) for those few to stay well inside the 10% (about 3% with two CPU
# hogs beside it at the program's default of 15 us; the same gaps weigh
# less than half as much against 40).  And the correction must be there:
# the report's own figures of the tracer's cost (measured by the agent at
# start, at least 10 ns per traced call: 17.6 to 30 ns seen) are what it
# took out of
# Outer.Round's self time against the times as measured (-f top --event
# calls).  (Until session 17 the check was that at least 10 ns per call
# made was taken out of it: that is the caller's share alone, which a
# faster machine measured at 8.7 to 9.5 ns, and the check failed with the
# correction right.)
source "$(dirname "$0")/lib.sh"

# ms FILE METHOD COLUMN: a `-f calls` duration column (2 inclusive, 4 self;
# value then unit) of METHOD, in ms; or of `-f top` (3 self)
ms() {
    awk -v m="$2" -v c="$3" '$NF == m { v = $c; u = $(c + 1)
        f = (u == "s") ? 1000 : (u == "ms") ? 1 : (u == "us") ? 0.001 : 0.000001
        printf "%.3f", v * f; found = 1; exit } END { if (!found) print -1 }' "$1"
}
calls_of() { awk -v m="$2" '$NF == m { print $1; found = 1; exit } END { if (!found) print 0 }' "$1"; }
truth() { sed -n "s/.* $1 \([0-9.]*\).*/\1/p" "$T/out.txt"; }
# within WHAT GOT_MS TRUTH_MS: |got - truth| <= 10% of truth
within() { assert_near "$1 (ms)" "$2" "$3" "$(awk -v t="$3" 'BEGIN { printf "%.3f", t / 10 }')"; }

APP=$(app TraceTimes)
cs record -q --force --trace -o "$T/t.corscope" -- $APP 10000 50 40 > "$T/out.txt"
grep -q '^times: ' "$T/out.txt" || fail "the program printed no times: $(cat "$T/out.txt")"
cs report -f calls --limit 0 "$T/t.corscope" > "$T/calls.txt"
cs report -f top --limit 0 --event calls "$T/t.corscope" > "$T/raw.txt"
grep "^# times: the tracer's own cost taken out" "$T/calls.txt" > /dev/null ||
    fail "the report does not say what it took out: $(grep '^#' "$T/calls.txt")"
note "$(grep '^# times:' "$T/calls.txt")"
rounds=$(truth rounds)
unit=$(awk -v n="$(truth unit_ns)" 'BEGIN { printf "%.3f", n / 1e6 }')
many=$(awk -v n="$(truth many_ns)" 'BEGIN { printf "%.3f", n / 1e6 }')
spin=$(awk -v n="$(truth spin_ns)" 'BEGIN { printf "%.3f", n / 1e6 }')
outer=$(awk -v a="$unit" -v b="$spin" 'BEGIN { printf "%.3f", a + b }')

assert_eq "Small.Unit calls" "$(calls_of "$T/calls.txt" TraceTimesApp.Small.Unit)" "$(truth unit_calls)"
assert_eq "Many.Run calls" "$(calls_of "$T/calls.txt" TraceTimesApp.Many.Run)" "$rounds"
assert_eq "Outer.Round calls" "$(calls_of "$T/calls.txt" TraceTimesApp.Outer.Round)" "$rounds"
within "Small.Unit inclusive" "$(ms "$T/calls.txt" TraceTimesApp.Small.Unit 2)" "$unit"
within "Small.Unit self" "$(ms "$T/calls.txt" TraceTimesApp.Small.Unit 4)" "$unit"
within "Many.Run inclusive" "$(ms "$T/calls.txt" TraceTimesApp.Many.Run 2)" "$many"
# its own time is a loop around the calls: about nothing
assert_near "Many.Run self (ms)" "$(ms "$T/calls.txt" TraceTimesApp.Many.Run 4)" 0 \
    "$(awk -v t="$many" 'BEGIN { printf "%.3f", t / 10 }')"
self=$(ms "$T/calls.txt" TraceTimesApp.Outer.Round 4)
within "Outer.Round self" "$self" "$spin"
within "Outer.Round inclusive" "$(ms "$T/calls.txt" TraceTimesApp.Outer.Round 2)" "$outer"
raw=$(ms "$T/raw.txt" TraceTimesApp.Outer.Round 3)
made=$(awk -v n="$(truth unit_calls)" -v r="$rounds" 'BEGIN { print n / 2 + r }')
# what the report says it takes out: CALL ns per traced call from its
# caller's time, OWN ns from the called method's own
read -r call own < <(sed -n 's/^# times:.*: \([0-9.]*\) ns per traced call from its caller.s time, \([0-9.]*\) ns from the called method.s own.*/\1 \2/p' "$T/calls.txt")
[ -n "$call" ] && [ -n "$own" ] || fail "the report does not say the tracer's cost per call: $(grep '^# times' "$T/calls.txt")"
awk -v c="$call" 'BEGIN { exit !(c >= 10) }' ||
    fail "the tracer's cost measured at start is $call ns per call: too little to be a real measure"
# Outer.Round's self time loses OWN for each of its own calls and
# CALL - OWN for each traced call it made (out_calls.c), as the report
# says (the durations are printed to 3 or 4 digits: 3% and 0.1 ms)
want=$(awk -v r="$rounds" -v n="$made" -v c="$call" -v o="$own" 'BEGIN { printf "%.3f", (r * o + n * (c - o)) / 1e6 }')
awk -v r="$raw" -v s="$self" -v w="$want" 'BEGIN { d = r - s - w; if (d < 0) d = -d; exit !(w > 0 && d <= 0.03 * w + 0.1) }' ||
    fail "Outer.Round's self time measured $raw ms, corrected $self ms: $want ms should have been taken out (truth $spin ms)"
note "Outer.Round self as measured $raw ms, corrected $self ms, the program's $spin ms"
