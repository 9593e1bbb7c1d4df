# make test
# Wall-clock sampling on arm64, under qemu-user: WallClock's sleeping thread
# shows up in Thread.Sleep about as often as its spinning thread (every
# thread is sampled whatever it does), inside Sleeper.Nap; fewer than 0.5%
# of the walks fail (the sleeper's stack crosses the runtime's wait into
# libc's).
source "$(dirname "$0")/lib.sh"

a64_record "$T/wall.corscope" wall WallClock 3 > /dev/null
cs check "$T/wall.corscope" > "$T/check.txt" || fail "check: $(cat "$T/check.txt")"
assert_walks "$T/check.txt" "wall"
cs report -f collapsed --threads "$T/wall.corscope" > "$T/wall.txt" 2> /dev/null
sleeper=$(collapsed_sum "$T/wall.txt" '^\[sleeper tid=[0-9]+\];')
spinner=$(collapsed_sum "$T/wall.txt" '^\[spinner tid=[0-9]+\];')
napping=$(collapsed_sum "$T/wall.txt" '^\[sleeper tid=[0-9]+\];.*WallClock\.Sleeper\.Nap')
assert_ge "wall: spinner samples" "$spinner" 100
ratio=$(awk -v a="$sleeper" -v b="$spinner" 'BEGIN { printf "%.2f", a / b }')
assert_near "wall: sleeper/spinner samples" "$ratio" 1 0.2
assert_ge "wall: sleeper samples in Sleeper.Nap" "$napping" "$(awk -v s="$sleeper" 'BEGIN { print 0.9 * s }')"
