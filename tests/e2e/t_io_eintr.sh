# The profiler's signals never make the program's system calls fail: IoHeavy
# (file writes and reads, a TCP echo over loopback, Thread.Sleep, raw read(2)
# on a pipe counting EINTR) prints exactly the same thing and exits 0 with
# and without the profiler, in cpu and wall mode at 1 ms.
source "$(dirname "$0")/lib.sh"

$(app IoHeavy) 2 > "$T/plain.txt" || fail "IoHeavy failed without the profiler: $(cat "$T/plain.txt")"
grep -q "pipes: .* 0 EINTR, 0 other errors" "$T/plain.txt" || fail "unexpected plain run: $(cat "$T/plain.txt")"
for mode in "-e cpu -i 1ms" "-e wall -i 1ms" "-e wall -i 1ms --sampler suspend"; do
    # shellcheck disable=SC2086
    cs record -q --force $mode -o "$T/io.corscope" -- $(app IoHeavy) 2 > "$T/profiled.txt" ||
        fail "IoHeavy failed under '$mode': $(cat "$T/profiled.txt")"
    diff "$T/plain.txt" "$T/profiled.txt" > "$T/diff.txt" || fail "output differs under '$mode': $(cat "$T/diff.txt")"
    cs check "$T/io.corscope" > /dev/null || fail "check failed under '$mode'"
    note "$mode: identical output ($(wc -l < "$T/plain.txt") lines)"
done
