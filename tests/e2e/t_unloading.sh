# Code that is unloaded while it is being profiled (tests/apps/Unloading):
# methods emitted into collectible assemblies and DynamicMethods, each run
# for a few milliseconds and dropped, a GC after every round, so that the
# runtime reuses their code addresses, FunctionIDs and ModuleIDs.  The
# program must run as without the profiler (it once crashed it: names were
# asked of freed ids), and each sample must be named by the method that was
# running, not by one that held the same id before: the CPU shares of the
# heavy and light methods (3:1 in iterations) match the program's own
# measurement.
source "$(dirname "$0")/lib.sh"

# the share of each of the four among the four, and of heavy in heavy+light
# of one kind (the stop-the-world sampler does not see DynamicMethods: the
# runtime's stack walk for profilers skips them)
shares() { # top.txt truth.txt names...
    local top=$1 truth=$2; shift 2
    local sum=0 tsum=0 m
    for m in "$@"; do
        sum=$(awk -v a="$sum" -v b="$(top_total "$top" "$m")" 'BEGIN { print a + b }')
        tsum=$(awk -v a="$tsum" -v b="$(awk -v m="$m" '$2 == m { print $3 }' "$truth")" 'BEGIN { print a + b }')
    done
    for m in "$@"; do
        local v t
        v=$(awk -v v="$(top_total "$top" "$m")" -v s="$sum" 'BEGIN { printf "%.2f", s ? 100 * v / s : 0 }')
        t=$(awk -v m="$m" -v s="$tsum" '$2 == m { printf "%.2f", 100 * $3 / s }' "$truth")
        assert_near "$m share among {$*}" "$v" "$t" "$tolerance"
    done
}

rounds=250
$(app Unloading) 20 > "$T/plain.txt" || fail "the program fails without the profiler"
for sampler in signal suspend; do
    note "sampler $sampler"
    # the signal sampler's perf_event clock by name (the sample count below
    # is its rate; at 1 ms the agent may choose POSIX timers: t_cpu_clock_choice)
    clock=()
    [ "$sampler" = signal ] && clock=(--cpu-clock perf)
    cs record -q --force --sampler "$sampler" "${clock[@]}" -i 1ms -o "$T/u.corscope" -- $(app Unloading) $rounds \
        > "$T/truth.txt" 2> "$T/err.txt" || fail "exit status $? under the profiler: $(head -3 "$T/err.txt")"
    grep -q "^rounds $rounds " "$T/truth.txt" || fail "unexpected output: $(cat "$T/truth.txt")"
    cs check "$T/u.corscope" > "$T/check.txt" || fail "check: $(cat "$T/check.txt")"
    grep -q "status       complete" "$T/check.txt" || fail "recording not complete"
    cs report -f top --limit 0 "$T/u.corscope" > "$T/top.txt" 2> /dev/null
    # the stop-the-world sampler stops a thread only at a safe point: a
    # sample during a burn loop without one lands where the loop returns
    # (Measure, Native.ThreadCpuNs), so how much of each burn it sees
    # depends on when the suspensions come, which a busy machine moves
    # (measured: Heavy 61 to 75% against a truth of 75%, idle and loaded
    # alike); the signal sampler sees each burn where it runs
    tolerance=5
    [ "$sampler" = suspend ] && tolerance=20
    shares "$T/top.txt" "$T/truth.txt" Plugin.Heavy.Burn Plugin.Light.Burn
    samples=$(tr ' ' '\n' < "$T/check.txt" | sed -n 's/^samples=\([0-9]*\)$/\1/p' | head -1)
    unresolved=$(sed -n 's/.* unresolved_frames=\([0-9]*\).*/\1/p' "$T/check.txt")
    # stubs without a method stay [unknown]; ids forgotten too early would
    # leave thousands
    assert_ge "samples" "$samples" 1000
    [ "$((unresolved * 100))" -le "$((samples * 3))" ] ||
        fail "$unresolved of $samples samples have unnamed frames"
    if [ "$sampler" = signal ]; then
        # the program names its DynamicMethods without their class
        sed -i 's/^truth \(HeavyDyn\|LightDyn\) /truth dynamicClass.\1 /' "$T/truth.txt"
        shares "$T/top.txt" "$T/truth.txt" Plugin.Heavy.Burn Plugin.Light.Burn \
            dynamicClass.HeavyDyn dynamicClass.LightDyn
    fi
done
