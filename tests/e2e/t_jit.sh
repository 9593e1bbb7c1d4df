# -e jit on the real runtime: a program that compiles a known set of
# methods (five called once, one with AggressiveOptimization, a hot one
# that tiering promotes, a long loop that goes to OSR) is reported with
# each of them and its tiers; compiles carry the stack that needed them;
# ReadyToRun code used, classes and assemblies loaded are counted.
source "$(dirname "$0")/lib.sh"

cs record -q -e jit -o "$T/jit.corscope" -- $(app Events) jit > /dev/null
cs report -f jit --limit 0 "$T/jit.corscope" > "$T/jit.txt"
# tiers METHOD: the tiers its compiles had, sorted, comma-separated
tiers() {
    awk -v m="$1" '/^slowest compiles/ { on = 1; next } on && /^$/ { on = 0 }
        on && $NF == m { t = $5; for (i = 6; i < NF; i++) t = t " " $i; print t }' "$T/jit.txt" |
        sort | paste -sd, -
}
for m in JitA JitB JitC JitD JitE; do
    assert_eq "$m" "$(tiers Events.JitMethods.$m)" "tier0"
done
# .NET 8's MethodLoadVerbose calls that code OptimizedTier1 (9 and 10: Optimized)
optimized=optimized
[ "$RUNTIME" = 8 ] && optimized=tier1
assert_eq "JitOptimized (AggressiveOptimization)" "$(tiers Events.JitMethods.JitOptimized)" "$optimized"
hot=$(tiers Events.JitMethods.JitHot)
case "$hot" in
    tier0,*tier1*) note "JitHot: $hot" ;;
    *) fail "JitHot: tiers '$hot', expected tier0 then a tier-1 version" ;;
esac
assert_eq "JitLoop (OSR)" "$(tiers Events.JitMethods.JitLoop)" "OSR,tier0"
grep -Eq "^# JIT: [0-9]+ compiles, .* compiling \([0-9.]+% of the" "$T/jit.txt" || fail "totals: $(head -1 "$T/jit.txt")"
r2r=$(awk '/ReadyToRun code used for/ { print $6 }' "$T/jit.txt")
classes=$(awk '/ReadyToRun code used for/ { print $10 }' "$T/jit.txt")
assert_ge "methods with R2R code used" "${r2r:-0}" 100
assert_ge "classes loaded" "${classes:-0}" 100
grep -Eq "assembly  Events$" "$T/jit.txt" || fail "no load of the Events assembly"
note "$(sed -n 2p "$T/jit.txt")"

# the stack that needed the compile, with the method at the leaf
cs report -f collapsed --event jit "$T/jit.corscope" > "$T/jit.collapsed"
grep -q 'Events\.Program\.Main;Events\.Program\.Jit;\[JIT tier0\] Events\.JitMethods\.JitA ' "$T/jit.collapsed" ||
    fail "collapsed: JitA's compile not under Program.Jit"
grep -q '^\[JIT tier1[^]]*\] Events\.JitMethods\.JitHot ' "$T/jit.collapsed" ||
    fail "collapsed: the background tier-1 compile is not on its own"
for f in flamegraph speedscope pprof tree chrome; do
    cs report -f $f --event jit -o "$T/jit.$f" "$T/jit.corscope" || fail "$f --event jit"
done
grep -q '"cat":"jit"' "$T/jit.chrome" || fail "chrome: no compile slices"
