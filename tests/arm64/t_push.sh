# make test
# Pushing from arm64, under qemu-user: the arm64 CLI (OpenSSL linked in
# statically from Debian's libssl-dev:arm64, which scripts/install-deps.sh
# unpacks) sends an arm64 recording to the loopback stand-in of Pyroscope's
# push API (tests/push/standin.mjs):
#   - over https with the test's own certificate authority and basic auth:
#     every profile arrives, named as Pyroscope's .NET agent names them,
#     with totals equal to the recording's own reports (CPU time, and the
#     1,000 throws the program counted);
#   - over http, the same totals;
#   - a certificate the system's CA bundle does not know is refused, said in
#     one line.
source "$(dirname "$0")/lib.sh"
source "$ROOT/tests/push/lib.sh"

a64_record "$T/ex.corscope" cpu,exceptions Events exceptions 1000 > "$T/ex.out"
grep -q "^thrown 1000 rethrown 100$" "$T/ex.out" || fail "the program's own counts: $(cat "$T/ex.out")"
cpu=$(collapsed_total_of "$T/ex.corscope" cpu)
throws=$(collapsed_total_of "$T/ex.corscope" exceptions)
assert_eq "the recording's throws" "$throws" 1000
want="\"names\": [\"process_cpu\", \"exception\"],
    \"totals\": {\"process_cpu:cpu\": $((cpu * 1000)), \"exception:exception\": 1000}"

make_certificate "$T"
printf 'arm-secret\n' > "$T/password"
chmod 600 "$T/password"
standin "$T/tls" 0 --tls "$T/cert.pem" "$T/key.pem" --basic "ops:arm-secret"
a64_cs push -q --push "https://127.0.0.1:$PORT" --push-every 1s --service arm64 --push-user ops \
    --push-password-file "$T/password" --push-ca "$T/cert.pem" --push-spool "$T/spool" \
    "$T/ex.corscope" 2> "$T/err" || fail "push over https from arm64: $(cat "$T/err")"
check "$T/tls" "{\"service\": \"arm64\", $want,
    \"headers\": {\"authorization\": \"Basic $(printf 'ops:arm-secret' | base64)\"}}" ||
    fail "https from arm64: what arrived"
# the system's CA bundle does not know the test's certificate
a64_cs push --push "https://127.0.0.1:$PORT" --push-linger 1s --push-spool "$T/spool2" \
    "$T/ex.corscope" 2> "$T/err2" && fail "an untrusted certificate was taken"
grep -q "not trusted" "$T/err2" || fail "an untrusted certificate: $(cat "$T/err2")"
stop_standin "$SPID"

standin "$T/plain"
a64_cs push -q --push "http://127.0.0.1:$PORT" --push-every 1s --service arm64-http \
    --push-spool "$T/spool3" "$T/ex.corscope" 2> "$T/err3" || fail "push over http from arm64: $(cat "$T/err3")"
check "$T/plain" "{\"service\": \"arm64-http\", $want}" || fail "http from arm64: what arrived"
stop_standin "$SPID"
note "arm64 CLI: https (own CA, basic auth) and http: cpu $cpu us and $throws throws, all arrived; untrusted said"
