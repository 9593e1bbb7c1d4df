# Recordings left by every way a process ends are readable: a normal return
# and Environment.Exit from a worker close the recording; an unhandled
# exception and SIGKILL leave it truncated, and `check` and `report` say so
# and still read what came before. `record` returns the program's status,
# or 128+signal.
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
    note "$1: $want, $(collapsed_total "$T/$1.collapsed") samples readable"
}

rc=0; cs record -q -o "$T/return.corscope" -- $(app Lifecycle) return || rc=$?
assert_eq "return: exit status" "$rc" 0
expect_recording return complete

rc=0; cs record -q -o "$T/exit.corscope" -- $(app Lifecycle) exit-thread || rc=$?
assert_eq "Environment.Exit(3) from a worker: exit status" "$rc" 3
expect_recording exit complete

rc=0; cs record -q -o "$T/unhandled.corscope" -- $(app Lifecycle) unhandled 2> "$T/unhandled.err" || rc=$?
assert_eq "unhandled exception: exit status (SIGABRT)" "$rc" 134
grep -q "unhandled on purpose" "$T/unhandled.err" || fail "the runtime's exception message was not passed through"
expect_recording unhandled truncated

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
