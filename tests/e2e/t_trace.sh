# Tracing mode (record --trace) on the real runtime, with tests/apps/Trace:
#   - exact call counts on exact paths: Calls.Leaf 1,000,000 times from
#     CallerA and 250,000 times from CallerB (through Middle), with every
#     method traced (--include .), with the default scope (the program's own
#     assembly, said in the report) and with --include on the program's
#     namespace, where the JIT would inline Leaf at tier 1 unless the tracer
#     refuses it;
#   - arguments and return values of every kind unchanged by the hooks
#     (Trace abi, traced and untraced print the same);
#   - --exclude Middle: Middle is nowhere, Leaf hangs under CallerB;
#   - exceptions thrown through traced frames (caught up the stack, through
#     a finally, a filter, thrown from a finally, rethrown): exact counts,
#     the finally's and the catch blocks' callees under the right callers,
#     and a call made after them hangs straight under its caller (every
#     shadow stack back at its base);
#   - calls attributed to their threads; recursion 10,000 deep, direct and
#     mutual; async continuations on other threads; a thread blocked in a
#     traced call at exit (counted open at the end, its time running to the
#     end); --trace=counts;
#   - the sampler and the tracer agree on where the CPU went;
#   - check says what the profiler cost: the hooks' share of a traced
#     empty method's samples, next to none untraced;
#   - every stack format draws the calls event; refusals of bad options.
source "$(dirname "$0")/lib.sh"

source "$(dirname "$0")/trace_lib.sh"
# incl_ms FILE METHOD -> its inclusive time in ms
incl_ms() {
    awk -v m="$2" '$NF == m { v = $2; u = $3; f = (u == "s") ? 1000 : (u == "ms") ? 1 : (u == "us") ? 0.001 : 0.000001
                              printf "%.3f", v * f; found = 1; exit } END { if (!found) print 0 }' "$1"
}
counter() { grep -o "$2=[0-9]*" "$1" | cut -d= -f2; }
TRACE=$(app Trace)

# ---- exact counts on exact paths ------------------------------------------------------
for scope in default every include; do
    opts=(--trace)
    [ $scope = every ] && opts+=(--include .)
    [ $scope = include ] && opts+=(--include '^TraceApp\.')
    cs record -q --force "${opts[@]}" -o "$T/counts.corscope" -- $TRACE counts > /dev/null
    check_trace_counts "$T/counts.corscope" $scope
    if [ $scope = every ]; then
        grep -q ' System\.' "$T/calls.txt" || fail "--include . traced none of the framework"
    else
        # only the program's own methods, and the runtime's left out
        awk '/^ *[0-9]/ && $NF !~ /^TraceApp\./ { print; bad = 1 } END { exit bad }' "$T/calls.txt" ||
            fail "$scope: methods outside the program were traced"
    fi
    if [ $scope = default ]; then
        grep -q "^# traced: calls and times of the program's own code" "$T/calls.txt" ||
            fail "the report does not say what was traced: $(grep '^#' "$T/calls.txt")"
        grep -q "^# the program's own assemblies: Trace.dll; not traced: [1-9][0-9]* assemblies of the framework and packages" "$T/calls.txt" ||
            fail "the report does not name the assemblies traced: $(grep '^#' "$T/calls.txt")"
    fi
    note "$scope: Leaf 1000000 under CallerA, 250000 under CallerB through Middle"
done

# ---- arguments and return values unchanged by the hooks -------------------------------
# Trace abi: more integer and float arguments than registers, a struct
# returned through a hidden pointer, a 16-byte struct, four doubles, a
# vector, float, double: the traced run (timed and counting hooks) prints
# what the untraced one prints
$TRACE abi 3000 > "$T/abi_plain.txt"
grep -q "^abi: 3000 rounds" "$T/abi_plain.txt" || fail "Trace abi did not run: $(cat "$T/abi_plain.txt")"
for mode in times counts; do
    cs record -q --force --trace=$mode -o "$T/abi.corscope" -- $TRACE abi 3000 > "$T/abi_traced.txt"
    diff "$T/abi_plain.txt" "$T/abi_traced.txt" > "$T/abi.diff" ||
        fail "$mode: the hooks changed arguments or return values: $(cat "$T/abi.diff")"
    cs report -f calls --limit 0 "$T/abi.corscope" > "$T/calls.txt"
    assert_eq "$mode: Abi.Mix calls" "$(calls_of "$T/calls.txt" TraceApp.Abi.Mix)" 3000
done
note "abi: 3000 rounds print the same traced (times, counts) and untraced"

# ---- --exclude: gone, callees attach to the nearest traced caller ---------------------
# (paths are read from the stacks weighed by calls: by time, a path of no
# time is no line, and one call of an empty method can measure 0 ns; Tail.After
# did, 1 run in 30 beside two CPU hogs)
cs record -q --force --trace --exclude 'Calls\.Middle$' -o "$T/exclude.corscope" -- $TRACE counts > /dev/null
cs report -f collapsed --event calls --weight calls "$T/exclude.corscope" > "$T/collapsed.txt"
cs report -f calls --limit 0 "$T/exclude.corscope" > "$T/calls.txt"
! grep -q 'Middle' "$T/collapsed.txt" || fail "an excluded method is in the collapsed stacks"
! grep -v '^#' "$T/calls.txt" | grep -q 'Middle' || fail "an excluded method is in the calls table"
grep -q '^TraceApp.Program.Main;TraceApp.Calls.Run;TraceApp.Calls.CallerB;TraceApp.Calls.Leaf [0-9]*$' "$T/collapsed.txt" ||
    fail "Leaf does not hang under CallerB"
cs report -f calls --include CallerB "$T/exclude.corscope" > "$T/b.txt"
assert_eq "exclude: Leaf calls under CallerB" "$(calls_of "$T/b.txt" TraceApp.Calls.Leaf)" 250000
note "exclude: Middle gone, Leaf under CallerB 250000 times"

# ---- exceptions through traced frames ---------------------------------------------------
rounds=300
for scope in all include; do
    opts=(--trace)
    [ $scope = all ] && opts+=(--include .)
    [ $scope = include ] && opts+=(--include '^TraceApp\.')
    cs record -q --force "${opts[@]}" -o "$T/throws.corscope" -- $TRACE throws $rounds > "$T/out.txt"
    check_trace_throws "$T/throws.corscope" $rounds $scope
    note "$scope: $rounds rounds of exceptions: counts exact, After under Run"
done

# ---- threads -------------------------------------------------------------------------------
cs record -q --force --trace -o "$T/threads.corscope" -- $TRACE threads 4 > /dev/null
for k in 0 1 2 3; do
    cs report -f calls --thread "worker-$k" "$T/threads.corscope" > "$T/w.txt"
    assert_eq "worker-$k Unit calls" "$(calls_of "$T/w.txt" TraceApp.Work.Unit)" $(((k + 1) * 10000))
done
# every row: the default 50 by self time can leave Unit out when a busy machine
# stretches the start-up methods' times (seen beside other load, about 700 rows)
cs report -f calls --limit 0 "$T/threads.corscope" > "$T/all.txt"
assert_eq "Unit calls on all threads" "$(calls_of "$T/all.txt" TraceApp.Work.Unit)" 100000
note "threads: worker-k called Unit (k+1)*10000 times, on its own thread"

# ---- recursion 10,000 deep ---------------------------------------------------------------------
cs record -q --force --trace -o "$T/rec.corscope" -- $TRACE recursion 10000 > /dev/null
cs check "$T/rec.corscope" > "$T/check.txt" || fail "check: $(tail -2 "$T/check.txt")"
cs report -f calls --limit 0 "$T/rec.corscope" > "$T/calls.txt"
cs report -f collapsed --event calls --weight calls "$T/rec.corscope" > "$T/collapsed.txt"
assert_eq "Down calls" "$(calls_of "$T/calls.txt" TraceApp.Recur.Down)" 30003
ping=$(calls_of "$T/calls.txt" TraceApp.Recur.Ping)
pong=$(calls_of "$T/calls.txt" TraceApp.Recur.Pong)
assert_eq "Ping+Pong calls" $((ping + pong)) 30003
grep -q '^TraceApp.Program.Main;TraceApp.Recur.Run;TraceApp.Recur.After [0-9]*$' "$T/collapsed.txt" ||
    fail "recursion: After is not under Run: $(grep 'Recur.After' "$T/collapsed.txt" | head -3)"
grep -q '\[deeper calls\];TraceApp.Recur.Down [0-9]*$' "$T/collapsed.txt" || fail "the cut of deep paths is not shown"
grep -q "unmatched_returns=0" "$T/check.txt" || fail "returns that matched no call"
note "recursion: Down 30003 calls, Ping+Pong 30003, paths cut at the depth limit"

# ---- async continuations on other threads -------------------------------------------------------
cs record -q --force --trace -o "$T/async.corscope" -- $TRACE async 8 > /dev/null
cs report -f calls --limit 0 "$T/async.corscope" > "$T/calls.txt"
cs report -f collapsed --event calls --weight calls "$T/async.corscope" > "$T/collapsed.txt"
assert_eq "async Step calls" "$(calls_of "$T/calls.txt" TraceApp.Async.Step)" 320
grep -q '^TraceApp.Program.Main;TraceApp.Async.Run;TraceApp.Async.After [0-9]*$' "$T/collapsed.txt" ||
    fail "async: After is not under Run: $(grep 'Async.After' "$T/collapsed.txt" | head -3); $(cs check "$T/async.corscope" | grep -o 'calls_[a-z_]*=[0-9]*\|untracked_calls=[0-9]*\|unmatched_returns=[0-9]*' | tr '\n' ' ')"
threads=$(cs report -f collapsed --threads --event calls --weight calls "$T/async.corscope" | grep 'Async.Step [0-9]*$' | cut -d';' -f1 | sort -u | wc -l)
assert_ge "threads the async steps ran on" "$threads" 2
note "async: 320 steps on $threads threads"

# ---- a call in tail position ------------------------------------------------------------------
cs record -q --force --trace -o "$T/tail.corscope" -- $TRACE tail 100000 > /dev/null
cs check "$T/tail.corscope" > "$T/check.txt"
cs report -f calls --limit 0 "$T/tail.corscope" > "$T/calls.txt"
cs report -f collapsed --event calls --weight calls "$T/tail.corscope" | grep 'TraceApp.Tail' > "$T/collapsed.txt" || true
assert_eq "Tail.A calls" "$(calls_of "$T/calls.txt" TraceApp.Tail.A)" 100000
assert_eq "Tail.B calls" "$(calls_of "$T/calls.txt" TraceApp.Tail.B)" 100000
# B runs under A, or in A's place when the JIT made the call a jump
grep -Eq '^TraceApp.Program.Main;TraceApp.Tail.Run;TraceApp.Tail.Loop;(TraceApp.Tail.A;)?TraceApp.Tail.B [0-9]+$' "$T/collapsed.txt" ||
    fail "B is not under Loop: $(cat "$T/collapsed.txt")"
grep -q '^TraceApp.Program.Main;TraceApp.Tail.Run;TraceApp.Tail.After [0-9]*$' "$T/collapsed.txt" ||
    fail "tail: After is not under Run: $(grep 'Tail.After' "$T/collapsed.txt" | head -3)"
grep -q " unmatched_returns=0" "$T/check.txt" || fail "returns that matched no call"
note "tail: A and B 100000 calls each, After under Run"

# ---- a call still running at exit ----------------------------------------------------------------
cs record -q --force --trace -o "$T/blocked.corscope" -- $TRACE blocked > /dev/null
cs check "$T/blocked.corscope" > "$T/check.txt"
cs report -f calls --limit 0 "$T/blocked.corscope" > "$T/calls.txt"
assert_eq "Blocked.Wait calls" "$(calls_of "$T/calls.txt" TraceApp.Blocked.Wait)" 1
assert_ge "calls open at the end" "$(counter "$T/check.txt" calls_open_at_end)" 1
# the program sleeps 300 ms while the call runs: its time runs to the end
assert_ge "Blocked.Wait inclusive ms" "$(incl_ms "$T/calls.txt" TraceApp.Blocked.Wait)" 290
grep -q "calls were still running when their thread or the recording ended" "$T/calls.txt" || fail "no note on open calls"
note "blocked: Wait counted once, $(incl_ms "$T/calls.txt" TraceApp.Blocked.Wait) ms, closed at the end"

# ---- counts only -------------------------------------------------------------------------------------
cs record -q --force --trace=counts --include '^TraceApp\.' -o "$T/c.corscope" -- $TRACE counts > /dev/null
cs report -f calls "$T/c.corscope" > "$T/calls.txt"
assert_eq "counts only: Leaf calls" "$(calls_of "$T/calls.txt" TraceApp.Calls.Leaf)" 1250000
grep -q "^ *calls  method$" "$T/calls.txt" || fail "counts only: the table has times"

# ---- the sampler and the tracer agree ------------------------------------------------------------------
# Three burns 30 ms of CPU for each 10 ms that One burns: the samples (CPU
# time) give Three 75%; the tracer measures wall time, which the program
# measures too (it is more than CPU time when the thread waits for a core),
# and on a quiet machine the two are the same
cs record -q --force --trace --include '^TraceApp\.' -i 1ms -o "$T/agree.corscope" -- $TRACE agree 1.5 > "$T/truth.txt"
wall_truth=$(sed -n 's/.*wall share of Three \([0-9.]*\).*/\1/p' "$T/truth.txt")
[ -n "$wall_truth" ] || fail "the program printed no truth: $(cat "$T/truth.txt")"
cs report -f top --limit 0 "$T/agree.corscope" > "$T/cpu.txt"
cs report -f top --limit 0 --event calls "$T/agree.corscope" > "$T/calls.txt"
for view in cpu calls; do
    three=$(top_total "$T/$view.txt" TraceApp.Spin.Three)
    one=$(top_total "$T/$view.txt" TraceApp.Spin.One)
    share=$(awk -v a="$three" -v b="$one" 'BEGIN { if (a + b > 0) printf "%.1f", 100 * a / (a + b); else print 0 }')
    eval "share_$view=$share"
done
assert_near "cpu: Three's share of Three and One (CPU time)" "$share_cpu" 75 8
assert_near "calls: Three's share of Three and One (wall time, as the program measured it)" "$share_calls" "$wall_truth" 2
assert_near "the tracer's share against the sampler's" "$share_calls" "$share_cpu" 10

# ---- what the profiler cost, as check says -------------------------------------------------------------
# Trace loop calls an empty method: traced, nearly all of its CPU is in the
# hooks (libcorscope.so), which the profile charges to Loop.Empty (the
# agent's frames at the leaf are trimmed) and the agent counts as its own
# (agent_code_samples); untraced, next to none is.  The handler's time is
# there either way, a part of the program's CPU.
for mode in traced untraced; do
    opts=() calls=300000000 # about half a second either way
    [ $mode = traced ] && opts=(--trace) calls=20000000
    cs record -q --force -e cpu -i 1ms "${opts[@]}" -o "$T/cost.corscope" -- $TRACE loop $calls > /dev/null
    cs check "$T/cost.corscope" > "$T/cost.txt" 2>&1 || fail "check: $(cat "$T/cost.txt")"
    line=$(grep "^  profiler     its own thread " "$T/cost.txt") || fail "$mode: check says nothing of the profiler's cost: $(head -20 "$T/cost.txt")"
    note "$mode:${line#  profiler    }"
    samples=$(counter "$T/cost.txt" " samples")
    in_agent=$(counter "$T/cost.txt" agent_code_samples)
    handler=$(counter "$T/cost.txt" handler_ns)
    program=$(counter "$T/cost.txt" cpu_while_sampled_ns)
    [ "${samples:-0}" -ge 50 ] || fail "$mode: only ${samples:-0} samples"
    [[ "$line" == *"its callbacks and hooks in $in_agent of the $samples cpu samples"* ]] ||
        fail "$mode: the line does not say the counters: $line"
    [ "${handler:-0}" -gt 0 ] && [ "$handler" -lt "$program" ] ||
        fail "$mode: handler_ns=$handler against the program's $program ns"
    share=$(awk -v a="$in_agent" -v n="$samples" 'BEGIN { printf "%.0f", 100 * a / n }')
    if [ $mode = traced ]; then
        assert_ge "traced: the share of the samples in the hooks, %" "$share" 50
    else
        assert_ge "untraced: the share of the samples outside the agent, %" "$((100 - share))" 90
    fi
done

# ---- every stack format draws the calls event ------------------------------------------------------------
for f in tree flamegraph pprof speedscope chrome top; do
    cs report -f $f --event calls -o "$T/out.$f" "$T/counts.corscope" 2> "$T/err.txt" || fail "-f $f --event calls: $(cat "$T/err.txt")"
    [ -s "$T/out.$f" ] || fail "-f $f --event calls wrote nothing"
done
grep -q 'Calls.Leaf' "$T/out.tree" || fail "the tree has no Leaf"
# pprof carries the exact counts, as pprof's own decoder reads them
VIEWERS=$ROOT/tests/viewers
[ -d "$VIEWERS/node_modules/pprof-format" ] || fail "tests/viewers has no node_modules: run scripts/install-deps.sh"
node "$VIEWERS/pprof_leaves.mjs" "$T/out.pprof" > "$T/pprof.txt" || fail "pprof-format could not read the calls profile"
col=$(head -1 "$T/pprof.txt" | tr '\t' '\n' | grep -n '^calls/count$' | cut -d: -f1)
[ -n "$col" ] && head -1 "$T/pprof.txt" | grep -q "	calls/count	self/nanoseconds" ||
    fail "pprof sample types: $(head -1 "$T/pprof.txt")"
assert_eq "pprof: Leaf calls" "$(awk -F'\t' -v c="$col" '$1 == "TraceApp.Calls.Leaf" { print $c }' "$T/pprof.txt")" 1250000
note "every stack format draws the calls event; pprof has Leaf's 1250000 calls"

# ---- exact counts where people look: tree, collapsed, paths, the flame graph --------------------------------
R='TraceApp.Program.Main;TraceApp.Calls.Run'
A="$R;TraceApp.Calls.CallerA;TraceApp.Calls.Leaf" B="$R;TraceApp.Calls.CallerB;TraceApp.Calls.Middle;TraceApp.Calls.Leaf"
# the tree: each node's calls on its path (column 7; the values before it are "N unit"),
# turned into "root;...;node calls" by the indentation
cs report -f tree --min 0 --event calls "$T/counts.corscope" > "$T/tree.txt"
grep -q '^  total%    self%      total       self      calls  name$' "$T/tree.txt" || fail "the calls tree has no calls column: $(head -3 "$T/tree.txt")"
awk '/^ *[0-9.]+%/ { line = $0; sub(/^ *[0-9.]+% +[0-9.]+% +[0-9.]+ [a-z]+ +[0-9.]+ [a-z]+ +[0-9]+  /, "", line)
                     match(line, /^ */); d = RLENGTH / 2; name = substr(line, RLENGTH + 1); path[d] = name
                     p = path[0]; for (i = 1; i <= d; i++) p = p ";" path[i]; print p, $7 }' "$T/tree.txt" > "$T/tree-paths.txt"
assert_eq "tree: Leaf's calls under CallerA" "$(awk -v p="$A" '$1 == p { print $2 }' "$T/tree-paths.txt")" 1000000
assert_eq "tree: Leaf's calls under Middle" "$(awk -v p="$B" '$1 == p { print $2 }' "$T/tree-paths.txt")" 250000
assert_eq "tree: Middle's calls" "$(awk -v p="$R;TraceApp.Calls.CallerB;TraceApp.Calls.Middle" '$1 == p { print $2 }' "$T/tree-paths.txt")" 250000
assert_eq "tree: CallerA's calls" "$(awk -v p="$R;TraceApp.Calls.CallerA" '$1 == p { print $2 }' "$T/tree-paths.txt")" 1
# collapsed by calls, and by time (the default: the same lines as --weight time)
cs report -f collapsed --event calls --weight calls "$T/counts.corscope" > "$T/by-calls.txt"
grep -qx "$A 1000000" "$T/by-calls.txt" || fail "collapsed --weight calls: $(grep 'Leaf ' "$T/by-calls.txt")"
grep -qx "$B 250000" "$T/by-calls.txt" || fail "collapsed --weight calls: $(grep 'Leaf ' "$T/by-calls.txt")"
cmp -s <(cs report -f collapsed --event calls "$T/counts.corscope") <(cs report -f collapsed --event calls --weight time "$T/counts.corscope") ||
    fail "collapsed --weight time differs from the default"
set +e
out=$(cs report -f collapsed --event calls --weight bytes "$T/counts.corscope" 2>&1); rc=$?
set -e
[ $rc = 2 ] && [[ "$out" == *"the calls event is weighed by self, time or by calls"* ]] || fail "--weight bytes: $rc $out"
# the paths, with their counts
cs report -f calls --paths --sort calls --limit 0 "$T/counts.corscope" > "$T/paths.txt"
assert_eq "--paths: Leaf under CallerA" "$(awk -v p="$A" '$NF == p { print $1 }' "$T/paths.txt")" 1000000
assert_eq "--paths: Leaf under Middle" "$(awk -v p="$B" '$NF == p { print $1 }' "$T/paths.txt")" 250000
assert_eq "--paths: the first row by calls" "$(awk '/^ *[0-9]/ { print $NF; exit }' "$T/paths.txt")" "$A"
# the flame graph: the tooltip's calls, and a weighting by calls
cs report -f flamegraph --event calls -o "$T/calls.html" "$T/counts.corscope"
js_path() { echo "[\"$(echo "$1" | sed 's/;/","/g')\"]"; }
node "$VIEWERS/flame_eval.mjs" "$T/calls.html" "window.corscope.node($(js_path "$A"))" > "$T/node.json" || fail "the flame graph page failed"
assert_eq "flame graph: Leaf's calls under CallerA" "$(jq .selfCount "$T/node.json")" 1000000
jq -r .tip "$T/node.json" | grep -q '<br>1,000,000 calls on this path,' || fail "the tooltip has no calls: $(jq -r .tip "$T/node.json")"
all_calls=$(sed -n 's/^# calls: \([0-9]*\) calls.*/\1/p' "$T/paths.txt")
cs report -f flamegraph --event calls --weight calls -o "$T/calls-n.html" "$T/counts.corscope"
node "$VIEWERS/flame_eval.mjs" "$T/calls-n.html" '[window.corscope.weighting(), window.corscope.matches().total, window.corscope.node('"$(js_path "$B")"').count]' > "$T/w.json"
assert_eq "flame graph by calls: weighting, root, Leaf under Middle" "$(jq -c . "$T/w.json")" "[\"calls\",$all_calls,250000]"
# a report of one event from a recording of several says which, and how to get the others
cs report -f top "$T/counts.corscope" > /dev/null 2> "$T/err.txt"
grep -q "top drew the cpu event; the recording also has calls (--event calls)" "$T/err.txt" || fail "no word on the other events: $(cat "$T/err.txt")"
note "tree, collapsed --weight calls, --paths and the flame graph: Leaf 1000000 under CallerA, 250000 under Middle"

# ---- refusals ---------------------------------------------------------------------------------------------
set +e
out=$(cs record --include x -o "$T/x.corscope" -- true 2>&1); rc=$?
set -e
[ $rc = 2 ] && [[ "$out" == *"--include chooses the methods --trace traces"* ]] || fail "--include without --trace: $rc $out"
set +e
out=$(cs record --trace=sometimes -o "$T/x.corscope" -- true 2>&1); rc=$?
set -e
[ $rc = 2 ] && [[ "$out" == *"unknown tracing mode"* ]] || fail "--trace=sometimes: $rc $out"
set +e
out=$(cs record --trace --exclude 'a[' -o "$T/x.corscope" -- true 2>&1); rc=$?
set -e
[ $rc = 2 ] && [[ "$out" == *"not a regular expression"* ]] || fail "--exclude 'a[': $rc $out"
cs record -q --force -o "$T/plain.corscope" -- $TRACE loop 1000 > /dev/null
set +e
out=$(cs report -f calls "$T/plain.corscope" 2>&1); rc=$?
set -e
[ $rc != 0 ] && [[ "$out" == *"no calls were traced (record with --trace)"* ]] || fail "-f calls without a trace: $rc $out"
set +e
out=$(cs report -f top --sort calls "$T/counts.corscope" 2>&1); rc=$?
set -e
[ $rc = 2 ] && [[ "$out" == *"--sort goes with -f calls"* ]] || fail "--sort with -f top: $rc $out"
# tracing cannot attach: refused before anything is sent to the process
set +e
out=$(cs record -p $$ --trace -o "$T/x.corscope" 2>&1); rc=$?
set -e
[ $rc = 2 ] && [[ "$out" == *"--trace needs the agent loaded when the program starts"* ]] || fail "-p --trace: $rc $out"
# a bad filter in the environment: the agent steps aside, the program runs
out=$(CORECLR_ENABLE_PROFILING=1 CORECLR_PROFILER='{14DE3B91-04FE-4EFB-B588-CD7BB380C74A}' \
      CORECLR_PROFILER_PATH="$ROOT/build/libcorscope.so" CORSCOPE_OUTPUT="$T/env.corscope" \
      CORSCOPE_TRACE=times CORSCOPE_TRACE_INCLUDE='(' $TRACE loop 1000 2>&1)
[[ "$out" == *"loop: 1000 calls"* ]] || fail "the program did not run: $out"
[[ "$out" == *"CORSCOPE_TRACE_INCLUDE=(: not a regular expression"* ]] || fail "no word on the bad filter: $out"
note "refusals: --include without --trace, a bad mode, a bad regex, --trace attached, -f calls without a trace, --sort elsewhere"
