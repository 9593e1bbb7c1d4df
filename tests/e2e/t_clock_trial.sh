# With no clock asked for, a thread that switches more than 10,000 times a
# CPU-second is tried on a POSIX timer beside its perf_event clock, and
# moved to it only if the trial's ticks find it on time (clock_trial.h).
#
# Moved: two threads handing a turn back and forth (Events handoff, about
# 50,000 switches a CPU-second, woken by each other, not by the tick).
# check's clock line says so, its switches line says the cost is not paid,
# record says nothing of it, and the samples see nearly all of the CPU
# (the perf_event clock leaves the switching time out: 66 to 70% in
# t_switches).  300,000 turns, 4 to 6 s, for the trial to be short beside
# the run.  At least 75%: 84 to 94% idle and beside two CPU hogs in
# session 30's runs, 79.5% once in a full run beside two hogs.
#
# Kept: work that no tick finds running (Aliasing dodge, each tick's work
# in 4 bursts of 100 us, all between two ticks: about 19,000 switches a
# CPU-second).  The trial's timer is never found on time, so the perf_event
# clock stays, check says so, and Dodge.Burst gets at least 40% of the CPU
# the program measured in it (a POSIX timer would have given it nothing:
# t_cpu_clock_missed; 8 s at the default interval is some 20 samples, so
# the bound is three of their standard deviations below the truth).
source "$(dirname "$0")/lib.sh"

cs record -o "$T/moved.corscope" -- $(app Events) handoff 300000 > "$T/moved.out" 2> "$T/moved.err" ||
    fail "record: $(cat "$T/moved.err")"
cs check "$T/moved.corscope" > "$T/moved.check"
grep -q "^  clock        perf_event task-clock; posix-cpu-timer for [2-9] threads that switched more than 10000 times a CPU-second" \
    "$T/moved.check" || fail "handoff: the switching threads kept the perf_event clock: $(grep clock "$T/moved.check")"
! grep -q "kept for" "$T/moved.check" || fail "handoff: a trial failed: $(grep clock "$T/moved.check")"
grep -q "^  switches     [0-9]* ([0-9]* a CPU-second): the threads that switched most were given POSIX timers" \
    "$T/moved.check" || fail "handoff: check's switches line: $(grep switches "$T/moved.check")"
! grep -q "context switches" "$T/moved.err" || fail "handoff: record's summary speaks of the switches' cost"
seen=$(grep -o 'CPU the process used while sampled ([0-9.]*%)' "$T/moved.check" | grep -o '[0-9.]*%' | tr -d %)
[ -n "$seen" ] || fail "handoff: no cpu share line: $(grep 'cpu share' "$T/moved.check")"
awk -v s="$seen" 'BEGIN { exit !(s >= 75) }' ||
    fail "handoff: the samples saw $seen% of the CPU (the POSIX timers count the switching)"
note "handoff: $(grep -o 'posix-cpu-timer for [0-9]* threads' "$T/moved.check"), $seen% of the CPU seen"

cs record -q -o "$T/kept.corscope" -- $(app Aliasing) dodge 100 8 4 > "$T/truth.txt" 2> "$T/kept.err" ||
    fail "record: $(cat "$T/kept.err")"
burst_ms=$(sed -n 's/^dodge burst_ms=\([0-9.]*\) .*/\1/p' "$T/truth.txt")
[ -n "$burst_ms" ] || fail "dodge printed no truth: $(cat "$T/truth.txt")"
cs check "$T/kept.corscope" > "$T/kept.check"
grep -q "^  clock        perf_event task-clock; the perf_event task-clock kept for 1 thread that switched as often, a POSIX timer tried beside it finding it late" \
    "$T/kept.check" || fail "dodge: no trial kept the perf_event clock: $(grep clock "$T/kept.check")"
! grep -q "posix-cpu-timer for" "$T/kept.check" || fail "dodge: a thread moved: $(grep clock "$T/kept.check")"
cs report -f collapsed "$T/kept.corscope" > "$T/kept.collapsed" 2> /dev/null
us=$(collapsed_sum "$T/kept.collapsed" '(^|;)Dodge\.Burst(;| )')
assert_ge "Dodge.Burst's weight, us (of ${burst_ms} ms measured)" "$us" \
    "$(awk -v m="$burst_ms" 'BEGIN { printf "%.0f", m * 1000 * 0.4 }')"
note "dodge: Dodge.Burst ${us} us of ${burst_ms} ms measured; $(grep -o 'switches  *[0-9]* ([0-9]* a CPU-second)' "$T/kept.check")"
