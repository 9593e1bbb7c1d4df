# Collections (-e gc) on the real runtime, against the runtime's own counts
# (GC.CollectionCount, printed by the program): every collection is in
# `report -f gc` with its generation; forced ones say Induced, the ones
# allocations triggered AllocSmall; background collections stay background
# (the agent does not turn concurrent GC off); pauses, their percentiles and
# share are in the header; the Chrome trace has a GC pause track; and CPU
# samples taken inside a collection carry a [GC genN reason] frame with the
# right generation (gen2, never the large object heap's index).
source "$(dirname "$0")/lib.sh"

cs record -q -e cpu,gc -o "$T/g.corscope" -- $(app Memory) gcs 3 4 5 64 2 > "$T/truth.txt"
cs check "$T/g.corscope" > "$T/check.txt" || fail "check: $(cat "$T/check.txt")"
grep -q "^  gc           .*GC modes unchanged" "$T/check.txt" || fail "check does not say the GC modes are unchanged"
cs report -f gc "$T/g.corscope" > "$T/gc.txt" 2> /dev/null
read -r _ _ gen0 gen1 gen2 < <(grep "^truth gcs" "$T/truth.txt")
for g in 0 1 2; do
    want=$(eval echo "\$gen$g")
    got=$(awk -v g="$g" 'NR > 3 && $3 == g { n++ } END { print n + 0 }' "$T/gc.txt")
    assert_eq "gen$g collections (the runtime counted $want)" "$got" "$want"
done
note "collections per generation: $gen0 $gen1 $gen2, as the runtime counted"
induced=$(awk 'NR > 3 && $5 == "Induced" { n++ } END { print n + 0 }' "$T/gc.txt")
assert_ge "collections with reason Induced (12 forced, some raised)" "$induced" 11
grep -Eq '^ +[0-9]+ +[0-9.]+s +0 +blocking +AllocSmall ' "$T/gc.txt" || fail "no gen0 AllocSmall collection: $(sed -n 4,8p "$T/gc.txt")"
grep -Eq '^ +[0-9]+ +[0-9.]+s +2 +background ' "$T/gc.txt" || fail "no background collection: concurrent GC was lost"
grep -Eq '^# pauses: [0-9]+, [0-9.]+ ms in all, [0-9.]+% of the run; p50 [0-9.]+ ms, p90 [0-9.]+ ms, p99 [0-9.]+ ms, max [0-9.]+ ms$' "$T/gc.txt" ||
    fail "no pause summary: $(sed -n 2p "$T/gc.txt")"
# every pause attributed: the table's pauses add up to the total
total=$(sed -n 2p "$T/gc.txt" | awk '{ print $4 }')
sum=$(awk 'NR > 3 { gsub("ms", "", $7); s += $7 } END { printf "%.2f", s }' "$T/gc.txt")
assert_near "pauses in the table vs the total (ms)" "$sum" "$total" 0.1
grep -q "gc_unmatched=0" "$T/check.txt" || fail "collection events unmatched: $(grep -o 'gc_unmatched=[0-9]*' "$T/check.txt")"

cs report -f chrome -o "$T/g.trace.json" "$T/g.corscope" 2> /dev/null
grep -q '"name":"GC pauses"' "$T/g.trace.json" || fail "no GC pause track in the Chrome trace"
grep -q '"name":"pause: GC [0-9]* gen2 Induced"' "$T/g.trace.json" || fail "no gen2 pause slice in the Chrome trace"

cs report -f gc -o "$T/x.gc.txt" "$T/g.corscope" 2> /dev/null
head -1 "$T/x.gc.txt" | grep -q "^# gc: " || fail "-o x.gc.txt did not pick the gc format"
cs record -q -o "$T/c.corscope" -- $(app Memory) gcs 1 1 1 > /dev/null
cs report -f gc "$T/c.corscope" > /dev/null 2> "$T/err.txt" && fail "report -f gc accepted a recording without -e gc"
grep -q "record with -e gc" "$T/err.txt" || fail "no reason: $(cat "$T/err.txt")"

# CPU time inside collections: labelled with the generation collected
cs record -q -i 1ms -o "$T/w.corscope" -- $(app Memory) gcwork 10 > /dev/null
cs report -f collapsed --weight samples "$T/w.corscope" > "$T/w.collapsed" 2> /dev/null
in_gen2=$(collapsed_sum "$T/w.collapsed" '\[GC gen2 induced\]')
assert_ge "CPU samples in [GC gen2 induced]" "$in_gen2" 5
grep -q '\[GC gen[34]' "$T/w.collapsed" && fail "a [GC gen3/gen4] label: the large or pinned object heap taken for a generation"
note "CPU inside gen2 collections: $in_gen2 samples labelled [GC gen2 induced]"
