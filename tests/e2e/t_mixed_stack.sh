# Mixed stacks: MixedStack sorts with the C library's qsort and a comparator
# written in C#, so its CPU is spent in managed code called from native code
# called from managed code.  The signal sampler's stacks show the three layers
# in order: Main, Sorter.Sort, then libc frames, then Sorter.Compare, in 99%
# of the comparator's samples.  In wall mode
# the thread blocked in libc's read shows the native wait under the managed
# method that made it (Waiter.Block).
source "$(dirname "$0")/lib.sh"

cs record -q -i 1ms -o "$T/mixed.corscope" -- $(app MixedStack) 20 > "$T/out.txt"
cs report -f collapsed --weight samples "$T/mixed.corscope" > "$T/collapsed.txt" 2> /dev/null
all=$(collapsed_total "$T/collapsed.txt")
# of the samples in the C# comparator (most of the program's: the rest is
# start-up and filling the arrays), those with the whole stack in order
# from Main, every libc frame named
check_mixed_layers "$T/collapsed.txt" "$(( all * 8 / 10 ))" 'libc\.so\.6![^;]*'

cs record -q -e wall -o "$T/wall.corscope" -- $(app MixedStack) 20 > /dev/null
cs report -f collapsed --threads "$T/wall.corscope" > "$T/wall.txt" 2> /dev/null
check_waiter "$T/wall.txt"
