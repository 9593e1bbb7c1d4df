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
