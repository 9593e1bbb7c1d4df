# Faults around the program: a full disk (RLIMIT_FSIZE, and a tiny tmpfs
# when this machine lets us mount one), SIGTERM sent to `record`, a closed
# standard output.  The program's output and exit status stay what they are
# without the profiler; the recording is readable and says it stopped; the
# CLI says what went wrong in one `corscope:` line and leaves no partial
# report behind.
source "$(dirname "$0")/lib.sh"

dotnet "$APPS/CpuShares/CpuShares.dll" 2 > "$T/plain.txt"
plain_lines=$(wc -l < "$T/plain.txt")

# 1. the recording's file system limit: 8 KiB (ulimit -f counts KiB).  The
# runtime cannot start at all under a file size limit with its W^X memory
# mapping (it sizes a memfd with ftruncate), so these runs, with and without
# the profiler, turn W^X off.  Every stream of these runs goes to a file of
# our own: an inherited stderr (a CI log already past 8 KiB) would raise
# SIGXFSZ at the program's first write to it.
rc=0
(ulimit -f 8; DOTNET_EnableWriteXorExecute=0 dotnet "$APPS/CpuShares/CpuShares.dll" 2 > "$T/plain-fsize.txt" \
    2> "$T/plain-fsize-err.txt") ||
    fail "CpuShares does not run under ulimit -f 8 even without the profiler"
(ulimit -f 8; DOTNET_EnableWriteXorExecute=0 cs record -q -i 1ms -o "$T/full.corscope" -- $(app CpuShares) 2 \
    > "$T/out.txt" 2> "$T/err.txt") || rc=$?
assert_eq "RLIMIT_FSIZE: program's exit status" "$rc" 0
assert_eq "RLIMIT_FSIZE: program's output lines" "$(wc -l < "$T/out.txt")" "$plain_lines"
size=$(stat -c %s "$T/full.corscope")
[ "$size" -le $((8 * 1024)) ] || fail "recording grew past the limit: $size bytes"
rc=0; cs check "$T/full.corscope" > "$T/check.txt" || rc=$?
[ "$rc" -eq 3 ] || [ "$rc" -eq 0 ] || fail "check of the cut recording: status $rc: $(cat "$T/check.txt")"
grep -q "write_errors=[1-9]" "$T/check.txt" || grep -q "status       truncated" "$T/check.txt" ||
    fail "the recording does not say it stopped: $(grep -E 'status|counters' "$T/check.txt")"
cs report -f top "$T/full.corscope" > /dev/null 2>&1 || fail "report of the cut recording failed"
note "RLIMIT_FSIZE 8 KiB: program unharmed, recording $size bytes, $(awk '/^  status/ { print $2 }' "$T/check.txt")"

# report past the limit: one line, non-zero, nothing left behind
rc=0
(ulimit -f 4; cs report -f flamegraph -o "$T/big.html" "$T/full.corscope" 2> "$T/rerr.txt") || rc=$?
[ "$rc" -ne 0 ] || fail "report past RLIMIT_FSIZE succeeded"
assert_eq "report past RLIMIT_FSIZE: stderr lines (warnings about the recording aside)" "$(grep -vc "^corscope: warning:" "$T/rerr.txt")" 1
grep -q "^corscope: cannot write .*big.html: File too large" "$T/rerr.txt" || fail "report: $(cat "$T/rerr.txt")"
[ -z "$(ls "$T" | grep big.html)" ] || fail "a partial report was left: $(ls "$T" | grep big.html)"

# 2. a tiny file system, when we may mount one
mkdir -p "$T/tiny"
if mount -t tmpfs -o size=32k tmpfs "$T/tiny" 2> /dev/null; then
    rc=0
    cs record -q -i 1ms -o "$T/tiny/r.corscope" -- $(app CpuShares) 2 > "$T/out.txt" 2> "$T/err.txt" || rc=$?
    assert_eq "full tmpfs: program's exit status" "$rc" 0
    assert_eq "full tmpfs: program's output lines" "$(wc -l < "$T/out.txt")" "$plain_lines"
    rc=0; cs check "$T/tiny/r.corscope" > "$T/check.txt" || rc=$?
    [ "$rc" -eq 3 ] || [ "$rc" -eq 0 ] || fail "check on the full tmpfs: status $rc"
    rc=0; cs report -f flamegraph -o "$T/tiny/r.html" "$T/tiny/r.corscope" 2> "$T/rerr.txt" || rc=$?
    [ "$rc" -ne 0 ] || fail "report onto a full tmpfs succeeded"
    grep -q "^corscope: cannot write .*No space left on device" "$T/rerr.txt" || fail "report: $(cat "$T/rerr.txt")"
    [ -z "$(ls "$T/tiny" | grep -v '^r.corscope$')" ] || fail "left behind on the full disk: $(ls "$T/tiny")"
    umount "$T/tiny"
    note "full 32 KiB tmpfs: program unharmed, recording readable, report refused in one line"
else
    note "tmpfs: cannot mount here, skipped (RLIMIT_FSIZE covers the full disk)"
fi

# 3. SIGTERM to record: forwarded, status 128+15, recording readable
# (record itself, not the cs function: $! would be the function's subshell,
# and the signal would never reach record)
"$CORSCOPE" record -q -o "$T/term.corscope" -- $(app Lifecycle) spin > "$T/spin.txt" 2>&1 &
pid=$!
for _ in $(seq 100); do grep -q ready "$T/spin.txt" 2> /dev/null && break; sleep 0.1; done
sleep 0.5
kill -TERM "$pid"
rc=0; wait "$pid" || rc=$?
assert_eq "SIGTERM: record's status" "$rc" 143
rc=0; cs check "$T/term.corscope" > "$T/check.txt" || rc=$?
assert_eq "check after SIGTERM (the program does not handle it: the agent closes the recording)" "$rc" 0
grep -q "^  ended by     SIGTERM" "$T/check.txt" || fail "SIGTERM: $(grep -E 'ended|status' "$T/check.txt")"
note "SIGTERM: status 143, recording $(awk '/^  status/ { print $2 }' "$T/check.txt"), ended by SIGTERM"

# 4. standard output closed: the program sees what it sees without us
rc_plain=0; (dotnet "$APPS/CpuShares/CpuShares.dll" 0.3 >&- 2> /dev/null) 2> /dev/null || rc_plain=$?
rc=0; cs record -q -o "$T/closed.corscope" -- $(app CpuShares) 0.3 >&- 2> /dev/null || rc=$?
assert_eq "closed stdout: exit status as without the profiler" "$rc" "$rc_plain"
rc_check=0; cs check "$T/closed.corscope" > "$T/check.txt" || rc_check=$?
[ "$rc_check" -eq 0 ] || [ "$rc_check" -eq 3 ] || fail "closed stdout: check status $rc_check"
note "closed stdout: status $rc as without the profiler (the runtime aborts writing to it), recording $(awk '/^  status/ { print $2 }' "$T/check.txt")"

# 5. after the first write error the agent stops: the clocks are gone (no
# perf_event fd left open, no more signals), its thread no longer runs, it
# said so once, and the program finishes as without the profiler
perf_fds() { local n=0 f; for f in /proc/$1/fd/*; do [ "$(readlink "$f" 2> /dev/null)" = "anon_inode:[perf_event]" ] && n=$((n + 1)); done; echo $n; }
agent_ticks() { local d; for d in /proc/$1/task/*; do [ "$(cat "$d/comm" 2> /dev/null)" = corscope ] && awk '{ print $14 + $15 }' "$d/stat"; done; true; }
(ulimit -f 8; DOTNET_EnableWriteXorExecute=0 CORECLR_ENABLE_PROFILING=1 \
    CORECLR_PROFILER='{14DE3B91-04FE-4EFB-B588-CD7BB380C74A}' CORECLR_PROFILER_PATH="$ROOT/build/libcorscope.so" \
    CORSCOPE_OUTPUT="$T/stop.corscope" CORSCOPE_INTERVAL=1ms exec dotnet "$APPS/CpuShares/CpuShares.dll" 4 \
    > "$T/stop.out" 2> "$T/stop.err") &
pid=$!
# measured once the agent has said the write failed (it halts then), not
# after a fixed time: beside two CPU hogs the program's start and the first
# flush came late enough for the halt to fall inside the measured second
sleep 2
for _ in $(seq 100); do grep -q "cannot write" "$T/stop.err" 2> /dev/null && break; sleep 0.1; done
sleep 0.2
fds=$(perf_fds $pid); ticks0=$(agent_ticks $pid); sleep 1; ticks1=$(agent_ticks $pid)
rc=0; wait $pid || rc=$?
assert_eq "write error: program's exit status" "$rc" 0
assert_eq "write error: program's output lines" "$(wc -l < "$T/stop.out")" "$plain_lines"
assert_eq "write error: perf_event fds still open" "$fds" 0
[ -n "$ticks0" ] && [ -n "$ticks1" ] || fail "write error: the agent's thread is gone"
[ $((ticks1 - ticks0)) -le 1 ] || fail "write error: the agent's thread still ran $((ticks1 - ticks0)) ticks in 1 s"
assert_eq "write error: corscope lines on stderr" "$(grep -c '^corscope:' "$T/stop.err")" 1
grep -q "^corscope: cannot write .*File too large; the recording stops here" "$T/stop.err" || fail "write error: $(cat "$T/stop.err")"
rc=0; cs check "$T/stop.corscope" > "$T/check.txt" 2>&1 || rc=$?
[ "$rc" -eq 0 ] || [ "$rc" -eq 3 ] || fail "write error: the prefix is not readable: $(cat "$T/check.txt")"
note "write error: clocks off (0 perf_event fds), agent thread idle ($((ticks1 - ticks0)) ticks in 1 s), said once, prefix readable"
