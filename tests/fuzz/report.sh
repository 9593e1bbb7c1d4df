#!/usr/bin/env bash
# The fuzzing section of docs/reliability.md (tests/stress/report.sh calls
# it): runs every fuzz harness for SECONDS (make fuzz, when clang-14 is
# there), then prints, as markdown, what each run did (from
# build/fuzz/NAME/last.log), how much of each parser the kept corpus
# reaches (its replay built with gcc --coverage, measured by gcov), and
# what the fuzzers have found so far (tests/fuzz/findings.md, kept by hand
# as bugs are fixed).  Progress on standard error.
#
#   tests/fuzz/report.sh [SECONDS]     SECONDS=0: no new runs, the last logs
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$here/../.." && pwd)
SECONDS_EACH=${1:-60}
FUZZERS="reader cfi elfsym leaf config il pdb push"
FUZZ_CC=${FUZZ_CC:-clang-14}
T=$(mktemp -d "${TMPDIR:-/tmp}/corscope-fuzz-report.XXXXXX")
trap 'rm -rf "$T"' EXIT

ran=0
if [ "$SECONDS_EACH" != 0 ] && command -v "$FUZZ_CC" > /dev/null; then
    echo "reliability: fuzzing, $SECONDS_EACH s per harness" >&2
    make -C "$ROOT" -s fuzz FUZZERS="$FUZZERS" FUZZ_SECONDS="$SECONDS_EACH" > /dev/null 2>&1
    ran=1
fi

# one row of the table, from build/fuzz/NAME/last.log
row() { # name what
    local log=$ROOT/build/fuzz/$1/last.log corpus
    corpus=$(ls "$ROOT/tests/fuzz/corpus/$1" | wc -l)
    if [ ! -f "$log" ]; then
        echo "| $1 | $2 | $corpus | not run | | | | |"
        return
    fi
    local runs seconds added edges total rc failure result
    runs=$(awk '/stat::number_of_executed_units/ { print $2 }' "$log")
    seconds=$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$log")
    added=$(awk '/stat::new_units_added/ { print $2 }' "$log")
    edges=$(grep -o ' cov: [0-9]*' "$log" | tail -1 | awk '{ print $2 }')
    total=$(sed -n 's/^INFO: Loaded 1 modules *(\([0-9]*\) inline 8-bit counters.*/\1/p' "$log" | head -1)
    rc=$(cat "$ROOT/build/fuzz/$1/last.rc" 2> /dev/null || echo '?')
    failure=$(sed -n 's/.*Test unit written to \(.*\)/\1/p' "$log" | head -1)
    if [ "$rc" = 0 ]; then
        result=none
    else
        result="**FAILED** (exit $rc${failure:+, $failure})"
    fi
    echo "| $1 | $2 | $corpus | ${runs:-?} | ${seconds:-?} | ${edges:-?} of ${total:-?} | ${added:-?} | $result |"
}

# "cfi.c 96% of 331 lines": the parser's lines that the corpus in
# tests/fuzz/corpus/NAME reaches through harness NAME
coverage() { # name parser-files...
    local name=$1 d=$T/cov-$1 out=
    shift
    mkdir -p "$d"
    local srcs
    srcs=$(make -s -C "$ROOT" "fuzz-src-$name" | tr ' ' '\n' | sed "s|^\([^/]\)|$ROOT/\1|")
    if ! (cd "$d" && gcc -std=c11 -D_GNU_SOURCE -I"$ROOT/src" -DCORSCOPE_VERSION='"cov"' -O0 --coverage \
            -o replay "$ROOT/tests/fuzz/replay.c" "$ROOT/tests/fuzz/fuzz_$name.c" $srcs -lm -lz &&
          ./replay "$ROOT/tests/fuzz/corpus/$name" && gcov -n replay-*.gcda) > "$d/gcov.log" 2>&1; then
        echo "?"
        return
    fi
    for f in "$@"; do
        out="$out${out:+, }$f $(awk -v f="$f" '
            /^File / { want = index($0, "/" f "'"'"'") > 0 }
            want && /^Lines executed:/ { split($2, a, ":"); sub(/%/, "", a[2]); printf "%.0f%% of %s", a[2], $4; want = 0 }
        ' "$d/gcov.log")"
    done
    echo "$out"
}

echo "reliability: coverage of the fuzz corpora" >&2
cat <<EOF
## Fuzzing: every parser of outside bytes

The agent parses bytes nobody here controls, inside the user's process,
where a crash is the user's crash: the unwind tables (.eh_frame) of every
library the program loads, their symbol tables and debug links, the
machine code of JIT-compiled prologues, its settings from the environment;
the CLI parses recordings.  Each parser has a libFuzzer harness
(tests/fuzz/fuzz_NAME.c) built with clang-14 and ASan+UBSan, every report
fatal, and a corpus (tests/fuzz/corpus/NAME) seeded from real files by
tests/fuzz/seeds.sh (this machine's libraries and the .NET runtime's,
Rust and Go shared objects, libraries and debug files built with gcc and
clang, JIT code bytes captured from the runtime, settings lines) and
holding every input that once failed.  \`make test\` replays every corpus
through its harness, plain and ASan+UBSan (\`make replay\`).

EOF
if [ "$ran" = 1 ]; then
    echo "Fresh runs of $SECONDS_EACH s each (\`make fuzz\`), on top of the corpus and of what"
    echo "earlier runs on this machine added to it (build/fuzz/NAME/corpus); edges: the"
    echo "instrumented edges of the harness and the code under test that were reached:"
else
    echo "No fresh runs (clang-14 with libFuzzer not installed, or SECONDS=0): the last"
    echo "runs' logs, where there are any; edges: the instrumented edges of the harness"
    echo "and the code under test that were reached:"
fi
cat <<EOF

| harness | parses | corpus files | executions | seconds | edges covered | new inputs | failures |
|---|---|---|---|---|---|---|---|
$(row reader 'recordings (format/recording.c) and every report')
$(row cfi '.eh_frame, .eh_frame_hdr; row lookup (agent/signal/cfi.c)')
$(row elfsym 'ELF symbol tables, build ids, debug links (agent/elfsym.c)')
$(row leaf 'x86-64 prologues, epilogues and unwind codes (agent/signal/mshape.c)')
$(row config 'settings, durations, signals (common/config.c, units.c)')
$(row il 'method bodies to rewrite: IL, EH clauses (agent/il)')
$(row pdb 'assemblies and portable PDBs: PE, metadata, deflate (common/pdb, inflate.c)')
$(row push 'a recording read as a stream, push settings (cli/pstream.c, pwindow.c, common/pushcfg.c)')

The lines of each parser that its kept corpus reaches when \`make test\`
replays it (gcc --coverage, gcov).  What is left is what no input reaches
through that harness: out-of-memory branches (unit tests fail allocations
in turn), in elfsym.c the opening and mapping of files (unit tests), in
units.c the percentages and formatting only the CLI uses:

| harness | lines reached by tests/fuzz/corpus/NAME |
|---|---|
| reader | $(coverage reader recording.c) |
| cfi | $(coverage cfi cfi.c) |
| elfsym | $(coverage elfsym elfsym.c) |
| leaf | $(coverage leaf mshape.c) |
| config | $(coverage config config.c units.c) |
| il | $(coverage il il_body.c il_rewrite.c il_check.c) |
| pdb | $(coverage pdb pe.c meta.c ppdb.c inflate.c) |
| push | $(coverage push pstream.c pwindow.c pushcfg.c) |

$(cat "$here/findings.md")
EOF
