# `corscope watch -p`, in and out, ten times (issue 22, item 3): the
# runtime never lets a profiler that rejitted code detach, so the agent
# the first watch loaded stays, dormant, and takes each later watch itself
# (agent/rendezvous.h).  On an ASP.NET Core service (tests/apps/WebApp)
# under a steady load of requests, each checked against the answer the
# service gave before any watch:
#   - ten sessions in a row, patterns alternating, each sees calls, each
#     reverts its methods; sessions 2-10 say they use the agent that stayed;
#   - every response before, during and after is right; the service has
#     one corscope library mapped, and answers after the last session;
#   - while a session runs, a second watch gets one line (busy); a record
#     -p gets one line (the agent takes watches, not recordings).
source "$(dirname "$0")/lib.sh"
[ -f "$APPS/WebApp/WebApp.dll" ] || fail "WebApp is not built (make apps)"
CALL='^[0-9][0-9]:[0-9][0-9]:[0-9][0-9]\.[0-9][0-9][0-9] \[[0-9]+\] '

port=$((20000 + RANDOM % 20000))
dotnet "$APPS/WebApp/WebApp.dll" "$port" > "$T/web" 2>&1 &
web=$!
stop_all() {
    [ -z "${load:-}" ] || kill $load 2> /dev/null || true
    kill "$web" 2> /dev/null || true
    wait 2> /dev/null || true
    rm -rf "$T"
}
trap stop_all EXIT
url=http://127.0.0.1:$port
for _ in $(seq 200); do curl -sf "$url/" > /dev/null 2>&1 && break; sleep 0.1; done
curl -sf "$url/" > /dev/null || fail "WebApp did not start: $(cat "$T/web")"
want=$(curl -sf "$url/hash/300")
[ ${#want} = 64 ] || fail "WebApp /hash/300: '$want'"

# the load: two clients, requests one after another, each answer compared
client() {
    local ok=0 bad=0 got
    while [ ! -f "$T/stop" ]; do
        got=$(curl -s --max-time 10 "$url/hash/300" || echo "curl failed $?")
        if [ "$got" = "$want" ]; then ok=$((ok + 1)); else bad=$((bad + 1)); echo "$got" >> "$T/bad"; fi
        echo "$ok $bad" > "$T/load$1"
    done
}
client 1 &
load=$!
client 2 &
load="$load $!"
sleep 1

patterns=('System.Convert.ToHexString' 'System.Security.Cryptography.SHA256.HashData')
for i in $(seq 1 10); do
    p=${patterns[$((i % 2))]}
    cs watch -p "$web" -d 5s --count 3 "$p" > "$T/out$i" 2> "$T/err$i" ||
        fail "session $i ($p): exit $?: $(cat "$T/err$i")"
    n=$(grep -cE "$CALL" "$T/out$i" || true)
    [ "$n" -ge 1 ] || fail "session $i ($p): no call shown: $(cat "$T/err$i")"
    grep -q 'have their original code back' "$T/err$i" || fail "session $i: no revert: $(cat "$T/err$i")"
    if [ "$i" = 1 ]; then
        grep -q "^corscope: attaching to process $web" "$T/err$i" || fail "session 1: $(cat "$T/err$i")"
    else
        grep -q "^corscope: process $web has corscope's agent loaded since an earlier watch; it takes this one" \
            "$T/err$i" || fail "session $i did not use the agent that stayed: $(cat "$T/err$i")"
    fi
    note "session $i: $p: $n calls, reverted (answers so far right/wrong: $(cat "$T/load1"), $(cat "$T/load2"))"
done
grep -m1 -E "$CALL" "$T/out2" | grep -q 'Convert.ToHexString(' || fail "session 2's line: $(head -3 "$T/out2")"
grep -m1 -E "$CALL" "$T/out1" | grep -q 'SHA256.HashData(' || fail "session 1's line: $(head -3 "$T/out1")"

# one overload of the framework's by its parameters, a generic one among
# them (its type arguments are not compared: the name alone is shown)
cs watch -p "$web" -d 1s 'System.Security.Cryptography.SHA256.HashData(ReadOnlySpan<byte>, Span<byte>)' \
    > "$T/out" 2> "$T/err" || fail "HashData(ReadOnlySpan<byte>, Span<byte>): exit $?: $(cat "$T/err")"
grep -q "watching 1 method matching 'System.Security.Cryptography.SHA256.HashData(ReadOnlySpan<byte>,Span<byte>)'" "$T/err" ||
    fail "HashData(ReadOnlySpan<byte>, Span<byte>): $(cat "$T/err")"

# one session at a time; no recording from the agent that stayed
cs watch -p "$web" -d 4s 'System.Convert.ToHexString' > "$T/outb" 2> "$T/errb" &
bg=$!
sleep 2
expect_error "second watch meanwhile" 1 "process $web (.*) is already being recorded by corscope (or watched: one session at a time)" \
    cs watch -p "$web" -d 1s 'System.Convert.ToHexString'
wait "$bg" || fail "the watch beside a refused one: exit $?: $(cat "$T/errb")"
grep -qE "$CALL" "$T/outb" || fail "the watch beside a refused one saw no call: $(cat "$T/errb")"
expect_error "record -p" 1 "has corscope's agent loaded since a watch (.*): it takes further .corscope watch -p. sessions, not recordings" \
    cs record -p "$web" -d 1s -o "$T/r.corscope"
[ ! -s "$T/r.corscope" ] || fail "record -p wrote a recording: $(ls -l "$T/r.corscope")"

touch "$T/stop"
wait $load
load=
read -r ok bad < <(cat "$T/load1" "$T/load2" | awk '{ o += $1; b += $2 } END { print o, b }')
[ "$bad" = 0 ] || fail "$bad wrong answers during the sessions (of $((ok + bad))): $(head -3 "$T/bad")"
assert_ge "answers checked" "$ok" 20
libs=$(grep -c 'libcorscope.so' "/proc/$web/maps" | tr -d ' ')
[ "$(awk '/libcorscope.so/ { print $NF }' "/proc/$web/maps" | sort -u | wc -l)" = 1 ] ||
    fail "more than one corscope library in the service: $(grep libcorscope "/proc/$web/maps")"
[ "$(curl -sf "$url/hash/300")" = "$want" ] || fail "the service's answer after the sessions"
note "11 sessions; $ok answers all right; one agent library mapped ($libs mappings)"
sock=$(ls /proc/"$web"/root/tmp/corscope-agent-* 2> /dev/null | head -1)
[ -S "$sock" ] || fail "the dormant agent's socket is not there"
[ "$(stat -c %a "$sock")" = 600 ] || fail "the agent's socket is not 0600: $(stat -c %a "$sock")"
curl -sf "$url/quit" > /dev/null 2>&1 || true
wait "$web" || fail "the service's exit after the sessions: $?: $(tail -5 "$T/web")"
[ ! -e "${sock#/proc/$web/root}" ] || fail "the agent's socket stayed after the process ended"
note "the service ended normally; the agent's socket (0600) went with it"

# a socket file left by an earlier process of the same pid (killed before
# its Shutdown) is not an agent: the watch attaches as usual, and the agent,
# dormant after it, replaces the file with its own
W=$APPS/WatchApp/WatchApp.dll
dotnet "$W" serve 8 > "$T/serve" 2>&1 &
svc=$!
for _ in $(seq 100); do grep -q '^ready' "$T/serve" && break; sleep 0.1; done
grep -q '^ready' "$T/serve" || fail "WatchApp serve did not start"
stale=${TMPDIR:-/tmp}/corscope-agent-$svc
python3 -c 'import socket, sys; s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET); s.bind(sys.argv[1])' "$stale"
chmod 600 "$stale"
cs watch -p "$svc" --count 1 'Pricing.Quote' > "$T/out" 2> "$T/err" || fail "watch beside a stale socket: exit $?: $(cat "$T/err")"
grep -q "^corscope: attaching to process $svc" "$T/err" || fail "stale socket taken for an agent: $(cat "$T/err")"
grep -qE "$CALL" "$T/out" || fail "stale socket: no call shown: $(cat "$T/err")"
cs watch -p "$svc" --count 1 'Pricing.Check' > "$T/out" 2> "$T/err" || fail "second watch after a stale socket: exit $?: $(cat "$T/err")"
grep -q "has corscope's agent loaded since an earlier watch" "$T/err" || fail "the agent did not replace the stale socket: $(cat "$T/err")"
wait "$svc" || fail "WatchApp serve after the watches: exit $?: $(cat "$T/serve")"
grep -q '^served [0-9]' "$T/serve" || fail "WatchApp serve did not finish"
[ ! -e "$stale" ] || fail "the agent's socket stayed after WatchApp's exit"
note "a stale socket file: attached as usual, replaced by the agent's own, gone at the exit"
