# The threads report on the real runtime: three named threads burn a known
# CPU time one after the other (the third renames itself); each is shown
# with its start before its end, its CPU time within 5% (and 5 ms for the
# thread's start and end in the runtime) of what it measured
# itself at the end of its work, its names in order; the Chrome trace has a
# track for each.
source "$(dirname "$0")/lib.sh"

cs record -q -e cpu -o "$T/threads.corscope" -- $(app Events) threads > "$T/threads.out"
cs report -f threads "$T/threads.corscope" > "$T/threads.txt"
k=0
while read -r _ tid _ cpu_ns; do
    row=$(awk -v t="$tid" '$1 == t && $2 != "tid"' "$T/threads.txt" | head -1)
    [ -n "$row" ] || fail "thread $tid is not in the report"
    start=$(echo "$row" | awk '{ print $2 }')
    end=$(echo "$row" | awk '{ print $4 }')
    cpu_ms=$(echo "$row" | awk '{ v = $6; if ($7 == "s") v *= 1000; else if ($7 == "us") v /= 1000; print v }')
    awk -v s="$start" -v e="$end" 'BEGIN { exit !(s + 0 < e + 0) }' || fail "thread $tid: start $start, end $end"
    truth=$(awk -v n="$cpu_ns" 'BEGIN { print n / 1e6 }')
    assert_near "worker-$k CPU (ms)" "$cpu_ms" "$truth" "$(awk -v t="$truth" 'BEGIN { print t / 20 + 5 }')"
    k=$((k + 1))
done < <(grep '^thread ' "$T/threads.out")
assert_eq "threads measured" "$k" 3
for name in worker-0 worker-1 renamed-2; do
    grep -Eq "  $name$" "$T/threads.txt" || fail "no thread named $name"
done
third=$(awk '/^thread /{ t = $2 } END { print t }' "$T/threads.out")
names=$(awk -v t="$third" '$3 == "tid" && $4 == t { print $5 }' "$T/threads.txt" | paste -sd, -)
assert_eq "the third thread's names, in order" "$names" "worker-2,renamed-2"

cs report -f chrome -o "$T/threads.trace.json" "$T/threads.corscope"
grep -q "\"thread_name\",\"pid\":2,\"tid\":$third," "$T/threads.trace.json" ||
    fail "chrome: no runtime-events track for thread $third"
node -e 'JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"))' "$T/threads.trace.json" ||
    fail "chrome: not JSON"
