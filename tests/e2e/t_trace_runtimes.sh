# Tracing on .NET 8 and 9 (tests/apps/Trace published self-contained for
# each, from the runtime packs of the local feed): exact counts, and
# exceptions leave every shadow stack at its base.  .NET 8 dispatches
# exceptions in native code; .NET 9 in managed code (System.Runtime.EH) that
# it enters and, for RhThrowEx and DispatchEx, never leaves; .NET 10 leaves
# them.  The tracer leaves that dispatch out on every version, so no call is
# left without its return and no return is without its call.
source "$(dirname "$0")/lib.sh"

calls_of() { awk -v m="$2" '$NF == m { print $1; found = 1; exit } END { if (!found) print 0 }' "$1"; }
rounds=200
for v in 8 9; do
    out=$ROOT/build/rt$v
    props=(-p:TargetFramework=net$v.0 -p:RuntimeIdentifier=linux-x64 -p:SelfContained=true
           -p:CorscopeBuild="$out/")
    dotnet restore "$ROOT/tests/apps/Trace/Trace.csproj" -v quiet "${props[@]}" > "$T/restore.txt" 2>&1 ||
        fail ".NET $v: restore: $(tail -3 "$T/restore.txt")"
    dotnet publish "$ROOT/tests/apps/Trace/Trace.csproj" --no-restore -c Release -nologo -v quiet \
        -clp:ErrorsOnly "${props[@]}" -o "$out/Trace" > "$T/publish.txt" 2>&1 ||
        fail ".NET $v: publish: $(tail -3 "$T/publish.txt")"
    for scope in all include; do
        opts=(--trace --include .)
        [ $scope = include ] && opts=(--trace --include '^TraceApp\.')
        cs record -q --force "${opts[@]}" -o "$T/throws.corscope" -- "$out/Trace/Trace" throws $rounds > /dev/null
        cs check "$T/throws.corscope" > "$T/check.txt" || fail ".NET $v: check: $(tail -2 "$T/check.txt")"
        grep -q "runtime      $v\." "$T/check.txt" || fail "not .NET $v: $(grep runtime "$T/check.txt")"
        cs report -f calls --limit 0 "$T/throws.corscope" > "$T/calls.txt"
        cs report -f collapsed --event calls "$T/throws.corscope" > "$T/collapsed.txt"
        assert_eq ".NET $v $scope: Thrower calls" "$(calls_of "$T/calls.txt" TraceApp.Throws.Thrower)" $((4 * rounds))
        assert_eq ".NET $v $scope: Handler calls" "$(calls_of "$T/calls.txt" TraceApp.Throws.Handler)" $((3 * rounds))
        assert_eq ".NET $v $scope: FinallyWork calls" "$(calls_of "$T/calls.txt" TraceApp.Throws.FinallyWork)" $rounds
        grep -q '^TraceApp.Program.Main;TraceApp.Throws.Run;TraceApp.Throws.After [0-9]*$' "$T/collapsed.txt" ||
            fail ".NET $v $scope: After is not under Run: $(grep 'Throws.After' "$T/collapsed.txt")"
        grep -q '^TraceApp.Program.Main;TraceApp.Throws.Run;TraceApp.Throws.Catcher;TraceApp.Throws.Mid2;TraceApp.Throws.Mid;TraceApp.Throws.FinallyWork [0-9]*$' \
            "$T/collapsed.txt" || fail ".NET $v $scope: the finally's callee is not under Mid"
        for c in calls_without_return unmatched_returns; do
            grep -q " $c=0" "$T/check.txt" || fail ".NET $v $scope: $(grep -o "$c=[0-9]*" "$T/check.txt")"
        done
    done
    cs record -q --force --trace --include '^TraceApp\.' -o "$T/counts.corscope" -- "$out/Trace/Trace" counts > /dev/null
    cs report -f calls --include CallerA "$T/counts.corscope" > "$T/a.txt"
    assert_eq ".NET $v: Leaf calls under CallerA" "$(calls_of "$T/a.txt" TraceApp.Calls.Leaf)" 1000000
    note ".NET $v: exceptions balanced, counts exact"
done
