# `corscope watch` and overloads (issue 22, item 5): WatchApp's
# Pricing.Tax(int) and Pricing.Tax(decimal), each called once by `run`.
#   - without a parameter list both are watched, and a line says so with
#     both signatures;
#   - 'Pricing.Tax(int)', 'Pricing.Tax(System.Decimal)', full names, C#
#     names, arrays and a full type name ('Pricing.Total(int[],
#     WatchApp.Order, string)', with spaces) pick exactly one;
#   - a list no overload has: one line listing the overloads, exit 1;
#   - an async method's MoveNext, named, one line per resumption;
#   - attached, by signature too (Pricing.Check(int) of `serve`).
source "$(dirname "$0")/lib.sh"
W=$APPS/WatchApp/WatchApp.dll
[ -f "$W" ] || fail "WatchApp is not built (make apps)"
CALL='^[0-9][0-9]:[0-9][0-9]:[0-9][0-9]\.[0-9][0-9][0-9] \[[0-9]+\] '
calls() { { grep -E "$CALL" "$1" || true; } | sed -E "s/$CALL//; s/  [0-9.]+ (us|ms|s)\$//"; }

cs watch -- dotnet "$W" run 'Pricing.Tax' > "$T/out" 2> "$T/err" || fail "Pricing.Tax: exit $?: $(cat "$T/err")"
assert_eq "both overloads" "$(calls "$T/out")" 'Pricing.Tax(cents=250) = 25
Pricing.Tax(amount=12.5) = 1.25'
grep -qx "corscope: Pricing.Tax: 2 overloads, all watched: Tax(int), Tax(decimal) (one alone: its parameters' types after the name, as 'Type.Method(int)')" "$T/err" ||
    fail "no line on the overloads: $(cat "$T/err")"
note "no parameter list: both overloads, said: $(grep overloads "$T/err")"

one() { # one PATTERN EXPECTED
    cs watch -- dotnet "$W" run "$1" > "$T/out" 2> "$T/err" || fail "$1: exit $?: $(cat "$T/err")"
    assert_eq "$1" "$(calls "$T/out")" "$2"
    grep -q 'overloads' "$T/err" && fail "$1: an overloads line: $(cat "$T/err")"
    note "$1: $2"
}
one 'Pricing.Tax(int)' 'Pricing.Tax(cents=250) = 25'
one 'WatchApp.Pricing.Tax(System.Decimal)' 'Pricing.Tax(amount=12.5) = 1.25'
one 'Pricing.Tax(decimal)' 'Pricing.Tax(amount=12.5) = 1.25'
one 'Pricing.Tax(System.Int32)' 'Pricing.Tax(cents=250) = 25'
one 'Pricing.Total(int[], WatchApp.Order, string)' 'Pricing.Total(items=int[3] {1, 2, 3}, order=Order, note=null) = 13'
one 'Pricing.Describe(bool,char,double,long)' 'Pricing.Describe(rush=true, grade='"'A'"', weight=2.5, id=1234567890123) = "rush-A-2.5-1234567890123"'

expect_error "no such overload" 1 "no overload of 'Pricing.Tax' has the parameters (string); it has: Tax(int), Tax(decimal)" \
    cs watch -- dotnet "$W" run 'Pricing.Tax(string)'
expect_error "fewer parameters" 1 "no overload of 'Pricing.Total' has the parameters (int\[\]); it has: Total(int\[\],Order,string)" \
    cs watch -- dotnet "$W" run 'Pricing.Total(int[])'
expect_error "unclosed list" 2 "'Pricing.Tax(int': not a method pattern" cs watch -p 1 'Pricing.Tax(int'

# an async method's state machine, named: one line per resumption (Fetch
# awaits once: its first MoveNext, and the one after the await)
cs watch -- dotnet "$W" run '*Fetch*.MoveNext' > "$T/out" 2> "$T/err" || fail "MoveNext: exit $?: $(cat "$T/err")"
[ "$(calls "$T/out" | grep -cE '^Pricing\+<Fetch>d__[0-9]+\.MoveNext\(this=<Fetch>d__[0-9]+\)$')" = 2 ] ||
    fail "MoveNext: $(calls "$T/out")"
note "async: the state machine's MoveNext named: 2 lines"

# attached: by signature, then (the agent stayed) a list no overload has
dotnet "$W" serve 6 > "$T/serve" 2>&1 &
svc=$!
for _ in $(seq 100); do grep -q '^ready' "$T/serve" && break; sleep 0.1; done
grep -q '^ready' "$T/serve" || fail "WatchApp serve did not start"
cs watch -p "$svc" --count 2 -d 5s 'Pricing.Check(int)' > "$T/out" 2> "$T/err" || fail "attached Check(int): exit $?: $(cat "$T/err")"
calls "$T/out" | grep -qE '^Pricing\.Check\(qty=-?[0-9]+\)' || fail "attached Check(int): $(cat "$T/out" "$T/err")"
grep -q "watching 1 method matching 'Pricing.Check(int)'" "$T/err" || fail "attached: header: $(cat "$T/err")"
expect_error "attached, no such overload" 1 "no overload of 'Pricing.Check' has the parameters (long); it has: Check(int)" \
    cs watch -p "$svc" -d 5s 'Pricing.Check(long)'
wait "$svc" || fail "the service after the watches: $(cat "$T/serve")"
grep -q '^served [0-9]' "$T/serve" || fail "the service did not finish"
note "attached: Pricing.Check(int) watched alone; (long) refused with the overloads"
