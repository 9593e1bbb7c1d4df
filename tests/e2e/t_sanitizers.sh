# The agent and the CLI built with ASan and UBSan (make asan-programs): the
# agent, loaded into the real runtime, samples programs with exceptions,
# P/Invoke callbacks, forced GCs and thread churn in cpu and wall mode, and
# the CLI writes every report of the recordings and reads damaged ones;
# the sanitizers must report nothing and the programs' output must not
# change.
source "$(dirname "$0")/lib.sh"

ASAN_CS=$ROOT/build/asan/corscope
[ -x "$ASAN_CS" ] && [ -f "$ROOT/build/asan/libcorscope.so" ] || fail "run make asan-programs first"
LIBASAN=$(gcc -print-file-name=libasan.so)
# the runtime handles SIGSEGV itself (null references) and keeps memory
# ASan cannot see; leaks of the process at exit are not the agent's to judge
export ASAN_OPTIONS=detect_leaks=0:handle_segv=0:handle_sigbus=0:handle_sigfpe=0:allow_user_segv_handler=1:use_sigaltstack=0:halt_on_error=1:exitcode=86
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1

sanitized() { LD_PRELOAD=$LIBASAN timeout -k 5 300 "$ASAN_CS" "$@"; }
no_reports() {
    if grep -Eq "ERROR: AddressSanitizer|runtime error:|LeakSanitizer" "$1"; then
        fail "$2: sanitizer report: $(grep -E -m3 "ERROR: AddressSanitizer|runtime error:|LeakSanitizer" "$1")"
    fi
}

runs=0
for prog in "exceptions 5" "pinvoke 5" "gc 1" "threads 1"; do
    dotnet "$APPS/Stress/Stress.dll" $prog > "$T/plain.txt"
    for mode in "-e cpu -i 1ms" "-e wall -i 1ms" "--trace -e cpu"; do
        # shellcheck disable=SC2086
        sanitized record -q --force $mode -o "$T/s.corscope" -- dotnet "$APPS/Stress/Stress.dll" $prog \
            > "$T/out.txt" 2> "$T/err.txt" || fail "Stress $prog under '$mode' failed: $(tail -3 "$T/err.txt")"
        no_reports "$T/err.txt" "agent, Stress $prog, $mode"
        cmp -s "$T/plain.txt" "$T/out.txt" || fail "Stress $prog: output changed under the ASan agent"
        formats="top collapsed tree flamegraph speedscope pprof chrome"
        [[ "$mode" == --trace* ]] && formats="$formats calls"
        for f in $formats; do
            sanitized report -f "$f" -o "$T/out.$f" "$T/s.corscope" 2> "$T/rerr.txt" || fail "report -f $f failed"
            no_reports "$T/rerr.txt" "CLI report -f $f"
        done
        runs=$((runs + 1))
    done
done
note "$runs sanitized agent runs (traced too), each reported in every format by the sanitized CLI"

# memory: allocation samples with their stacks, weak handles, collections,
# and the exact mode's every allocation, through the sanitized agent; the
# sanitized CLI writes every format of every event, the live view and gc
for run in "-e cpu,live,gc -i 1ms|live 20 80" "-e alloc,gc|gcs 2 2 2 32 1" "-e alloc --alloc exact|exact 5000"; do
    opts=${run%%|*} args=${run#*|}
    # shellcheck disable=SC2086
    sanitized record -q --force $opts -o "$T/m.corscope" -- dotnet "$APPS/Memory/Memory.dll" $args \
        > "$T/out.txt" 2> "$T/err.txt" || fail "Memory $args under '$opts' failed: $(tail -3 "$T/err.txt")"
    no_reports "$T/err.txt" "agent, Memory $args, $opts"
    for ev in alloc live; do
        for f in top collapsed tree flamegraph speedscope pprof chrome gc; do
            rc=0; sanitized report -f "$f" --event "$ev" -o "$T/out.$f" "$T/m.corscope" 2> "$T/rerr.txt" || rc=$?
            no_reports "$T/rerr.txt" "CLI report -f $f --event $ev ($opts)"
        done
    done
    runs=$((runs + 1))
done
note "memory: 3 sanitized agent runs (alloc, live, gc, exact), every format of each event"

# async: logical stacks (the handler's heap reads, the rewrite, the types,
# events with chains) and snapshots of pending operations (heap walks,
# handles, report -f async), through the sanitized agent and CLI
sanitized record -q --force --async -e cpu,exceptions,alloc,lock -i 1ms -o "$T/a.corscope" -- \
    dotnet "$APPS/AsyncChain/AsyncChain.dll" all 100 > "$T/out.txt" 2> "$T/err.txt" ||
    fail "AsyncChain under --async failed: $(tail -3 "$T/err.txt")"
no_reports "$T/err.txt" "agent, AsyncChain, --async"
for f in top collapsed tree flamegraph speedscope pprof chrome; do
    sanitized report -f "$f" -o "$T/out.$f" "$T/a.corscope" 2> "$T/rerr.txt" || fail "report -f $f (async) failed"
    no_reports "$T/rerr.txt" "CLI report -f $f (async)"
done
sanitized record -q --force --async=snapshots -d 1s -o "$T/p.corscope" -- \
    dotnet "$APPS/AsyncChain/AsyncChain.dll" pending 3 > "$T/out.txt" 2> "$T/err.txt" ||
    fail "AsyncChain pending under --async=snapshots failed: $(tail -3 "$T/err.txt")"
no_reports "$T/err.txt" "agent, AsyncChain pending, --async=snapshots"
sanitized report -f async "$T/p.corscope" > "$T/out.async" 2> "$T/rerr.txt" || fail "report -f async failed"
no_reports "$T/rerr.txt" "CLI report -f async"
grep -q 'Pending\.Leaf' "$T/out.async" || fail "report -f async of the sanitized run: $(head -3 "$T/out.async")"
note "async: logical stacks and pending operations through the sanitized agent, every format"

# damaged recordings through the sanitized CLI: every report and check
cp "$T/s.corscope" "$T/whole.corscope"
size=$(stat -c %s "$T/whole.corscope")
damaged=0
for cut in 0 5 17 100 $((size / 4)) $((size / 2)) $((size - 3)); do
    head -c "$cut" "$T/whole.corscope" > "$T/cut.corscope"
    rc=0; sanitized check "$T/cut.corscope" > /dev/null 2> "$T/cerr.txt" || rc=$?
    no_reports "$T/cerr.txt" "check of a recording cut at $cut"
    [ "$rc" -eq 1 ] || [ "$rc" -eq 3 ] || fail "check of a recording cut at $cut: status $rc (1 corrupt or 3 truncated expected)"
    rc=0; sanitized report -f flamegraph -o "$T/cut.html" "$T/cut.corscope" 2> "$T/cerr.txt" || rc=$?
    no_reports "$T/cerr.txt" "report of a recording cut at $cut"
    [ "$rc" -lt 128 ] || fail "report of a recording cut at $cut died with status $rc"
    damaged=$((damaged + 1))
done
note "$damaged damaged recordings read by the sanitized CLI"

# coverage: the sanitized agent rewrites Demo's methods and CoverTests'
# library at JIT time; the sanitized CLI writes every report
sanitized cover -o "$T/c.xml" -o "$T/c.html" -o "$T/c.info" -o "$T/c.json" -- dotnet "$APPS/Demo/Demo.dll" \
    > "$T/cover.out" 2> "$T/cover.err" || fail "cover of Demo under the sanitizers failed: $(tail -3 "$T/cover.err")"
no_reports "$T/cover.err" "cover of Demo"
grep -Eq '^demo: [0-9]+ batches' "$T/cover.out" || fail "cover of Demo: its output changed: $(head -3 "$T/cover.out")"
sanitized cover -o "$T/t.xml" -o "$T/t.html" -- dotnet test "$APPS/CoverTests/CoverTests.dll" \
    > "$T/covert.out" 2> "$T/covert.err" || fail "cover of dotnet test under the sanitizers failed: $(tail -3 "$T/covert.out" "$T/covert.err")"
no_reports "$T/covert.out" "cover of CoverTests (the test host's output)"
no_reports "$T/covert.err" "cover of CoverTests"
grep -q "Passed!  - Failed:     0" "$T/covert.out" || fail "CoverTests under the sanitized agent: $(tail -5 "$T/covert.out")"
note "cover: Demo and dotnet test of CoverTests under the sanitized agent and CLI, every report"

# live probes: the sanitized agent rewrites WatchApp's Pricing and Values methods and
# reads their values; every call shown, the program's output unchanged
dotnet "$APPS/WatchApp/WatchApp.dll" run > "$T/watch.plain"
sanitized watch --max-methods 30 -- dotnet "$APPS/WatchApp/WatchApp.dll" run 'WatchApp.[PV][ra][il]*' \
    > "$T/watch.out" 2> "$T/watch.err" || fail "watch of WatchApp under the sanitizers failed: $(tail -3 "$T/watch.err")"
no_reports "$T/watch.err" "watch of WatchApp"
[ "$(grep -Ec ' (Pricing|Values)\.' "$T/watch.out")" = 26 ] || fail "watch under the sanitizers: $(cat "$T/watch.out")"
grep -Ev ' (Pricing|Values)\.' "$T/watch.out" | diff -q "$T/watch.plain" - > /dev/null ||
    fail "watch under the sanitizers: the program's output changed"
note "watch: WatchApp's 26 calls (Pricing, Values: every kind of value read) under the sanitized agent and CLI"
dotnet "$APPS/WatchApp/WatchApp.dll" kinds > "$T/kinds.plain"
sanitized watch --fields -- dotnet "$APPS/WatchApp/WatchApp.dll" kinds 'WatchApp.[BVHK][aeoi]*' \
    > "$T/kinds.out" 2> "$T/kinds.err" || fail "watch --fields of WatchApp kinds under the sanitizers failed: $(tail -3 "$T/kinds.err")"
no_reports "$T/kinds.err" "watch --fields of WatchApp kinds"
[ "$(grep -Ec ' (Basket|Vec|Holder|Kinds)\.' "$T/kinds.out")" = 15 ] || fail "watch --fields under the sanitizers: $(cat "$T/kinds.out")"
grep -Ev ' (Basket|Vec|Holder|Kinds)\.' "$T/kinds.out" | diff -q "$T/kinds.plain" - > /dev/null ||
    fail "watch --fields under the sanitizers: the program's output changed"
note "watch --fields: this, fields, values of T, other assemblies' enums under the sanitized agent and CLI"

# watch -p three times (the second and third taken by the agent that stayed,
# agent/rendezvous.h), with --stack, the service itself sanitized
LD_PRELOAD=$LIBASAN ASAN_OPTIONS=detect_leaks=0 dotnet "$APPS/WatchApp/WatchApp.dll" serve 10 \
    > "$T/serve.out" 2> "$T/serve.err" &
svc=$!
for _ in $(seq 100); do grep -q '^ready' "$T/serve.out" && break; sleep 0.1; done
grep -q '^ready' "$T/serve.out" || fail "WatchApp serve under the sanitizers did not start: $(cat "$T/serve.err")"
for i in 1 2 3; do
    sanitized watch -p "$svc" --count 2 --stack 'Pricing.[QC]*' > "$T/w$i.out" 2> "$T/w$i.err" ||
        fail "watch -p $i under the sanitizers: $(tail -3 "$T/w$i.err")"
    no_reports "$T/w$i.err" "watch -p $i"
    [ "$(grep -c '^[0-9]' "$T/w$i.out")" = 2 ] || fail "watch -p $i under the sanitizers: $(cat "$T/w$i.out" "$T/w$i.err")"
done
wait "$svc" || fail "WatchApp serve under the sanitized agent: exit $?: $(tail -3 "$T/serve.err")"
no_reports "$T/serve.err" "the service after three watches"
grep -q '^served [0-9]' "$T/serve.out" || fail "the sanitized service did not finish"
note "watch -p: three sessions (two by the agent that stayed), --stack, under the sanitized agent and CLI"
