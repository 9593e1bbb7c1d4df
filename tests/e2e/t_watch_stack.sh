# `corscope watch --stack` (issue 22): each call's callers under its line,
# named by the agent from the probe's walk.  WatchApp's chains are known:
#   run:   Pricing.Quote <- Program.Run <- Program.Main (both run once, at
#          tier 0: nothing inlined)
#   serve: Pricing.Quote and Pricing.Check <- Program.Step (NoInlining)
#          <- Program.Serve <- Program.Main, attached; the call that
#          threw has its stack too
# and below Main the host's native frames, one "[native code]".
source "$(dirname "$0")/lib.sh"
W=$APPS/WatchApp/WatchApp.dll
[ -f "$W" ] || fail "WatchApp is not built (make apps)"
CALL='^[0-9][0-9]:[0-9][0-9]:[0-9][0-9]\.[0-9][0-9][0-9] \[[0-9]+\] '
# lines: the calls without time, thread and duration, and their frames
lines() { { grep -E "$CALL|^    at " "$1" || true; } | sed -E "s/$CALL//; s/  [0-9.]+ (us|ms|s)\$//"; }

dotnet "$W" run > "$T/plain"
cs watch --stack -- dotnet "$W" run 'Pricing.Quote' > "$T/out" 2> "$T/err" || fail "launched --stack: exit $?: $(cat "$T/err")"
assert_eq "launched --stack" "$(lines "$T/out")" 'Pricing.Quote(sku="sku-1", qty=4) = 9.00
    at WatchApp.Program.Run
    at WatchApp.Program.Main
    at [native code]
Pricing.Quote(sku="abc", qty=2) = 3.00
    at WatchApp.Program.Run
    at WatchApp.Program.Main
    at [native code]'
grep -Ev "$CALL|^    at " "$T/out" | diff -q "$T/plain" - > /dev/null || fail "launched --stack: the program's output changed"
note "launched: both calls with their callers Run, Main"

# without --stack: no frame
cs watch -- dotnet "$W" run 'Pricing.Quote' > "$T/out" 2> "$T/err" || fail "launched: exit $?: $(cat "$T/err")"
grep -q '^    at ' "$T/out" && fail "frames without --stack: $(cat "$T/out")"

dotnet "$W" serve 6 > "$T/serve" 2>&1 &
svc=$!
for _ in $(seq 100); do grep -q '^ready' "$T/serve" && break; sleep 0.1; done
grep -q '^ready' "$T/serve" || fail "WatchApp serve did not start"
cs watch -p "$svc" --stack --count 6 -d 10s 'Pricing.[QC]*' > "$T/out" 2> "$T/err" || fail "attached --stack: exit $?: $(cat "$T/err")"
lines "$T/out" > "$T/got"
# every call line is followed by exactly these four frames
awk 'BEGIN { want[1] = "    at WatchApp.Program.Step"; want[2] = "    at WatchApp.Program.Serve";
             want[3] = "    at WatchApp.Program.Main"; want[4] = "    at [native code]" }
     /^Pricing\./ { if (k && k != 5) { print "short stack before: " $0; bad = 1 } k = 1; calls++; next }
     { if (!k || k > 4 || $0 != want[k]) { print "unexpected: " $0 " (frame " k ")"; bad = 1 } k++ }
     END { if (k != 5) { print "short last stack"; bad = 1 } if (calls != 6) { print calls " calls"; bad = 1 } exit bad }' "$T/got" ||
    fail "attached --stack: $(cat "$T/got")"
grep -q '^Pricing\.Check(qty=-[0-9]*) !! System\.ArgumentOutOfRangeException: "Specified argument was out of the range "\.\.\.(56 chars)$' "$T/got" ||
    fail "attached --stack: no call that threw among the six: $(cat "$T/got")"
wait "$svc" || fail "the service after watch --stack: $(cat "$T/serve")"
grep -q '^served [0-9]' "$T/serve" || fail "the service did not finish"
note "attached: 6 calls (one that threw), each with Step, Serve, Main, [native code]"
