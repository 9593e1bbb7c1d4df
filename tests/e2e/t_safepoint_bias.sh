# Safepoint bias: SafepointBias spends its CPU in two regions in a measured
# proportion; in one of them nearly all the time is inside a tiny method
# (Bias.Tiny) that its caller calls millions of times.  The signal sampler
# (the default) must give each region's share within 3 points of the truth
# (both samplers come out about 1.5 points toward Caller on this program, run
# after run; the ±2 accuracy test is t_cpu_shares) and charge at least 75% of
# Bias.Caller's time to Bias.Tiny itself.  The
# stop-the-world sampler, which can only stop threads at safepoints, is run
# too and its numbers printed (docs/performance.md shows both); it is only
# required to give the regions within 5 points.
source "$(dirname "$0")/lib.sh"

for sampler in signal suspend; do
    # the signal sampler's precise clock by name: at 1 ms the agent may
    # choose the POSIX timers (t_cpu_clock_choice)
    clock=()
    [ "$sampler" = signal ] && clock=(--cpu-clock perf)
    cs record -q --force --sampler "$sampler" "${clock[@]}" -i 1ms -o "$T/sb.corscope" -- $(app SafepointBias) 4 > "$T/truth.txt"
    cs report -f top --limit 0 "$T/sb.corscope" > "$T/top.txt" 2> /dev/null
    free=$(top_total "$T/top.txt" SafepointBias.Bias.CallFree)
    caller=$(top_total "$T/top.txt" SafepointBias.Bias.Caller)
    tiny=$(top_self "$T/top.txt" SafepointBias.Bias.Tiny)
    sum=$(awk -v a="$free" -v b="$caller" 'BEGIN { print a + b }')
    tolerance=3
    [ "$sampler" = suspend ] && tolerance=5
    for region in CallFree Caller; do
        truth=$(awk -v m="SafepointBias.Bias.$region" '$2 == m { print $3 }' "$T/truth.txt")
        v=$(top_total "$T/top.txt" "SafepointBias.Bias.$region")
        share=$(awk -v v="$v" -v s="$sum" 'BEGIN { printf "%.2f", 100 * v / s }')
        assert_near "$sampler: Bias.$region share" "$share" "$truth" "$tolerance"
    done
    in_tiny=$(awk -v t="$tiny" -v c="$caller" 'BEGIN { printf "%.1f", (c > 0) ? 100 * t / c : 0 }')
    note "$sampler: Bias.Tiny's own share of Bias.Caller: $in_tiny%"
    if [ "$sampler" = signal ]; then
        assert_ge "signal: Bias.Tiny's share of Bias.Caller" "$in_tiny" 75
    fi
done
