#!/bin/bash
# compare-checks.sh CLI OLD_DIR NEW_DIR
#
# Proof that a change to the agent kept its recordings' shape: for every
# recording NAME.corscope in both folders (tools/record-samples.sh, once
# with the old agent and once with the new), `corscope check` lists the
# same INFO keys, the same events (names, and whether each is sampled or
# recorded) and the same counters, and the recorded events' definitions
# (EVDF: ids, names, values with units, fields with types) are the same.  The values differ from run to run
# (they are two runs); the names must not.  Exit status 0 when every
# recording agrees, 1 otherwise (the differences shown).
set -uo pipefail

[ $# = 3 ] || { echo "usage: $0 CLI OLD_DIR NEW_DIR" >&2; exit 2; }
cli=$1 old=$2 new=$3

# the definitions of the recorded events (EVDF records, docs/format.md):
# one line per event, its id, name, values with units, fields with types
definitions() {
    python3 - "$1" << 'PY'
import sys
data = open(sys.argv[1], 'rb').read()
def varint(p, i):
    v = shift = 0
    while True:
        b = p[i]; i += 1
        v |= (b & 0x7f) << shift; shift += 7
        if not b & 0x80:
            return v, i
def string(p, i):
    n, i = varint(p, i)
    return p[i:i + n].decode('utf-8', 'replace'), i + n
off = 32
while off + 16 <= len(data):
    tag = data[off:off + 4]
    n = int.from_bytes(data[off + 4:off + 8], 'little')
    p, i = data[off + 16:off + 16 + n], 0
    off += 16 + n
    if tag != b'EVDF':
        continue
    while i < len(p):
        ev, i = varint(p, i)
        name, i = string(p, i)
        count, i = varint(p, i)
        values = []
        for _ in range(count):
            vn, i = string(p, i)
            vu, i = string(p, i)
            values.append(vn + '/' + vu)
        count, i = varint(p, i)
        fields = []
        for _ in range(count):
            fn, i = string(p, i)
            fields.append(fn + ':' + str(p[i])); i += 1
        print('definition', ev, name, ' '.join(values), '|', ' '.join(fields))
PY
}

# the shape of one recording: INFO keys, event names with their kind,
# counter names, the recorded events' definitions
shape() {
    { "$cli" check "$1" | awk '
        /^  counters / { for (i = 2; i <= NF; i++) { split($i, kv, "="); print "counter " kv[1] }; next }
        /^  event / { name = $2; sub(":", "", name); kind = ($0 ~ / records?,/) ? "recorded" : "sampled"; print "event " name " " kind; next }
        /^  [a-z]/ { print "info " $1 }'
      definitions "$1"; } | sort
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
