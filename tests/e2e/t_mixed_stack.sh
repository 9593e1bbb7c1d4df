# Mixed stacks: MixedStack sorts with the C library's qsort and a comparator
# written in C#, so its CPU is spent in managed code called from native code
# called from managed code.  The signal sampler's stacks show the three layers
# in order: Sorter.Sort, then libc frames, then Sorter.Compare.  In wall mode
# the thread blocked in libc's read shows the native wait under the managed
# method that made it (Waiter.Block).
source "$(dirname "$0")/lib.sh"

cs record -q -i 1ms -o "$T/mixed.corscope" -- $(app MixedStack) 20 > "$T/out.txt"
cs report -f collapsed "$T/mixed.corscope" > "$T/collapsed.txt" 2> /dev/null
all=$(collapsed_total "$T/collapsed.txt")
layered=$(collapsed_sum "$T/collapsed.txt" 'MixedStack\.Sorter\.Sort;(libc\.so\.6![^;]*;)+MixedStack\.Sorter\.Compare(;|$| )')
pct=$(awk -v a="$layered" -v b="$all" 'BEGIN { printf "%.1f", 100 * a / b }')
note "Sort;libc...;Compare in $pct% of the samples ($layered of $all)"
assert_ge "share of samples with the three layers in order" "$pct" 60
grep -Eq 'libc\.so\.6!qsort' "$T/collapsed.txt" || fail "no libc.so.6!qsort frame"

cs record -q -e wall -o "$T/wall.corscope" -- $(app MixedStack) 20 > /dev/null
cs report -f collapsed --threads "$T/wall.corscope" > "$T/wall.txt" 2> /dev/null
waiter=$(collapsed_sum "$T/wall.txt" '^\[waiter tid=[0-9]+\];')
blocked=$(collapsed_sum "$T/wall.txt" '^\[waiter tid=[0-9]+\];.*MixedStack\.Waiter\.Block;.*libc\.so\.6!(read|__read)')
note "waiter: $blocked of $waiter samples in Waiter.Block -> libc read"
assert_ge "waiter samples" "$waiter" 20
assert_ge "waiter samples blocked in read under Waiter.Block" "$blocked" "$(awk -v w="$waiter" 'BEGIN { print 0.9 * w }')"
