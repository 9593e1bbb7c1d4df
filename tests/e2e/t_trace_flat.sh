# Flat tracing (record --trace=flat) on the real runtime, with tests/apps/Trace:
# calls per method counted by a counter in each traced method's own code
# (IL rewritten at its first compilation), inlining kept:
#   - exact counts: Calls.Leaf 1,250,000 (a method small enough for the JIT
#     to inline at tier 1), Middle 250,000, with the default scope (said in
#     the report), with every method traced (CoreLib's too) and --exclude;
#   - the counter is atomic: two threads calling one small method 5,000,000
#     times each at once count 10,000,000 (a plain add lost 29% here);
#   - exceptions, threads, recursion: entries counted exactly;
#   - arguments and return values unchanged (Trace abi prints the same);
#   - methods of collectible modules, unloaded round after round, counted;
#   - the stack formats draw the counts; no paths are claimed.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/trace_lib.sh"
TRACE=$(app Trace)

# ---- exact counts, three scopes -----------------------------------------------------------
for scope in default every exclude; do
    opts=(--trace=flat)
    [ $scope = every ] && opts+=(--include .)
    [ $scope = exclude ] && opts+=(--exclude 'Calls\.Middle$')
    cs record -q --force "${opts[@]}" -o "$T/counts.corscope" -- $TRACE counts > /dev/null
    cs report -f calls --limit 0 "$T/counts.corscope" > "$T/calls.txt"
    assert_eq "$scope: Leaf calls" "$(calls_of "$T/calls.txt" TraceApp.Calls.Leaf)" 1250000
    assert_eq "$scope: CallerA calls" "$(calls_of "$T/calls.txt" TraceApp.Calls.CallerA)" 1
    if [ $scope = exclude ]; then
        ! grep -v '^#' "$T/calls.txt" | grep -q 'Middle' || fail "an excluded method was counted"
    else
        assert_eq "$scope: Middle calls" "$(calls_of "$T/calls.txt" TraceApp.Calls.Middle)" 250000
    fi
    grep -q "^# traced: calls .*counted per method in each method's own code (--trace=flat: no call paths or times; inlining kept" "$T/calls.txt" ||
        fail "$scope: the report does not say how calls were counted: $(grep '^#' "$T/calls.txt")"
    grep -q "^# calls: [0-9]* calls of [0-9]* methods, all threads together (record --trace=flat)$" "$T/calls.txt" ||
        fail "$scope: the first line: $(head -1 "$T/calls.txt")"
    grep -q "^# [1-9][0-9]* methods counted (0 left as they were" "$T/calls.txt" ||
        fail "$scope: methods counted: $(grep 'methods counted' "$T/calls.txt")"
    case $scope in
    every)
        # CoreLib's methods are counted too (through its own Interlocked.Add)
        grep -q ' System\.' "$T/calls.txt" || fail "--include . counted none of the framework"
        grep -q " [1-9][0-9]* ReadyToRun methods compiled instead" "$T/calls.txt" ||
            fail "no ReadyToRun code refused: $(grep ReadyToRun "$T/calls.txt")" ;;
    default)
        grep -q "^# traced: calls of the program's own code" "$T/calls.txt" || fail "the default scope is not said"
        awk '/^ *[0-9]/ && $NF !~ /^TraceApp\./ { print; bad = 1 } END { exit bad }' "$T/calls.txt" ||
            fail "methods outside the program were counted" ;;
    esac
    # one path per method, no more: flat counts claim no callers
    cs report -f collapsed --event calls --weight calls "$T/counts.corscope" > "$T/collapsed.txt"
    grep -qx 'TraceApp.Calls.Leaf 1250000' "$T/collapsed.txt" || fail "$scope: collapsed: $(grep Leaf "$T/collapsed.txt")"
    ! grep -q ';' "$T/collapsed.txt" || fail "$scope: flat counts drew call paths: $(grep ';' "$T/collapsed.txt" | head -3)"
    note "$scope: Leaf 1250000, Middle $(calls_of "$T/calls.txt" TraceApp.Calls.Middle), one frame per method"
done

# ---- two threads at once: the counter is atomic -------------------------------------------------
cs record -q --force --trace=flat -o "$T/race.corscope" -- $TRACE race 5000000 > "$T/out.txt"
grep -q "^race: 2 threads called Race.Hit 5000000 times each" "$T/out.txt" || fail "race did not run: $(cat "$T/out.txt")"
cs report -f calls --limit 0 "$T/race.corscope" > "$T/calls.txt"
assert_eq "race: Hit calls from two threads at once" "$(calls_of "$T/calls.txt" TraceApp.Race.Hit)" 10000000
note "race: two threads, Hit 10000000 calls counted"

# ---- exceptions, threads, recursion -------------------------------------------------------------
rounds=300
cs record -q --force --trace=flat -o "$T/throws.corscope" -- $TRACE throws $rounds > /dev/null
cs report -f calls --limit 0 "$T/throws.corscope" > "$T/calls.txt"
assert_eq "Thrower calls" "$(calls_of "$T/calls.txt" TraceApp.Throws.Thrower)" $((4 * rounds))
assert_eq "Handler calls" "$(calls_of "$T/calls.txt" TraceApp.Throws.Handler)" $((3 * rounds))
assert_eq "Filter calls" "$(calls_of "$T/calls.txt" TraceApp.Throws.Filter)" $rounds
assert_eq "FinallyWork calls" "$(calls_of "$T/calls.txt" TraceApp.Throws.FinallyWork)" $rounds
assert_eq "After calls" "$(calls_of "$T/calls.txt" TraceApp.Throws.After)" 1
cs record -q --force --trace=flat -o "$T/threads.corscope" -- $TRACE threads 4 > /dev/null
cs report -f calls --limit 0 "$T/threads.corscope" > "$T/calls.txt"
assert_eq "Unit calls on four threads" "$(calls_of "$T/calls.txt" TraceApp.Work.Unit)" 100000
cs record -q --force --trace=flat -o "$T/rec.corscope" -- $TRACE recursion 10000 > /dev/null
cs report -f calls --limit 0 "$T/rec.corscope" > "$T/calls.txt"
assert_eq "Down calls" "$(calls_of "$T/calls.txt" TraceApp.Recur.Down)" 30003
note "throws ($rounds rounds), threads (4) and recursion (10000 deep): entries exact"

# ---- arguments and return values unchanged --------------------------------------------------------
$TRACE abi 3000 > "$T/abi_plain.txt"
grep -q "^abi: 3000 rounds" "$T/abi_plain.txt" || fail "Trace abi did not run: $(cat "$T/abi_plain.txt")"
cs record -q --force --trace=flat --include . -o "$T/abi.corscope" -- $TRACE abi 3000 > "$T/abi_traced.txt"
diff "$T/abi_plain.txt" "$T/abi_traced.txt" > "$T/abi.diff" ||
    fail "the counters changed arguments or return values: $(cat "$T/abi.diff")"
cs report -f calls --limit 0 "$T/abi.corscope" > "$T/calls.txt"
assert_eq "Abi.Mix calls" "$(calls_of "$T/calls.txt" TraceApp.Abi.Mix)" 3000
note "abi: 3000 rounds print the same counted (every method) and not"

# ---- code that goes away: modules unloaded, their ModuleIDs given to the next -------------------
# Unloading emits Plugin.Heavy.Burn and Plugin.Light.Burn into a collectible
# (Reflection.Emit) assembly each round and calls each twice, then unloads
# it.  The agent forgets an unloaded module, so that a module given its
# ModuleID later would get its own Interlocked.Add reference (whether the
# runtime reuses one here is its choice: with that forgetting switched off
# these counts were still right, so this checks the modules are counted,
# not the reuse)
cs record -q --force --trace=flat --include . -o "$T/unload.corscope" -- $(app Unloading) 20 > "$T/out.txt"
grep -q "^rounds 20 burned" "$T/out.txt" || fail "Unloading did not finish: $(tail -3 "$T/out.txt")"
cs report -f calls --limit 0 "$T/unload.corscope" > "$T/calls.txt"
assert_eq "Plugin.Heavy.Burn calls over 20 unloaded modules" "$(calls_of "$T/calls.txt" Plugin.Heavy.Burn)" 40
assert_eq "Plugin.Light.Burn calls over 20 unloaded modules" "$(calls_of "$T/calls.txt" Plugin.Light.Burn)" 40
note "unloading: 20 collectible modules, Burn counted 40 + 40"

# ---- the stack formats draw it -------------------------------------------------------------------
for f in tree flamegraph pprof speedscope top; do
    cs report -f $f --event calls -o "$T/out.$f" "$T/race.corscope" 2> "$T/err.txt" || fail "-f $f --event calls: $(cat "$T/err.txt")"
    [ -s "$T/out.$f" ] || fail "-f $f --event calls wrote nothing"
done
grep -q 'Race.Hit' "$T/out.tree" || fail "the tree has no Hit"
note "tree, flamegraph, pprof, speedscope and top draw the flat counts"
