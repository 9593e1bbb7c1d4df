# Metadata read in place (src/agent/mdplace.h).  Asking the runtime for a
# module's metadata interface (GetModuleMetaData) makes it convert that
# module's metadata to its slower read-write form for the rest of the
# process: naming four samples' frames that way cost a 60 ms program 5 ms
# of wall time (docs/performance.md, start-up).  The agent reads the tables
# in the image the runtime loaded instead, and counts each time it must
# still ask (metadata_opens):
#  - the default recording of a program whose async methods never yield
#    (Memory gcwork) asks for none, and still names its frames: the
#    program's own methods and CoreLib's, nested and generic types spelled
#    as before;
#  - -e exceptions reads System.Exception's layout in place: none either;
#  - a program whose async methods yield asks for none either: the async
#    rewrite finds its methods and a call signature in CoreLib's tables in
#    place and adds nothing to them (it asked once, for CoreLib's emitter,
#    before session 17); its state machines' MoveNext methods are found in
#    place.
source "$(dirname "$0")/lib.sh"

opens() { cs check "$1" | tr ' ' '\n' | awk -F= '$1 == "metadata_opens" { print $2 }'; }

cs record -q --force -i 1ms -o "$T/gc.corscope" -- $(app Memory) gcwork 1 > /dev/null 2> "$T/err.txt" ||
    fail "record Memory: $(cat "$T/err.txt")"
assert_eq "metadata opened through the runtime (Memory gcwork, default recording)" "$(opens "$T/gc.corscope")" 0
cs report -f collapsed "$T/gc.corscope" > "$T/gc.txt" 2> /dev/null
assert_ge "samples in Memory.Program.Main" "$(collapsed_sum "$T/gc.txt" '(^|;)Memory\.Program\.Main(;| )')" 1
cs report -f collapsed "$T/gc.corscope" 2> /dev/null | tr ';' '\n' | sed 's/ [0-9]*$//' | sort -u > "$T/frames.txt"
grep -qE '^System\.[A-Za-z.]+`1\.' "$T/frames.txt" || grep -qE '^System\.[A-Za-z.]+\+' "$T/frames.txt" ||
    note "no generic or nested CoreLib type among this run's frames: $(grep -c '^System\.' "$T/frames.txt") CoreLib frames"
grep -qE '^System\.' "$T/frames.txt" || fail "no CoreLib frame named: $(head -20 "$T/frames.txt")"

cs record -q --force -e exceptions -o "$T/ex.corscope" -- $(app Events) exceptions 1000 > /dev/null 2> "$T/err.txt" ||
    fail "record Events: $(cat "$T/err.txt")"
assert_eq "metadata opened through the runtime (-e exceptions)" "$(opens "$T/ex.corscope")" 0
cs report -f exceptions "$T/ex.corscope" > "$T/ex.txt" 2> /dev/null
grep -q "BadStateException" "$T/ex.txt" ||
    fail "exceptions not named: $(head -5 "$T/ex.txt")"

cs record -q --force -o "$T/async.corscope" -- $(app AsyncChain) chain 100 > /dev/null 2> "$T/err.txt" ||
    fail "record AsyncChain: $(cat "$T/err.txt")"
assert_eq "metadata opened through the runtime (async methods yield: the rewrite)" \
    "$(opens "$T/async.corscope")" 0
cs check "$T/async.corscope" | grep -q "^  async        on (3 runtime methods rewritten)" ||
    fail "the async methods were not rewritten: $(cs check "$T/async.corscope" | grep async)"
cs report -f collapsed "$T/async.corscope" > "$T/async.txt" 2> /dev/null
grep -q 'AsyncChain\.Chain\.C' "$T/async.txt" ||
    fail "the async chain's methods are not named"
