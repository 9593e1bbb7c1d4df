# make test
# Mixed stacks on arm64, under qemu-user: MixedStack sorts with the C
# library's qsort and a comparator written in C# ([UnmanagedCallersOnly]),
# so the CPU goes to managed code called from native code called from
# managed code.  The comparator's samples show the three layers in order
# (Main, Sorter.Sort, libc frames found by aarch64 CFI, Sorter.Compare) in
# 99% of them; fewer than 0.5% of the walks fail.  In wall mode the thread
# blocked in libc's read shows the native wait under the managed method that
# made it (Waiter.Block).
source "$(dirname "$0")/lib.sh"

CORSCOPE_INTERVAL=2ms a64_record "$T/mixed.corscope" cpu MixedStack 3 > "$T/out.txt"
grep -q "^sorted 3 rounds" "$T/out.txt" || fail "the program's output: $(cat "$T/out.txt")"
cs check "$T/mixed.corscope" > "$T/check.txt" || fail "check: $(cat "$T/check.txt")"
assert_walks "$T/check.txt" "cpu"
cs report -f collapsed "$T/mixed.corscope" > "$T/collapsed.txt" 2> /dev/null
callback=$(collapsed_sum "$T/collapsed.txt" '(^|;)MixedStack\.Sorter\.Compare(;| )')
layered=$(collapsed_sum "$T/collapsed.txt" '(^|;)MixedStack\.Program\.Main;MixedStack\.Sorter\.Sort;(libc\.so\.6[^;]*;)+MixedStack\.Sorter\.Compare(;| )')
pct=$(awk -v a="$layered" -v b="$callback" 'BEGIN { printf "%.1f", 100 * a / b }')
note "Main;Sort;libc...;Compare in $pct% of the comparator's samples ($layered of $callback)"
assert_ge "comparator samples" "$callback" 1
assert_ge "share of the comparator's samples with the three layers in order" "$pct" 99
grep -Eq 'libc\.so\.6!qsort' "$T/collapsed.txt" || fail "no libc.so.6!qsort frame"

a64_record "$T/wall.corscope" wall MixedStack 3 > /dev/null
cs check "$T/wall.corscope" > "$T/wall.check" || fail "check: $(cat "$T/wall.check")"
assert_walks "$T/wall.check" "wall"
cs report -f collapsed --threads "$T/wall.corscope" > "$T/wall.txt" 2> /dev/null
waiter=$(collapsed_sum "$T/wall.txt" '^\[waiter tid=[0-9]+\];')
blocked=$(collapsed_sum "$T/wall.txt" '^\[waiter tid=[0-9]+\];.*MixedStack\.Waiter\.Block;.*libc\.so\.6!(read|__read)')
note "waiter: $blocked of $waiter samples in Waiter.Block -> libc read"
assert_ge "waiter samples" "$waiter" 20
assert_ge "waiter samples blocked in read under Waiter.Block" "$blocked" "$(awk -v w="$waiter" 'BEGIN { print 0.9 * w }')"
