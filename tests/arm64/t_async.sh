# Async on arm64, under qemu-user (docs/async.md, "Which runtimes get what"):
#   - logical async stacks are not done on arm64: asked for, the agent says
#     so (INFO async "off (not yet on arm64 ...)", one log line), rewrites
#     nothing, and the samples keep their real stacks (the thread pool's
#     frames, state machines named by the runtime);
#   - snapshots of pending operations (--async=snapshots: the heap walk, no
#     stack composed) work: AsyncChain pending's 16 operations in 5 chains,
#     as on x86-64 (tests/e2e/t_async_dump.sh), read by the arm64 CLI too.
source "$(dirname "$0")/lib.sh"

CORSCOPE_ASYNC=on CORSCOPE_INTERVAL=2ms CORSCOPE_LOG=info \
    a64_record "$T/stacks.corscope" cpu AsyncChain chain 300 > /dev/null 2> "$T/agent.txt"
grep -q "logical async stacks are not done on arm64 yet" "$T/agent.txt" ||
    fail "the agent did not say async stacks are off on arm64: $(cat "$T/agent.txt")"
cs check "$T/stacks.corscope" > "$T/check.txt" || fail "check: $(cat "$T/check.txt")"
grep -q "^  async        off (not yet on arm64" "$T/check.txt" ||
    fail "check does not say async is off: $(grep async "$T/check.txt")"
cs report -f collapsed "$T/stacks.corscope" > "$T/collapsed.txt" 2> /dev/null
assert_eq "frames labelled [async]" "$(grep -c '\[async\]' "$T/collapsed.txt")" 0
grep -q 'AsyncChain\.Chain+<C>d__[0-9]*\.MoveNext;AsyncChain\.Work\.BurnC' "$T/collapsed.txt" ||
    fail "C's samples are not under its state machine's MoveNext, as the runtime names it"

CORSCOPE_ASYNC=snapshots a64_record "$T/snap.corscope" none AsyncChain pending 6 > /dev/null 2>&1
cs report -f async "$T/snap.corscope" > "$T/async.txt" 2>&1 || fail "report -f async: $(cat "$T/async.txt")"
sed 's/^/    /' "$T/async.txt"
grep -q "): 16 in 5 chains$" "$T/async.txt" || fail "not 16 operations in 5 chains"
grep -Eq '^ +3 .* AsyncChain\.Pending\.Root  \(await #0\)$' "$T/async.txt" || fail "no line of 3 Root"
grep -Eq '^ +2 .* AsyncChain\.Pending\.Branch  \(await #1\)$' "$T/async.txt" || fail "no line of 2 Branch"
grep -Eq '^ +1 +\[blocking wait\]$' "$T/async.txt" || fail "no [blocking wait]"
a64_cs report -f async "$T/snap.corscope" > "$T/a64.txt" 2>&1 || fail "the arm64 CLI: report -f async"
cmp -s "$T/async.txt" "$T/a64.txt" || fail "report -f async differs between the CLIs"
