# Continuous profiling to Grafana Pyroscope, against a loopback stand-in of
# its push API (tests/push/standin.mjs: it decodes each push.v1.PushRequest
# and the pprof in it with pprof-format, and refuses what Pyroscope
# refuses):
#   - record --push with -o: every event of tests/apps/Fleet arrives as
#     Pyroscope's .NET agent sends it (names, sample types, period types,
#     labels), in windows that tile time on the wall clock's grid, with
#     totals equal to the recording's own reports; protoc decodes the wire;
#   - record -p --push: attached to a running program, pushed, detached;
#   - an outage: the stand-in comes up in the middle; nothing is lost,
#     no gap;
#   - a server that takes each request and never answers: the program runs
#     as without it (its throws all recorded, its CPU sampled throughout),
#     record ends at its time and keeps the profiles in the spool;
#   - the spool's cap: the server away for the whole run, a small cap: the
#     oldest profiles are dropped and counted, the newest arrive, in a row;
#   - https with a certificate the test makes, basic auth from a file, a
#     bearer token, the tenant header, an extra header, https and http
#     through a proxy of the environment with credentials; a refused password
#     leaves the profiles for the next run, which sends them first; the
#     secrets are in no recording, no message and no body;
#   - the agent alone: plain `dotnet Fleet.dll` with CORSCOPE_PUSH in its
#     environment: its output and exit status as without the profiler, no
#     SIGCHLD, labels with its pid; the uploader killed mid-run leaves the
#     program running and is reaped; a bad setting leaves the program alone.
source "$(dirname "$0")/lib.sh"
source "$ROOT/tests/push/lib.sh"

CPU_TYPES='"process_cpu": ["cpu/nanoseconds", "cpu_samples/count"]'
MEM_TYPES='"memory": ["alloc_samples/count", "alloc_size/bytes"]'
EX_TYPES='"exception": ["exception/count"]'
LOCK_TYPES='"lock": ["lock_count/count", "lock_time/nanoseconds"]'
LIVE_TYPES='"memory/inuse": ["inuse_objects/count", "inuse_space/bytes"]'
EVENTS=cpu,alloc,live,exceptions,lock

# ---- record --push, with -o -------------------------------------------------
mkdir -p "$T/a"
standin "$T/a/srv"
cs record --push "http://127.0.0.1:$PORT" --push-every 1s --service fleet-e2e --label env=e2e \
    --label team=core -e $EVENTS -o "$T/a/rec.corscope" -- $(app Fleet) 4 > "$T/a/out" 2> "$T/a/err" ||
    fail "record --push: $(cat "$T/a/err")"
grep -q "^corscope: push: .* windows, \([0-9]*\) of \1 requests sent" "$T/a/err" || fail "summary: $(cat "$T/a/err")"
cpu=$(collapsed_total_of "$T/a/rec.corscope" cpu)
alloc=$(collapsed_total_of "$T/a/rec.corscope" alloc)
throws=$(collapsed_total_of "$T/a/rec.corscope" exceptions)
waits=$(collapsed_total_of "$T/a/rec.corscope" lock)
live=$(collapsed_total_of "$T/a/rec.corscope" live)
truth=$(awk '/^truth exceptions/ { print $3 }' "$T/a/out")
# the 4 MB Fleet holds throughout: ~40 sampled objects at the 100 KB mean,
# so the live heap is never empty at a look (it was, at times, when it held
# only the startup objects the sampling happened to pick).  Which stacks
# hold it is t_live's to check (Memory.Work.Keep): here, once in about 45
# runs beside busy processes, the live megabytes were not under
# Fleet.Work.Hold (cause not found; the recording was not kept)
assert_ge "the live heap at the end, bytes (Fleet holds 4 MB)" "${live:-0}" 1000000
assert_eq "the recording's throws, as the program counted them" "$throws" "$truth"
check "$T/a/srv" "{\"service\": \"fleet-e2e\",
    \"labels\": {\"env\": \"e2e\", \"team\": \"core\", \"spy_name\": \"dotnetspy\", \"otel.scope.name\": \"corscope\",
                \"process.runtime.name\": \".NET\", \"process.runtime.version\": \"*\", \"hostname\": \"*\", \"pid\": \"*\"},
    \"names\": [\"process_cpu\", \"memory\", \"memory/inuse\", \"exception\", \"lock\"],
    \"types\": {$CPU_TYPES, $MEM_TYPES, $LIVE_TYPES, $EX_TYPES, $LOCK_TYPES},
    \"periods\": {\"process_cpu\": \"cpu/nanoseconds\", \"memory\": \"space/bytes\", \"exception\": \"cpu/nanoseconds\"},
    \"contiguous\": [\"process_cpu\"], \"aligned\": 1000000000, \"min_windows\": {\"process_cpu\": 4},
    \"totals\": {\"process_cpu:cpu\": $((cpu * 1000)), \"memory:alloc_size\": $alloc,
                 \"exception:exception\": $throws, \"lock:lock_time\": $waits},
    \"last\": {\"memory/inuse:inuse_space\": $live},
    \"headers\": {\"content-type\": \"application/proto\", \"connect-protocol-version\": \"1\"}}" ||
    fail "record --push: what arrived"
first=$(ls "$T/a/srv"/req-*.bin | head -1)
protoc --decode=push.v1.PushRequest -I "$PUSH/proto" "$PUSH/proto/push.proto" < "$first" > "$T/a/decoded" ||
    fail "protoc cannot decode a push request"
grep -q 'name: "__name__"' "$T/a/decoded" && grep -q 'raw_profile: "\\037\\213' "$T/a/decoded" ||
    fail "protoc's reading: $(head -20 "$T/a/decoded")"
note "record --push: cpu $cpu us, alloc $alloc bytes, $throws throws, $waits ns of lock waits, all pushed; the live heap ($live bytes) as of the end"
stop_standin "$SPID"

# ---- record -p: attached to a running program, pushed, detached -----------------
standin "$T/a/srv2"
dotnet "$APPS/Fleet/Fleet.dll" 12 > "$T/a/attached.out" 2>&1 &
fleet=$!
for _ in $(seq 200); do ls "${TMPDIR:-/tmp}"/dotnet-diagnostic-"$fleet"-*-socket > /dev/null 2>&1 && break; sleep 0.05; done
sleep 1
cs record -p "$fleet" -d 3s --push "http://127.0.0.1:$PORT" --push-every 1s --service attached \
    > /dev/null 2> "$T/a/attach.err" || fail "record -p --push: $(cat "$T/a/attach.err")"
grep -q "detached from process $fleet" "$T/a/attach.err" || fail "no detach: $(cat "$T/a/attach.err")"
check "$T/a/srv2" "{\"service\": \"attached\", \"pid\": $fleet, \"names\": [\"process_cpu\"],
    \"contiguous\": [\"process_cpu\"], \"min_windows\": {\"process_cpu\": 2}}" > "$T/a/attach.check" ||
    fail "record -p --push: $(cat "$T/a/attach.check")"
wait "$fleet" && st=0 || st=$?
assert_eq "the attached program's exit status" "$st" 0
note "record -p --push: pushed while attached, detached, the program ran on"
stop_standin "$SPID"

# ---- an outage: the server comes up in the middle ------------------------------
mkdir -p "$T/b"
standin "$T/b/srv"
port=$PORT
stop_standin "$SPID"
rm -rf "$T/b/srv"
mkdir -p "$T/b/srv"
# the stand-in comes up once record has said it cannot send (a fixed delay
# raced the first push against node's start on a busy machine)
( for _ in $(seq 300); do grep -q "cannot send" "$T/b/err" 2> /dev/null && break; sleep 0.1; done
  exec node "$PUSH/standin.mjs" "$T/b/srv" --port "$port" > "$T/b/srv.log" 2>&1 ) &
late=$!
STANDINS+=("$late")
cs record --push "http://127.0.0.1:$port" --push-every 1s --service outage -e cpu \
    -o "$T/b/rec.corscope" -- $(app Fleet) 6 > /dev/null 2> "$T/b/err" || fail "record: $(cat "$T/b/err")"
grep -q "cannot send to http://127.0.0.1:$port" "$T/b/err" || fail "the outage was not said: $(cat "$T/b/err")"
grep -q "answers again" "$T/b/err" || fail "the server's return was not said: $(cat "$T/b/err")"
cpu=$(collapsed_total_of "$T/b/rec.corscope" cpu)
check "$T/b/srv" "{\"service\": \"outage\", \"contiguous\": [\"process_cpu\"],
    \"totals\": {\"process_cpu:cpu\": $((cpu * 1000))}}" || fail "after an outage: what arrived"
note "outage: $(grep -c . "$T/b/err") lines said; every window arrived once the server was back"
pkill -P "$late" 2> /dev/null || true; kill "$late" 2> /dev/null || true; wait "$late" 2> /dev/null || true

# ---- a server that never answers ---------------------------------------------------
mkdir -p "$T/h"
standin "$T/h/srv" 0 --hang
started=$(date +%s%N)
cs record --push "http://127.0.0.1:$PORT" --push-every 1s --push-timeout 1s --push-linger 1s \
    --push-spool "$T/h/spool" --service hung -e cpu,exceptions -o "$T/h/rec.corscope" -- \
    $(app Fleet) 4 > "$T/h/out" 2> "$T/h/err" || fail "record to a server that never answers: $(cat "$T/h/err")"
took_ms=$(( ($(date +%s%N) - started) / 1000000 ))
hung=$(find "$T/h/srv" -name 'hung-*.json' | wc -l)
assert_ge "requests the silent server took" "$hung" 1
grep -q "kept in" "$T/h/err" || fail "the unanswered profiles were not said kept: $(cat "$T/h/err")"
# the program ran as it does: every throw it counted is in the recording,
# and its work was sampled without a drop (an agent thread stalled by the
# upload would have filled the sample rings; the count of samples depends
# on the CPU the program got, so only its floor is asked)
truth=$(sed -n 's/^truth exceptions //p' "$T/h/out")
thrown=$(collapsed_total_of "$T/h/rec.corscope" exceptions)
assert_eq "throws recorded beside a silent server" "$thrown" "$truth"
cs check "$T/h/rec.corscope" | tr ' ' '\n' > "$T/h/counters"
dropped=$(awk -F= 'NF == 2 && $1 == "dropped_samples" { print $2 }' "$T/h/counters")
assert_eq "samples dropped beside a silent server" "${dropped:-0}" 0
samples=$(awk -F= 'NF == 2 && $1 == "samples" { print $2 }' "$T/h/counters")
assert_ge "CPU samples of a 4 s program beside a silent server" "${samples:-0}" 20
# record itself ends at its time: the program's 4 s, the linger, a margin
[ "$took_ms" -lt 20000 ] || fail "record took $took_ms ms beside a silent server"
note "a silent server: $hung requests unanswered, $thrown of $truth throws and $samples samples recorded, record took $took_ms ms"
stop_standin "$SPID"

# ---- the spool's cap ------------------------------------------------------------------
mkdir -p "$T/c/srv"
# no server during the run; it comes up once the program has ended, while
# record lingers
( while ! [ -e "$T/c/ended" ]; do sleep 0.1; done
  exec node "$PUSH/standin.mjs" "$T/c/srv" --port "$port" > "$T/c/srv.log" 2>&1 ) &
late=$!
STANDINS+=("$late")
( cs record --push "http://127.0.0.1:$port" --push-every 1s --push-spool-max 6KiB --push-linger 20s \
    --push-spool "$T/c/spool" --service capped -e wall -o "$T/c/rec.corscope" -- \
    $(app Fleet) 6 wait-file "$T/c/ended" > /dev/null 2> "$T/c/err" ) &
rec=$!
sleep 8
touch "$T/c/ended"
wait "$rec" || fail "record with a capped spool: $(cat "$T/c/err")"
dropped=$(sed -n 's/.*; \([0-9]*\) dropped (.*/\1/p' "$T/c/err")
[ -n "$dropped" ] && [ "$dropped" -gt 0 ] || fail "nothing dropped under a 6 KiB cap: $(cat "$T/c/err")"
# wall: every window has samples, idle or not
check "$T/c/srv" "{\"service\": \"capped\", \"contiguous\": [\"wall\"]}" > "$T/c/check" ||
    fail "the newest profiles, in a row: $(cat "$T/c/check")"
# the ones that arrived end with the recording
summary=$(sed -n 's/^summary //p' "$T/c/check")
sent=$(echo "$summary" | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).windows.wall.count))')
windows=$(sed -n 's/.* \([0-9]*\) of \([0-9]*\) requests sent.*/\2/p' "$T/c/err")
assert_eq "profiles sent + dropped" "$((sent + dropped))" "$windows"
[ -z "$(ls -A "$T/c/spool"/*/ 2> /dev/null)" ] || fail "the spool was not emptied: $(ls -R "$T/c/spool")"
note "cap: $windows windows, the $dropped oldest dropped (said), the last $sent sent in a row"
pkill -P "$late" 2> /dev/null || true; kill "$late" 2> /dev/null || true; wait "$late" 2> /dev/null || true

# ---- https, auth, tenant, headers (corscope push of the first recording) ------------
mkdir -p "$T/d"
make_certificate "$T/d"
printf 'hunter2-secret\n' > "$T/d/password"
chmod 600 "$T/d/password"
standin "$T/d/srv" 0 --tls "$T/d/cert.pem" "$T/d/key.pem" --basic "ops:hunter2-secret" --tenant acme
cs push -q --push "https://127.0.0.1:$PORT" --push-every 1s --service tls --push-user ops \
    --push-password-file "$T/d/password" --push-tenant acme --push-header 'X-Team: core' \
    --push-ca "$T/d/cert.pem" --push-spool "$T/d/spool" "$T/a/rec.corscope" 2> "$T/d/err" ||
    fail "push over https: $(cat "$T/d/err")"
check "$T/d/srv" "{\"service\": \"tls\", \"headers\": {\"x-scope-orgid\": \"acme\", \"x-team\": \"core\",
    \"authorization\": \"Basic $(printf 'ops:hunter2-secret' | base64)\"}, \"absent\": [\"hunter2\"]}" ||
    fail "https with basic auth"
! grep -q hunter2 "$T/d/err" "$T/a/rec.corscope" || fail "the password was printed or recorded"
# the system's CA bundle does not know the test's certificate
cs push --push "https://127.0.0.1:$PORT" --push-linger 1s --push-spool "$T/d/spool2" \
    "$T/a/rec.corscope" 2> "$T/d/err2" && fail "an untrusted certificate was taken"
grep -q "not trusted" "$T/d/err2" || fail "an untrusted certificate: $(cat "$T/d/err2")"
stop_standin "$SPID"

# a wrong password: refused, kept; the next run with the right one sends it first
standin "$T/d/srv2" 0 --basic "ops:right-Zq7pw"
printf 'wrong\n' > "$T/d/wrong"
cs push --push "http://127.0.0.1:$PORT" --push-every 1s --push-user ops --push-password-file "$T/d/wrong" \
    --push-linger 1s --push-spool "$T/d/spool3" --service kept "$T/a/rec.corscope" 2> "$T/d/err3" &&
    fail "a refused password was taken for success"
grep -q "status 401" "$T/d/err3" && grep -q "not sent .*kept in" "$T/d/err3" || fail "401: $(cat "$T/d/err3")"
kept=$(sed -n 's/.*; \([0-9]*\) not sent.*/\1/p' "$T/d/err3")
printf 'right-Zq7pw\n' > "$T/d/right"
cs record --push "http://127.0.0.1:$PORT" --push-every 1s --push-user ops --push-password-file "$T/d/right" \
    --push-spool "$T/d/spool3" --service fresh -e cpu -q -o "$T/d/fresh.corscope" -- $(app Fleet) 1 \
    > /dev/null 2> "$T/d/err4" || fail "the next run: $(cat "$T/d/err4")"
# the password a recording was pushed with is nowhere in what stays on disk
# (the recording, the spool) or in what was said
[ -s "$T/d/fresh.corscope" ] || fail "record --push -o wrote no recording"
! grep -rqa 'right-Zq7pw' "$T/d/fresh.corscope" "$T/d/spool3" "$T/d/err4" ||
    fail "the push password was recorded, spooled or printed: $(grep -rla 'right-Zq7pw' "$T/d/fresh.corscope" "$T/d/spool3" "$T/d/err4")"
kept_sent=$(grep -l '"service_name": "kept"' "$T/d/srv2"/req-*.json | wc -l)
assert_eq "profiles the first run kept, sent by the next" "$kept_sent" "$kept"
stop_standin "$SPID"

# a bearer token from the environment
standin "$T/d/srv3" 0 --bearer tok-123
CORSCOPE_PUSH_TOKEN=tok-123 cs push -q --push "http://127.0.0.1:$PORT" --push-spool "$T/d/spool4" \
    "$T/a/rec.corscope" 2> "$T/d/err5" || fail "bearer: $(cat "$T/d/err5")"
check "$T/d/srv3" '{"headers": {"authorization": "Bearer tok-123"}}' > /dev/null || fail "bearer token"
stop_standin "$SPID"
# through the environment's proxies, with their credentials: a CONNECT
# tunnel for https, an absolute URI for http
mkdir -p "$T/d/proxy"
node "$PUSH/proxy.mjs" "$T/d/proxy" --auth pu:pp > "$T/d/proxy.out" 2>&1 &
STANDINS+=("$!")
for _ in $(seq 100); do [ -s "$T/d/proxy/port" ] && break; sleep 0.05; done
pport=$(cat "$T/d/proxy/port")
standin "$T/d/srv4" 0 --tls "$T/d/cert.pem" "$T/d/key.pem"
env -u NO_PROXY -u no_proxy https_proxy="http://pu:pp@127.0.0.1:$pport" "$CORSCOPE" push -q \
    --push "https://127.0.0.1:$PORT" --push-ca "$T/d/cert.pem" --push-spool "$T/d/spool5" \
    "$T/a/rec.corscope" 2> "$T/d/err6" || fail "https through a proxy: $(cat "$T/d/err6")"
grep -q "^CONNECT 127.0.0.1:$PORT auth=yes" "$T/d/proxy/proxy.log" || fail "no tunnel: $(cat "$T/d/proxy/proxy.log")"
check "$T/d/srv4" '{}' > /dev/null || fail "https through a proxy: nothing arrived"
stop_standin "$SPID"
standin "$T/d/srv5"
env -u NO_PROXY -u no_proxy http_proxy="http://pu:pp@127.0.0.1:$pport" "$CORSCOPE" push -q \
    --push "http://127.0.0.1:$PORT" --push-spool "$T/d/spool6" "$T/a/rec.corscope" 2> "$T/d/err7" ||
    fail "http through a proxy: $(cat "$T/d/err7")"
grep -q "^POST http://127.0.0.1:$PORT/push.v1.PusherService/Push auth=yes" "$T/d/proxy/proxy.log" ||
    fail "no proxied POST: $(cat "$T/d/proxy/proxy.log")"
check "$T/d/srv5" '{}' > /dev/null || fail "http through a proxy: nothing arrived"
stop_standin "$SPID"
note "https (own CA), basic auth from a file, tenant, headers, bearer token, proxies: taken; untrusted and 401 said"

# ---- the agent alone ---------------------------------------------------------------------
mkdir -p "$T/e"
standin "$T/e/srv"
agent_env=(CORECLR_ENABLE_PROFILING=1 "CORECLR_PROFILER={14DE3B91-04FE-4EFB-B588-CD7BB380C74A}"
    "CORECLR_PROFILER_PATH=$ROOT/build/libcorscope.so")
dotnet "$APPS/Fleet/Fleet.dll" 3 sigchld > "$T/e/plain.out" 2> "$T/e/plain.err" || fail "Fleet alone failed"
env "${agent_env[@]}" CORSCOPE_PUSH="http://127.0.0.1:$PORT" CORSCOPE_PUSH_EVERY=1s CORSCOPE_SERVICE=alone \
    CORSCOPE_LABELS=env=prod,region=eu CORSCOPE_OUTPUT="$T/e/alone-%p.corscope" CORSCOPE_EVENT=cpu,exceptions \
    CORSCOPE_PUSH_SPOOL="$T/e/spool" dotnet "$APPS/Fleet/Fleet.dll" 3 sigchld > "$T/e/out" 2> "$T/e/err" &&
    st=0 || st=$?
assert_eq "exit status with the agent alone" "$st" 0
assert_eq "the program's output with the agent alone" "$(sed 's/[0-9]*$//' "$T/e/out")" \
    "$(sed 's/[0-9]*$//' "$T/e/plain.out")"
grep -q "^truth sigchld 0$" "$T/e/out" || fail "the program got SIGCHLD: $(cat "$T/e/out")"
rec=$(ls "$T/e"/alone-*.corscope)
apid=${rec##*alone-}
apid=${apid%.corscope}
# the uploader ends once it has sent everything (its run's spool goes)
for _ in $(seq 100); do [ -n "$(ls "$T/e/spool"/*/ 2> /dev/null)" ] || break; sleep 0.1; done
cpu=$(collapsed_total_of "$rec" cpu)
throws=$(collapsed_total_of "$rec" exceptions)
check "$T/e/srv" "{\"service\": \"alone\", \"pid\": $apid, \"labels\": {\"env\": \"prod\", \"region\": \"eu\"},
    \"names\": [\"process_cpu\", \"exception\"], \"contiguous\": [\"process_cpu\"],
    \"totals\": {\"process_cpu:cpu\": $((cpu * 1000)), \"exception:exception\": $throws}}" ||
    fail "the agent alone: what arrived"

# its uploader killed in the middle: the program goes on and gets no
# SIGCHLD (the uploader is its sibling: this shell is both's parent, and
# reaps it)
env "${agent_env[@]}" CORSCOPE_PUSH="http://127.0.0.1:$PORT" CORSCOPE_PUSH_EVERY=1s CORSCOPE_SERVICE=killed \
    CORSCOPE_PUSH_SPOOL="$T/e/spool" dotnet "$APPS/Fleet/Fleet.dll" 4 sigchld wait-file "$T/e/go" \
    > "$T/e/out2" 2> "$T/e/err2" &
prog=$!
uploader=
for _ in $(seq 200); do
    uploader=$(pgrep -f "corscope push --agent" -P $$ | head -1 || true)
    [ -n "$uploader" ] && break
    sleep 0.05
done
[ -n "$uploader" ] || fail "no uploader beside the program"
[ "$(ps -o sid= -p "$uploader")" != "$(ps -o sid= -p "$prog")" ] || fail "the uploader shares the program's session"
[ "$(readlink /proc/"$uploader"/fd/1)" = /dev/null ] && readlink /proc/"$uploader"/fd/0 | grep -q '^pipe:' ||
    fail "the uploader's standard input and output: $(ls -l /proc/"$uploader"/fd)"
! ls -l /proc/"$uploader"/fd | grep -q "out2" || fail "the uploader holds the program's standard output"
sleep 1.5
kill -9 "$uploader"
sleep 1
touch "$T/e/go"
wait "$prog" && st=0 || st=$?
assert_eq "exit status after the uploader was killed" "$st" 0
grep -q "^truth sigchld 0$" "$T/e/out2" || fail "SIGCHLD reached the program: $(cat "$T/e/out2")"
grep -q "the uploader (process $uploader) ended before the program" "$T/e/err2" ||
    fail "the uploader's end was not said: $(cat "$T/e/err2")"

# a bad setting: the program runs as without the profiler
env "${agent_env[@]}" CORSCOPE_PUSH="ftp://127.0.0.1" dotnet "$APPS/Fleet/Fleet.dll" 1 > "$T/e/out3" \
    2> "$T/e/err3" && st=0 || st=$?
assert_eq "exit status with a bad CORSCOPE_PUSH" "$st" 0
assert_eq "messages about a bad CORSCOPE_PUSH" "$(grep -c '^corscope: ' "$T/e/err3")" 1
grep -q "CORSCOPE_PUSH: not an http:// or https:// URL; profiling is off" "$T/e/err3" || fail "$(cat "$T/e/err3")"
note "the agent alone: pushed with pid $apid; output, status, no SIGCHLD; uploader killed, said, no SIGCHLD"
stop_standin "$SPID"
# the uploaders this shell is the parent of have gone
for _ in $(seq 150); do pgrep -f "corscope push --agent" -P $$ > /dev/null || break; sleep 0.1; done
! pgrep -f "corscope push --agent" -P $$ > /dev/null || fail "an uploader outlived its program by 15 s"
