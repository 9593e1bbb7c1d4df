# What each thread costs the program, bounded and visible: the agent's file
# descriptors (the recording, one perf_event clock per thread) sit above
# 1024, out of the way of the program's low numbers and of select(); they
# take at most a quarter of RLIMIT_NOFILE (past that, threads get POSIX
# timers, and the recording says for how many threads and why); the clock
# of a thread that ends is closed at once, not at the next scan of /proc.
source "$(dirname "$0")/lib.sh"

# dotnet_pid RECORDING: the pid of the program writing it
dotnet_pid() {
    local pid=""
    for _ in $(seq 100); do
        pid=$(cs check "$1" 2> /dev/null | awk '$1 == "pid" { print $2 }') || true
        [ -n "$pid" ] && break
        sleep 0.1
    done
    echo "$pid"
}
# fds PID: "number target" of every open fd
fds() { ls -l "/proc/$1/fd" 2> /dev/null | awk '$(NF - 1) == "->" { print $(NF - 2), $NF }'; }

# 1. placement: every fd of the agent above 1024
"$CORSCOPE" record -q -o "$T/place.corscope" -- $(app ManyThreads) 12 3 > /dev/null &
rec=$!
pid=$(dotnet_pid "$T/place.corscope")
[ -n "$pid" ] || fail "no pid in the recording in progress"
sleep 1.5
fds "$pid" > "$T/place.fds"
rc=0; wait $rec || rc=$?
assert_eq "placement run: status" "$rc" 0
perf=$(grep -c 'perf_event' "$T/place.fds" || true)
low=$(awk '($2 ~ /perf_event/ || $2 ~ /place.corscope$/) && $1 < 1024' "$T/place.fds" | wc -l)
assert_ge "perf_event fds of 12 busy threads" "$perf" 12
assert_eq "agent fds below 1024" "$low" 0
note "placement: $perf perf_event fds and the recording, all at $(awk '$2 ~ /perf_event|place.corscope$/ { print $1 }' "$T/place.fds" | sort -n | head -1) and above"
# the first clocks start low while a thread of the agent grows the table
# (fds.h), and move up once it has: none is left below 1024 (above); that
# thread is not one of the program's, and is not in the recording (when it
# was, it showed as a thread without a name, gone before its name was read;
# every thread of ManyThreads and the runtime lives to the end, named)
cs report -f threads "$T/place.corscope" > "$T/place.threads" 2>&1 || fail "threads report: $(cat "$T/place.threads")"
agent_threads=$(awk 'NR > 2 && NF > 3 && ($NF ~ /^corscope/ || $NF == "-")' "$T/place.threads" | wc -l)
assert_eq "the agent's threads (or unnamed ones) among the recorded" "$agent_threads" 0
started=$(cs check "$T/place.corscope" | grep -o ' sampling_start_ns=[0-9]*' | cut -d= -f2)
[ -n "$started" ] && [ "$started" -gt 0 ] || fail "no sampling_start_ns in the recording"
note "placement: sampling began $((started / 1000)) us after Initialize; the agent's threads not recorded"

# 1b. the first descriptor above 1024 grows the process's descriptor table,
# and in a threaded process the kernel makes that thread wait for an RCU
# grace period: done in Initialize it held the program's main thread 5 to
# 22 ms (agent_init_ns); done by the agent's thread it held every clock back
# as long; a short-lived thread of the agent does it now (fds.h)
strace -f -qq -e trace=fcntl,perf_event_open -o "$T/fcntl.txt" "$CORSCOPE" record -q -o "$T/grow.corscope" -- \
    $(app ManyThreads) 2 1 > /dev/null 2>&1 || fail "record under strace failed"
main=$("$CORSCOPE" check "$T/grow.corscope" | awk '$1 == "pid" { print $2 }')
[ -n "$main" ] || fail "no pid in the recording"
high=$(grep -c 'F_DUPFD_CLOEXEC, 1024' "$T/fcntl.txt" || true)
by_main=$(awk -v m="$main" '$1 == m && /F_DUPFD_CLOEXEC, 1024/' "$T/fcntl.txt" | wc -l)
assert_ge "descriptors moved above 1024" "$high" 1
assert_eq "descriptors moved above 1024 by the program's main thread" "$by_main" 0
note "descriptor table grown off the program's main thread ($high moves, none on the main thread $main)"
# 1c. the first perf_event on a machine that has none makes the kernel
# switch perf's scheduler hooks on and wait for a grace period: corscope
# opens one of its own (a dummy, src/cli/perf_warm.h) while the program
# starts, so that the agent's first clock does not wait; done opening
# (strace writes its lines in order) before the agent's first clock
cli=$(head -1 "$T/fcntl.txt" | awk '{ print $1 }')
warm=$(awk -v p="$cli" '$1 == p && /perf_event_open/ && /PERF_COUNT_SW_DUMMY/ && / = [0-9]+$/ { print NR; exit }' "$T/fcntl.txt")
warm=${warm:-$(awk -v p="$cli" '$1 == p && /perf_event_open resumed/ && / = [0-9]+$/ { print NR; exit }' "$T/fcntl.txt")}
first_clock=$(awk '/PERF_COUNT_SW_TASK_CLOCK/ { print NR; exit }' "$T/fcntl.txt")
[ -n "$warm" ] || fail "corscope opened no perf_event of its own: $(grep perf_event_open "$T/fcntl.txt" | head -3)"
[ -n "$first_clock" ] || fail "the agent opened no perf_event clock"
[ "$warm" -lt "$first_clock" ] || fail "corscope's own perf_event (line $warm) was not open before the agent's first clock (line $first_clock)"
# and none when the agent will not use perf_event clocks
strace -f -qq -e trace=perf_event_open -o "$T/posix.txt" "$CORSCOPE" record -q --cpu-clock posix \
    -o "$T/posix.corscope" -- $(app ManyThreads) 2 1 > /dev/null 2>&1 || fail "record --cpu-clock posix under strace failed"
assert_eq "perf_event_open calls with --cpu-clock posix" "$(grep -c perf_event_open "$T/posix.txt" || true)" 0
note "corscope's own perf_event open before the agent's first clock (strace lines $warm, $first_clock); none with --cpu-clock posix"

# 2. a low fd limit: at most a quarter of it for clocks, the rest of the
# threads on POSIX timers, said in the recording; the program unharmed
dotnet "$APPS/ManyThreads/ManyThreads.dll" 60 1 > "$T/plain.out"
(ulimit -n 128; exec "$CORSCOPE" record -q -o "$T/low.corscope" -- $(app ManyThreads) 60 1 > "$T/low.out") &
rec=$!
pid=$(dotnet_pid "$T/low.corscope")
most=0
while kill -0 "$rec" 2> /dev/null; do
    n=$(fds "$pid" | grep -c perf_event || true)
    [ "$n" -gt "$most" ] && most=$n
    sleep 0.05
done
rc=0; wait $rec || rc=$?
assert_eq "ulimit -n 128: status" "$rc" 0
assert_eq "program's output lines under ulimit -n 128" "$(wc -l < "$T/low.out")" "$(wc -l < "$T/plain.out")"
[ "$most" -le 32 ] || fail "$most perf_event fds open under a limit of 128"
clock=$(cs check "$T/low.corscope" | awk '$1 == "clock" { $1 = ""; print }')
echo "$clock" | grep -q "posix-cpu-timer for [0-9]* of [0-9]* threads (the agent's share of the file descriptor limit" ||
    fail "the recording does not say which threads fell back: $clock"
note "ulimit -n 128: at most $most perf_event fds; clock:$clock"

# 3. threads that end: their clocks closed at once
"$CORSCOPE" record -q -o "$T/churn.corscope" -- $(app ThreadChurn) 1000 > /dev/null &
rec=$!
pid=$(dotnet_pid "$T/churn.corscope")
: > "$T/churn.txt"
while kill -0 "$rec" 2> /dev/null; do
    n=$(fds "$pid" | grep -c perf_event || true)
    t=$(ls "/proc/$pid/task" 2> /dev/null | wc -l) || true
    [ "$t" -gt 0 ] && echo "$n $t" >> "$T/churn.txt"
    sleep 0.05
done
rc=0; wait $rec || rc=$?
assert_eq "thread churn: status" "$rc" 0
excess=$(awk '{ d = $1 - $2; s += (d > 0 ? d : 0); n++ } END { printf "%.1f", n ? s / n : 0 }' "$T/churn.txt")
note "thread churn: $(wc -l < "$T/churn.txt") looks; perf_event fds beyond live threads: $excess on average"
awk -v e="$excess" 'BEGIN { exit !(e <= 2) }' || fail "$excess perf_event fds of ended threads open on average"
