# Logical async stacks (record --async): in every scenario of AsyncChain,
# at least 95% of the CPU samples of the leaf an async method burns in after
# resuming on the thread pool show, root first, the methods awaiting it, in
# order, right above it (and as many of the wall-clock samples): A awaits B awaits C; each branch of Task.WhenAll
# under its own method; ConfigureAwait(false); ValueTask; pooled ValueTask
# builders; an async iterator under its consumer; an async lambda; Task.Run
# with a plain and an async lambda; a PeriodicTimer and Task.Delay; .Result
# from plain code.  The logical stack replaces the thread pool's frames
# (none of them is left above the resumed method), async methods are named
# as written (Chain.C, never <C>d__2.MoveNext) in every format; it is the
# default, and with --async=off the stacks are what they were.
source "$(dirname "$0")/lib.sh"

# the perf_event clock by name: the shares below are the async chains'
# truth, not the clock's (POSIX timers, chosen at 1 ms where perf_event's
# interrupts are dear, sample at the scheduler's tick and weigh each sample
# by the CPU since the thread's last: under two CPU hogs that moved 5.6% of
# Task.Run's samples off their chain)
cs record -q --force --async -i 1ms --cpu-clock perf -o "$T/async.corscope" -- $(app AsyncChain) all 1000 \
    > "$T/truth.txt" 2> "$T/err.txt" || fail "record: $(cat "$T/err.txt")"
cs check "$T/async.corscope" > "$T/check.txt" 2>&1 || fail "check: $(cat "$T/check.txt")"
grep -q "status       complete" "$T/check.txt" || fail "recording not complete"
cs report -f collapsed "$T/async.corscope" > "$T/collapsed.txt" 2> /dev/null
# the rewrite's ReJIT request makes the runtime set up one of its threads
# for the agent's loop: that thread is not listed among the program's (it
# was, named corscope, in every program whose async methods yielded)
cs report -f threads "$T/async.corscope" > "$T/threads.txt" 2>&1 || fail "threads report"
agent_threads=$(awk 'NR > 2 && NF > 3 && ($NF ~ /^corscope/ || $NF == "-")' "$T/threads.txt" | wc -l)
assert_eq "the agent's loop among the program's threads" "$agent_threads" 0

# share LEAF PATTERN: of the samples whose stack holds Work.LEAF, the
# weight whose stack matches PATTERN, in %
share() {
    awk -v leaf="(^|;)AsyncChain\\.Work\\.$1(;| )" -v re="$2" '
        $0 ~ leaf { all += $NF; if ($0 ~ re) good += $NF }
        END { if (all == 0) print "none"; else printf "%.1f %d\n", 100 * good / all, all }' \
        "$T/collapsed.txt"
}

# expect SCENARIO LEAF PATTERN [MIN]: the pattern's share of the leaf's
# samples is at least MIN% (95)
expect() {
    local got
    got=$(share "$2" "$3")
    [ "$got" != none ] || fail "$1: no sample of Work.$2 (collapsed: $(grep -c . "$T/collapsed.txt") lines)"
    local pct=${got% *} n=${got#* } min=${4:-95}
    note "$1: $pct% of $n us in Work.$2 show the chain"
    awk -v p="$pct" -v min="$min" 'BEGIN { exit !(p >= min) }' ||
        fail "$1: only $pct% of Work.$2's samples under the expected chain; the others: $(
            awk -v leaf="Work\\.$2(;| )" -v re="$3" '$0 ~ leaf && $0 !~ re' "$T/collapsed.txt" |
                sort -t' ' -k2 -nr | head -5)"
}

A='\[async\] AsyncChain\.'
W='AsyncChain\.Work\.'
expect chain BurnC "${A}Chain\.A;${A}Chain\.B;AsyncChain\.Chain\.C;${W}BurnC(;| )"
expect whenall BurnLeft "${A}Fan\.All;\[async\] Task\.WhenAll;AsyncChain\.Fan\.Left;${W}BurnLeft(;| )"
expect whenall BurnRight "${A}Fan\.All;\[async\] Task\.WhenAll;AsyncChain\.Fan\.Right;${W}BurnRight(;| )"
expect configure BurnConfigured \
    "${A}Configure\.A;${A}Configure\.B;AsyncChain\.Configure\.C;${W}BurnConfigured(;| )"
expect valuetask BurnValueTask \
    "${A}ValueTasks\.A;${A}ValueTasks\.B;AsyncChain\.ValueTasks\.C;${W}BurnValueTask(;| )"
expect pooling BurnPooling "${A}Pooling\.A;${A}Pooling\.B;AsyncChain\.Pooling\.C;${W}BurnPooling(;| )"
expect stream BurnProduce "${A}Stream\.Consume;AsyncChain\.Stream\.Produce;${W}BurnProduce(;| )"
expect lambda BurnLambda "${A}Lambdas\.Outer;AsyncChain\.Lambdas\+<>c\.<Run>b__[0-9_]*;${W}BurnLambda(;| )"
expect run BurnRun "${A}Runs\.Outer;AsyncChain\.Runs\+<>c__DisplayClass[0-9_]*\.<Outer>b__0;${W}BurnRun(;| )"
expect run-async BurnRunAsync \
    "${A}Runs\.OuterAsync;\[async\] Task\.Run \(unwrap\);AsyncChain\.Runs\+<>c__DisplayClass[0-9_]*\.<OuterAsync>b__0;${W}BurnRunAsync(;| )"
expect timer BurnTimer "${A}Timers\.Outer;AsyncChain\.Timers\.Tick;${W}BurnTimer(;| )"
# nothing awaits Delay but the blocked caller: the method is the root
expect delay BurnDelay "^(\[blocking wait\];)?AsyncChain\.Timers\.Delay;${W}BurnDelay(;| )"
expect syncwait BurnSync "${A}SyncOver\.A;AsyncChain\.SyncOver\.B;${W}BurnSync(;| )"
# a thread blocked in .Result is the chain's root (once it spun a little:
# 93.9% of the samples seen beside busy processes)
blocked=$(share BurnSync "^\[blocking wait\];${A}SyncOver\.A;")
note "syncwait: ${blocked% *}% of Work.BurnSync's samples under [blocking wait]"
awk -v p="${blocked% *}" 'BEGIN { exit !(p >= 50) }' ||
    fail "only ${blocked% *}% of .Result's chains with [blocking wait] at the root"

# the thread pool's frames are gone above a resumed method
pool=$(awk '/Work\.Burn(C|Left|Right|Configured|ValueTask|Pooling|Produce|Lambda|Timer|Sync)(;| )/ &&
            /PortableThreadPool|ThreadPoolWorkQueue|ExecutionContext\.Run/ { s += $NF } END { print s + 0 }' \
        "$T/collapsed.txt")
all=$(awk '/Work\.Burn/ { s += $NF } END { print s + 0 }' "$T/collapsed.txt")
note "thread pool frames above resumed methods: $pool of $all us"
awk -v p="$pool" -v a="$all" 'BEGIN { exit !(p <= a / 100) }' ||
    fail "thread pool frames left above resumed methods in $pool of $all us"

# named as written in every format, never as the compiler's state machine
cs report -f top --limit 0 "$T/async.corscope" > "$T/top.txt" 2> /dev/null
cs report -f tree "$T/async.corscope" > "$T/tree.txt" 2> /dev/null
cs report -f speedscope -o "$T/s.json" "$T/async.corscope" 2> /dev/null
cs report -f flamegraph -o "$T/f.html" "$T/async.corscope" 2> /dev/null
cs report -f pprof -o "$T/p.pb.gz" "$T/async.corscope" 2> /dev/null
cs report -f chrome -o "$T/c.json" "$T/async.corscope" 2> /dev/null
gunzip -c "$T/p.pb.gz" > "$T/p.pb"
for f in collapsed.txt top.txt tree.txt s.json f.html p.pb c.json; do
    grep -aq 'AsyncChain\.Chain\.C' "$T/$f" || fail "$f does not name AsyncChain.Chain.C"
    grep -aq '\[async\] AsyncChain\.Chain\.B' "$T/$f" || fail "$f has no [async] AsyncChain.Chain.B"
    ! grep -aq '<C>d__' "$T/$f" || fail "$f names a state machine: $(grep -ao '[^;"]*<C>d__[^;" ]*' "$T/$f" | head -2)"
done

# wall-clock samples carry the chain too: of the wall samples whose stack
# holds Work.BurnC (the thread burning in C), 95% under A and B
cs record -q --force --async -e wall -i 1ms -o "$T/wall.corscope" -- $(app AsyncChain) chain 600 \
    > /dev/null 2> "$T/err.txt" || fail "record wall: $(cat "$T/err.txt")"
cs report -f collapsed "$T/wall.corscope" > "$T/wall.txt" 2> /dev/null
got=$(awk -v leaf="(^|;)${W}BurnC(;| )" -v re="${A}Chain\\.A;${A}Chain\\.B;AsyncChain\\.Chain\\.C;${W}BurnC(;| )" '
    $0 ~ leaf { all += $NF; if ($0 ~ re) good += $NF }
    END { if (all) printf "%.1f %d\n", 100 * good / all, all; else print "none" }' "$T/wall.txt")
[ "$got" != none ] || fail "wall: no sample of Work.BurnC"
note "wall: ${got% *}% of the weight ${got#* } in Work.BurnC under A, B, C"
awk -v p="${got% *}" 'BEGIN { exit !(p >= 95) }' ||
    fail "wall: only ${got% *}% of Work.BurnC's samples under the chain: $(
        grep "${W}BurnC" "$T/wall.txt" | grep -v "${A}Chain\\.B" | sort -t' ' -k2 -nr | head -3)"

# events carry the chain as samples do: throws, allocations and contended
# locks in C, under A and B
cs record -q --force --async -e cpu,exceptions,alloc,lock -o "$T/events.corscope" -- \
    $(app AsyncChain) events 600 > /dev/null 2> "$T/err.txt" || fail "record events: $(cat "$T/err.txt")"
for ev in exceptions:Throw alloc:Alloc lock:Lock; do
    cs report -f collapsed --event "${ev%%:*}" "$T/events.corscope" > "$T/ev.txt" 2> /dev/null
    got=$(awk -v leaf="Events\\+EventC\\.${ev#*:}(;| )" \
              -v re="${A}Events\\.A;${A}Events\\.B;AsyncChain\\.Events\\.C;AsyncChain\\.Events\\+EventC\\.${ev#*:}(;| )" '
        $0 ~ leaf { all += $NF; if ($0 ~ re) good += $NF }
        END { if (all) printf "%.1f %d\n", 100 * good / all, all; else print "none" }' "$T/ev.txt")
    [ "$got" != none ] || fail "no ${ev%%:*} event in EventC.${ev#*:}"
    note "${ev%%:*}: ${got% *}% of the weight ${got#* } in EventC.${ev#*:} under A, B, C"
    awk -v p="${got% *}" 'BEGIN { exit !(p >= 95) }' || fail "${ev%%:*}: only ${got% *}% under the chain"
done

# --async=off: today's stacks (the thread pool's frames, the state
# machines' names, no [async] frame)
cs record -q --force --async=off -i 1ms -o "$T/plain.corscope" -- $(app AsyncChain) chain 300 > /dev/null 2>&1
cs check "$T/plain.corscope" > "$T/plain-check.txt" 2>&1
grep -q '^  async' "$T/plain-check.txt" && fail "check says async without it"
# what the rewrite cost the agent's thread is in the recording (0 without)
grep -Eq ' async_rewrite_ns=0( |$)' "$T/plain-check.txt" || fail "async_rewrite_ns not 0 without --async: $(grep -o 'async_rewrite_ns=[0-9]*' "$T/plain-check.txt")"
rewrite_ns=$(grep -o ' async_rewrite_ns=[0-9]*' "$T/check.txt" | cut -d= -f2)
[ -n "$rewrite_ns" ] && [ "$rewrite_ns" -gt 0 ] || fail "no async_rewrite_ns in the recording with --async"
note "the rewrite took $((rewrite_ns / 1000)) us of the agent thread's CPU"
# (that it opens no metadata through the runtime: t_metadata)
grep -Eq ' async_too_deep=0( |$)' "$T/check.txt" ||
    fail "resumptions nested past what the agent keeps: $(grep -o 'async_too_deep=[0-9]*' "$T/check.txt")"
cs report -f collapsed "$T/plain.corscope" > "$T/plain.txt" 2> /dev/null
! grep -q '\[async\]' "$T/plain.txt" || fail "[async] frames without --async"
grep -q 'AsyncChain\.Chain+<C>d__[0-9]*\.MoveNext;AsyncChain\.Work\.BurnC' "$T/plain.txt" ||
    fail "without --async, C is not its state machine's MoveNext: $(grep BurnC "$T/plain.txt" | head -2)"
grep -q 'PortableThreadPool+WorkerThread' "$T/plain.txt" || fail "without --async, no thread pool frames"
grep -q "^  async        on (3 runtime methods rewritten)" "$T/check.txt" || fail "check does not say async is on: $(grep async "$T/check.txt")"
# on by default for a program record starts
cs record -q --force -o "$T/default.corscope" -- $(app AsyncChain) chain 100 > /dev/null 2>&1
cs report -f collapsed "$T/default.corscope" > "$T/default.txt" 2> /dev/null
grep -q "${A}Chain\.A;${A}Chain\.B;AsyncChain\.Chain\.C;" "$T/default.txt" ||
    fail "logical stacks are not the default"
# the rewrite waits for an async method's first yield (its state machine
# box's class loading; docs/async.md): a program whose only boxes are the
# pooling builder's gets its chains, all but the first resumptions (those
# before the ReJIT lands: ~10 ms here, more on a loaded machine, inside
# the app's 20 ms warm-up), and one that never yields has nothing
# rewritten (a rewrite costs a process ~15 ms of its start-up:
# docs/performance.md)
cs record -q --force -i 1ms --cpu-clock perf -o "$T/pooling.corscope" -- $(app AsyncChain) pooling 1500 \
    > /dev/null 2> "$T/err.txt" || fail "record pooling: $(cat "$T/err.txt")"
cs check "$T/pooling.corscope" > "$T/check.txt" 2>&1
grep -q "^  async        on (3 runtime methods rewritten)" "$T/check.txt" ||
    fail "pooling boxes alone did not start the rewrite: $(grep async "$T/check.txt")"
cs report -f collapsed "$T/pooling.corscope" > "$T/collapsed.txt" 2> /dev/null
expect "pooling alone, whole run" BurnPooling \
    "${A}Pooling\.A;${A}Pooling\.B;AsyncChain\.Pooling\.C;${W}BurnPooling(;| )" 80
# (from 900 ms: a loaded machine's start-up and ReJIT can pass 300 ms)
cs report -f collapsed --from 900ms "$T/pooling.corscope" > "$T/collapsed.txt" 2> /dev/null
expect "pooling alone, from 900 ms" BurnPooling \
    "${A}Pooling\.A;${A}Pooling\.B;AsyncChain\.Pooling\.C;${W}BurnPooling(;| )"
# resumptions nested on one thread (each caller resumed inline inside the
# one it awaited, 20 deep): the agent keeps the homes of 16; the 11th's
# samples show its 9 awaiting levels, the 20th's none (their slot is 0:
# no chain rather than a wrong one), and the recording counts the
# resumptions past the 16th, 4 per call (fewer: calls before the ReJIT
# landed count none)
cs record -q --force -i 1ms --cpu-clock perf -o "$T/nested.corscope" -- $(app AsyncChain) nested 600 \
    > "$T/nested.txt" 2> "$T/err.txt" || fail "record nested: $(cat "$T/err.txt")"
calls=$(awk '/^nested calls/ { print $3 }' "$T/nested.txt")
too_deep=$(cs check "$T/nested.corscope" | grep -o ' async_too_deep=[0-9]*' | cut -d= -f2)
note "nested: async_too_deep=$too_deep for $calls calls"
[ -n "$calls" ] && [ -n "$too_deep" ] && [ "$too_deep" -gt 0 ] && [ "$too_deep" -le $((4 * calls)) ] ||
    fail "nested: async_too_deep=$too_deep for $calls calls of 4 resumptions past the 16th"
cs report -f collapsed "$T/nested.corscope" > "$T/collapsed.txt" 2> /dev/null
levels=
for _ in $(seq 9); do levels+="${A}Nested\.Level;"; done
expect "nested 11 deep" BurnNestedMid "(^|;)${levels}AsyncChain\.Nested\.Level;${W}BurnNestedMid(;| )" 90
deep=$(share BurnNested '\[async\]')
[ "$deep" != none ] || fail "nested: no sample of Work.BurnNested"
[ "${deep% *}" = 0.0 ] || fail "nested 20 deep: ${deep% *}% of Work.BurnNested's samples under a chain"
cs record -q --force -o "$T/sync.corscope" -- $(app Memory) exact 200 > /dev/null 2> "$T/err.txt" ||
    fail "record Memory: $(cat "$T/err.txt")"
cs check "$T/sync.corscope" > "$T/check.txt" 2>&1
grep -q "^  async        on (no async method yielded: nothing rewritten)" "$T/check.txt" ||
    fail "a program that never yields: $(grep async "$T/check.txt")"
