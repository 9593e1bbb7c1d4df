# `corscope watch`: values read in place, never computed (issue 22 item 2),
# on WatchApp's Values.* whose arguments are known: the module's enums by
# name ([Flags] as A|B, a value with no name as its number, a byte enum),
# DateTime (UTC and unspecified) and TimeSpan as text, Guid, arrays' length
# and first elements (int, string with a null, long), ReadOnlySpan/Span
# lengths, ref / in arguments through their pointer and an out argument
# said to be unset, a struct by its type, objects by their runtime type
# (generic class instantiations), T[] by the runtime's element type, and a
# throw with its exception's message read from the object.  The program's
# output is unchanged.
source "$(dirname "$0")/lib.sh"
W=$APPS/WatchApp/WatchApp.dll
[ -f "$W" ] || fail "WatchApp is not built (make apps)"
CALL='^[0-9][0-9]:[0-9][0-9]:[0-9][0-9]\.[0-9][0-9][0-9] \[[0-9]+\] '
calls() { { grep -E "$CALL" "$1" || true; } | sed -E "s/$CALL//; s/  [0-9.]+ (us|ms|s)\$//"; }

dotnet "$W" run > "$T/plain"
cs watch -- dotnet "$W" run 'WatchApp.Values.*' > "$T/out" 2> "$T/err" || fail "watch run: exit $?: $(cat "$T/err")"
grep -Ev "$CALL" "$T/out" > "$T/app" || true
diff -u "$T/plain" "$T/app" > "$T/diff" || fail "the program's output changed under watch: $(cat "$T/diff")"
cat > "$T/want" <<'WANT'
Values.Paint(c=Blue, a=Read|Write, l=High) = 207
Values.Paint(c=3, a=8, l=Low) = 11
Values.Later(at=2024-02-29T13:45:00.0000000Z, by=01:30:00) = 2024-02-29T15:15:00.0000000Z
Values.Tag(id=0f8fad5b-d9cb-469f-a165-70867728950e, plain=2001-01-01T00:00:00.0000000) = 2037
Values.Sum(xs=int[10] {1, 2, 3, 4, 5, 6, 7, 8, ...}, names=string[4] {"a", null, "ccc", ...}, big=long[1] {1099511627776}) = 60
Values.Count(text=ReadOnlySpan[5], cells=Span[3]) = 8
Values.Bump(n=5, k=7, s=out)
Values.Area(p=Point) = 12
Values.Peek(o=List<Int32>, bi=Box<Int32>, bs=Box<String>) = 3
Values.Pick(items=int[2] {5, 6}) = T
Values.Pick(items=string[2]) = T
Values.Fail(code=2) = 2
Values.Fail(code=7) !! System.InvalidOperationException: "code 7 is not allowed here"
WANT
calls "$T/out" > "$T/got"
diff -u "$T/want" "$T/got" > "$T/diff" || fail "values differ: $(cat "$T/diff")"
note "$(wc -l < "$T/got") calls, every value as expected, program output unchanged"
grep -qx '13 calls shown (1 threw)' "$T/err" || fail "summary: $(cat "$T/err")"

# --where: calls kept by a comparison on an argument or the result, the
# rest counted; a call left out takes no place in --rate (rate 1: the
# first call, left out, leaves the second its place)
where() { cs watch --where "$1" -- dotnet "$W" run "$2" > "$T/out" 2> "$T/err" || fail "--where '$1': exit $?: $(cat "$T/err")"; }
where 'qty > 2' 'Pricing.Quote'
assert_eq "--where qty > 2" "$(calls "$T/out")" 'Pricing.Quote(sku="sku-1", qty=4) = 9.00'
grep -qx '1 calls shown; 1 left out by --where' "$T/err" || fail "--where: summary: $(cat "$T/err")"
where 'sku contains "bc"' 'Pricing.Quote'
assert_eq "--where contains" "$(calls "$T/out")" 'Pricing.Quote(sku="abc", qty=2) = 3.00'
where 'result < 5' 'Pricing.Quote'
assert_eq "--where on the result" "$(calls "$T/out")" 'Pricing.Quote(sku="abc", qty=2) = 3.00'
where 'c == Blue' 'Values.Paint'
assert_eq "--where on an enum constant" "$(calls "$T/out")" 'Values.Paint(c=Blue, a=Read|Write, l=High) = 207'
cs watch --rate 1 --where 'qty < 3' -- dotnet "$W" run 'Pricing.Quote' > "$T/out" 2> "$T/err" || fail "--rate 1 --where: $(cat "$T/err")"
assert_eq "--where before --rate" "$(calls "$T/out")" 'Pricing.Quote(sku="abc", qty=2) = 3.00'
grep -Ev "$CALL" "$T/out" | diff -q "$T/plain" - > /dev/null || fail "--where: the program's output changed"
expect_error "--where: unknown argument" 1 \
    "--where 'nope == 3': Pricing.Quote has no argument 'nope' (its arguments: sku, qty; result)" \
    cs watch --where 'nope == 3' -- dotnet "$W" run 'Pricing.Quote'
expect_error "--where: wrong literal" 1 "Pricing.Quote's 'sku' is a string: compare it with a \"string\" or null" \
    cs watch --where 'sku > 3' -- dotnet "$W" run 'Pricing.Quote'
expect_error "--where: not a constant" 1 "Purple is not a constant of Color (Red, Green, Blue)" \
    cs watch --where 'c == Purple' -- dotnet "$W" run 'Values.Paint'
expect_error "--where: syntax" 2 "--where 'qty >': no value after '>'" cs watch --where 'qty >' -p 1 'A.B'
expect_error "--where: two comparisons" 2 "one comparison only" cs watch --where 'qty > 1 && qty < 3' -p 1 'A.B'
note "--where: argument, string contains, result, enum constant, before --rate; bad expressions refused"
