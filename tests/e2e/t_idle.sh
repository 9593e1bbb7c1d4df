# An idle service's agent sleeps (src/agent/signal/loop_wake.h): Fleet
# idles 4 s, then works 2 s, under `record -i 1ms --cpu-clock perf`.  While
# it idles, the agent's thread wakes at most 30 times a second (at its old
# fixed 10 ms it woke 85 to 100 times: docs/performance.md); when the work
# begins, its first samples wake the loop: no sample is dropped, the work
# is in the recording, and the program's output is its own.
# The other end, a program whose threads are busy the whole time (samples,
# no events): the loop drains the rings every 16 sampling intervals, 50 ms
# at the default 10 ms (it woke every 10 ms: about 100 times a second), and
# loses none of them.
# And a process whose runtime compiles now and then while it mostly waits
# (Events jit-trickle: 1,000 methods, one a millisecond, about 8 samples):
# a cycle that applied compiled code is one that worked, and the next
# method does not wake the agent's thread (it did for 879 of the 1,000
# while such a cycle counted as idle: `loop_wakeups`).
source "$(dirname "$0")/lib.sh"

# find_agent APP ARGS: sets pid (the program's process: dotnet APP.dll, or
# APP's own executable on an older runtime) and tid (its agent thread),
# waiting up to 10 s for them
find_agent() {
    local p comm
    pid= tid=
    for _ in $(seq 200); do
        for p in $(pgrep -f "$1(\.dll)? $2\$"); do
            comm=$(cat /proc/"$p"/comm 2> /dev/null || true)
            [ "$comm" = dotnet ] || [ "$comm" = "$1" ] && pid=$p
        done
        # grep finds nothing until the agent's thread has started: not a
        # failure (under set -e it ended the test, CI stop 44)
        [ -n "$pid" ] && tid=$(grep -lx corscope /proc/"$pid"/task/*/comm 2> /dev/null | head -1 | cut -d/ -f5 || true)
        [ -n "$tid" ] && return
        sleep 0.05
    done
}
switches() { awk '/^voluntary_ctxt_switches/ { print $2 }' /proc/"$pid"/task/"$tid"/status; }

cs record -q -i 1ms --cpu-clock perf -o "$T/idle.corscope" -- $(app Fleet) 2 idle-first 4 \
    > "$T/out" 2> "$T/err" &
rec=$!
find_agent Fleet '2 idle-first 4'
[ -n "$tid" ] || fail "no agent thread in the program: $(cat "$T/err")"
# a second for the start-up's compilations, then a second of idling
sleep 1
a=$(switches)
sleep 1
b=$(switches)
wait "$rec" || fail "record: $(cat "$T/err")"
woke=$((b - a))
[ "$woke" -le 30 ] || fail "the agent woke $woke times in an idle second (at most 30)"
grep -q "^truth exceptions" "$T/out" || fail "the program's output: $(cat "$T/out")"
assert_eq "dropped samples" "$(counter "$T/idle.corscope" dropped_samples)" 0
burn=$(cs report -f collapsed --weight samples "$T/idle.corscope" 2> /dev/null |
    collapsed_sum /dev/stdin 'Fleet\.Work\.Burn(;| )')
assert_ge "samples in Fleet.Work.Burn after the idle spell" "$burn" 50
note "idle: the agent woke $woke times in a second; then $burn samples of the work, none dropped"

# busy: CpuShares for 3 s at the default interval
cs record -q -o "$T/busy.corscope" -- $(app CpuShares) 3 > "$T/busy.out" 2> "$T/busy.err" &
rec=$!
find_agent CpuShares 3
[ -n "$tid" ] || fail "no agent thread in CpuShares: $(cat "$T/busy.err")"
sleep 1
a=$(switches)
sleep 1
b=$(switches)
wait "$rec" || fail "record CpuShares: $(cat "$T/busy.err")"
woke=$((b - a))
[ "$woke" -le 40 ] || fail "the agent woke $woke times in a busy second (at most 40)"
assert_eq "busy: dropped samples" "$(counter "$T/busy.corscope" dropped_samples)" 0
samples=$(counter "$T/busy.corscope" samples)
assert_ge "busy: samples (3 s of work at 10 ms; fewer beside other load)" "$samples" 50
note "busy: the agent woke $woke times in a second; $samples samples, none dropped"

# a trickle of compilations
cs record -q -o "$T/trickle.corscope" -- $(app Events) jit-trickle 1000 > "$T/trickle.out"
grep -q "^jit-trickle: 1000 methods compiled" "$T/trickle.out" || fail "Events jit-trickle: $(cat "$T/trickle.out")"
wakes=$(counter "$T/trickle.corscope" loop_wakeups)
# (at least the one that ends the recording: the counter is there)
[ "$wakes" -ge 1 ] && [ "$wakes" -le 100 ] || fail "1000 methods compiled one a millisecond woke the agent's thread $wakes times (at most 100)"
note "trickle: 1000 methods compiled, one a millisecond: the agent's thread woken early $wakes times"

# a recording that ends mostly idle: Fleet works 1 s, then polls for a file
# the test makes 6 s after its start.  `check` says how long the recording
# ran (recorded_ns: at least the 5 s after the agent's start, at most the
# command's wall time), not only when its last sample was, which was all it
# said (and a sample may come late: the polling's CPU adds up to a period)
rm -f "$T/go"
t0=$(date +%s%N)
cs record -q -o "$T/tail.corscope" -- $(app Fleet) 1 wait-file "$T/go" > "$T/tail.out" 2> "$T/tail.err" &
rec=$!
sleep 6
touch "$T/go"
wait "$rec" || fail "record Fleet wait-file: $(cat "$T/tail.err")"
wall=$(awk -v ns="$(( $(date +%s%N) - t0 ))" 'BEGIN { printf "%.3f", ns / 1e9 }')
line=$(cs check "$T/tail.corscope" | grep "^  duration")
recorded=$(echo "$line" | sed -n 's/^  duration *\([0-9.]*\) s recorded, the last sample at [0-9.]* s$/\1/p')
[ -n "$recorded" ] || fail "check does not say how long the recording ran: '$line'"
assert_ge "tail: the time recorded (s)" "$recorded" 5
assert_ge "tail: the command's wall time against the time recorded (s)" "$wall" "$recorded"
note "tail: $line (the command: $wall s)"
