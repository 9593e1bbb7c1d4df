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

# Multicore JIT: the runtime ignores ProfileOptimization.SetProfileRoot
# while a profiler follows compilations, as corscope's code map must from
# the start (src/agent/mcjit.h).  A program that asks for it is told so by
# record and check (multicore_jit_off=1); one that only touches
# ProfileOptimization (StartProfile without a root) is not.
$(app Events) multicore-jit "$T/mcj-plain" > /dev/null
if [ "$(nproc)" -ge 2 ]; then
    # the premise: on its own the program writes its profile (the runtime
    # runs multicore JIT on two CPUs or more), under corscope it does not
    [ -s "$T/mcj-plain/events.profile" ] || fail "multicore JIT wrote no profile without the profiler"
fi
cs record -e cpu,jit -o "$T/mcj.corscope" -- $(app Events) multicore-jit "$T/mcj" > /dev/null 2> "$T/mcj.err"
[ -e "$T/mcj/events.profile" ] &&
    fail "the runtime wrote a multicore JIT profile under the profiler: mcjit.h's premise no longer holds"
grep -q "^corscope: warning: the program asked for multicore JIT (ProfileOptimization.SetProfileRoot)" \
    "$T/mcj.err" || fail "record did not say multicore JIT was off: $(cat "$T/mcj.err")"
cs check "$T/mcj.corscope" > "$T/mcj.check"
grep -q " multicore_jit_off=1" "$T/mcj.check" || fail "check: $(grep counters "$T/mcj.check")"
grep -q "^  warning      the program asked for multicore JIT" "$T/mcj.check" || fail "check gave no warning"
# every report says so: its start-up compiles ran on the program's threads
cs report -f top "$T/mcj.corscope" > "$T/mcj.top" 2> "$T/mcj.top-err"
grep -q "^# the program asked for multicore JIT" "$T/mcj.top" || fail "top: no line on multicore JIT"
grep -q "^corscope: warning: .*multicore JIT" "$T/mcj.top-err" || fail "report: no warning on multicore JIT"
cs report -f flamegraph -o "$T/mcj.html" "$T/mcj.corscope" 2> /dev/null
grep -q "asked for multicore JIT" "$T/mcj.html" || fail "flamegraph: no note on multicore JIT"
cs record -e cpu,jit -o "$T/mcj-touch.corscope" -- $(app Events) multicore-jit-touch "$T/mcj-touch" \
    > /dev/null 2> "$T/mcj-touch.err"
grep -q "multicore JIT" "$T/mcj-touch.err" && fail "StartProfile alone was taken for multicore JIT"
cs report -f top "$T/mcj-touch.corscope" 2>&1 | grep -q "multicore JIT" && fail "touch: a report spoke of multicore JIT"
cs check "$T/mcj-touch.corscope" | grep -q " multicore_jit_off=0" || fail "touch: multicore_jit_off is not 0"
# on one CPU the runtime runs no multicore JIT, profiler or not: nothing
# was taken away, nothing is said
if command -v taskset > /dev/null; then
    taskset -c 0 $(app Events) multicore-jit "$T/mcj-one-plain" > /dev/null
    [ -e "$T/mcj-one-plain/events.profile" ] && fail "multicore JIT ran on one CPU: the test's premise is gone"
    taskset -c 0 timeout -k 5 120 "$CORSCOPE" record -e cpu,jit -o "$T/mcj-one.corscope" -- $(app Events) multicore-jit \
        "$T/mcj-one" > /dev/null 2> "$T/mcj-one.err"
    grep -q "multicore JIT" "$T/mcj-one.err" && fail "one CPU: record warned of multicore JIT"
    cs check "$T/mcj-one.corscope" | grep -q " multicore_jit_off=0" || fail "one CPU: multicore_jit_off is not 0"
fi
note "multicore JIT asked for: record and check say it is off; StartProfile alone, or one CPU: nothing said"
