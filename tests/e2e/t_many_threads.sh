# Sixteen threads burning at once on two cores: no deadlock (time limit), and
# each thread's CPU share in the report is within 2 points of its share of the
# CPU time the threads measured themselves; each is labelled with the OS
# thread id the thread read with gettid().
source "$(dirname "$0")/lib.sh"

CS_TIMEOUT=60 cs record -q -o "$T/threads.corscope" -i 1ms -- $(app ManyThreads) 16 2 > "$T/truth.txt"
cs report -f collapsed --threads "$T/threads.corscope" > "$T/collapsed.txt"
total_cpu=$(awk '{ s += $6 } END { print s }' "$T/truth.txt")
workers_weight=$(collapsed_sum "$T/collapsed.txt" '^\[worker-')
for i in $(seq -w 0 15); do
    name="worker-$i"
    cpu=$(awk -v n="$name" '$2 == n { print $6 }' "$T/truth.txt")
    truth=$(awk -v c="$cpu" -v t="$total_cpu" 'BEGIN { printf "%.2f", 100 * c / t }')
    tid=$(awk -v n="$name" '$2 == n { print $4 }' "$T/truth.txt")
    w=$(collapsed_sum "$T/collapsed.txt" "^\\[$name tid=$tid\\]")
    share=$(awk -v w="$w" -v t="$workers_weight" 'BEGIN { printf "%.2f", 100 * w / t }')
    assert_near "$name share" "$share" "$truth" 2
    grep -q "^\[$name tid=[0-9]*\];.*ManyThreads\.Spin\.Burn" "$T/collapsed.txt" ||
        fail "$name: no samples in Spin.Burn"
done
