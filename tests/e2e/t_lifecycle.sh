# Recordings left by every way a process ends are readable: a normal return
# and Environment.Exit from a worker close the recording.  A process that
# the runtime aborts for an unhandled exception, that crashes in native
# code, that calls abort(), or that SIGTERM ends keeps its recording up to
# the end, which says what ended it (ended_by; on the main thread too, and
# not for a static constructor's exception, which the runtime catches
# itself): the worker that ends it has
# all its CPU time in the recording (its own clock is the truth), not up to
# 250 ms less.  SIGKILL leaves a truncated recording; `check` and `report`
# say so and still read what came before. `record` returns the program's
# status, or 128+signal, and its summary line says how the recording ended.
source "$(dirname "$0")/lib.sh"

# expect_recording NAME STATUS: check's verdict and samples in the report
expect_recording() {
    local f="$T/$1.corscope" want=$2 rc=0
    cs check "$f" > "$T/$1.check" || rc=$?
    case $want in
        complete) assert_eq "$1: check status" "$rc" 0; grep -q "status       complete" "$T/$1.check" ;;
        truncated) assert_eq "$1: check status" "$rc" 3; grep -q "status       truncated" "$T/$1.check" ;;
    esac || fail "$1: check says: $(cat "$T/$1.check")"
    cs report -f collapsed "$f" > "$T/$1.collapsed" 2> "$T/$1.report-err"
    samples=$(grep -c 'Lifecycle\.Work\.BurnFor' "$T/$1.collapsed" || true)
    assert_ge "$1: stacks in BurnFor" "$samples" 1
    if [ "$want" = truncated ]; then
        grep -q "corscope: warning: .* is truncated" "$T/$1.report-err" ||
            fail "$1: report did not warn about the truncation"
    fi
    note "$1: $want, $(cs report -f collapsed --weight samples "$f" 2> /dev/null | collapsed_total /dev/stdin) samples readable"
}

rc=0; cs record -q -o "$T/return.corscope" -- $(app Lifecycle) return || rc=$?
assert_eq "return: exit status" "$rc" 0
expect_recording return complete

rc=0; cs record -q -o "$T/exit.corscope" -- $(app Lifecycle) exit-thread || rc=$?
assert_eq "Environment.Exit(3) from a worker: exit status" "$rc" 3
expect_recording exit complete

# expect_end NAME WHAT: ended_by says WHAT, and the worker's samples hold
# all the CPU time it said it used (within two intervals)
expect_end() {
    local f="$T/$1.corscope"
    grep -q "^  ended by     $2" "$T/$1.check" || fail "$1: ended by: $(grep 'ended by' "$T/$1.check")"
    local cpu kept
    cpu=$(awk '$1 == "worker_cpu_ms" { print $2 }' "$T/$1.err")
    # (the weights are the CPU time each sample stands for, in us)
    kept=$(cs report -f collapsed --thread er "$f" 2> /dev/null | awk '{ s += $NF } END { printf "%.1f", s / 1000 }')
    awk -v k="$kept" -v c="$cpu" 'BEGIN { exit !(k >= c - 20) }' ||
        fail "$1: the recording keeps $kept ms of the worker's $cpu ms of CPU"
    note "$1: ended by $2; the worker's last moments kept: $kept ms of samples for $cpu ms of CPU"
}

rc=0; CORSCOPE_LOG=debug cs record -o "$T/unhandled.corscope" -- $(app Lifecycle) unhandled \
    2> "$T/unhandled.err" || rc=$?
assert_eq "unhandled exception: exit status (SIGABRT)" "$rc" 134
grep -q "unhandled on purpose" "$T/unhandled.err" || fail "the runtime's exception message was not passed through"
expect_recording unhandled truncated
if [ "$RUNTIME" = 8 ]; then
    # .NET 8 aborts at the end of pass 1, with no callback the agent could
    # see it coming by (README, known limits): what was written before, said
    # to be truncated, ended by nothing named
    if grep -q "ended by" "$T/unhandled.check"; then
        fail ".NET 8: $(grep 'ended by' "$T/unhandled.check")"
    fi
    note ".NET 8: an unhandled exception leaves a truncated recording, without what ended it"
else
    expect_end unhandled "an unhandled System.InvalidOperationException"
    grep -q "^corscope: .* -> .*unhandled.corscope (truncated; ended by an unhandled System.InvalidOperationException)$" \
        "$T/unhandled.err" || fail "record's summary line: $(grep '^corscope:' "$T/unhandled.err")"
    # .NET 10's own last call for an unhandled exception is rewritten to tell
    # the agent (src/agent/unhandled_probe.h; t_exceptions: by default the
    # exception callbacks, which a throw pays at every frame, stay off);
    # before, the callbacks tell it
    told="the exception callbacks"
    [ "$RUNTIME" = 10 ] && told="the runtime's rewritten last call"
    grep -q "an unhandled exception, told by $told" "$T/unhandled.err" ||
        fail "unhandled: $(grep 'told by' "$T/unhandled.err")"
    note "unhandled: told by $told"
    if [ "$RUNTIME" = 10 ]; then
        # without ReJIT (--async=off: the probe rides on the async rewrite's)
        # the exception callbacks tell it, as before .NET 10
        rc=0; CORSCOPE_LOG=debug cs record -q --async=off -o "$T/noasync.corscope" -- \
            $(app Lifecycle) unhandled 2> "$T/noasync.err" || rc=$?
        assert_eq "unhandled, --async=off: exit status (SIGABRT)" "$rc" 134
        cs check "$T/noasync.corscope" > "$T/noasync.check" 2>&1 || true
        grep -q "^  ended by     an unhandled System.InvalidOperationException" "$T/noasync.check" ||
            fail "unhandled, --async=off: $(grep 'ended by' "$T/noasync.check")"
        grep -q "an unhandled exception, told by the exception callbacks" "$T/noasync.err" ||
            fail "unhandled, --async=off: $(grep 'told by' "$T/noasync.err")"
        note "unhandled, --async=off: told by the exception callbacks"
    fi

    rc=0; cs record -q -o "$T/main.corscope" -- $(app Lifecycle) unhandled-main 2> "$T/main.err" || rc=$?
    assert_eq "unhandled on the main thread: exit status (SIGABRT)" "$rc" 134
    expect_recording main truncated
    grep -q "^  ended by     an unhandled System.ArgumentException" "$T/main.check" ||
        fail "unhandled-main: ended by: $(grep 'ended by' "$T/main.check")"
    note "unhandled-main: ended by an unhandled System.ArgumentException"
fi

# a static constructor's exception: the runtime catches it itself, the
# program catches the TypeInitializationException and returns 0: no
# unhandled exception ended it
rc=0; cs record -q -o "$T/typeinit.corscope" -- $(app Lifecycle) typeinit > "$T/typeinit.out" || rc=$?
assert_eq "typeinit: exit status" "$rc" 0
grep -q "^typeinit -1$" "$T/typeinit.out" || fail "typeinit: the program says $(cat "$T/typeinit.out")"
expect_recording typeinit complete
if grep -q "ended by" "$T/typeinit.check"; then
    fail "typeinit: $(grep 'ended by' "$T/typeinit.check")"
fi
note "typeinit: a static constructor's exception, caught: complete, no ended_by"

# AppDomain.UnhandledException raised by hand (.NET 10 on): the
# rewritten runtime call tells the agent as for a real one, but the program
# goes on, and so does its recording, complete in the end and ended by
# nothing
rc=0; cs record -q -o "$T/raise.corscope" -- $(app Lifecycle) raise > "$T/raise.out" || rc=$?
assert_eq "raise: exit status" "$rc" 0
want=raised
[ "$RUNTIME" != 10 ] && want="raise absent"
grep -qx "$want" "$T/raise.out" || fail "raise: the program says $(cat "$T/raise.out")"
expect_recording raise complete
if grep -q "ended by" "$T/raise.check"; then
    fail "raise: $(grep 'ended by' "$T/raise.check")"
fi
note "raise: the event raised by hand, the program went on: complete, no ended_by"

rc=0; cs record -q -o "$T/crash.corscope" -- $(app Lifecycle) crash 2> "$T/crash.err" || rc=$?
assert_eq "crash in native code: exit status (SIGSEGV)" "$rc" 139
expect_recording crash complete
expect_end crash "SIGSEGV"

rc=0; cs record -q -o "$T/abort.corscope" -- $(app Lifecycle) abort 2> "$T/abort.err" || rc=$?
assert_eq "abort(): exit status (SIGABRT)" "$rc" 134
expect_recording abort complete
expect_end abort "SIGABRT"

# SIGTERM sent to record (not through the cs function: $! would be its
# subshell), passed on to the program, which does not handle it
"$CORSCOPE" record -q -o "$T/term.corscope" -- $(app Lifecycle) spin > "$T/term.out" &
for _ in $(seq 100); do grep -q ready "$T/term.out" 2>/dev/null && break; sleep 0.1; done
sleep 0.5
kill -TERM $!
rc=0; wait $! || rc=$?
assert_eq "SIGTERM: exit status" "$rc" 143
expect_recording term complete
grep -q "^  ended by     SIGTERM" "$T/term.check" || fail "SIGTERM: ended by: $(grep 'ended by' "$T/term.check")"
note "term: ended by SIGTERM"

# a program that handles SIGTERM (as ASP.NET Core's host does) shuts down
# normally: status 0, a complete recording that no signal ended
"$CORSCOPE" record -q -o "$T/graceful.corscope" -- $(app Lifecycle) graceful > "$T/graceful.out" &
for _ in $(seq 100); do grep -q ready "$T/graceful.out" 2>/dev/null && break; sleep 0.1; done
sleep 0.5
kill -TERM $!
rc=0; wait $! || rc=$?
assert_eq "SIGTERM handled by the program: exit status" "$rc" 0
grep -q stopped "$T/graceful.out" || fail "graceful: the program did not stop by itself"
expect_recording graceful complete
if grep -q "ended by" "$T/graceful.check"; then fail "graceful: $(grep 'ended by' "$T/graceful.check")"; fi
note "graceful: SIGTERM handled by the program, which returned 0: complete, no ended_by"

# SIGKILL the program (not corscope) once it is running; its pid comes
# from the recording in progress
cs record -q -o "$T/killed.corscope" -- $(app Lifecycle) spin > "$T/spin.out" &
for _ in $(seq 100); do grep -q ready "$T/spin.out" 2>/dev/null && break; sleep 0.1; done
grep -q ready "$T/spin.out" || fail "spin never started"
sleep 1
pid=$(cs check "$T/killed.corscope" | awk '$1 == "pid" { print $2 }') || true
[ -n "$pid" ] || fail "no pid in the recording in progress"
kill -KILL "$pid"
rc=0; wait $! || rc=$?
assert_eq "SIGKILL: exit status" "$rc" 137
expect_recording killed truncated
