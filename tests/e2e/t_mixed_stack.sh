# Mixed stacks: MixedStack sorts with the C library's qsort and a comparator
# written in C#, so its CPU is spent in managed code called from native code
# called from managed code.  The signal sampler's stacks show the three layers
# in order: Main, Sorter.Sort, then libc frames, then Sorter.Compare, in 99%
# of the comparator's samples.  In wall mode
# the thread blocked in libc's read shows the native wait under the managed
# method that made it (Waiter.Block).
source "$(dirname "$0")/lib.sh"

cs record -q -i 1ms -o "$T/mixed.corscope" -- $(app MixedStack) 20 > "$T/out.txt"
cs report -f collapsed "$T/mixed.corscope" > "$T/collapsed.txt" 2> /dev/null
all=$(collapsed_total "$T/collapsed.txt")
# of the samples in the C# comparator, those with the whole stack in order
# from Main (the rest of the program's time: start-up, filling the arrays)
callback=$(collapsed_sum "$T/collapsed.txt" '(^|;)MixedStack\.Sorter\.Compare(;| )')
layered=$(collapsed_sum "$T/collapsed.txt" '(^|;)MixedStack\.Program\.Main;MixedStack\.Sorter\.Sort;(libc\.so\.6![^;]*;)+MixedStack\.Sorter\.Compare(;| )')
pct=$(awk -v a="$layered" -v b="$callback" 'BEGIN { printf "%.1f", 100 * a / b }')
note "Main;Sort;libc...;Compare in $pct% of the comparator's samples ($layered of $callback; $all in all)"
assert_ge "comparator samples (most of the program's)" "$callback" "$(( all * 8 / 10 ))"
assert_ge "share of the comparator's samples with the three layers in order" "$pct" 99
grep -Eq 'libc\.so\.6!qsort' "$T/collapsed.txt" || fail "no libc.so.6!qsort frame"

cs record -q -e wall -o "$T/wall.corscope" -- $(app MixedStack) 20 > /dev/null
cs report -f collapsed --threads "$T/wall.corscope" > "$T/wall.txt" 2> /dev/null
waiter=$(collapsed_sum "$T/wall.txt" '^\[waiter tid=[0-9]+\];')
blocked=$(collapsed_sum "$T/wall.txt" '^\[waiter tid=[0-9]+\];.*MixedStack\.Waiter\.Block;.*libc\.so\.6!(read|__read)')
note "waiter: $blocked of $waiter samples in Waiter.Block -> libc read"
assert_ge "waiter samples" "$waiter" 20
assert_ge "waiter samples blocked in read under Waiter.Block" "$blocked" "$(awk -v w="$waiter" 'BEGIN { print 0.9 * w }')"
