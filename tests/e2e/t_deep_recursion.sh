# A stack 1000 calls deep comes out whole: every sample of the leaf holds
# exactly 1001 Descend frames (depth 1000 down to 0) between Main and Leaf.
source "$(dirname "$0")/lib.sh"

cs record -q -o "$T/deep.corscope" -- $(app DeepRecursion) 1000 2 > /dev/null
cs report -f collapsed "$T/deep.corscope" > "$T/collapsed.txt"
leaf_lines=$(grep -c 'DeepRecursion\.Recursion\.Leaf [0-9]*$' "$T/collapsed.txt" || true)
assert_ge "leaf stacks" "$leaf_lines" 1
awk '/DeepRecursion\.Recursion\.Leaf [0-9]+$/ {
        n = gsub(/DeepRecursion\.Recursion\.Descend/, "&")
        if (n != 1001 || $0 !~ /(^|;)DeepRecursion\.Program\.Main;/) { print "bad stack with " n " Descend frames"; bad = 1 }
     } END { exit bad }' "$T/collapsed.txt" || fail "incomplete deep stacks"
note "$leaf_lines leaf stacks, each with 1001 Descend frames under Main"

# At the deepest limit (--max-depth 65536, the documented maximum), a stack
# 70,000 calls deep is cut at the root: every sample of the leaf holds the
# leaf and 65,534 Descend frames under [truncated] (65,536 frames, the
# format's limit), none is a bare [truncated], and the recording is whole.
cs record -q --max-depth 65536 -o "$T/max.corscope" -- $(app DeepRecursion) 70000 3 > /dev/null
cs check "$T/max.corscope" > "$T/max-check.txt" 2>&1 || fail "check at --max-depth 65536: $(cat "$T/max-check.txt")"
grep -q "status       complete" "$T/max-check.txt" || fail "recording at --max-depth 65536 not complete"
cs report -f collapsed "$T/max.corscope" > "$T/max.txt"
awk '{ n = split($1, f, ";"); total += $NF
       if ($0 ~ /^\[truncated\] [0-9]+$/) bare += $NF
       if (f[n] == "DeepRecursion.Recursion.Leaf" && f[1] == "[unknown]") {
           failed += $NF  # the stack of main grew past the mappings last read: counted, rare
       } else if (f[n] == "DeepRecursion.Recursion.Leaf") {
           leaf += $NF
           d = gsub(/DeepRecursion\.Recursion\.Descend/, "&")
           if (n != 65536 || f[1] != "[truncated]" || d != 65534) { print "leaf stack of " n " frames, " d " Descend, root " f[1]; bad = 1 }
       }
     } END { printf "%d %d %d %d\n", total, leaf, bare, failed; exit bad }' "$T/max.txt" > "$T/max-counts.txt" ||
    fail "leaf stacks at the limit: $(cat "$T/max-counts.txt")"
read -r total leaf bare failed < "$T/max-counts.txt"
assert_eq "bare [truncated] samples at --max-depth 65536" "$bare" 0
[ "$failed" -le $(( leaf / 10 + 2 )) ] || fail "$failed leaf samples with a failed walk, $leaf whole"
assert_ge "leaf samples at --max-depth 65536" "$leaf" 1
# the program spends nearly all its time in the leaf; an entry the ring could
# not hold would be dropped and counted, not cut short
awk -v l="$leaf" -v t="$total" 'BEGIN { exit !(l >= 0.5 * t) }' || fail "only $leaf of $total samples in the leaf"
note "--max-depth 65536, 70000 calls deep: $leaf of $total samples in the leaf, each 65536 frames ending in [truncated]; $(grep -o 'dropped_samples=[0-9]*' "$T/max-check.txt")"
