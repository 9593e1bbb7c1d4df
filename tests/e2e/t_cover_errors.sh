# `corscope cover` and bad input: one clear line and a non-zero exit for a
# bad command line, an unwritable report, a program that is not .NET; and
# the program never breaks when an assembly has no PDB (listed, method
# entries with --include), a Windows PDB, a PDB of another build, a
# malformed PDB (each listed with why).
source "$(dirname "$0")/lib.sh"
DEMO=$APPS/Demo
[ -f "$DEMO/Demo.dll" ] || fail "Demo is not built (make apps)"

expect_error "no command" 2 "no command to run" cs cover
expect_error "unknown format" 2 "unknown report format" cs cover -o out.pdf -- true
expect_error "unknown option" 2 "unknown option" cs cover --frobnicate -- true
expect_error "a glob with a comma" 2 "not a glob" cs cover --include 'a,b' -- true
expect_error "unwritable report" 1 "cannot write" cs cover -o /nonexistent/dir/c.xml -- true
expect_error "not a .NET program" 1 "no coverage: no counter file" cs cover -o "$T/c.xml" -- true
expect_error "no such program" 127 "cannot run" cs cover -o "$T/c.xml" -- /nonexistent/program
expect_error "report of no directory" 1 "cannot read" cs cover report "$T/none" -o "$T/c.xml"
mkdir "$T/used"
touch "$T/used/cover-1.bin"
expect_error "counters of another run" 1 "another run" cs cover --counters "$T/used" -o "$T/c.xml" -- true
printf 'not a counter file' > "$T/used/cover-1.bin"
expect_error "a damaged counter file" 1 "none of them readable" cs cover report "$T/used" -o "$T/c.xml"

# the Demo program, copied with a PDB that is missing, foreign, Windows or
# broken: it must do what it does without us (price and sign its orders:
# how many batches depends on the machine's speed), and be listed
expected='^demo: [0-9]+ batches of 5000 orders priced and signed$'
dotnet "$DEMO/Demo.dll" 2>&1 | head -1 | grep -Eq "$expected" || fail "Demo without us: $(dotnet "$DEMO/Demo.dll" 2>&1 | head -3)"
# the copy's CodeView entry names a PDB path that does not exist (the
# build's own, under build/apps-obj, would be found there): only the PDB
# beside it counts
hide_build_pdb() {
    python3 - "$1" << 'EOF'
import sys
p = sys.argv[1]
data = bytearray(open(p, 'rb').read())
at = data.find(b'RSDS')
assert at > 0, 'no CodeView entry'
start = at + 24
end = data.index(b'\0', start)
data[start:end] = b'/' + b'x' * (end - start - 5) + b'.pdb'
open(p, 'wb').write(bytes(data))
EOF
}
run_demo() { # NAME PDB-SETUP [cover options]
    local name=$1 setup=$2
    shift 2
    rm -rf "$T/$name"
    cp -r "$DEMO" "$T/$name"
    hide_build_pdb "$T/$name/Demo.dll"
    eval "$setup"
    cs cover -o "$T/$name.xml" -o "$T/$name.json" "$@" -- dotnet "$T/$name/Demo.dll" > "$T/$name.out" 2> "$T/$name.err" ||
        fail "$name: cover failed: $(cat "$T/$name.err")"
    head -1 "$T/$name.out" | grep -Eq "$expected" || fail "$name: the program's output changed: $(head -3 "$T/$name.out")"
}
run_demo good ":"
grep -q "^| Demo " "$T/good.err" || fail "good: Demo not covered: $(cat "$T/good.err")"
grep -q 'class name="Demo.Parser"' "$T/good.xml" || fail "good: no Demo.Parser class"
run_demo excluded ":" --exclude 'Demo.Pars*'
grep -q "^| Demo " "$T/excluded.err" || fail "--exclude Demo.Pars*: Demo not covered: $(cat "$T/excluded.err")"
! grep -q 'class name="Demo.Parser"' "$T/excluded.xml" || fail "--exclude Demo.Pars*: Demo.Parser is still there"
run_demo included ":" --include 'Demo.Parser'
[ "$(grep -c '<class name=' "$T/included.xml")" = 1 ] && grep -q 'class name="Demo.Parser"' "$T/included.xml" ||
    fail "--include Demo.Parser: not Demo.Parser alone: $(grep '<class name=' "$T/included.xml")"
note "--exclude and --include of a type: Demo.Parser out, then alone"
run_demo nopdb 'rm "$T/nopdb/Demo.pdb"'
grep -q "not covered, no PDB: Demo" "$T/nopdb.err" || fail "no PDB: not listed: $(cat "$T/nopdb.err")"
run_demo nopdb_included 'rm "$T/nopdb_included/Demo.pdb"' --include Demo
row=$(grep "^| Demo " "$T/nopdb_included.err") || fail "no PDB, --include Demo: no row: $(cat "$T/nopdb_included.err")"
methods=$(echo "$row" | awk -F'|' '{ gsub(/[ %]/, "", $5); print $5 }')
awk -v m="$methods" 'BEGIN { exit !(m > 25 && m < 100) }' || fail "no PDB, --include Demo: method coverage $methods, expected some methods called (not the record's generated ones): $row"
grep -q "Demo: no PDB" "$T/nopdb_included.err" || fail "no PDB, --include: the note is missing: $(cat "$T/nopdb_included.err")"
note "no PDB: listed; with --include Demo, method entries counted ($methods% of methods)"
run_demo windows 'printf "Microsoft C/C++ MSF 7.00\r\n\032DS\0\0\0" > "$T/windows/Demo.pdb"'
grep -q "Demo: not covered: only a Windows PDB" "$T/windows.err" || fail "Windows PDB: $(cat "$T/windows.err")"
run_demo foreign 'cp "$APPS/Naming/Naming.pdb" "$T/foreign/Demo.pdb"'
grep -q "Demo: not covered: its PDB is from another build" "$T/foreign.err" || fail "foreign PDB: $(cat "$T/foreign.err")"
run_demo broken 'head -c 300 "$DEMO/Demo.pdb" > "$T/broken/Demo.pdb"'
grep -q "Demo: not covered: " "$T/broken.err" || fail "broken PDB: $(cat "$T/broken.err")"
note "Windows, foreign and broken PDBs: the program ran as always, each listed: $(grep -h 'Demo: not covered' "$T"/windows.err "$T"/foreign.err "$T"/broken.err | tr '\n' ';')"
