# Live objects (-e live) on the real runtime: Keep allocates 100 MiB and
# keeps it, Drop allocates 160 MiB and drops it, a full collection follows.
# The live view shows Keep's bytes (within 15% of what the program kept:
# about 1,000 samples, a standard error of 3%; with 40 MiB, 400 samples,
# 15% was 3 standard errors and failed about 1 run in 400) and nothing of
# Drop, while the alloc view has both; --at an
# earlier collection shows less of Keep (a leak grows); the live heap is in
# pprof as inuse_space; a cap on the objects followed is counted and said.
source "$(dirname "$0")/lib.sh"

total_of() { awk -v m="$2" '$NF == m { v = $5; u = $6; if (u == "KiB") v /= 1024; if (u == "GiB") v *= 1024; print v; f = 1 } END { if (!f) print 0 }' "$1"; }

cs record -q -e live,gc -o "$T/l.corscope" -- $(app Memory) live 100 160 > "$T/truth.txt"
cs check "$T/l.corscope" > "$T/check.txt"
grep -q "^  live         weak handles on sampled allocations" "$T/check.txt" || fail "check does not say how live objects are followed"
grep -q "^  recorded     alloc,gc,live$" "$T/check.txt" || fail "live does not imply alloc: $(grep recorded "$T/check.txt")"
kept=$(awk '$3 == "Memory.Work.Keep" { printf "%.2f", $4 / 1048576 }' "$T/truth.txt")
cs report -f top --limit 0 --event live "$T/l.corscope" > "$T/live.txt" 2> /dev/null
grep -q "^# live: [0-9]* sampled allocations still alive at the collection that ended at" "$T/live.txt" || fail "no live note: $(head -3 "$T/live.txt")"
keep=$(total_of "$T/live.txt" Memory.Work.Keep)
assert_near "live: Keep MiB / kept MiB" "$(awk -v a="$keep" -v b="$kept" 'BEGIN { printf "%.3f", a / b }')" 1 0.15
assert_eq "live: Drop" "$(total_of "$T/live.txt" Memory.Work.Drop)" 0
cs report -f top --limit 0 --event alloc "$T/l.corscope" > "$T/alloc.txt" 2> /dev/null
drop=$(total_of "$T/alloc.txt" Memory.Work.Drop)
assert_ge "alloc: Drop MiB" "$drop" 100
note "live: Keep $keep MiB (kept $kept), Drop gone (allocated $drop MiB)"

# a leak grows: at a collection in the middle, less of Keep is alive
cs report -f gc "$T/l.corscope" > "$T/gc.txt" 2> /dev/null
n=$(awk 'NR > 3' "$T/gc.txt" | wc -l)
mid=$(awk -v m="$(( (n + 1) / 2 ))" 'NR > 3 && ++k == m { gsub("s", "", $2); printf "%.0fms", $2 * 1000 + 1 }' "$T/gc.txt")
cs report -f top --limit 0 --event live --at "$mid" "$T/l.corscope" > "$T/mid.txt" 2> /dev/null
early=$(total_of "$T/mid.txt" Memory.Work.Keep)
awk -v e="$early" -v k="$keep" 'BEGIN { exit !(e > 0 && e < 0.9 * k) }' || fail "--at $mid: Keep $early MiB, at the end $keep MiB"
note "--at $mid: Keep $early MiB (at the end $keep MiB)"
cs report -f top --at 1s "$T/$(basename "$T")-none" > /dev/null 2>&1 && fail "a missing file accepted"
cs record -q -o "$T/cpu.corscope" -- $(app Memory) gcs 1 1 1 > /dev/null
cs report -f top --at 1s "$T/cpu.corscope" > /dev/null 2> "$T/err.txt" && fail "--at accepted without live data"
grep -q "goes with a recording of -e live" "$T/err.txt" || fail "no reason: $(cat "$T/err.txt")"

# a cap on what is followed: counted, and said
cs record -q -e live --live-max 20 -o "$T/c.corscope" -- $(app Memory) live 20 40 > /dev/null
untracked=$(cs check "$T/c.corscope" | grep -o "live_untracked=[0-9]*" | cut -d= -f2)
assert_ge "--live-max 20: samples not followed" "$untracked" 100
cs report -f top --event live "$T/c.corscope" > /dev/null 2> "$T/err.txt"
grep -q "sampled allocations not followed (--live-max reached)" "$T/err.txt" || fail "the cap is not said: $(cat "$T/err.txt")"
note "--live-max 20: $untracked samples not followed, counted and said"
