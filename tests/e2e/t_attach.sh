# Attach to a running ASP.NET Core service (tests/apps/AttachService) under a
# bounded load on the loopback, ten times in a row, ATTACH_SECONDS each
# (default 2; the issue's 5 with ATTACH_SECONDS=5), and detach each time:
#   - every response of the load is correct, before, during and after;
#   - after each detach the service's CPU per request is back at the
#     unprofiled level (its own measure, which the shared machine's other
#     work does not move; the latency is reported), the agent's thread is gone, no descriptor is left open, the library is
#     mapped once (it stays, -z nodelete), and the service's own output is
#     exactly what it prints without corscope;
#   - each recording is complete, says it was attached, lists the methods
#     compiled before the attach, and its report names the service's method
#     (Work.Checksum, compiled and tiered up before any attach).
# Then: ps, -e wall and --sampler suspend attached, Ctrl-C and a killed
# corscope (the agent detaches on its own), the refusals, and -d with the
# status line in launch mode.
source "$(dirname "$0")/lib.sh"

D=${ATTACH_SECONDS:-2}
CYCLES=${ATTACH_CYCLES:-10}
RATE=100
SVC="$(app AttachService)"

now_ms() { date +%s%3N; }
tasks_named() { cat /proc/"$1"/task/*/comm 2> /dev/null | grep -c "^$2\$" || true; }
# descriptors the agent could leave: perf_event clocks, Unix sockets (the
# control line), /proc/self/maps (kept open to ask for one mapping); the
# load's TCP connections come and go
perf_fds() { find /proc/"$1"/fd -lname 'anon_inode:\[perf_event\]' 2> /dev/null | wc -l; }
maps_fds() { find /proc/"$1"/fd -lname '/proc/*/maps' 2> /dev/null | wc -l; }
unix_fds() {
    local inodes
    inodes=$(find /proc/"$1"/fd -lname 'socket:*' -printf '%l\n' 2> /dev/null | tr -dc '0-9\n')
    awk 'FNR == NR { want[$1] = 1; next } FNR > 1 && ($7 in want) { n++ } END { print n + 0 }' \
        <(echo "$inodes") /proc/net/unix
}
fds() { echo "$(perf_fds "$1") perf, $(unix_fds "$1") unix, $(maps_fds "$1") maps"; }

# a service whose SIGINT is not ignored (a background job of a script has
# it ignored, which the runtime keeps)
start_service() {
    python3 -c 'import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_DFL)
os.execvp(sys.argv[1], sys.argv[1:])' "$@" &
}

: > "$T/svc.out"
start_service $SVC serve > "$T/svc.out" 2> "$T/svc.err"
SVC_PID=$!
# every process this test starts, ended however the test ends
PIDS=""
cleanup() {
    # shellcheck disable=SC2086
    kill $SVC_PID $PIDS 2> /dev/null || true
    rm -rf "$T"
}
trap cleanup EXIT
for _ in $(seq 100); do grep -q listening "$T/svc.out" && break; sleep 0.1; done
URL=$(awk '/^listening on/ { print $3 }' "$T/svc.out")
[ -n "$URL" ] || fail "the service did not start: $(cat "$T/svc.err")"

# ps: the service, its runtime, no profiler
cs ps > "$T/ps.txt"
awk -v p="$SVC_PID" '$1 == p && $2 ~ /^[0-9]+\./ && $3 == "-"' "$T/ps.txt" | grep -q AttachService ||
    fail "ps does not list the service as attachable: $(cat "$T/ps.txt")"

fd_base=$(fds "$SVC_PID")
# the load runs until the cycles are done (SIGTERM), at most this long
total_s=$((4 + CYCLES * (D + 15)))
dotnet "$APPS/AttachService/AttachService.dll" load "$URL" "$total_s" "$RATE" > "$T/load.out" 2> "$T/load.err" &
LOAD_PID=$!
PIDS="$PIDS $LOAD_PID"
load_start=$(now_ms)
sleep 4
: > "$T/phases"
for i in $(seq "$CYCLES"); do
    t_attach=$(now_ms)
    rc=0
    cs record -q -p "$SVC_PID" -d "${D}s" -o "$T/a$i.corscope" 2> "$T/a$i.err" || rc=$?
    t_detached=$(now_ms)
    [ "$rc" = 0 ] || fail "attach $i: exit $rc: $(cat "$T/a$i.err")"
    echo "$i $t_attach $t_detached" >> "$T/phases"
    cs check "$T/a$i.corscope" > "$T/a$i.check" || fail "attach $i: check failed: $(cat "$T/a$i.check")"
    grep -q "status       complete" "$T/a$i.check" || fail "attach $i: recording not complete"
    grep -q "mode         attached" "$T/a$i.check" || fail "attach $i: recording not marked attached"
    listed=$(grep -o 'methods_listed_at_attach=[0-9]*' "$T/a$i.check" | cut -d= -f2)
    assert_ge "attach $i: methods listed at the attach" "${listed:-0}" 100
    [ "$(tasks_named "$SVC_PID" corscope)" = 0 ] || fail "attach $i: the agent's thread is still there"
    [ "$(fds "$SVC_PID")" = "$fd_base" ] ||
        fail "attach $i: descriptors were $fd_base before the attaches, now $(fds "$SVC_PID")"
    sleep 2
done
maps=$(grep -c 'libcorscope\.so' /proc/"$SVC_PID"/maps || true)
note "$CYCLES attaches of ${D} s; libcorscope.so mappings now: $maps; descriptors $fd_base -> $(fds "$SVC_PID")"
[ "$maps" -le 6 ] || fail "libcorscope.so mapped $maps times after $CYCLES attaches (loaded again each time?)"
kill -TERM "$LOAD_PID"
wait "$LOAD_PID" || fail "the load saw wrong or failed responses: $(tail -1 "$T/load.out")"

# every response correct, and as many as were sent
read -r _ answered errors sent < <(grep '^total' "$T/load.out")
assert_eq "wrong or failed responses" "$errors" 0
assert_eq "responses" "$answered" "$sent"
assert_ge "requests sent" "$sent" $(((4 + CYCLES * D) * RATE))

# latency and the service's own CPU time per request: the median of the
# 100 ms windows' medians, unprofiled (the 2 s before the first attach, the
# load warmed up), while attached, and in the 1.6 s after each detach
awk '
    FNR == NR { attach[$1] = $2; detached[$1] = $3; n = $1; next }
    $1 == "w" {
        t = $2
        if (t >= attach[1] - 2000 && t < attach[1]) { bl[nb] = $5; bc[nb++] = $8 }
        for (i = 1; i <= n; i++) {
            if (t >= detached[i] + 200 && t < detached[i] + 1800) { al[i, na[i]] = $5; ac[i, na[i]++] = $8 }
            if (t >= attach[i] + 500 && t < detached[i] - 500) { dl[i, nd[i]] = $5; dc[i, nd[i]++] = $8 }
        }
    }
    function median(arr, key, count,   v, i, j, tmp) {
        for (i = 0; i < count; i++) v[i] = key == "" ? arr[i] : arr[key, i]
        for (i = 1; i < count; i++) for (j = i; j > 0 && v[j - 1] > v[j]; j--) { tmp = v[j]; v[j] = v[j - 1]; v[j - 1] = tmp }
        return count ? v[int(count / 2)] : -1
    }
    END {
        printf "base %d %d\n", median(bl, "", nb), median(bc, "", nb)
        for (i = 1; i <= n; i++)
            printf "cycle %d %d %d %d %d\n", i, median(dl, i, nd[i]), median(al, i, na[i]),
                median(dc, i, nd[i]), median(ac, i, na[i])
    }' "$T/phases" "$T/load.out" > "$T/latency"
read -r _ base base_cpu < <(grep '^base' "$T/latency")
[ "$base" -gt 0 ] && [ "$base_cpu" -gt 0 ] || fail "no unprofiled latency measured"
worst=0 worst_cpu=0
while read -r _ i during after during_cpu after_cpu; do
    [ "$after" -gt 0 ] && [ "$after_cpu" -gt 0 ] || fail "cycle $i: nothing measured after the detach"
    # the service's CPU per request is back (the machine's other work moves
    # the wall-clock latency, not this) ...
    awk -v a="$after_cpu" -v b="$base_cpu" 'BEGIN { exit !(a <= 1.5 * b) }' ||
        fail "cycle $i: CPU per request after the detach ${after_cpu} ns, unprofiled ${base_cpu} ns (attached ${during_cpu} ns)"
    # ... and no request hangs: the wall-clock latency moves with the shared
    # machine's other work (bench/attach.sh measures it), so only a stall
    # of a second is a failure here
    [ "$after" -le $((base + 1000000)) ] ||
        fail "cycle $i: median latency after the detach ${after} us, unprofiled ${base} us (attached ${during} us)"
    [ "$after" -gt "$worst" ] && worst=$after
    [ "$after_cpu" -gt "$worst_cpu" ] && worst_cpu=$after_cpu
done < <(grep '^cycle' "$T/latency")
note "latency (median of 100 ms medians): unprofiled $base us; after each detach, worst $worst us; attached: $(awk '$1 == "cycle" { printf "%s ", $3 }' "$T/latency")us"
note "service CPU per request: unprofiled $base_cpu ns; after each detach, worst $worst_cpu ns; attached: $(awk '$1 == "cycle" { printf "%s ", $5 }' "$T/latency")ns"

# the method compiled before any attach is named in the attached reports
named=0 per_cycle="" unknown=0 samples=0
for i in $(seq "$CYCLES"); do
    cs report -f collapsed --weight samples "$T/a$i.corscope" > "$T/a$i.collapsed" 2> /dev/null
    n=$(collapsed_sum "$T/a$i.collapsed" 'AttachService\.Work\.Checksum')
    named=$((named + n)) per_cycle="$per_cycle $n"
    unknown=$((unknown + $(collapsed_sum "$T/a$i.collapsed" '\[unknown\]')))
    samples=$((samples + $(collapsed_total "$T/a$i.collapsed")))
done
note "Work.Checksum's samples per attach:$per_cycle (of $samples samples; $unknown with an unnamed frame)"
# about 5 a 2 s attach (3 to 7 measured, of ~19 samples each): one an
# attach on average keeps the bound far below the count's spread (9 of 3
# attaches was once held against a bound of 10 made for 10 attaches)
assert_ge "samples in AttachService.Work.Checksum over the $CYCLES attached recordings" "$named" "$CYCLES"
cs report -f top "$T/a1.corscope" > "$T/a1.top" 2> /dev/null

# wall mode and the stop-the-world sampler, attached
for mode in "-e wall" "--sampler suspend -e wall"; do
    # shellcheck disable=SC2086
    cs record -q -p "$SVC_PID" -d 1s $mode -o "$T/m.corscope" --force 2> "$T/m.err" ||
        fail "attached with $mode: $(cat "$T/m.err")"
    cs report -f collapsed --weight samples "$T/m.corscope" > "$T/m.collapsed" 2> /dev/null
    assert_ge "attached with $mode: samples" "$(collapsed_total "$T/m.collapsed")" 10
done

# Ctrl-C ends an attached recording; the service runs on (corscope runs
# without `timeout` here, so that the signals reach it)
"$CORSCOPE" record -p "$SVC_PID" -o "$T/int.corscope" > /dev/null 2> "$T/int.err" &
CS_PID=$!
PIDS="$PIDS $CS_PID"
sleep 1.5
# a second attach meanwhile is refused in one line
rc=0; cs record -p "$SVC_PID" -d 1s -o "$T/second.corscope" 2> "$T/second.err" || rc=$?
assert_eq "a second attach: exit status" "$rc" 1
grep -q "already being recorded by corscope" "$T/second.err" || fail "second attach: $(cat "$T/second.err")"
[ "$(wc -l < "$T/second.err")" = 1 ] || fail "second attach: more than one line: $(cat "$T/second.err")"
kill -INT "$CS_PID"
( trap - EXIT; sleep 30; kill -KILL "$CS_PID" 2> /dev/null ) &
WATCHDOG=$!
rc=0; wait "$CS_PID" || rc=$?
kill "$WATCHDOG" 2> /dev/null || true
assert_eq "Ctrl-C on an attached recording: exit status" "$rc" 0
cs check "$T/int.corscope" | grep -q "status       complete" || fail "Ctrl-C: recording not complete"
grep -q "detached from process $SVC_PID" "$T/int.err" || fail "Ctrl-C: no detach: $(cat "$T/int.err")"

# corscope killed: the agent closes the recording and detaches on its own
"$CORSCOPE" record -q -p "$SVC_PID" -o "$T/killed.corscope" 2> /dev/null &
CS_PID=$!
sleep 1.5
kill -KILL "$CS_PID"; wait "$CS_PID" 2> /dev/null || true
for _ in $(seq 50); do [ "$(tasks_named "$SVC_PID" corscope)" = 0 ] && break; sleep 0.1; done
[ "$(tasks_named "$SVC_PID" corscope)" = 0 ] || fail "the agent did not stop when corscope was killed"
cs check "$T/killed.corscope" | grep -q "status       complete" ||
    fail "corscope killed: the agent did not close the recording"
rc=0; cs record -q -p "$SVC_PID" -d 0.5s -o "$T/again.corscope" 2> "$T/again.err" || rc=$?
assert_eq "attach after a killed corscope" "$rc" 0

# the service's own output is what it prints without corscope
kill -TERM "$SVC_PID"
rc=0; wait "$SVC_PID" || rc=$?
assert_eq "the service's exit status" "$rc" 0
printf 'listening on %s\nstopped\n' "$URL" > "$T/svc.expected"
cmp -s "$T/svc.expected" "$T/svc.out" || fail "the service's output changed: $(head -c 300 "$T/svc.out")"
[ ! -s "$T/svc.err" ] || fail "the service wrote to stderr: $(head -c 300 "$T/svc.err")"

# refusals, one line each
sleep 30 & SLEEP_PID=$!
PIDS="$PIDS $SLEEP_PID"
rc=0; cs record -p "$SLEEP_PID" -d 1s 2> "$T/r1.err" || rc=$?
kill "$SLEEP_PID"
assert_eq "not .NET: exit status" "$rc" 1
grep -q "is not a .NET program" "$T/r1.err" || fail "not .NET: $(cat "$T/r1.err")"
DOTNET_EnableDiagnostics=0 $SVC serve > /dev/null 2>&1 &
NODIAG=$!
# another profiler, loaded at startup (corscope's agent under another name)
cp "$ROOT/build/libcorscope.so" "$T/libother.so"
CORECLR_ENABLE_PROFILING=1 CORECLR_PROFILER='{14DE3B91-04FE-4EFB-B588-CD7BB380C74A}' \
    CORECLR_PROFILER_PATH="$T/libother.so" CORSCOPE_OUTPUT="$T/other.corscope" $SVC serve > /dev/null 2>&1 &
OTHER=$!
PIDS="$PIDS $NODIAG $OTHER"
sleep 2.5
rc=0; cs record -p "$NODIAG" -d 1s 2> "$T/r2.err" || rc=$?
assert_eq "no diagnostics socket: exit status" "$rc" 1
grep -q "without a diagnostics socket" "$T/r2.err" || fail "no diagnostics: $(cat "$T/r2.err")"
rc=0; cs record -p "$OTHER" -d 1s 2> "$T/r3.err" || rc=$?
assert_eq "a profiler loaded at startup: exit status" "$rc" 1
grep -q "already has a profiler loaded (libother.so)" "$T/r3.err" || fail "profiler already loaded: $(cat "$T/r3.err")"
if [ "$(id -u)" = 0 ] && id nobody > /dev/null 2>&1; then
    rc=0; runuser -u nobody -- "$CORSCOPE" record -p "$NODIAG" -d 1s 2> "$T/r4.err" || rc=$?
    assert_eq "another user's process: exit status" "$rc" 1
    grep -q "belongs to another user" "$T/r4.err" || fail "another user: $(cat "$T/r4.err")"
fi
for f in r1 r2 r3; do [ "$(wc -l < "$T/$f.err")" = 1 ] || fail "$f: not one line: $(cat "$T/$f.err")"; done
kill "$NODIAG" "$OTHER"; wait "$NODIAG" "$OTHER" 2> /dev/null || true

# launched with -d: the recording ends on time, the program gets SIGTERM and
# ends as it does on its own; corscope exits 0.  No status line without a terminal.
# (-d 3s: the service must have installed its SIGTERM handler by then; at 1s a
# loaded machine -- load average 25 -- sometimes had not started it yet, and
# the default action ended it before it could print "stopped")
t0=$(now_ms)
rc=0; cs record -d 3s -o "$T/launch.corscope" -- $SVC serve > "$T/launch.out" 2> "$T/launch.err" || rc=$?
took=$(( $(now_ms) - t0 ))
assert_eq "launched with -d 3s: exit status" "$rc" 0
[ "$took" -lt 17000 ] || fail "launched with -d 3s: took $took ms"
grep -q "^stopped$" "$T/launch.out" || fail "the program did not end on SIGTERM: $(cat "$T/launch.out")"
cs check "$T/launch.corscope" | grep -q "status       complete" || fail "launched -d: not complete"
if grep -q $'\r\|\e\[' "$T/launch.err"; then fail "a status line on a file: $(cat -v "$T/launch.err" | head -3)"; fi

# launched, Ctrl-C (SIGINT to the terminal's process group) reaches the
# program, which ends as it does on its own; the recording is complete
python3 -c 'import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_DFL)
os.setsid()
os.execvp(sys.argv[1], sys.argv[1:])' "$CORSCOPE" record -q -o "$T/ctrlc.corscope" -- $SVC serve \
    > "$T/ctrlc.out" 2> "$T/ctrlc.err" &
CS_PID=$!
PIDS="$PIDS $CS_PID"
for _ in $(seq 100); do grep -q listening "$T/ctrlc.out" && break; sleep 0.1; done
sleep 0.5
kill -INT -- -"$CS_PID"
( trap - EXIT; sleep 30; kill -KILL -- -"$CS_PID" 2> /dev/null ) &
WATCHDOG=$!
rc=0; wait "$CS_PID" || rc=$?
kill "$WATCHDOG" 2> /dev/null || true
assert_eq "launched, Ctrl-C: exit status (the program's)" "$rc" 0
grep -q "^stopped$" "$T/ctrlc.out" || fail "launched, Ctrl-C: the program did not end as on its own"
cs check "$T/ctrlc.corscope" | grep -q "status       complete" || fail "launched, Ctrl-C: not complete"

# on a terminal (script gives one): the status line on its own bottom row;
# the program's output, without our sequences, is intact.  script's own
# input is /dev/null: given the terminal this test may run on, script puts
# it in raw mode, and from the background process group run.sh's timeout
# makes that stops the whole test (SIGTTOU) until the timeout kills it
if command -v script > /dev/null; then
    script -qc "stty rows 30 cols 120; $CORSCOPE record -d 3s -o $T/tty.corscope -- $SVC serve" /dev/null \
        < /dev/null > "$T/tty.raw"
    grep -q 'samples  [0-9]* events' "$T/tty.raw" || fail "no status line on a terminal"
    # drop every status draw (save cursor ... restore cursor) and the region settings
    sed -e 's/\x1b7[^\x1b]*\x1b\[[0-9;]*H\x1b\[2K\(\x1b\[7m[^\x1b]*\x1b\[0m\)\?\x1b8//g' \
        -e 's/\x1b7\x1b\[[0-9;]*r\x1b8//g; s/\x1b\[1A//; s/\x1b\[?1h\x1b=//g; s/\r//g' "$T/tty.raw" > "$T/tty.txt"
    grep -q "^listening on http" "$T/tty.txt" || fail "terminal: the program's line was garbled: $(cat -v "$T/tty.txt" | head -5)"
    grep -q "^stopped$" "$T/tty.txt" || fail "terminal: the program's last line was garbled: $(cat -v "$T/tty.txt" | head -5)"
    grep -q "^corscope: [0-9.]* s, " "$T/tty.txt" || fail "terminal: no summary line"
    if grep -q "samples  [0-9]* events" "$T/tty.txt"; then fail "terminal: status text left in the output: $(cat -v "$T/tty.txt")"; fi
    note "status line on a terminal: $(grep -o 'corscope: [0-9:]*  [0-9]* samples' "$T/tty.raw" | tail -1)"
fi

# the agent built with ASan and UBSan, attached three times to a service
# that has the sanitizer's runtime loaded: nothing used after a detach freed
# it, nothing freed twice across the attaches (make asan-programs)
ASAN_CS=$ROOT/build/asan/corscope
if [ -x "$ASAN_CS" ] && [ -f "$ROOT/build/asan/libcorscope.so" ]; then
    export ASAN_OPTIONS=detect_leaks=0:handle_segv=0:handle_sigbus=0:handle_sigfpe=0:allow_user_segv_handler=1:use_sigaltstack=0:halt_on_error=1:exitcode=86
    export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
    LD_PRELOAD=$(gcc -print-file-name=libasan.so) start_service $SVC serve > "$T/asvc.out" 2> "$T/asvc.err"
    SVC_PID=$!
    for _ in $(seq 200); do grep -q listening "$T/asvc.out" && break; sleep 0.1; done
    URL=$(awk '/^listening on/ { print $3 }' "$T/asvc.out")
    [ -n "$URL" ] || fail "the sanitized service did not start: $(head -5 "$T/asvc.err")"
    dotnet "$APPS/AttachService/AttachService.dll" load "$URL" 12 50 > "$T/aload.out" 2>&1 &
    LOAD_PID=$!
    PIDS="$PIDS $LOAD_PID"
    for i in 1 2 3; do
        rc=0
        timeout -k 5 120 "$ASAN_CS" record -q -p "$SVC_PID" -d 1s -o "$T/asan$i.corscope" --force \
            2> "$T/asan$i.err" || rc=$?
        assert_eq "sanitized attach $i: exit status" "$rc" 0
        sleep 1
    done
    wait "$LOAD_PID" || fail "the load of the sanitized service saw errors: $(tail -1 "$T/aload.out")"
    kill -TERM "$SVC_PID"
    rc=0; wait "$SVC_PID" || rc=$?
    if grep -Eq "ERROR: AddressSanitizer|runtime error:" "$T/asvc.err" "$T"/asan*.err; then
        fail "sanitizer report: $(grep -Eh -m3 "ERROR: AddressSanitizer|runtime error:" "$T/asvc.err" "$T"/asan*.err)"
    fi
    assert_eq "the sanitized service's exit status" "$rc" 0
    note "3 attaches of the ASan+UBSan agent: no report"
fi
