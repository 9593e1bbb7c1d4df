# Shared helpers of the push tests (tests/e2e/t_push.sh, tests/arm64/t_push.sh),
# sourced after the tests' own lib.sh: the loopback stand-in of Pyroscope's
# push API (standin.mjs) started and stopped, and what arrived checked
# (check.mjs).  Stand-ins still running when the test ends are stopped.
PUSH=$ROOT/tests/push
STANDINS=()
trap 'for p in "${STANDINS[@]:-}"; do [ -z "$p" ] || kill "$p" 2> /dev/null || true; done; rm -rf "$T" || true' EXIT

# standin DIR [PORT] [OPTIONS...] -> starts the stand-in; sets SPID, PORT
standin() {
    local dir=$1 port=${2:-0}
    shift 2 || shift $#
    rm -f "$dir/port"
    node "$PUSH/standin.mjs" "$dir" --port "$port" "$@" > "$dir.log" 2>&1 &
    SPID=$!
    STANDINS+=("$SPID")
    for _ in $(seq 100); do [ -s "$dir/port" ] && break; sleep 0.05; done
    [ -s "$dir/port" ] || fail "the stand-in did not start: $(cat "$dir.log")"
    PORT=$(cat "$dir/port")
}
stop_standin() { kill "$1" 2> /dev/null || true; wait "$1" 2> /dev/null || true; }
# check DIR JSON: what the stand-in in DIR took, against JSON's expectations
check() { node "$PUSH/check.mjs" "$@" | tee -a "$T/check.log"; return "${PIPESTATUS[0]}"; }
collapsed_total_of() { cs report -f collapsed --event "$2" "$1" | collapsed_total /dev/stdin; }
# a certificate for 127.0.0.1 (its own CA): DIR/cert.pem, DIR/key.pem
make_certificate() {
    openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj "/CN=127.0.0.1" \
        -addext "subjectAltName=IP:127.0.0.1" -keyout "$1/key.pem" -out "$1/cert.pem" 2> /dev/null ||
        fail "openssl cannot make a certificate"
}
