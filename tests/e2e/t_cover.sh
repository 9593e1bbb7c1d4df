# `corscope cover -- dotnet test`: code coverage by IL rewriting at JIT
# time, on tests/apps/CoverTests (xunit) over tests/apps/CoverLib, whose
# every shape of code (if/else, switch, loops, try/catch/finally, filters,
# async, iterators, lambdas, local functions, generics, properties,
# records, exceptions, [ExcludeFromCodeCoverage]) is run partly, on purpose.
#   1. the test run passes under cover (its StackTraceLines test checks
#      that a stack trace still gives the source line: the offset map), and
#      the reports say what ran: known lines covered and not, branches,
#      exclusions, in Cobertura, lcov, JSON and HTML; the assemblies and
#      PDBs on disk are byte for byte what they were;
#   2. covered and uncovered lines equal coverlet.collector's on the same
#      tests, line by line; branch counts too but for the differences
#      documented in cover_coverlet.expect;
#   3. a test host killed by SIGKILL mid-run keeps every hit;
#   4. two test hosts (two `dotnet test` runs under one command) make one
#      report;
#   5. `dotnet test` of a solution of two test projects (tests/apps/
#      cover.slnx: CoverTests and CoverMoreTests) runs two test hosts at
#      once: one report, each host's lines in it, the hits of a line both
#      run added.
source "$(dirname "$0")/lib.sh"
CS_TIMEOUT=300
TESTS=$APPS/CoverTests/CoverTests.dll
PROJECT=$ROOT/tests/apps/CoverTests
SRC=$ROOT/tests/apps/CoverLib
[ -f "$TESTS" ] || fail "$TESTS is not built (make apps)"

# line_of FILE TEXT -> the number of the first line of FILE containing TEXT
line_of() { grep -nF -- "$2" "$1" | head -1 | cut -d: -f1; }
# hits REPORT.xml FILE LINE -> the hits of a line in a Cobertura report, "none" when absent
hits() {
    python3 - "$1" "$2" "$3" << 'EOF'
import sys, xml.etree.ElementTree as ET
found = None
for c in ET.parse(sys.argv[1]).getroot().iter('class'):
    if c.get('filename').endswith('/' + sys.argv[2]) or c.get('filename') == sys.argv[2]:
        for l in c.find('lines').iter('line'):
            if l.get('number') == sys.argv[3]:
                found = (found or 0) + int(l.get('hits'))
print('none' if found is None else found)
EOF
}
# branch REPORT.xml FILE LINE -> "covered/total" of a line's branches
branch() {
    python3 - "$1" "$2" "$3" << 'EOF'
import sys, xml.etree.ElementTree as ET
for c in ET.parse(sys.argv[1]).getroot().iter('class'):
    if c.get('filename').endswith('/' + sys.argv[2]) or c.get('filename') == sys.argv[2]:
        for l in c.find('lines').iter('line'):
            if l.get('number') == sys.argv[3] and l.get('condition-coverage'):
                cc = l.get('condition-coverage')
                print(cc[cc.index('(') + 1:cc.index(')')])
                sys.exit()
print('0/0')
EOF
}
expect_hit() { # WHAT FILE TEXT
    local n h
    n=$(line_of "$SRC/$2" "$3")
    h=$(hits "$R/c.xml" "$2" "$n")
    [ "$h" != none ] && [ "$h" -gt 0 ] || fail "$1 ($2:$n) should be covered, hits: $h"
}
expect_miss() {
    local n h
    n=$(line_of "$SRC/$2" "$3")
    h=$(hits "$R/c.xml" "$2" "$n")
    [ "$h" = 0 ] || fail "$1 ($2:$n) should be uncovered (hits 0), got: $h"
}
expect_absent() {
    local n h
    n=$(line_of "$SRC/$2" "$3")
    h=$(hits "$R/c.xml" "$2" "$n")
    [ "$h" = none ] || fail "$1 ($2:$n) should not be in the report (excluded), got hits $h"
}

# 1. the run and its reports
R=$T/run
mkdir "$R"
# nothing on disk is rewritten: the assemblies and PDBs the run covers,
# byte for byte the same after it
BIN=$(dirname "$TESTS")
(cd "$BIN" && sha256sum CoverLib.dll CoverLib.pdb CoverTests.dll) > "$R/before.sha" ||
    fail "no CoverLib.dll/.pdb beside $TESTS"
cs cover -o "$R/c.xml" -o "$R/c.info" -o "$R/c.json" -o "$R/c.html" --counters "$R/counters" \
    -- dotnet test "$TESTS" > "$R/out" 2> "$R/err" || fail "cover of dotnet test failed: $(tail -5 "$R/out" "$R/err")"
(cd "$BIN" && sha256sum -c --quiet "$R/before.sha") > "$R/sha.out" 2>&1 ||
    fail "cover changed files on disk: $(cat "$R/sha.out")"
grep -q "Passed!  - Failed:     0" "$R/out" || fail "the tests did not all pass under cover: $(tail -20 "$R/out")"
grep -q "^| CoverLib " "$R/err" || fail "no summary row for CoverLib: $(cat "$R/err")"
! grep -Eq "^\| (CoverTests|xunit|Microsoft|System)" "$R/err" || fail "the test assembly, xunit or the framework was covered: $(cat "$R/err")"
! grep -q 'package name="CoverTests"' "$R/c.xml" || fail "the test assembly is in the report"
assert_eq "counter files (one test host; vstest.console is the SDK's)" "$(ls "$R/counters" | grep -c '^cover-')" 1
expect_hit "Sign: positive" Shapes.cs 'return "positive";'
expect_miss "Sign: negative never asked" Shapes.cs 'return "negative";'
expect_miss "OnlyIf: the if never taken" Shapes.cs 'y = 100;'
assert_eq "OnlyIf: branches of 'if (x > 100)'" "$(branch "$R/c.xml" Shapes.cs "$(line_of "$SRC/Shapes.cs" 'if (x > 100)')")" "1/2"
expect_hit "switch: case 1" Shapes.cs 'case 1: return "mon";'
expect_miss "switch: case 2" Shapes.cs 'case 2: return "tue";'
expect_hit "catch" Shapes.cs 'return -1;'
expect_hit "finally" Shapes.cs 'Calls++;'
expect_hit "exception filter" Shapes.cs 'return "one";'
expect_miss "exception filter's other catch" Shapes.cs 'return "another code";'
expect_miss "async: the branch not taken" Shapes.cs 'await Task.Delay(1);'
expect_hit "async catch" Shapes.cs 'return "caught";'
expect_hit "iterator" Shapes.cs 'yield return i;'
expect_miss "iterator never enumerated" Shapes.cs 'yield return "never";'
expect_hit "lambda body" Shapes.cs 'int d = x * 2;'
expect_hit "local function" Shapes.cs 'return v * v;'
expect_miss "method never called" Shapes.cs 'Func<int, int> f = v => v * x;'
expect_hit "generic Box<T>.Max" Shapes.cs 'best = item;'
expect_miss "property setter's throw" Shapes.cs 'throw new ArgumentOutOfRangeException(nameof(value));'
expect_absent "[ExcludeFromCodeCoverage] class" Shapes.cs 'return -x;'
expect_absent "[ExcludeFromCodeCoverage] method's lambda" Shapes.cs 'Func<int, int> f = v => v - x;'
expect_hit "record property" More.cs 'public int Manhattan'
expect_hit "await foreach" More.cs 'sum += i;'
expect_hit "lock" More.cs 'Counts[kind] ='
expect_miss "Busy.Spin (only the killed host runs it)" Shapes.cs 'acc += i % 7;'
note "run: tests passed under cover; $(grep -c '<line ' "$R/c.xml") line elements; known lines right"
# the other formats say the same
grep -q "^SF:$SRC/Shapes.cs$" "$R/c.info" || fail "lcov: no SF for Shapes.cs"
neg=$(line_of "$SRC/Shapes.cs" 'return "negative";')
grep -q "^DA:$neg,0$" "$R/c.info" || fail "lcov: line $neg should be DA:$neg,0"
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert 'CoverLib.dll' in d" "$R/c.json" ||
    fail "json: not JSON, or no CoverLib.dll in it"
grep -qF 'return &quot;negative&quot;;' "$R/c.html" || fail "html: the source is not in the page"
! grep -qiE '(src|href)="https?:' "$R/c.html" || fail "html: the page loads something from the network"
cs cover report "$R/counters" -o "$R/again.xml" -q || fail "cover report of the kept counters failed"
assert_eq "cover report: the same lines" "$(grep -c '<line ' "$R/again.xml")" "$(grep -c '<line ' "$R/c.xml")"
note "lcov, json, html and cover report agree"

# 2. against coverlet.collector on the same tests
rm -rf "$T/coverlet"
(cd "$PROJECT" && timeout 300 dotnet test --no-build -c Release --collect:"XPlat Code Coverage" \
    --results-directory "$T/coverlet" > "$T/coverlet.out" 2>&1) || fail "coverlet's run failed: $(tail -5 "$T/coverlet.out")"
theirs=$(find "$T/coverlet" -name coverage.cobertura.xml | head -1)
[ -n "$theirs" ] || fail "coverlet wrote no report: $(tail -5 "$T/coverlet.out")"
python3 "$ROOT/tests/e2e/cobertura_diff.py" "$R/c.xml" "$theirs" --expect "$ROOT/tests/e2e/cover_coverlet.expect" \
    > "$T/diff" || fail "ours and coverlet's differ: $(cat "$T/diff")"
note "coverlet: $(tail -1 "$T/diff")"

# 3. a test host killed by SIGKILL mid-run
K=$T/kill
mkdir "$K"
set +e
COVER_KILL=1 cs cover -o "$K/c.xml" -- dotnet test "$TESTS" > "$K/out" 2> "$K/err"
rc=$?
set -e
[ "$rc" -ne 0 ] || fail "the killed run should fail (the test host crashed), got 0"
grep -q "Test host process crashed" "$K/out" "$K/err" || fail "the test host was not killed: $(tail -5 "$K/out" "$K/err")"
n=$(line_of "$SRC/Shapes.cs" 'public static int AfterSpin() => 42;')
h=$(hits "$K/c.xml" Shapes.cs "$n")
[ "$h" != none ] && [ "$h" -gt 0 ] || fail "killed host: AfterSpin (line $n) ran before the kill, hits: $h"
n=$(line_of "$SRC/Shapes.cs" 'acc += i % 7;')
assert_eq "killed host: Spin's loop body hits" "$(hits "$K/c.xml" Shapes.cs "$n")" 1000
note "killed host: exit $rc, the lines it ran before SIGKILL are there (Spin's loop: 1000 hits)"

# 4. two test hosts, one report
M=$T/merge
mkdir "$M"
cs cover -o "$M/c.xml" --counters "$M/counters" -- sh -c \
    "dotnet test '$TESTS' --filter FullyQualifiedName~BranchTests.Signs > /dev/null &&
     dotnet test '$TESTS' --filter FullyQualifiedName~BranchTests.Days > /dev/null" 2> "$M/err" ||
    fail "two test runs under cover failed: $(cat "$M/err")"
assert_eq "two test hosts: counter files" "$(ls "$M/counters" | grep -c '^cover-')" 2
R=$M expect_hit "first host's test" Shapes.cs 'return "positive";'
R=$M expect_hit "second host's test" Shapes.cs 'case 1: return "mon";'
R=$M expect_miss "neither ran Sizes" Shapes.cs '< 10 => "small",'
note "two test hosts: one report with both"

# 5. a solution of two test projects: two hosts at once, one report
S=$T/solution
mkdir "$S"
cs cover -o "$S/c.xml" --counters "$S/counters" -- \
    dotnet test "$ROOT/tests/apps/cover.slnx" --no-build > "$S/out" 2> "$S/err" ||
    fail "dotnet test of cover.slnx under cover failed: $(tail -5 "$S/out" "$S/err")"
assert_eq "solution: test hosts (counter files)" "$(ls "$S/counters" | grep -c '^cover-')" 2
grep -q "CoverMoreTests.dll" "$S/out" || fail "solution: CoverMoreTests did not run: $(tail -5 "$S/out")"
R=$S expect_hit "CoverMoreTests' line" Shapes.cs 'return "negative";'
R=$S expect_hit "CoverMoreTests' switch arm" Shapes.cs '< 100 => "medium",'
R=$S expect_hit "CoverTests' line" Shapes.cs 'case 1: return "mon";'
R=$S expect_miss "neither project's line" Shapes.cs 'case 3: return "wed";'
n=$(line_of "$SRC/Shapes.cs" 'return "positive";')
alone=$(hits "$T/run/c.xml" Shapes.cs "$n")
assert_eq "solution: a line both hosts ran (CoverTests' hits + CoverMoreTests' 1)" \
    "$(hits "$S/c.xml" Shapes.cs "$n")" "$((alone + 1))"
note "solution of two test projects: one report, $alone + 1 hits of a line both ran"
