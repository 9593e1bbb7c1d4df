# Async on arm64, under qemu-user (docs/async.md, "Which runtimes get what"):
#   - logical async stacks: the runtime's resuming methods are rewritten, and
#     a sample of C (which A awaits through B) that carries a chain shows
#     [async] A, [async] B, C, with none of the runtime's glue between them
#     (the rewritten MoveNext's frame is stepped by its shape: its code is
#     in the walker's map from ReJITCompilationFinished; by its frame record
#     the frame holding the slot's local was taken one too high and the
#     glue stayed).  qemu-user has no process_vm_readv, so a chain is read
#     there only directly: in cooperative mode, on a thread the agent has
#     matched to the runtime's Thread (the loop does that, late on a busy
#     machine); the other samples keep their real stacks (on a real arm64
#     kernel the read goes through process_vm_readv, as on x86-64).  So the
#     exact chain is asserted on the samples that carry one, and that
#     chains were read at all;
#   - snapshots of pending operations (--async=snapshots): AsyncChain
#     pending's 16 operations in 5 chains, as on x86-64
#     (tests/e2e/t_async_dump.sh), read by the arm64 CLI the same.
source "$(dirname "$0")/lib.sh"

CORSCOPE_ASYNC=on CORSCOPE_INTERVAL=2ms \
    a64_record "$T/stacks.corscope" cpu AsyncChain chain 1000 > /dev/null 2> "$T/agent.txt"
cs check "$T/stacks.corscope" > "$T/check.txt" || fail "check: $(cat "$T/check.txt")"
grep -q "^  async        on (3 runtime methods rewritten)" "$T/check.txt" ||
    fail "check: $(grep async "$T/check.txt")"
cs report -f collapsed "$T/stacks.corscope" > "$T/collapsed.txt" 2> /dev/null
A='\[async\] AsyncChain\.Chain\.'
read -r managed chained good all <<< "$(awk -v re="${A}A;${A}B;AsyncChain\\.Chain\\.C;AsyncChain\\.Work\\.BurnC(;| )" '
    /(^|;)AsyncChain\.Work\.BurnC(;| )/ {
        all += $NF
        if ($0 ~ /AsyncChain\.Work\.BurnC(;AsyncChain\.Work\.Spin)? [0-9]+$/) managed += $NF
        if ($0 ~ /\[async\]/) {
            chained += $NF
            if ($0 ~ re) good += $NF
        }
    }
    END { printf "%d %d %d %d\n", managed, chained, good, all }' "$T/collapsed.txt")"
note "C's samples: $all us, $managed us in managed code, $chained us with a chain, $good us of those under A, B"
assert_ge "C's samples with a chain read (qemu: directly only)" "$chained" 1
awk -v g="$good" -v c="$chained" 'BEGIN { exit !(g >= 0.95 * c) }' ||
    fail "only $good of $chained us of C's chained samples exactly under A, B: $(awk '/Work\.BurnC/ && /\[async\]/' "$T/collapsed.txt" | sort -t' ' -k2 -nr | head -3)"
glued=$(awk '/\[async\]/ && /ExecutionContext|ThreadPoolWorkQueue|AsyncStateMachineBox/ { s += $NF } END { print s + 0 }' "$T/collapsed.txt")
assert_eq "weight of logical stacks that kept the runtime's glue" "$glued" 0

CORSCOPE_ASYNC=snapshots a64_record "$T/snap.corscope" none AsyncChain pending 6 > /dev/null 2>&1
cs report -f async "$T/snap.corscope" > "$T/async.txt" 2>&1 || fail "report -f async: $(cat "$T/async.txt")"
sed 's/^/    /' "$T/async.txt"
grep -q "): 16 in 5 chains$" "$T/async.txt" || fail "not 16 operations in 5 chains"
grep -Eq '^ +3 .* AsyncChain\.Pending\.Root  \(await #0\)$' "$T/async.txt" || fail "no line of 3 Root"
grep -Eq '^ +2 .* AsyncChain\.Pending\.Branch  \(await #1\)$' "$T/async.txt" || fail "no line of 2 Branch"
grep -Eq '^ +1 +\[blocking wait\]$' "$T/async.txt" || fail "no [blocking wait]"
a64_cs report -f async "$T/snap.corscope" > "$T/a64.txt" 2>&1 || fail "the arm64 CLI: report -f async"
cmp -s "$T/async.txt" "$T/a64.txt" || fail "report -f async differs between the CLIs"
