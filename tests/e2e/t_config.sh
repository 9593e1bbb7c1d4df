# A bad setting in the environment: the agent says so in one `corscope:` line,
# declines to load, and the program runs exactly as it does without it (same
# output, same exit status, no recording).
source "$(dirname "$0")/lib.sh"

agent=$ROOT/build/libcorscope.so
plain_out=$($(app CpuShares) 0.2 1 0 0 | sed 's/[0-9.]*$//')
for bad in "CORSCOPE_INTERVAL=abc" "CORSCOPE_INTERVAL=10" "CORSCOPE_INTERVAL=5s" \
           "CORSCOPE_EVENT=gpu" "CORSCOPE_MAX_DEPTH=-1" "CORSCOPE_SAMPLER=magic" "CORSCOPE_LOG=loud" \
           "CORSCOPE_SIGNAL=SIGSEGV" "CORSCOPE_SIGNAL=34" "CORSCOPE_CPU_CLOCK=tsc" \
           "CORSCOPE_CPU_PERIOD=sometimes"; do
    rc=0
    env CORECLR_ENABLE_PROFILING=1 CORECLR_PROFILER='{14DE3B91-04FE-4EFB-B588-CD7BB380C74A}' \
        CORECLR_PROFILER_PATH="$agent" CORSCOPE_OUTPUT="$T/bad.corscope" "$bad" \
        $(app CpuShares) 0.2 1 0 0 > "$T/out.txt" 2> "$T/err.txt" || rc=$?
    assert_eq "$bad: exit status" "$rc" 0
    assert_eq "$bad: program output" "$(sed 's/[0-9.]*$//' "$T/out.txt")" "$plain_out"
    lines=$(grep -c '^corscope: ' "$T/err.txt" || true)
    assert_eq "$bad: corscope lines on stderr" "$lines" 1
    grep -q "^corscope: ${bad%%=*}=" "$T/err.txt" || fail "$bad: message does not name the setting: $(cat "$T/err.txt")"
    [ ! -e "$T/bad.corscope" ] || fail "$bad: a recording was written"
    note "$bad -> $(cat "$T/err.txt")"
done

# %p in the output path is the process id, for programs started by hand
env CORECLR_ENABLE_PROFILING=1 CORECLR_PROFILER='{14DE3B91-04FE-4EFB-B588-CD7BB380C74A}' \
    CORECLR_PROFILER_PATH="$agent" CORSCOPE_OUTPUT="$T/by-hand-%p.corscope" \
    $(app Lifecycle) return
ls "$T"/by-hand-[0-9]*.corscope > /dev/null 2>&1 || fail "no by-hand-PID.corscope"
cs check "$T"/by-hand-[0-9]*.corscope > /dev/null
