# `corscope watch`: values that need the runtime's layouts, never computed
# (issue 22 item 2), on WatchApp's `kinds` calls whose values are known:
#   - `this` of an instance method: a class's object by its runtime type, a
#     struct's (a byref to it) by its type, a generic class's by its
#     instantiation;
#   - --fields: an object's own fields read in place at the offsets the
#     runtime's GetClassLayout gives (numbers, bool, char, enums, strings
#     cut, null; at most 8, then "..."), a struct's (by value, or `this`),
#     a generic class's field of type T in its instantiation; in -o JSON;
#   - values of a type parameter T (arguments, results) in each call's
#     instantiation (ldtoken T in the rewritten method);
#   - enums of other assemblies by name: WatchLib's (an argument, a
#     [Flags] short enum, a field) and CoreLib's DayOfWeek (through
#     System.Runtime's type forwarder);
# and the program's output is unchanged.
source "$(dirname "$0")/lib.sh"
W=$APPS/WatchApp/WatchApp.dll
[ -f "$W" ] || fail "WatchApp is not built (make apps)"

dotnet "$W" kinds > "$T/plain"
run() { # OUT ARGS... (the pattern last)
    local out=$1
    shift
    local pattern=${!#}
    cs watch "${@:1:$#-1}" -- dotnet "$W" kinds "$pattern" > "$T/$out" 2> "$T/$out.err" ||
        fail "watch $*: exit $?: $(cat "$T/$out.err")"
    grep -Ev "$WATCH_CALL" "$T/$out" > "$T/app" || true
    diff -u "$T/plain" "$T/app" > "$T/diff" || fail "watch $*: the program's output changed: $(cat "$T/diff")"
}

# `this`, without --fields
run this 'WatchApp.[BVH][aeo]*'
cat > "$T/want" <<'WANT'
Basket.Add(this=Basket, sku="a", qty=2) = 2
Basket.Add(this=Basket, sku="b", qty=3) = 5
Vec.Len2(this=Vec) = 25
Holder.Swap(this=Holder<Int32>, next=5) = 1
Holder.Swap(this=Holder<Int32>, next=6) = 5
Holder.Swap(this=Holder<String>, next="y") = "x"
WANT
watch_calls "$T/this" > "$T/got"
diff -u "$T/want" "$T/got" > "$T/diff" || fail "this: lines differ: $(cat "$T/diff")"
note "this: a class's object by its runtime type, a struct's by its type, a generic class's instantiation"

# --fields
run fields --fields 'WatchApp.[BVK][aei]*.[ALK]*'
cat > "$T/want" <<'WANT'
Basket.Add(this=Basket{Count=0, Total=0, Open=true, Grade='B', Tint=Green, Shade=Dark, Owner="ann", Note=null, ...}, sku="a", qty=2) = 2
Basket.Add(this=Basket{Count=2, Total=3, Open=true, Grade='B', Tint=Green, Shade=Dark, Owner="ann", Note=null, ...}, sku="b", qty=3) = 5
Vec.Len2(this=Vec{X=3, Y=4}) = 25
Kinds.Area(v=Vec{X=3, Y=4}) = 12
Kinds.Keep(b=Basket{Count=5, Total=7.5, Open=true, Grade='B', Tint=Green, Shade=Dark, Owner="ann", Note=null, ...}) = Basket{Count=5, Total=7.5, Open=true, Grade='B', Tint=Green, Shade=Dark, Owner="ann", Note=null, ...}
WANT
watch_calls "$T/fields" > "$T/got"
diff -u "$T/want" "$T/got" > "$T/diff" || fail "--fields: lines differ: $(cat "$T/diff")"
note "--fields: an object's fields (numbers, bool, char, enum, string, null, 8 then ...), a struct's by value and as this"

# values of T in the instantiation of the call: a generic method's (int,
# string, double, an enum, an object: value types' own code, references'
# shared code alike), and -o gives their types
run echo 'Kinds.Echo'
cat > "$T/want" <<'WANT'
Kinds.Echo(value=42) = 42
Kinds.Echo(value="hi") = "hi"
Kinds.Echo(value=2.5) = 2.5
Kinds.Echo(value=Blue) = Blue
Kinds.Echo(value=Order) = Order
WANT
watch_calls "$T/echo" > "$T/got"
diff -u "$T/want" "$T/got" > "$T/diff" || fail "values of T: lines differ: $(cat "$T/diff")"
cs watch -q -o "$T/e.jsonl" -- dotnet "$W" kinds 'Kinds.Echo' > "$T/out" 2> "$T/err" || fail "-o Echo: $(cat "$T/err")"
watch_json "$T/e.jsonl" > "$T/json"
for want in \
    '{"method":"Kinds.Echo","args":{"value":{"type":"int","value":42}},"result":{"type":"int","value":42}}' \
    '{"method":"Kinds.Echo","args":{"value":{"type":"string","value":"hi"}},"result":{"type":"string","value":"hi"}}' \
    '{"method":"Kinds.Echo","args":{"value":{"type":"Color","value":"Blue"}},"result":{"type":"Color","value":"Blue"}}' \
    '{"method":"Kinds.Echo","args":{"value":{"type":"Order","value":"Order"}},"result":{"type":"Order","value":"Order"}}'; do
    grep -qxF "$want" "$T/json" || fail "-o: no line $want: $(cat "$T/json")"
done
note "values of T: a generic method's and a generic class's, in each call's instantiation (value types and shared code)"

# T of the framework's own generic code (CoreLib: its RuntimeTypeHandle
# is a TypeDef of the module, not a TypeRef), on a program not written for
# watch: Dictionary<String, Object>.TryGetValue's key read as a string
D=$APPS/Demo/Demo.dll
cs watch --count 2 'System.Collections.Generic.Dictionary.TryGetValue' -- dotnet "$D" 1 > "$T/dict" 2> "$T/dict.err" ||
    fail "watch Dictionary.TryGetValue: exit $?: $(cat "$T/dict.err")"
assert_eq "CoreLib's T: lines" "$(watch_calls "$T/dict" | wc -l)" 2
watch_calls "$T/dict" | grep -Evq '^Dictionary\.TryGetValue\(this=Dictionary<[A-Za-z0-9, ]+>, key=("[^"]*"|[0-9]+|[A-Za-z<>, ]+)(\.\.\.\([0-9]+ chars\))?, value=out\) = (true|false)$' &&
    fail "CoreLib's T: $(watch_calls "$T/dict")"
watch_calls "$T/dict" | grep -q 'key=T' && fail "CoreLib's T not read: $(watch_calls "$T/dict")"
note "values of T in CoreLib's generic code (Dictionary.TryGetValue's key), on Demo"

# enums defined in other assemblies, and --where on one's constant
run day 'Kinds.Day'
assert_eq "enums of other assemblies" "$(watch_calls "$T/day")" 'Kinds.Day(d=Friday, s=Deep, f=Matte|Waxed) = 40'
run dayw --where 's == Deep' 'Kinds.Day'
assert_eq "--where on another assembly's enum" "$(watch_calls "$T/dayw")" 'Kinds.Day(d=Friday, s=Deep, f=Matte|Waxed) = 40'
run dayn --where 's == Light' 'Kinds.Day'
assert_eq "--where on another assembly's enum, none kept" "$(watch_calls "$T/dayn")" ''
note "enums of other assemblies: WatchLib's and CoreLib's (through a forwarder) by name, [Flags] as A|B, in --where"

# a generic class's field of type T, in its instantiation (a class's
# string fields are known to the probe once the runtime laid the class
# out: a generic instantiation's from its second call)
run generic --fields 'Holder.Swap'
cat > "$T/want" <<'WANT'
Holder.Swap(this=Holder<Int32>{Item=1}, next=5) = 1
Holder.Swap(this=Holder<Int32>{Item=5}, next=6) = 5
Holder.Swap(this=Holder<String>{Item=string}, next="y") = "x"
WANT
watch_calls "$T/generic" > "$T/got"
diff -u "$T/want" "$T/got" > "$T/diff" || fail "--fields on a generic class: lines differ: $(cat "$T/diff")"
note "--fields: a generic class's T field in its instantiation"

# -o: the fields as an object
cs watch --fields -q -o "$T/f.jsonl" -- dotnet "$W" kinds 'Vec.Len2' > "$T/out" 2> "$T/err" || fail "-o --fields: $(cat "$T/err")"
watch_json "$T/f.jsonl" > "$T/json"
assert_eq "-o --fields" "$(cat "$T/json")" \
    '{"method":"Vec.Len2","args":{"this":{"type":"Vec","value":"Vec","fields":{"X":3,"Y":4}}},"result":{"type":"int","value":25}}'
cs watch --fields -q -o "$T/b.jsonl" -- dotnet "$W" kinds 'Basket.Add' > "$T/out" 2> "$T/err" || fail "-o --fields Basket: $(cat "$T/err")"
python3 - "$T/b.jsonl" <<'PY' || fail "-o --fields: $(head -1 "$T/b.jsonl")"
import json, sys
calls = [json.loads(l) for l in open(sys.argv[1])]
assert len(calls) == 2, calls
f = calls[1]["args"]["this"]["fields"]
want = {"Count": 2, "Total": 3, "Open": True, "Grade": "'B'", "Tint": "Green", "Owner": "ann", "Note": None}
for k, v in want.items():
    assert f[k] == v, (k, f[k], v)
PY
note "-o: fields as a JSON object (numbers, true, null, strings)"

# attached (ReJIT), three sessions in a row on a service checking every
# result: `this` with --fields, values of T of a generic method (its
# TypeSpec and RuntimeTypeHandle local made in a loaded module) and of a
# generic class; the service's results stay right
dotnet "$W" kinds-serve 25 > "$T/serve" 2>&1 &
svc=$!
for _ in $(seq 100); do grep -q '^ready' "$T/serve" && break; sleep 0.1; done
grep -q '^ready' "$T/serve" || fail "WatchApp kinds-serve did not start"
attached() { # OUT ARGS...
    local out=$1
    shift
    cs watch -p "$svc" -d 10s "$@" > "$T/$out" 2> "$T/$out.err" || fail "attached watch $*: exit $?: $(cat "$T/$out.err")"
}
attached a1 --count 3 --fields 'Basket.Add'
attached a2 --count 4 'Kinds.Echo'
attached a3 --count 2 'Holder.Swap'
check_lines() { # FILE COUNT REGEX
    assert_eq "attached $1: lines" "$(watch_calls "$T/$1" | wc -l)" "$2"
    watch_calls "$T/$1" | grep -Evq "$3" && fail "attached $1: a line not as expected: $(watch_calls "$T/$1")"
    return 0
}
check_lines a1 3 "^Basket\.Add\(this=Basket\{Count=[0-9]+, Total=[0-9.]+, Open=true, Grade='B', Tint=Green, Shade=Dark, Owner=\"ann\", Note=null, \.\.\.\}, sku=\"k\", qty=[123]\) = [0-9]+$"
check_lines a2 4 '^Kinds\.Echo\(value=([0-9]+|"e[0-9]")\) = ([0-9]+|"e[0-9]")$'
watch_calls "$T/a2" | grep -q '"e' || fail "attached: no Echo of a string shown: $(cat "$T/a2")"
watch_calls "$T/a2" | grep -Eq 'value=[0-9]' || fail "attached: no Echo of an int shown: $(cat "$T/a2")"
check_lines a3 2 '^Holder\.Swap\(this=Holder<Int32>, next=[0-9]+\) = [0-9]+$'
wait "$svc" || fail "the service failed after three watches (exit $?): $(cat "$T/serve")"
grep -q '^wrong' "$T/serve" && fail "the service computed a wrong result: $(cat "$T/serve")"
note "attached: this with --fields, T of a generic method and class, three sessions, the service's results right"
