# Wall-clock mode samples every thread whatever it does: the sleeping thread
# shows up in Thread.Sleep about as often as the spinning one; in CPU mode the
# sleeper adds (almost) nothing.
source "$(dirname "$0")/lib.sh"

cs record -q -e wall -o "$T/wall.corscope" -- $(app WallClock) 2 > /dev/null
cs report -f collapsed --threads "$T/wall.corscope" > "$T/wall.txt"
check_wall_split "$T/wall.txt"

# (1 ms from the perf clock: 100 samples of the spinner even when it has a
# third of a core; at the 10 ms default it had 63 beside two busy processes,
# which a bound in microseconds had hidden)
cs record -q -e cpu -i 1ms --cpu-clock perf -o "$T/cpu.corscope" -- $(app WallClock) 2 > /dev/null
cs report -f collapsed --threads --weight samples "$T/cpu.corscope" > "$T/cpu.txt"
sleeper=$(collapsed_sum "$T/cpu.txt" '^\[sleeper tid=[0-9]+\];')
spinner=$(collapsed_sum "$T/cpu.txt" '^\[spinner tid=[0-9]+\];')
assert_ge "cpu: spinner samples" "$spinner" 100
pct=$(awk -v a="$sleeper" -v b="$spinner" 'BEGIN { printf "%.2f", 100 * a / (a + b) }')
awk -v p="$pct" 'BEGIN { exit !(p < 3) }' || fail "cpu: sleeper has $pct% of the samples"
note "cpu: sleeper $sleeper samples vs spinner $spinner"

# Threads that wait are sampled at every tick without being woken: after
# the first sample of each, a thread whose CPU time has not moved has its
# stack recorded again, no signal.  (Fixed: the tick decided before the
# last tick's samples were drained, so a thread woken by a signal looked as
# if it had run on its own, and was woken again: 513 signals in 303 ticks
# on this machine for eight parked threads, about 20 since.)
cs record -q -e wall -o "$T/parked.corscope" -- $(app WallClock) parked 3 8 > /dev/null
ticks=$(counter "$T/parked.corscope" ticks)
signals=$(counter "$T/parked.corscope" wall_signals)
note "parked: $signals signals in $ticks ticks"
assert_ge "parked: ticks" "$ticks" 150
assert_ge "parked: signals (each thread's first sample at least)" "$signals" 8
awk -v s="$signals" -v t="$ticks" 'BEGIN { exit !(s <= t / 3) }' ||
    fail "parked: $signals signals in $ticks ticks: threads that wait were woken again"
cs report -f collapsed --threads "$T/parked.corscope" > "$T/parked.txt"
for i in 00 03 07; do
    n=$(collapsed_sum "$T/parked.txt" "^\\[parked-$i tid=[0-9]+\\];.*WallClock\\.Parked\\.Down")
    assert_ge "parked-$i: samples in Parked.Down (one a tick)" "$n" "$(awk -v t="$ticks" 'BEGIN { print int(0.9 * t) }')"
done
