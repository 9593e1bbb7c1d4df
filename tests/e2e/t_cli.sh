# The command line: help and version; every mistake gets one `corscope:` line
# and a non-zero status, never a crash; existing files are not overwritten
# without --force; the program's exit status comes back.
source "$(dirname "$0")/lib.sh"

# expect_error STATUS PATTERN ARGS...: exactly one stderr line, matching
expect_error() {
    local want=$1 pattern=$2 rc=0
    shift 2
    cs "$@" > "$T/out" 2> "$T/err" || rc=$?
    assert_eq "corscope $*: status" "$rc" "$want"
    assert_eq "corscope $*: stderr lines" "$(wc -l < "$T/err")" 1
    grep -Eq "^corscope: $pattern" "$T/err" || fail "corscope $*: said '$(cat "$T/err")'"
}

cs --version | grep -q '^corscope [0-9]' || fail "--version"
# (to a file: grep -q on a pipe may leave before a long help is written, and
# pipefail would take the writer's SIGPIPE for a failure)
for c in record report check; do
    cs $c --help > "$T/help.txt" || fail "$c --help exited $?"
    grep -q "usage: corscope $c" "$T/help.txt" || fail "$c --help"
done
cs --help | grep -q 'commands:' || fail "--help"

expect_error 2 "unknown command" frobnicate
expect_error 2 "no command to run" record
expect_error 2 ".*-i 0ms: out of range" record -i 0ms -- true
expect_error 2 ".*-i 2s: out of range" record -i 2s -- true
expect_error 2 ".*-i fast: not a duration" record -i fast -- true
expect_error 2 ".*-e gpu: unknown event" record -e gpu -- true
expect_error 2 ".*--max-depth 0: out of range" record --max-depth 0 -- true
expect_error 2 "unknown option '--bogus'" record --bogus -- true
expect_error 2 ".*--cpu-clock tsc: unknown CPU clock" record --cpu-clock tsc -- true
# options that cannot apply to what was asked for
expect_error 2 ".*--signal goes with the signal sampler" record --sampler suspend --signal SIGUSR1 -- true
expect_error 2 ".*--cpu-clock goes with the signal sampler" record --cpu-clock posix --sampler suspend -- true
expect_error 2 ".*--cpu-clock goes with -e cpu" record -e wall --cpu-clock posix -- true
expect_error 2 "option -o needs a value" record -o
expect_error 2 "no recording given" report
expect_error 2 "unknown format 'svg'" report -f svg x.corscope
expect_error 2 "--include '\\(': " report --include '(' x.corscope
expect_error 2 "--to must be later" report --from 2s --to 1s x.corscope
expect_error 1 ".*nope.corscope: cannot open: No such file" report "$T/nope.corscope"
expect_error 1 ".*nope.corscope: cannot open" check "$T/nope.corscope"
mkdir "$T/dir.corscope"
expect_error 1 ".*dir.corscope: is a directory" report "$T/dir.corscope"
printf 'hello world, this is not a recording at all' > "$T/text.corscope"
expect_error 1 ".*text.corscope: not a corscope recording" check "$T/text.corscope"

# outputs: existing file, symlink, directory, unwritable place
touch "$T/exists.corscope"
expect_error 1 ".*exists.corscope exists \\(use --force" record -o "$T/exists.corscope" -- true
ln -s "$T/exists.corscope" "$T/link.corscope"
expect_error 1 ".*link.corscope is a symbolic link" record --force -o "$T/link.corscope" -- true
expect_error 1 "cannot create /proc/nope/x.corscope" record -o /proc/nope/x.corscope -- true
expect_error 127 "cannot run 'no-such-program-here'" record -o "$T/x.corscope" -- no-such-program-here
[ ! -e "$T/x.corscope" ] || fail "a failed start left a recording file behind"

# a program that is not .NET: status passes through, and we say there is no recording
rc=0
cs record -o "$T/sh.corscope" -- sh -c 'exit 7' 2> "$T/err" || rc=$?
assert_eq "non-.NET program: status" "$rc" 7
grep -q "^corscope: no recording" "$T/err" || fail "non-.NET: $(cat "$T/err")"
rc=0
cs record -o "$T/true.corscope" -- true 2> "$T/err" || rc=$?
assert_eq "non-.NET program that succeeds: status" "$rc" 1

# a real recording: mode 0600, summary line, --force replaces it
cs record -o "$T/r.corscope" -- $(app Lifecycle) return 2> "$T/err"
cp "$T/err" "$T/r.err"
assert_eq "recording mode" "$(stat -c %a "$T/r.corscope")" 600
grep -Eq '^corscope: [0-9.]+ s, cpu [0-9]+ samples?(, [a-z_-]+ [0-9]+ records?)*, [0-9]+ dropped(, [0-9]+ failed walks?)? -> .*r\.corscope$' "$T/err" || fail "summary: $(cat "$T/err")"
cs record --force -q -o "$T/r.corscope" -- $(app Lifecycle) return
cs check "$T/r.corscope" > /dev/null
# the stop-the-world sampler says, in one line, what the runtime's
# suspensions can do to a program (docs/reliability.md); the default does not
cs record --force --sampler suspend -o "$T/s.corscope" -- $(app Lifecycle) return 2> "$T/err"
[ "$(grep -c "^corscope: warning: --sampler suspend: .*lose a caught exception" "$T/err")" = 1 ] ||
    fail "suspend sampler warning: $(cat "$T/err")"
if grep -q "warning" "$T/r.err"; then fail "the default sampler warned: $(cat "$T/r.err")"; fi
# ... but not before a refusal, which stays one line
rc=0
cs record --sampler suspend --lock-min 1ms -- true 2> "$T/err" || rc=$?
assert_eq "refused suspend command line: status" "$rc" 2
assert_eq "refused suspend command line: lines" "$(wc -l < "$T/err")" 1

# report -o: written whole, the extension picks the format
cs report -o "$T/r.collapsed" "$T/r.corscope"
grep -q 'Lifecycle.Work.BurnFor [0-9]*$' "$T/r.collapsed" || fail "-o .collapsed did not pick collapsed"
expect_error 1 "cannot write /proc/nope/out.txt" report -o /proc/nope/out.txt "$T/r.corscope"
