# --alloc exact beside a recording that stops taking data (a pipe whose
# reader stopped reading, standing for a stalled disk): an allocation whose
# thread's queue is full waits for the agent's thread, until it has taken
# nothing from the queue for 250 ms, and once such a wait runs out no
# allocation waits again (they are dropped and counted), so the program
# runs as fast as it does recording to a file.  Before (issue 20.3) every
# allocation waited its 50 ms: AllocBench's 20,000 units took more than a
# minute instead of 3 s.
# And beside a recording that stops taking data for 150 ms only (a pipe
# whose reader pauses once): every allocation is counted.  Before (a
# budget of 50 ms in all) the waits gave up and Memory's ExactAlpha lost
# up to a third of its 20,000 objects.
source "$(dirname "$0")/lib.sh"

units=20000
AGENT=$ROOT/build/libcorscope.so
now_ms() { date +%s%3N; }
profiled() {
    CORECLR_ENABLE_PROFILING=1 CORECLR_PROFILER='{14DE3B91-04FE-4EFB-B588-CD7BB380C74A}' \
        CORECLR_PROFILER_PATH=$AGENT CORSCOPE_OUTPUT=$1 CORSCOPE_EVENT=alloc CORSCOPE_ALLOC=exact \
        timeout -k 5 60 dotnet "$APPS/AllocBench/AllocBench.dll" $units
}

t0=$(now_ms)
profiled "$T/file.corscope" > "$T/file.out" 2> "$T/file.err"
file_ms=$(( $(now_ms) - t0 ))
cs check "$T/file.corscope" > /dev/null || fail "recording to a file: not whole"

mkfifo "$T/stalled"
exec 3<> "$T/stalled"
head -c 60000 /dev/zero >&3
t0=$(now_ms)
rc=0
profiled "$T/stalled" > "$T/stall.out" 2> "$T/stall.err" || rc=$?
stall_ms=$(( $(now_ms) - t0 ))
exec 3>&-
assert_eq "stalled pipe: exit status" "$rc" 0
grep -q "^allocbench ms" "$T/stall.out" || fail "stalled pipe: AllocBench did not finish: $(cat "$T/stall.out" "$T/stall.err")"
grep -q "^corscope: .*has not taken data for" "$T/stall.err" ||
    fail "the recording never stalled (the test proves nothing): $(cat "$T/stall.err")"
grep -q "^corscope: --alloc exact: the agent's thread took nothing" "$T/stall.err" ||
    fail "no allocation ever waited (the test proves nothing): $(cat "$T/stall.err")"
note "run time: ${file_ms} ms recording to a file, ${stall_ms} ms to the stalled pipe"
awk -v s="$stall_ms" -v f="$file_ms" 'BEGIN { exit !(s <= 1.5 * f + 1500) }' ||
    fail "run time ${stall_ms} ms with the stalled pipe, ${file_ms} ms recording to a file"

# ---- a pause, not a stall ------------------------------------------------------
mkfifo "$T/paused"
{ head -c 1048576; sleep 0.15; cat; } < "$T/paused" > "$T/paused.corscope" &
reader=$!
CORECLR_ENABLE_PROFILING=1 CORECLR_PROFILER='{14DE3B91-04FE-4EFB-B588-CD7BB380C74A}' \
    CORECLR_PROFILER_PATH=$AGENT CORSCOPE_OUTPUT=$T/paused CORSCOPE_EVENT=alloc CORSCOPE_ALLOC=exact \
    timeout -k 5 60 dotnet "$APPS/AllocBench/AllocBench.dll" 5000 > "$T/paused.out" 2> "$T/paused.err" ||
    fail "paused pipe: AllocBench failed: $(cat "$T/paused.err")"
wait "$reader"
! grep -q "^corscope: " "$T/paused.err" || fail "paused pipe: $(cat "$T/paused.err")"
cs check "$T/paused.corscope" > "$T/paused.check" || fail "paused pipe: $(cat "$T/paused.check")"
dropped=$(grep -o " dropped_events=[0-9]*" "$T/paused.check" | cut -d= -f2)
assert_eq "paused pipe: allocations dropped" "${dropped:-none counted}" 0
note "a pause of 150 ms: $(grep -o ' alloc_samples=[0-9]*' "$T/paused.check" | cut -d= -f2) allocations, none dropped"
