# Native code the unwinder cannot wholly follow is counted per library and
# shown by `check`, so a user sees why a native frame ended a walk
# (tests/apps/NativeGaps).  libgapexpr.so's function gives its frame address
# as a DWARF expression: walks stop there, as [unknown], and check counts
# them under it; libgapdebug.so has no .eh_frame_hdr (its CFI is in
# .debug_frame only): check says so, and walks through it go by its frame
# pointers, whole.
source "$(dirname "$0")/lib.sh"

# the perf_event clock by name: the counts below need its samples (POSIX
# timers, chosen at 1 ms where perf_event's interrupts are dear, sample at
# most at the scheduler's tick: 96 walks of the 100 needed under two CPU hogs)
cs record -q -i 1ms --cpu-clock perf -o "$T/gaps.corscope" -- $(app NativeGaps) 600 > "$T/out.txt"
cs check "$T/gaps.corscope" > "$T/check.txt"
cs report -f collapsed "$T/gaps.corscope" > "$T/collapsed.txt" 2> /dev/null

expr_line=$(grep 'libgapexpr\.so: ' "$T/check.txt" || true)
[ -n "$expr_line" ] || fail "check does not list libgapexpr.so: $(grep -A8 'unwind gaps' "$T/check.txt")"
echo "$expr_line" | grep -q "1 with a frame address computed by a DWARF expression" ||
    fail "libgapexpr.so's gap: $expr_line"
stopped=$(echo "$expr_line" | sed -E 's/.*: ([0-9]+) walks stopped there.*/\1/')
in_expr=$(collapsed_sum "$T/collapsed.txt" 'libgapexpr\.so!gap_spin_expr ')
unknown=$(collapsed_sum "$T/collapsed.txt" '^\[unknown\];libgapexpr\.so!gap_spin_expr ')
pct=$(awk -v a="$unknown" -v b="$in_expr" 'BEGIN { printf "%.1f", b ? 100 * a / b : 0 }')
assert_ge "walks stopped in libgapexpr.so" "$stopped" 100
assert_ge "gap_spin_expr's samples that end there as [unknown], %" "$pct" 80
note "libgapexpr.so: $stopped walks stopped there; $pct% of gap_spin_expr's time ends in [unknown]"

grep -q 'libgapdebug\.so: no \.eh_frame_hdr (its unwind data is in \.debug_frame only)' "$T/check.txt" ||
    fail "check does not say libgapdebug.so has .debug_frame only: $(grep -A8 'unwind gaps' "$T/check.txt")"
through=$(sed -nE 's/.*libgapdebug\.so: .*; ([0-9]+) walks went through it by frame pointers/\1/p' "$T/check.txt")
assert_ge "walks through libgapdebug.so by frame pointers" "${through:-0}" 100
in_debug=$(collapsed_sum "$T/collapsed.txt" 'libgapdebug\.so!gap_spin_debug ')
whole=$(collapsed_sum "$T/collapsed.txt" 'NativeGaps\.Program\.Main;NativeGaps\.Program\.InDebugFrame;libgapdebug\.so!gap_spin_debug ')
pct=$(awk -v a="$whole" -v b="$in_debug" 'BEGIN { printf "%.1f", b ? 100 * a / b : 0 }')
assert_ge "gap_spin_debug's time under Main;InDebugFrame (frame pointers), %" "$pct" 95
grep -q "guessed_walks=[1-9]" "$T/check.txt" || fail "walks by frame pointers are not counted as guessed"
note "libgapdebug.so: .debug_frame only, said; $pct% of gap_spin_debug's time walked whole by frame pointers"

# libgapfresh.so: loaded at run time (dlopen: the loader may unload it, so
# the walker never reads it in place) and built without frame pointers;
# each of its 64 functions runs a few milliseconds, so most samples are the
# first in their function, before the agent's cache has its CFI, and the
# first ones come before the agent's loop has even listed the library
# (settle 0: the program spins at once after loading it).  The walker
# copies the CFI through the kernel, finding the library by the kernel's
# answer for its mapping while it is unlisted: every walk whole.  (Before:
# 64 to 70% of the library's time kept InFresh in its stacks; with the
# copies for listed libraries alone, 97 to 99.4%, the first function's
# 10 to 36%.)
cs record -q -i 1ms --cpu-clock perf -o "$T/fresh.corscope" -- $(app NativeGaps) fresh 5 0 > "$T/out.txt"
cs report -f collapsed "$T/fresh.corscope" > "$T/fresh.txt" 2> /dev/null
in_fresh=$(collapsed_sum "$T/fresh.txt" 'libgapfresh\.so!fresh_[0-7]* ')
whole=$(collapsed_sum "$T/fresh.txt" 'NativeGaps\.Program\.Main;NativeGaps\.Program\.InFresh;libgapfresh\.so!fresh_[0-7]* ')
functions=$(grep -o 'libgapfresh\.so!fresh_[0-7]* ' "$T/fresh.txt" | sort -u | wc -l)
assert_ge "libgapfresh.so's functions sampled" "$functions" 32
pct=$(awk -v a="$whole" -v b="$in_fresh" 'BEGIN { printf "%.1f", b ? 100 * a / b : 0 }')
assert_ge "libgapfresh.so's time under Main;InFresh, %" "$pct" 99
# fresh_00 runs first, right after the load: its samples are the ones taken
# while the library is unlisted (before: 10 to 36% of its time whole)
first=$(collapsed_sum "$T/fresh.txt" 'libgapfresh\.so!fresh_00 ')
first_whole=$(collapsed_sum "$T/fresh.txt" 'NativeGaps\.Program\.InFresh;libgapfresh\.so!fresh_00 ')
first_pct=$(awk -v a="$first_whole" -v b="$first" 'BEGIN { printf "%.1f", b ? 100 * a / b : 0 }')
assert_ge "fresh_00's time (the library unlisted yet) under InFresh, %" "$first_pct" 99
note "libgapfresh.so: $functions functions sampled, $pct% of their time walked whole, $first_pct% of the first's"
