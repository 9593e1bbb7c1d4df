# `corscope watch -p` refuses, in one line each and a non-zero exit, the
# processes it cannot watch (issue 22, item 5), and the process runs on:
#   - a process of another user (corscope run as nobody, the service as
#     root; as root corscope attaches to any);
#   - a .NET process without a diagnostics socket
#     (DOTNET_EnableDiagnostics=0);
#   - a process that is not .NET;
#   - a process whose runtime has another profiler loaded is record -p's
#     case (t_attach), the same check.
source "$(dirname "$0")/lib.sh"
W=$APPS/WatchApp/WatchApp.dll
[ -f "$W" ] || fail "WatchApp is not built (make apps)"
command -v setpriv > /dev/null || fail "setpriv (util-linux) is missing"

start_serve() { # start_serve FILE [ENV...] -> pid in $svc
    local out=$1
    shift
    env "$@" dotnet "$W" serve 6 > "$out" 2>&1 &
    svc=$!
    for _ in $(seq 100); do grep -q '^ready' "$out" && break; sleep 0.1; done
    grep -q '^ready' "$out" || fail "WatchApp serve did not start: $(cat "$out")"
}

# another user's process: corscope as nobody, the service as root
if [ "$(id -u)" = 0 ]; then
    start_serve "$T/serve1"
    expect_error "another user's process" 1 \
        "process $svc (dotnet) belongs to another user (uid 0); corscope attaches to your own processes (or, as root, to any)" \
        setpriv --reuid=nobody --regid=nogroup --clear-groups "$CORSCOPE" watch -p "$svc" 'Pricing.Quote'
    [ "$(wc -l < "$T/err")" = 1 ] || fail "another user's process: more than one line: $(cat "$T/err")"
    wait "$svc" || fail "the service after the refused watch: $(cat "$T/serve1")"
    grep -q '^served [0-9]' "$T/serve1" || fail "the service did not finish: $(cat "$T/serve1")"
else
    note "another user's process: not run (needs root to start a process as another user)"
fi

# no diagnostics socket; and a socket file named for its pid, older than
# the process (an earlier process's of that pid, killed: /tmp keeps them),
# is not taken for its own
start_serve "$T/serve2" DOTNET_EnableDiagnostics=0
old=${TMPDIR:-/tmp}/dotnet-diagnostic-$svc-1-socket
if [ ! -e "$old" ]; then
    python3 -c 'import socket, sys; s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1])' "$old"
    touch -h -d '1 hour ago' "$old"
    made_old=$old
fi
expect_error "no diagnostics socket" 1 \
    "process $svc (dotnet) is a .NET program without a diagnostics socket (started with DOTNET_EnableDiagnostics=0 or DOTNET_EnableDiagnostics_IPC=0?); the runtime cannot take a profiler after it started" \
    cs watch -p "$svc" 'Pricing.Quote'
[ "$(wc -l < "$T/err")" = 1 ] || fail "no diagnostics socket: more than one line: $(cat "$T/err")"
wait "$svc" || fail "the service without a socket after the refused watch: $(cat "$T/serve2")"
grep -q '^served [0-9]' "$T/serve2" || fail "the service without a socket did not finish"
[ -z "${made_old:-}" ] || rm -f "$made_old"

# not .NET
sleep 30 &
other=$!
expect_error "not .NET" 1 "process $other (sleep) is not a .NET program (no .NET runtime in it)" \
    cs watch -p "$other" 'Pricing.Quote'
kill "$other" 2> /dev/null || true
wait "$other" 2> /dev/null || true
