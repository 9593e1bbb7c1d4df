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
check_wall_split "$T/wall.txt"
