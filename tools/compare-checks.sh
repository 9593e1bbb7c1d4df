#!/bin/bash
# compare-checks.sh CLI OLD_DIR NEW_DIR
#
# Proof that a change to the agent kept its recordings' shape: for every
# recording NAME.corscope in both folders (tools/record-samples.sh, once
# with the old agent and once with the new), `corscope check` lists the
# same INFO keys, the same events (names, and whether each is sampled or
# recorded) and the same counters.  The values differ from run to run
# (they are two runs); the names must not.  Exit status 0 when every
# recording agrees, 1 otherwise (the differences shown).
set -uo pipefail

[ $# = 3 ] || { echo "usage: $0 CLI OLD_DIR NEW_DIR" >&2; exit 2; }
cli=$1 old=$2 new=$3

# the shape of one recording: INFO keys, event names with their kind,
# counter names
shape() {
    "$cli" check "$1" | awk '
        /^  counters / { for (i = 2; i <= NF; i++) { split($i, kv, "="); print "counter " kv[1] }; next }
        /^  event / { name = $2; sub(":", "", name); kind = ($0 ~ / records?,/) ? "recorded" : "sampled"; print "event " name " " kind; next }
        /^  [a-z]/ { print "info " $1 }' | sort
}

differ=0 n=0
for a in "$old"/*.corscope; do
    b=$new/$(basename "$a")
    [ -f "$b" ] || { echo "$(basename "$a"): not in $new"; differ=$((differ + 1)); continue; }
    n=$((n + 1))
    if ! diff <(shape "$a") <(shape "$b") > /dev/null; then
        differ=$((differ + 1))
        echo "DIFFERS: $(basename "$a")"
        diff <(shape "$a") <(shape "$b") | head -20
    fi
done
echo "compared the shape of $n recordings: $differ differ"
[ $differ = 0 ]
