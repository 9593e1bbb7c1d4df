# `corscope watch` (live probes, issue 22) on WatchApp, whose calls and
# arguments are known:
#   - launched: every call of Pricing.* and Cart.Add shown with its
#     arguments and result, exactly, in order, the call that threw with its
#     exception's type and message, a generic method's two instantiations
#     (int, string: arrays of T by the runtime's type, values of type T as T), an async method (said what its line
#     is); the program's own output unchanged;
#   - attached: --count 5 shows five calls of a running service, with
#     results consistent with their arguments; the service goes on, every
#     result right, after the methods are reverted;
#   - bad input: a name matching nothing (with the nearest names), too many
#     matches (--max-methods), bad command lines: one line, non-zero exit.
source "$(dirname "$0")/lib.sh"
W=$APPS/WatchApp/WatchApp.dll
[ -f "$W" ] || fail "WatchApp is not built (make apps)"
CALL='^[0-9][0-9]:[0-9][0-9]:[0-9][0-9]\.[0-9][0-9][0-9] \[[0-9]+\] '

# calls FILE: the call lines without time, thread and duration
calls() { { grep -E "$CALL" "$1" || true; } | sed -E "s/$CALL//; s/  [0-9.]+ (us|ms|s)\$//"; }

dotnet "$W" run > "$T/plain"

# ---- launched ----
cs watch -- dotnet "$W" run 'WatchApp.Pricing.*' > "$T/out" 2> "$T/err" || fail "watch run: exit $?: $(cat "$T/err")"
grep -Ev "$CALL" "$T/out" > "$T/app" || true
diff -u "$T/plain" "$T/app" > "$T/diff" || fail "the program's output changed under watch: $(cat "$T/diff")"
cat > "$T/want" <<'WANT'
Pricing.Quote(sku="sku-1", qty=4) = 9.00
Pricing.Quote(sku="abc", qty=2) = 3.00
Pricing.Describe(rush=true, grade='A', weight=2.5, id=1234567890123) = "rush-A-2.5-1234567890123"
Pricing.Tax(cents=250) = 25
Pricing.Tax(amount=12.5) = 1.25
Pricing.Total(items=int[3] {1, 2, 3}, order=Order, note=null) = 13
Pricing.Log(message="hello")
Pricing.Check(qty=3) = 6
Pricing.Check(qty=-1) !! System.ArgumentOutOfRangeException: "Specified argument was out of the range "...(56 chars)
Pricing.Long(text="xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"...(60 chars)) = "XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX"...(60 chars)
Pricing.First(items=int[2] {5, 6}, skip=1) = 6
Pricing.First(items=string[2], skip=0) = "a"
Pricing.Fetch(id=4) = Task
WANT
calls "$T/out" > "$T/got"
diff -u "$T/want" "$T/got" > "$T/diff" || fail "launched: calls differ: $(cat "$T/diff")"
note "launched: $(wc -l < "$T/got") calls exactly as expected, program output unchanged"
grep -qx '13 calls shown (1 threw)' "$T/err" || fail "launched: summary: $(cat "$T/err")"
grep -Eq '^Pricing\.Quote +2 +[0-9.]+ (us|ms) ' "$T/err" || fail "launched: no Quote row in the summary: $(cat "$T/err")"
grep -q '^corscope: Pricing.Fetch returns a Task: its line ends at the method.s first await' "$T/err" ||
    fail "launched: the async method is not explained: $(cat "$T/err")"

# an instance method, the pattern before the command, --count
cs watch --count 1 'Cart.Add' -- dotnet "$W" run > "$T/out" 2> "$T/err" || fail "watch Cart.Add: exit $?: $(cat "$T/err")"
assert_eq "instance method, --count 1" "$(calls "$T/out")" "Cart.Add(this=Cart, n=2, weight=1.5) = 2"
grep -q '1 past --count not taken' "$T/err" || fail "--count: the second call is not counted: $(cat "$T/err")"
grep -Ev "$CALL" "$T/out" > "$T/app" || true
diff -q "$T/plain" "$T/app" > /dev/null || fail "the program's output changed under watch Cart.Add"

# ---- bad input ----
expect_error "no match" 1 "no method matches 'Pricing.Qoute'; nearest: WatchApp.Pricing.Quote" \
    cs watch -- dotnet "$W" run 'Pricing.Qoute'
grep -Ev "$CALL" "$T/out" | diff -q "$T/plain" - > /dev/null || fail "no match: the program's output changed"
expect_error "too many" 1 "matches [1-9][0-9]* methods, more than --max-methods 3" \
    cs watch --max-methods 3 -- dotnet "$W" run 'WatchApp.*'
# "nothing was rewritten" holds launched too: no call is shown (the methods
# taken before the count was passed were once rewritten at their compilation)
! grep -Eq "$CALL" "$T/out" || fail "too many: calls shown although nothing was to be rewritten: $(grep -E "$CALL" "$T/out" | head -3)"
expect_error "no pattern" 2 "no method pattern" cs watch -p 1
expect_error "no process" 2 "no process" cs watch 'A.B'
expect_error "both" 2 "not both" cs watch -p 1 'A.B' -- true
expect_error "bad count" 2 "not a positive count" cs watch --count 0 -p 1 'A.B'
expect_error "bad max" 2 "a count from 1 to 1000" cs watch --max-methods 5000 -p 1 'A.B'
expect_error "not a process" 1 "" cs watch -p 999999 'A.B'

# ---- attached ----
dotnet "$W" serve 12 > "$T/serve" 2>&1 &
svc=$!
for _ in $(seq 100); do grep -q '^ready' "$T/serve" && break; sleep 0.1; done
grep -q '^ready' "$T/serve" || fail "WatchApp serve did not start"
cs watch -p "$svc" --count 5 'Pricing.Quote' > "$T/out" 2> "$T/err" || fail "watch -p: exit $?: $(cat "$T/err")"
calls "$T/out" > "$T/got"
[ "$(wc -l < "$T/got")" = 5 ] || fail "attached: $(wc -l < "$T/got") calls shown, expected 5: $(cat "$T/out" "$T/err")"
# each result is 2.25 * qty, as the program computes it
awk '{ if (!match($0, /^Pricing\.Quote\(sku="sku-[0-2]", qty=([0-4])\) = ([0-9.]+)$/)) { print "bad line: " $0; exit 1 }
       split($0, a, "qty="); q = substr(a[2], 1, 1); split($0, b, " = "); want = sprintf("%.2f", 2.25 * q);
       if (b[2] != want) { print "wrong result: " $0 " (want " want ")"; exit 1 } }' "$T/got" ||
    fail "attached: $(cat "$T/got")"
grep -q 'have their original code back' "$T/err" || fail "attached: no revert: $(cat "$T/err")"
wait "$svc" || fail "the service failed after watch (exit $?): $(cat "$T/serve")"
grep -q '^wrong' "$T/serve" && fail "the service computed a wrong result: $(cat "$T/serve")"
grep -q '^served [0-9]' "$T/serve" || fail "the service did not finish: $(cat "$T/serve")"
note "attached: 5 calls, results right; service went on: $(grep '^served' "$T/serve")"

# Ctrl-C ends an attached watch as -d would: lines shown (the throws of
# Pricing.Check with their type, after an attach), methods reverted
dotnet "$W" serve 6 > "$T/serve2" 2>&1 &
svc=$!
for _ in $(seq 100); do grep -q '^ready' "$T/serve2" && break; sleep 0.1; done
"$CORSCOPE" watch -p "$svc" 'Pricing.[CQ]*' > "$T/out" 2> "$T/err" &
cw=$!
# Ctrl-C once a throwing call is shown (a fixed wait raced a slow attach)
for _ in $(seq 100); do grep -q ' !! ' "$T/out" && break; sleep 0.1; done
kill -INT "$cw"
wait "$cw" || fail "watch after Ctrl-C: exit $?: $(cat "$T/err")"
n=$(calls "$T/out" | wc -l)
assert_ge "Ctrl-C: calls shown" "$n" 1
threw=$(calls "$T/out" | grep -c '^Pricing\.Check(qty=-[0-9]*) !! System\.ArgumentOutOfRangeException: "Specified argument was out of the range "\.\.\.(56 chars)$' || true)
assert_ge "attached: calls that threw, shown" "$threw" 1
grep -q "^$n calls shown ($threw threw)" "$T/err" || fail "Ctrl-C: summary: $(cat "$T/err")"
grep -q 'have their original code back' "$T/err" || fail "Ctrl-C: no revert: $(cat "$T/err")"
wait "$svc" || fail "the service failed after watch and Ctrl-C: $(cat "$T/serve2")"
grep -q '^served [0-9]' "$T/serve2" || fail "the service did not finish after Ctrl-C"
note "Ctrl-C: $n calls ($threw threw), reverted, the service finished"

# watch dies (kill -9, no goodbye; the agent reads the hang-up as a stop,
# src/agent/control_client.c): the service goes on unharmed, every result
# right, and a second watch of the same method gets its calls and reverts
# at its end
dotnet "$W" serve 8 > "$T/serve3" 2>&1 &
svc=$!
for _ in $(seq 100); do grep -q '^ready' "$T/serve3" && break; sleep 0.1; done
"$CORSCOPE" watch -p "$svc" 'Pricing.Quote' > "$T/out" 2> "$T/err" &
cw=$!
for _ in $(seq 100); do [ "$(calls "$T/out" | wc -l)" -ge 1 ] && break; sleep 0.1; done
[ "$(calls "$T/out" | wc -l)" -ge 1 ] || fail "killed watch: no call shown before the kill: $(cat "$T/err")"
kill -KILL "$cw"
wait "$cw" 2> /dev/null || true
sleep 1
cs watch -p "$svc" --count 3 'Pricing.Quote' > "$T/out2" 2> "$T/err2" ||
    fail "watch after a killed watch: exit $?: $(cat "$T/err2")"
calls "$T/out2" > "$T/got"
[ "$(wc -l < "$T/got")" = 3 ] || fail "after a killed watch: $(wc -l < "$T/got") calls shown, expected 3: $(cat "$T/out2" "$T/err2")"
grep -Eq '^Pricing\.Quote\(sku="sku-[0-2]", qty=[0-4]\) = [0-9.]+$' "$T/got" || fail "after a killed watch: $(cat "$T/got")"
grep -q 'have their original code back' "$T/err2" || fail "after a killed watch: no revert: $(cat "$T/err2")"
wait "$svc" || fail "the service failed after a killed watch (exit $?): $(cat "$T/serve3")"
grep -q '^wrong' "$T/serve3" && fail "the service computed a wrong result after a killed watch: $(cat "$T/serve3")"
grep -q '^served [0-9]' "$T/serve3" || fail "the service did not finish after a killed watch: $(cat "$T/serve3")"
note "killed watch: the service went on, a second watch got 3 calls and reverted: $(grep '^served' "$T/serve3")"
