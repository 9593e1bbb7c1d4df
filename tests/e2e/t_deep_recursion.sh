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
