# make test
# The arm64 agent's load, as the arm64 CLI tries it under qemu-user
# (`check --agent`, cli/agent_probe.c): it loads, its thread-locals are
# within the build's budget; the agent with 1 KiB of thread-locals added
# (build/aarch64/tlspad), with glibc's static TLS surplus made small by its
# own tunables (144 bytes), does not, with the loader's reason in one line,
# and a real arm64 program under the same tunables writes no recording
# with it (the runtime's dlopen of the agent fails the same way).
source "$(dirname "$0")/lib.sh"

a64_cs check --agent > "$T/ok.out" || fail "check --agent: $(cat "$T/ok.out")"
grep -q "aarch64/libcorscope.so: loads ([0-9]* bytes of thread-locals)" "$T/ok.out" ||
    fail "check --agent said: $(cat "$T/ok.out")"
small="glibc.rtld.nns=1:glibc.rtld.optional_static_tls=0"
set +e
GLIBC_TUNABLES=$small a64 "$A64/tlspad/corscope" check --agent > /dev/null 2> "$T/err"
rc=$?
set -e
assert_eq "check --agent's exit status" "$rc" 1
assert_eq "check --agent's lines" "$(wc -l < "$T/err")" 1
grep -q "cannot allocate memory in static TLS block" "$T/err" || fail "check --agent: $(cat "$T/err")"
GLIBC_TUNABLES=$small CORECLR_ENABLE_PROFILING=1 CORECLR_PROFILER='{14DE3B91-04FE-4EFB-B588-CD7BB380C74A}' \
    CORECLR_PROFILER_PATH="$A64/tlspad/libcorscope.so" CORSCOPE_OUTPUT="$T/r.corscope" \
    a64 "$A64_APPS/Memory" exact 20 > "$T/app.out" 2>&1 || fail "the program failed: $(tail -3 "$T/app.out")"
[ -e "$T/r.corscope" ] && fail "the runtime loaded the agent with no room for its thread-locals"
note "$(cut -c1-140 "$T/err")"
