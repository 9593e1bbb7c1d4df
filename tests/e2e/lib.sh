# Shared helpers of the end-to-end tests. Each test is a bash script that
# sources this file, runs programs from build/apps under the real runtime with
# corscope, and asserts on what corscope reports. A test fails by exiting
# non-zero with a message saying what differed from what.
set -Eeuo pipefail
# A command that fails where set -e ends the test says so (a test that only
# stopped printed nothing: CI stop 44's t_idle); -E carries the trap into
# functions, and it keeps quiet in subshells and where set -e is off.
trap 'rc=$?; [ "$BASHPID" = $$ ] && [[ $- == *e* ]] && echo "FAIL: stopped by a failing command (status $rc): $BASH_COMMAND" >&2' ERR

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
CORSCOPE=${CORSCOPE:-$ROOT/build/corscope}
APPS=$ROOT/build/apps
T=$(mktemp -d "${TMPDIR:-/tmp}/corscope-e2e.XXXXXX")
trap 'rm -rf "$T"' EXIT
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1

fail() { echo "FAIL: $*" >&2; exit 1; }
note() { echo "  $*"; }

# The runtime the programs run on: the SDK's (.NET 10, build/apps), or the
# major version CORSCOPE_TEST_RUNTIME names, for which tests/apps/runtimes.sh
# built them (build/rtV/apps) and laid out a runtime installed alone
# (build/dotnet-V, reached through DOTNET_ROOT as on a machine that has it;
# the SDK's own `dotnet` is not moved by it).  Tests assert what differs
# between runtimes on RUNTIME.
RUNTIME=${CORSCOPE_TEST_RUNTIME:-10}
if [ "$RUNTIME" != 10 ]; then
    export DOTNET_ROOT=$ROOT/build/dotnet-$RUNTIME
    [ -f "$DOTNET_ROOT/.ready" ] ||
        { echo "FAIL: no .NET $RUNTIME in build/dotnet-$RUNTIME (tests/apps/runtimes.sh $RUNTIME)" >&2; exit 1; }
fi

# app NAME -> the command line that runs a test program
app() {
    if [ "$RUNTIME" = 10 ]; then
        echo "dotnet $APPS/$1/$1.dll"
    else
        echo "$ROOT/build/rt$RUNTIME/apps/$1/$1"
    fi
}

# cs ARGS... : run corscope, with a timeout so a hang fails instead of blocking CI
cs() { timeout -k 5 "${CS_TIMEOUT:-120}" "$CORSCOPE" "$@"; }

# top_total FILE METHOD -> total% of METHOD in a `report -f top` output (0 if absent);
# the row of the method itself, not a label's that names it ("[JIT] METHOD")
top_total() { awk -v m="$2" '$NF == m && $(NF - 1) !~ /\]$/ { gsub("%", "", $2); print $2; found = 1; exit } END { if (!found) print 0 }' "$1"; }
top_self() { awk -v m="$2" '$NF == m && $(NF - 1) !~ /\]$/ { gsub("%", "", $1); print $1; found = 1; exit } END { if (!found) print 0 }' "$1"; }

# assert_near WHAT ACTUAL EXPECTED TOLERANCE
assert_near() {
    awk -v a="$2" -v e="$3" -v t="$4" 'BEGIN { d = a - e; if (d < 0) d = -d; exit !(d <= t) }' ||
        fail "$1: got $2, expected $3 +/- $4"
    note "$1: $2 (expected $3 +/- $4)"
}

# assert_ge WHAT ACTUAL MIN
assert_ge() {
    awk -v a="$2" -v m="$3" 'BEGIN { exit !(a >= m) }' || fail "$1: got $2, expected at least $3"
}

# expect_error WHAT STATUS PATTERN COMMAND...: the command fails with STATUS
# and says PATTERN on one `corscope:` line
expect_error() {
    local what=$1 want=$2 pattern=$3
    shift 3
    set +e
    "$@" > "$T/out" 2> "$T/err"
    local rc=$?
    set -e
    [ "$rc" = "$want" ] || fail "$what: exit $rc, expected $want: $(cat "$T/err")"
    grep -q "^corscope: .*$pattern" "$T/err" || fail "$what: no 'corscope: ...$pattern' line: $(cat "$T/err")"
    note "$what: exit $rc, $(grep -m1 "^corscope: .*$pattern" "$T/err")"
}

# assert_eq WHAT ACTUAL EXPECTED
assert_eq() { [ "$2" = "$3" ] || fail "$1: got '$2', expected '$3'"; }

# collapsed_sum FILE REGEX -> total weight of collapsed lines matching REGEX
collapsed_sum() { awk -v re="$2" '$0 ~ re { s += $NF } END { print s + 0 }' "$1"; }
collapsed_total() { awk '{ s += $NF } END { print s + 0 }' "$1"; }
# counter RECORDING NAME: the value of one of check's counters (0 if absent)
counter() { cs check "$1" 2> /dev/null | tr ' ' '\n' | awk -F= -v k="$2" 'NF == 2 && $1 == k { v = $2 } END { print v + 0 }'; }

# ---- checks shared with tests/arm64 (the same programs, another machine) ----
# (their bounds count samples: a wall-mode report's lines are in samples
# (ticks), a CPU-mode report's in microseconds unless --weight samples)

# check_wall_split FILE: WallClock in wall mode (`report -f collapsed
# --threads`): the sleeping thread is sampled about as often as the
# spinning one, inside Sleeper.Nap
check_wall_split() {
    local sleeper spinner napping ratio
    sleeper=$(collapsed_sum "$1" '^\[sleeper tid=[0-9]+\];')
    spinner=$(collapsed_sum "$1" '^\[spinner tid=[0-9]+\];')
    napping=$(collapsed_sum "$1" '^\[sleeper tid=[0-9]+\];.*WallClock\.Sleeper\.Nap')
    assert_ge "wall: spinner samples" "$spinner" 100
    ratio=$(awk -v a="$sleeper" -v b="$spinner" 'BEGIN { printf "%.2f", a / b }')
    assert_near "wall: sleeper/spinner samples" "$ratio" 1 0.2
    assert_ge "wall: sleeper samples in Sleeper.Nap" "$napping" "$(awk -v s="$sleeper" 'BEGIN { print 0.9 * s }')"
}

# check_mixed_layers FILE MIN LIBC: MixedStack's comparator samples (at
# least MIN) show Main;Sorter.Sort;libc...;Sorter.Compare in 99% of them,
# LIBC the pattern of one libc frame
check_mixed_layers() {
    local callback layered pct
    callback=$(collapsed_sum "$1" '(^|;)MixedStack\.Sorter\.Compare(;| )')
    layered=$(collapsed_sum "$1" "(^|;)MixedStack\\.Program\\.Main;MixedStack\\.Sorter\\.Sort;($3;)+MixedStack\\.Sorter\\.Compare(;| )")
    pct=$(awk -v a="$layered" -v b="$callback" 'BEGIN { printf "%.1f", b ? 100 * a / b : 0 }')
    note "Main;Sort;libc...;Compare in $pct% of the comparator's samples ($layered of $callback)"
    assert_ge "comparator samples" "$callback" "$2"
    assert_ge "share of the comparator's samples with the three layers in order" "$pct" 99
    grep -Eq 'libc\.so\.6!qsort' "$1" || fail "no libc.so.6!qsort frame"
}

# check_waiter FILE: MixedStack in wall mode (--threads): the waiter thread
# blocked in libc's read under Waiter.Block
check_waiter() {
    local waiter blocked
    waiter=$(collapsed_sum "$1" '^\[waiter tid=[0-9]+\];')
    blocked=$(collapsed_sum "$1" '^\[waiter tid=[0-9]+\];.*MixedStack\.Waiter\.Block;.*libc\.so\.6!(read|__read)')
    note "waiter: $blocked of $waiter samples in Waiter.Block -> libc read"
    assert_ge "waiter samples" "$waiter" 20
    assert_ge "waiter samples blocked in read under Waiter.Block" "$blocked" "$(awk -v w="$waiter" 'BEGIN { print 0.9 * w }')"
}

# `corscope watch`'s call lines: WATCH_CALL matches a line's time and
# thread; watch_calls FILE prints the lines without time, thread and
# duration
WATCH_CALL='^[0-9][0-9]:[0-9][0-9]:[0-9][0-9]\.[0-9][0-9][0-9] \[[0-9]+\] '
watch_calls() { { grep -E "$WATCH_CALL" "$1" || true; } | sed -E "s/$WATCH_CALL//; s/  [0-9.]+ (us|ms|s)\$//"; }
# watch_json FILE: `corscope watch -o`'s JSON lines without time, thread
# and duration (what differs from run to run)
watch_json() { sed -E 's/"time":"[^"]*","thread":[0-9]+,//; s/,"duration_ns":[0-9]+//' "$1"; }
