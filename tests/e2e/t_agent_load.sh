# When the runtime cannot load the agent, record says why, in the loader's
# words, and `check --agent` says the same.  The real runtime and the
# agent with 1 KiB of thread-locals added (build/tlspad: the agent's own 64
# bytes fit even the smallest surplus), with glibc's static TLS surplus made
# small by its own tunables (rtld.nns=1, optional_static_tls=0: 144 bytes),
# as a user's would be with an agent over the default surplus: the program
# runs unprofiled, and the reason is "cannot allocate memory in static TLS
# block" (agent_probe.h).  The agent as built loads even there.
source "$(dirname "$0")/lib.sh"

cs check --agent > "$T/ok.out" || fail "check --agent: the agent does not load: $(cat "$T/ok.out")"
grep -q "libcorscope.so: loads ([0-9]* bytes of thread-locals)" "$T/ok.out" ||
    fail "check --agent said: $(cat "$T/ok.out")"

small="glibc.rtld.nns=1:glibc.rtld.optional_static_tls=0"
GLIBC_TUNABLES=$small cs check --agent > "$T/small.out" ||
    fail "the agent does not load in the smallest surplus: $(cat "$T/small.out")"
PAD=$ROOT/build/tlspad/corscope
[ -x "$PAD" ] || fail "no $PAD (make tlspad)"
set +e
GLIBC_TUNABLES=$small timeout -k 5 120 "$PAD" record -o "$T/r.corscope" -- $(app Lifecycle) return > "$T/out" 2> "$T/err"
rc=$?
set -e
[ "$rc" = 0 ] && fail "record succeeded without the agent"
grep -q "the profiler did not start" "$T/err" || fail "record: $(cat "$T/err")"
grep -q "^corscope: the agent cannot be loaded: .*tlspad/libcorscope.so: cannot allocate memory in static TLS block" \
    "$T/err" || fail "record gave no reason: $(cat "$T/err")"
[ -e "$T/r.corscope" ] && fail "a recording was left"

set +e
GLIBC_TUNABLES=$small timeout -k 5 120 "$PAD" check --agent > "$T/check.out" 2> "$T/check.err"
rc=$?
set -e
assert_eq "check --agent's exit status" "$rc" 1
assert_eq "check --agent's lines" "$(wc -l < "$T/check.err")" 1
grep -q "cannot allocate memory in static TLS block" "$T/check.err" ||
    fail "check --agent: $(cat "$T/check.err")"
note "$(tail -1 "$T/err" | cut -c1-160)"
