# `corscope ps` beside processes whose diagnostics socket accepts and never
# answers (a runtime held up, or something posing as one: three here, with
# escape sequences in their command lines), and a real .NET program: the
# runtimes are asked all at once, within 2 s in all, the real one's version
# is shown, and what the processes say of themselves is printed escaped.  Before (issue 20.7) each silent socket cost 5 s, one
# after the other, and the command lines drove the terminal.
source "$(dirname "$0")/lib.sh"

cat > "$T/silent.py" <<'PY'
import os, socket, sys
pid = os.getpid()
stat = open(f"/proc/{pid}/stat").read()
key = stat[stat.rindex(")") + 2:].split()[19]  # field 22: the start time
path = f"{os.environ.get('TMPDIR', '/tmp')}/dotnet-diagnostic-{pid}-{key}-socket"
s = socket.socket(socket.AF_UNIX)
s.bind(path)
s.listen(64)
print("ready", flush=True)
held = []
try:
    while True:
        held.append(s.accept()[0])
finally:
    os.unlink(path)
PY
pids=""
cleanup() { for p in $pids; do kill "$p" 2> /dev/null || true; done; rm -rf "$T"; }
trap cleanup EXIT
for i in 1 2 3; do
    python3 "$T/silent.py" "silent$i$(printf '\033]0;owned\007\033[2J')" > "$T/silent$i.out" 2>&1 &
    pids="$pids $!"
done
dotnet "$APPS/CpuShares/CpuShares.dll" 30 > /dev/null &
real=$!
pids="$pids $real"
for i in 1 2 3; do
    for _ in $(seq 100); do grep -q ready "$T/silent$i.out" 2> /dev/null && break; sleep 0.1; done
done
for _ in $(seq 100); do ls "${TMPDIR:-/tmp}"/dotnet-diagnostic-"$real"-* > /dev/null 2>&1 && break; sleep 0.1; done

t0=$(date +%s%3N)
cs ps > "$T/ps.txt" 2> "$T/ps.err" || fail "ps: $(cat "$T/ps.err")"
took=$(( $(date +%s%3N) - t0 ))
note "ps took $took ms beside 3 silent sockets"
[ "$took" -lt 4000 ] || fail "ps took $took ms beside 3 silent sockets"
assert_eq "silent processes listed" "$(grep -c 'silent\.py silent[123]' "$T/ps.txt")" 3
if grep -q $'\e' "$T/ps.txt"; then fail "an escape sequence printed as it is: $(grep $'\e' "$T/ps.txt" | cat -v)"; fi
grep -q 'silent1\\x1b\]0;owned\\x07\\x1b\[2J' "$T/ps.txt" || fail "the command line is not shown escaped: $(grep silent1 "$T/ps.txt" | cat -v)"
version=$(awk -v p="$real" '$1 == p { print $2 }' "$T/ps.txt")
[[ "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+ ]] || fail "the real runtime's version: '$version': $(cat "$T/ps.txt")"
note "the real program's runtime: $version; the silent ones shown escaped"
