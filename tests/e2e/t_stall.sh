# A recording whose file stops taking data (a pipe whose reader stopped
# reading, standing for a stalled NFS or FUSE disk) while the program
# unloads code (tests/apps/UnloadStall: DynamicMethods and collectible
# contexts, collected with GC.WaitForPendingFinalizers, the runtime's unload
# callbacks run from there).  The agent's thread blocks in write(2); the
# program must not notice: the unload callbacks never wait for that thread
# or for a lock it may hold across I/O, and the exit does not wait for a
# write that does not return.  The program's output is the same as without
# the profiler, its longest wait for the finalizers and its allocating
# thread's longest gap stay far below the stall, and its run time stays
# within noise of a run recording to a file.
source "$(dirname "$0")/lib.sh"

rounds=300
AGENT=$ROOT/build/libcorscope.so
now_ms() { date +%s%3N; }
field() { awk -v k="$1" '{ for (i = 1; i < NF; i++) if ($i == k) print $(i + 1) }' "$2"; }

t0=$(now_ms)
dotnet "$APPS/UnloadStall/UnloadStall.dll" $rounds > "$T/plain.out" 2> "$T/plain.err"
plain_ms=$(( $(now_ms) - t0 ))

t0=$(now_ms)
cs record -q -o "$T/file.corscope" -- $(app UnloadStall) $rounds > "$T/file.out" 2> "$T/file.err"
file_ms=$(( $(now_ms) - t0 ))
cmp -s "$T/plain.out" "$T/file.out" || fail "recording to a file changed the output"

# the stalled pipe: a reader that never reads, and the pipe (64 KiB) nearly
# full, so the header fits and the first flush blocks for good
mkfifo "$T/stalled"
exec 3<> "$T/stalled"
head -c 60000 /dev/zero >&3
t0=$(now_ms)
rc=0
CORECLR_ENABLE_PROFILING=1 CORECLR_PROFILER='{14DE3B91-04FE-4EFB-B588-CD7BB380C74A}' \
    CORECLR_PROFILER_PATH=$AGENT CORSCOPE_OUTPUT=$T/stalled CORSCOPE_INTERVAL=1ms \
    timeout -k 5 60 dotnet "$APPS/UnloadStall/UnloadStall.dll" $rounds > "$T/stall.out" 2> "$T/stall.err" || rc=$?
stall_ms=$(( $(now_ms) - t0 ))
exec 3>&-
assert_eq "stalled pipe: exit status" "$rc" 0
cmp -s "$T/plain.out" "$T/stall.out" || fail "stalled pipe: output differs: $(cat "$T/stall.out")"
grep -q "^corscope: .*has not taken data for" "$T/stall.err" ||
    fail "the recording never stalled (the test proves nothing): $(cat "$T/stall.err")"
assert_eq "stalled pipe: corscope lines on stderr" "$(grep -c '^corscope:' "$T/stall.err")" 1
note "$(grep "^corscope:" "$T/stall.err")"

wait_plain=$(field max_wait_ms "$T/plain.err"); wait_stall=$(field max_wait_ms "$T/stall.err")
gap_plain=$(field max_gap_ms "$T/plain.err"); gap_stall=$(field max_gap_ms "$T/stall.err")
note "longest finalizer wait: ${wait_plain} ms without the profiler, ${wait_stall} ms with the stalled pipe"
note "allocating thread's longest gap: ${gap_plain} ms without, ${gap_stall} ms with the stalled pipe"
note "run time: ${plain_ms} ms without, ${file_ms} ms recording to a file, ${stall_ms} ms to the stalled pipe"
# a stalled callback waits as long as the disk stalls (for good here, 10 s
# with a time-out); noise on this shared machine is tens to hundreds of ms
awk -v w="$wait_stall" 'BEGIN { exit !(w < 1500) }' || fail "finalizers waited ${wait_stall} ms"
awk -v g="$gap_stall" 'BEGIN { exit !(g < 1500) }' || fail "the allocating thread stalled ${gap_stall} ms"
awk -v s="$stall_ms" -v f="$file_ms" -v p="$plain_ms" 'BEGIN { exit !(s <= 1.5 * (f > p ? f : p) + 1500) }' ||
    fail "run time ${stall_ms} ms with the stalled pipe, ${file_ms} ms recording to a file"
