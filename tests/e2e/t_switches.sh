# What switching costs under each CPU clock, said by `check`: a program
# whose two threads hand a turn back and forth 20,000 times (each waits for
# it) switches at least as often as its threads counted themselves; under
# the perf_event clock check says what each switch costs and that the POSIX
# timers do not pay it, and, where its samples saw too little of the CPU,
# that the switching is why (the clock does not count a thread's time in
# switching; about 7 us a switch went unseen on our virtual machines);
# under the POSIX timers the count alone.  `record`'s summary says the cost
# too, this many switches a CPU-second being over its threshold (20,000).
# With no clock asked for, the agent moves such threads itself: t_clock_trial.
source "$(dirname "$0")/lib.sh"

for clock in perf posix; do
    cs record --cpu-clock $clock -o "$T/$clock.corscope" -- $(app Events) handoff 20000 > "$T/$clock.out" \
        2> "$T/$clock.err"
    own=$(awk '/^handoff/ { print $4 }' "$T/$clock.out")
    [ -n "$own" ] && [ "$own" -ge 20000 ] || fail "$clock: the program's own count: $(cat "$T/$clock.out")"
    got=$(counter "$T/$clock.corscope" context_switches)
    assert_ge "$clock: context_switches against the two threads' own" "$got" "$own"
    # the rest of the process (the runtime's threads, its start) switches
    # a few hundred times
    [ "$got" -le $((own + own / 10 + 1000)) ] || fail "$clock: $got switches recorded for $own of the program's"
    cs check "$T/$clock.corscope" > "$T/$clock.check"
    grep -q "^  switches     $got ([0-9]* a CPU-second)" "$T/$clock.check" ||
        fail "$clock: check's switches line: $(grep switches "$T/$clock.check")"
    note "$clock clock: $got switches recorded, $own counted by the program's two threads"
done
grep -q "^  switches .*: the perf_event clock's timer is stopped and started at each switch.*--cpu-clock posix does not pay it" \
    "$T/perf.check" || fail "perf: no word of the switches' cost: $(grep switches "$T/perf.check")"
! grep -q "perf_event clock's timer" "$T/posix.check" || fail "posix: the perf_event clock's cost said"
grep -q "^corscope: note: [0-9]* context switches a CPU-second, and the perf_event clock costs each.*--cpu-clock posix does not pay it" \
    "$T/perf.err" || fail "perf: record's summary does not say the switches' cost: $(cat "$T/perf.err")"
! grep -q "context switches" "$T/posix.err" || fail "posix: record's summary speaks of switches"
if grep -q "^  warning      a quarter or more of the CPU" "$T/perf.check"; then
    grep -q "What can leave it out: context switches, [0-9]* a CPU-second: the perf_event clock does not count" \
        "$T/perf.check" || fail "perf: a thin share not put down to the switches: $(grep warning "$T/perf.check")"
    note "perf clock: $(grep -o 'saw [0-9.]*[mu]*s of the [0-9.]*[mu]*s of CPU[^;]*' "$T/perf.check" | head -1), put down to the switching"
else
    note "perf clock: the samples saw three quarters of the CPU or more"
fi

