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

dotnet "$W" run > "$T/plain"
cs watch -- dotnet "$W" run 'WatchApp.Values.*' > "$T/out" 2> "$T/err" || fail "watch run: exit $?: $(cat "$T/err")"
grep -Ev "$WATCH_CALL" "$T/out" > "$T/app" || true
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
Values.Pick(items=int[2] {5, 6}) = 6
Values.Pick(items=string[2]) = "b"
Values.Fail(code=2) = 2
Values.Fail(code=7) !! System.InvalidOperationException: "code 7 is not allowed here"
WANT
watch_calls "$T/out" > "$T/got"
diff -u "$T/want" "$T/got" > "$T/diff" || fail "values differ: $(cat "$T/diff")"
note "$(wc -l < "$T/got") calls, every value as expected, program output unchanged"
grep -qx '13 calls shown (1 threw)' "$T/err" || fail "summary: $(cat "$T/err")"

# --where: calls kept by a comparison on an argument or the result, the
# rest counted; a call left out takes no place in --rate (rate 1: the
# first call, left out, leaves the second its place)
where() { cs watch --where "$1" -- dotnet "$W" run "$2" > "$T/out" 2> "$T/err" || fail "--where '$1': exit $?: $(cat "$T/err")"; }
where 'qty > 2' 'Pricing.Quote'
assert_eq "--where qty > 2" "$(watch_calls "$T/out")" 'Pricing.Quote(sku="sku-1", qty=4) = 9.00'
grep -qx '1 calls shown; 1 left out by --where' "$T/err" || fail "--where: summary: $(cat "$T/err")"
where 'sku contains "bc"' 'Pricing.Quote'
assert_eq "--where contains" "$(watch_calls "$T/out")" 'Pricing.Quote(sku="abc", qty=2) = 3.00'
where 'result < 5' 'Pricing.Quote'
assert_eq "--where on the result" "$(watch_calls "$T/out")" 'Pricing.Quote(sku="abc", qty=2) = 3.00'
where 'c == Blue' 'Values.Paint'
assert_eq "--where on an enum constant" "$(watch_calls "$T/out")" 'Values.Paint(c=Blue, a=Read|Write, l=High) = 207'
# overloads: the one --where names no argument of is not watched, said once
where 'cents > 100' 'Pricing.Tax'
assert_eq "--where on overloads" "$(watch_calls "$T/out")" 'Pricing.Tax(cents=250) = 25'
grep -qF "corscope: 1 method not watched: --where 'cents > 100' cannot be said of it (Pricing.Tax has no argument 'cents' (its arguments: amount; result))" "$T/err" ||
    fail "--where on overloads: the other one is not said: $(cat "$T/err")"
cs watch --rate 1 --where 'qty < 3' -- dotnet "$W" run 'Pricing.Quote' > "$T/out" 2> "$T/err" || fail "--rate 1 --where: $(cat "$T/err")"
assert_eq "--where before --rate" "$(watch_calls "$T/out")" 'Pricing.Quote(sku="abc", qty=2) = 3.00'
grep -Ev "$WATCH_CALL" "$T/out" | diff -q "$T/plain" - > /dev/null || fail "--where: the program's output changed"
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

# -o: one JSON object per call, values structured (numbers, strings with
# their length when cut, the exception's type and message)
cs watch -q -o "$T/calls.jsonl" -- dotnet "$W" run 'Values.*' > "$T/out" 2> "$T/err" || fail "-o: exit $?: $(cat "$T/err")"
assert_eq "-o: JSON lines" "$(wc -l < "$T/calls.jsonl")" 13
python3 -c 'import json,sys; [json.loads(l) for l in open(sys.argv[1])]' "$T/calls.jsonl" || fail "-o: not JSON lines: $(head -3 "$T/calls.jsonl")"
grep -Eq '^\{"time":"20[0-9]{2}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{6}Z","thread":[0-9]+,' "$T/calls.jsonl" ||
    fail "-o: no time and thread: $(head -1 "$T/calls.jsonl")"
watch_json "$T/calls.jsonl" > "$T/json"
for want in \
    '{"method":"Values.Paint","args":{"c":{"type":"Color","value":"Blue"},"a":{"type":"Access","value":"Read|Write"},"l":{"type":"Level","value":"High"}},"result":{"type":"int","value":207}}' \
    '{"method":"Values.Later","args":{"at":{"type":"DateTime","value":"2024-02-29T13:45:00.0000000Z"},"by":{"type":"TimeSpan","value":"01:30:00"}},"result":{"type":"DateTime","value":"2024-02-29T15:15:00.0000000Z"}}' \
    '{"method":"Values.Bump","args":{"n":{"type":"ref int","value":5},"k":{"type":"ref long","value":7},"s":{"type":"ref string","value":"out"}}}' \
    '{"method":"Values.Fail","args":{"code":{"type":"int","value":7}},"threw":{"type":"System.InvalidOperationException","message":"code 7 is not allowed here"}}'; do
    grep -qxF "$want" "$T/json" || fail "-o: no line $want: $(cat "$T/json")"
done
cs watch -q -o "$T/p.jsonl" -- dotnet "$W" run 'Pricing.[CL]*' > "$T/out" 2> "$T/err" || fail "-o Pricing: $(cat "$T/err")"
watch_json "$T/p.jsonl" > "$T/json"
for want in \
    '{"method":"Pricing.Long","args":{"text":{"type":"string","value":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx","length":60}},"result":{"type":"string","value":"XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX","length":60}}' \
    '{"method":"Pricing.Check","args":{"qty":{"type":"int","value":-1}},"threw":{"type":"System.ArgumentOutOfRangeException","message":"Specified argument was out of the range ","message_length":56}}'; do
    grep -qxF "$want" "$T/json" || fail "-o: no line $want: $(cat "$T/json")"
done
expect_error "-o unwritable" 1 "cannot write /nonexistent/dir/c.jsonl" cs watch -o /nonexistent/dir/c.jsonl -p 1 'A.B'
note "-o: 13 JSON lines, values structured, strings and messages with their length when cut"

# attached, two sessions in a row (the dormant agent takes the second):
# each session's --where holds for its own lines (another filter takes
# other probe slots), the service's results stay right
dotnet "$W" serve 14 > "$T/serve" 2>&1 &
svc=$!
for _ in $(seq 100); do grep -q '^ready' "$T/serve" && break; sleep 0.1; done
grep -q '^ready' "$T/serve" || fail "WatchApp serve did not start"
cs watch -p "$svc" -d 8s --count 3 --where 'qty > 2' 'Pricing.Quote' > "$T/out1" 2> "$T/err1" || fail "attached --where: $(cat "$T/err1")"
cs watch -p "$svc" -d 8s --count 3 --where 'qty < 2' -o "$T/a.jsonl" 'Pricing.Quote' > "$T/out2" 2> "$T/err2" || fail "attached, second --where: $(cat "$T/err2")"
watch_calls "$T/out1" | grep -Evq '^Pricing\.Quote\(sku="sku-[0-2]", qty=[34]\) = ' && fail "session 1: a line --where 'qty > 2' should have left out: $(cat "$T/out1")"
watch_calls "$T/out2" | grep -Evq '^Pricing\.Quote\(sku="sku-[0-2]", qty=[01]\) = ' && fail "session 2: a line --where 'qty < 2' should have left out: $(cat "$T/out2")"
assert_eq "attached --where: session 1 lines" "$(watch_calls "$T/out1" | wc -l)" 3
assert_eq "attached --where: session 2 lines" "$(watch_calls "$T/out2" | wc -l)" 3
assert_eq "attached -o: JSON lines" "$(wc -l < "$T/a.jsonl")" 3
wait "$svc" || fail "the service failed after two watches (exit $?): $(cat "$T/serve")"
grep -q '^wrong' "$T/serve" && fail "the service computed a wrong result: $(cat "$T/serve")"
note "attached: two sessions, each --where held for its lines, the service's results right"
