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
cs report -f collapsed --weight samples "$T/mixed.corscope" > "$T/collapsed.txt" 2> /dev/null
# the arm64 C library has no symbol file here: its inner frames are unnamed
check_mixed_layers "$T/collapsed.txt" "$(( $(collapsed_total "$T/collapsed.txt") / 2 ))" 'libc\.so\.6(![^;]*)?'

a64_record "$T/wall.corscope" wall MixedStack 3 > /dev/null
cs check "$T/wall.corscope" > "$T/wall.check" || fail "check: $(cat "$T/wall.check")"
assert_walks "$T/wall.check" "wall"
cs report -f collapsed --threads "$T/wall.corscope" > "$T/wall.txt" 2> /dev/null
check_waiter "$T/wall.txt"
