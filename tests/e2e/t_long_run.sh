# Long runs do not grow the agent: a program that compiles code under new
# names for as long as it runs (tests/apps/ExprLoop: expression trees, each a
# DynamicMethod with a name of its own, and compiled Regexes) makes the agent
# meet a new name, a new frame and new stacks all the time.  Every table is
# bounded (strings, stacks, frames' classes, the code map, names): the heap
# the agent holds at the end, its queues drained (end_agent_heap_bytes),
# after 160,000 expressions is what it was after 40,000 (by then every
# budget has filled once), give or take the string table's cycle of resets,
# where a table that kept every name would hold about 60 bytes more per
# expression (7.2 MB more).  The most it held at any flush
# (max_agent_heap_bytes) also counts the code queue's backlog, which a busy
# machine lengthens (1.7 MB more beside other benchmarks): it is held under
# 20 MiB only.
# The 10-minute version is bench/long.sh (docs/performance.md).
source "$(dirname "$0")/lib.sh"

heap() { cs check "$1" | tr ' ' '\n' | awk -F= -v k="${2:-end_agent_heap_bytes}" '$1 == k { print $2 }'; }
cs record -q -o "$T/short.corscope" -- $(app ExprLoop) 1000 40000 > "$T/short.out"
cs record -q -o "$T/long.corscope" -- $(app ExprLoop) 1000 160000 > "$T/long.out"
grep -q "^compiled 40000 expressions" "$T/short.out" || fail "short run: $(cat "$T/short.out")"
grep -q "^compiled 160000 expressions" "$T/long.out" || fail "long run: $(cat "$T/long.out")"
short=$(heap "$T/short.corscope"); long=$(heap "$T/long.corscope")
[ -n "$short" ] && [ -n "$long" ] || fail "no end_agent_heap_bytes in the recordings"
resets=$(cs check "$T/long.corscope" | tr ' ' '\n' | awk -F= '$1 == "string_table_resets" { print $2 }')
note "agent heap at the end: $((short / 1024)) KiB after 40,000 expressions, $((long / 1024)) KiB after 160,000 ($resets string table resets)"
# within the string table's budget (2 MiB: where a run ends in its cycle of
# resets moves the end by up to that much) and 1 MiB more; a table keeping
# every name would be 7.2 MB more
[ $((long - short)) -lt $((3 * 1024 * 1024)) ] || fail "the agent grew by $(( (long - short) / 1024 )) KiB over 120,000 more expressions"
most=$(heap "$T/long.corscope" max_agent_heap_bytes)
[ "$most" -lt $((20 * 1024 * 1024)) ] || fail "the agent held $((most / 1024 / 1024)) MiB"
