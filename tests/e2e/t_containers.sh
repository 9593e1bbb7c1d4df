# record -p and ps across namespaces, as root (CI is), with util-linux:
#   - a container: own pid, mount and network namespaces, its own /tmp (a
#     tmpfs), the program pid 1 in it; corscope, installed with `dotnet tool
#     install` from the package `make nupkg` built, runs from a directory
#     the container cannot see, so the agent goes in as a copy in its /tmp,
#     and `record -p -o c.html` writes a flame graph beside the recording; ps
#     shows the pid it knows itself by; the recording is written on the
#     host where asked (passed open to the agent), with the program's CPU
#     shares (5:3:2) in it; a second attach, with corscope's other copy,
#     loads the same agent file again (a process loads the agent once);
#   - a systemd-style private /tmp (a directory bind-mounted on /tmp in a
#     mount namespace of its own) and a service running as another user:
#     root attaches; the recording is root's, mode 0600, where root asked;
#   - another user cannot attach to either, and ps does not list them.
# With CORSCOPE_TEST_RUNTIME=8 the program is a .NET 8 one.
source "$(dirname "$0")/lib.sh"

[ "$(id -u)" = 0 ] || fail "needs root (unshare, setns), as CI runs it"
# the container's /tmp is a tmpfs of its own: a checkout under /tmp (the
# program it runs) would be hidden from it
case "$(readlink -f "$ROOT")/" in
/tmp/*) fail "the checkout is under /tmp, which the container replaces with its own tmpfs: run this test from a checkout elsewhere" ;;
esac
NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups)
PROG=$(app CpuShares)
PIDS=""
cleanup() {
    # shellcheck disable=SC2086
    [ -n "$PIDS" ] && kill $PIDS 2> /dev/null
    rm -rf "$T"
}
trap cleanup EXIT

# the .NET process a wrapper started in the background became or started:
# $1 is the wrapper's pid (unshare, which forks once more with --fork)
dotnet_under() {
    local i p
    for i in $(seq 100); do
        for p in "$1" $(cat /proc/"$1"/task/*/children 2> /dev/null); do
            for p in "$p" $(cat /proc/"$p"/task/*/children 2> /dev/null); do
                grep -q libcoreclr /proc/"$p"/maps 2> /dev/null && { echo "$p"; return; }
            done
        done
        sleep 0.1
    done
}

# shares of the three methods in a recording, as "A B C" (percent of the three)
shares() {
    cs report -f top --limit 0 "$1" > "$T/top.txt" 2> /dev/null
    local a b c
    a=$(top_total "$T/top.txt" CpuShares.Work.Alpha)
    b=$(top_total "$T/top.txt" CpuShares.Work.Beta)
    c=$(top_total "$T/top.txt" CpuShares.Work.Gamma)
    awk -v a="$a" -v b="$b" -v c="$c" 'BEGIN { s = a + b + c; if (s == 0) s = 1
        printf "%.1f %.1f %.1f\n", 100 * a / s, 100 * b / s, 100 * c / s }'
}

# corscope as a newcomer gets it, `dotnet tool install` of the package
# `make nupkg` built, into a directory the containers do not see (under the
# host's /tmp), in a home and a package folder of the test's own
VERSION=$(sed -n 's/^VERSION := //p' "$ROOT/Makefile")
NUPKG=$ROOT/build/corscope.$VERSION.nupkg
[ -f "$NUPKG" ] || fail "no $NUPKG (make nupkg)"
mkdir -p "$T/feed" "$T/home"
cp "$NUPKG" "$T/feed/"
HOME=$T/home DOTNET_CLI_HOME=$T/home NUGET_PACKAGES=$T/packages \
    dotnet tool install --tool-path "$T/tools" corscope --add-source "$T/feed" > "$T/tool.out" 2>&1 ||
    fail "dotnet tool install: $(cat "$T/tool.out")"
ELSEWHERE=$T/tools/corscope
cmp -s "$(dirname "$(readlink -f "$ELSEWHERE")")/libcorscope.so" "$ROOT/build/libcorscope.so" ||
    fail "the installed tool's agent is not build/libcorscope.so (make nupkg)"

# ---- a container --------------------------------------------------------------
# shellcheck disable=SC2086
unshare --pid --fork --mount --net --mount-proc --propagation private \
    sh -c "mount -t tmpfs tmpfs /tmp && cd / && exec $PROG 120" > "$T/c.out" 2>&1 &
PIDS="$PIDS $!"
C=$(dotnet_under $!)
[ -n "$C" ] || fail "the container's program did not start: $(cat "$T/c.out")"
PIDS="$PIDS $C"
inner=$(awk '/^NSpid:/ { print $NF }' /proc/"$C"/status)
assert_eq "its pid in the container" "$inner" 1
for _ in $(seq 50); do ls /proc/"$C"/root/tmp/dotnet-diagnostic-1-*-socket > /dev/null 2>&1 && break; sleep 0.1; done
cs ps > "$T/ps.txt"
grep -q "^ *$C .*(in a container, as pid 1)\$" "$T/ps.txt" || fail "ps: $(cat "$T/ps.txt")"
note "ps: $(grep "^ *$C " "$T/ps.txt")"

# (--cpu-clock perf: the shares below from 1 ms samples, not from this
# VM's default POSIX timer at the 250 Hz tick, with a fourth of them)
timeout -k 5 60 "$ELSEWHERE" record -p "$C" -d 3s -i 1ms --cpu-clock perf -o "$T/c.html" 2> "$T/rec.err" ||
    fail "record -p in a container: $(cat "$T/rec.err")"
# the flame graph, written at the end, beside its recording
grep -q 'CpuShares\.Work\.Alpha' "$T/c.html" || fail "the container's flame graph does not name CpuShares.Work.Alpha"
grep -q "attached to process $C (.*pid 1 in its container)" "$T/rec.err" || fail "no attach line: $(cat "$T/rec.err")"
copy=$(ls -d /proc/"$C"/root/tmp/corscope-*/libcorscope.so 2> /dev/null | head -1)
[ -n "$copy" ] || fail "no copy of the agent in the container's /tmp: $(ls -la /proc/"$C"/root/tmp)"
cmp -s "$copy" "$ROOT/build/libcorscope.so" || fail "the copy differs from the agent"
[ "$(stat -c %a "$copy")" = 644 ] || fail "the copy's mode: $(stat -c %a "$copy")"
grep -q "/tmp/corscope-[0-9a-f]*/libcorscope.so" /proc/"$C"/maps || fail "the copy is not what the process loaded"
[ "$(stat -c '%U %a' "$T/c.corscope")" = "root 600" ] || fail "the recording: $(stat -c '%U %a' "$T/c.corscope")"
cs check "$T/c.corscope" > "$T/check.txt" || fail "check: $(tail -3 "$T/check.txt")"
grep -q "^  pid          1\$" "$T/check.txt" || fail "the recording's pid: $(grep pid "$T/check.txt")"
grep -q "^  mode         attached" "$T/check.txt" || fail "not attached: $(grep mode "$T/check.txt")"
read -r a b c < <(shares "$T/c.corscope")
assert_near "container: Alpha's share" "$a" 50 12
assert_near "container: Beta's share" "$b" 30 12
assert_near "container: Gamma's share" "$c" 20 12
# again, with the corscope the container sees no more than the other: the
# agent it loaded the first time is named again
cs record -q -p "$C" -d 1s -o "$T/c2.corscope" 2> "$T/rec2.err" || fail "second attach: $(cat "$T/rec2.err")"
[ "$(grep -c libcorscope.so /proc/"$C"/maps | tr -d ' ')" -ge 1 ] || fail "no agent mapped"
[ "$(awk '/libcorscope.so/ { print $NF }' /proc/"$C"/maps | sort -u | wc -l)" = 1 ] ||
    fail "two agents loaded: $(awk '/libcorscope.so/ { print $NF }' /proc/"$C"/maps | sort -u)"
note "container: recorded on the host as root 0600, shares $a/$b/$c, attached twice with one agent"

# another user: not listed, refused
"${NOBODY[@]}" "$CORSCOPE" ps > "$T/ps-nobody.txt" 2>&1 || true
grep -q "^ *$C " "$T/ps-nobody.txt" && fail "ps lists root's container to another user"
rc=0; "${NOBODY[@]}" "$CORSCOPE" record -p "$C" -d 1s -o /dev/null 2> "$T/nobody.err" || rc=$?
assert_eq "another user: exit status" "$rc" 1
grep -q "belongs to another user" "$T/nobody.err" || fail "another user: $(cat "$T/nobody.err")"

# ---- a service with a private /tmp, as another user ---------------------------------
PRIV=$T/private-tmp
mkdir -p "$PRIV" && chmod 1777 "$PRIV"
# shellcheck disable=SC2086
unshare --mount --propagation private sh -c "mount --bind $PRIV /tmp && cd / && \
    exec ${NOBODY[*]} env HOME=/tmp $PROG 120" > "$T/p.out" 2>&1 &
PIDS="$PIDS $!"
S=$(dotnet_under $!)
[ -n "$S" ] || fail "the service did not start: $(cat "$T/p.out")"
PIDS="$PIDS $S"
for _ in $(seq 50); do ls "$PRIV"/dotnet-diagnostic-"$S"-*-socket > /dev/null 2>&1 && break; sleep 0.1; done
ls "$PRIV"/dotnet-diagnostic-"$S"-*-socket > /dev/null 2>&1 || fail "no socket in the private /tmp"
# its own socket: the name carries the process's start time, so a stale
# socket of an earlier process with this pid (one that died without
# removing it) does not count
started=$(sed 's/.*) //' /proc/"$S"/stat | awk '{ print $20 }')
ls "$PRIV"/dotnet-diagnostic-"$S"-"$started"-socket > /dev/null 2>&1 ||
    fail "the private /tmp's socket is not the service's: $(ls "$PRIV")"
[ -e /tmp/dotnet-diagnostic-"$S"-"$started"-socket ] && fail "the service's socket is in the host's /tmp"
[ "$(stat -c %U /proc/"$S")" = nobody ] || fail "the service runs as $(stat -c %U /proc/"$S")"
timeout -k 5 60 "$ELSEWHERE" record -q -p "$S" -d 3s -i 1ms --cpu-clock perf -o "$T/p.corscope" 2> "$T/prec.err" ||
    fail "record -p a service with a private /tmp: $(cat "$T/prec.err")"
[ "$(stat -c '%U %a' "$T/p.corscope")" = "root 600" ] || fail "the recording: $(stat -c '%U %a' "$T/p.corscope")"
read -r a b c < <(shares "$T/p.corscope")
assert_near "private /tmp: Alpha's share" "$a" 50 12
# the service is nobody's: a third user is refused
rc=0; setpriv --reuid=65533 --regid=65533 --clear-groups "$CORSCOPE" record -p "$S" -d 1s -o /dev/null \
    2> "$T/other.err" || rc=$?
assert_eq "a third user: exit status" "$rc" 1
grep -q "belongs to another user" "$T/other.err" || fail "a third user: $(cat "$T/other.err")"
note "private /tmp: root attached to nobody's service, the recording root's, Alpha at $a%"
