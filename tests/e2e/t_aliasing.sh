# No aliasing: Aliasing repeats a 1 ms period of its own CPU time, 10% in
# Phase.A and 90% in Phase.B, and samples at -i 1ms: a clock that fires
# after exactly one interval would land at the same phase each period.
# With the CPU clock's periods drawn at random (the default), Phase.A's
# share is within 2 points of the share the program measured itself
# (about 4,000 samples: the sampling error's standard deviation is 0.5
# points).  The error of fixed periods is measured by bench/aliasing.sh.
source "$(dirname "$0")/lib.sh"

# the perf_event clock by name: at 1 ms the agent may choose the POSIX
# timers (t_cpu_clock_choice), which fire at the scheduler tick
cs record -q -i 1ms --cpu-clock perf -o "$T/a.corscope" -- $(app Aliasing) 1000 10 4000 > "$T/truth.txt"
cs report -f top --limit 0 "$T/a.corscope" > "$T/top.txt" 2> /dev/null
truth=$(awk '$1 == "truth" { sub("A=", "", $2); print $2 }' "$T/truth.txt")
a=$(top_total "$T/top.txt" Phase.A)
b=$(top_total "$T/top.txt" Phase.B)
share=$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.2f", 100 * a / (a + b) }')
assert_near "Phase.A's share of the two phases (random periods)" "$share" "$truth" 2
cs check "$T/a.corscope" | grep -q "cpu every 1ms (weights in 1us)" || fail "check does not show the weights' unit"
