# make test
# Tracing mode (--trace) on arm64: its Enter/Leave hooks are written for the
# x86-64 JIT's register convention only (src/agent/trace/elt_x64.S), so on
# arm64 it is refused with one clear line rather than run with hooks that
# were never tested: by the arm64 CLI (`record --trace counts`), and by the
# agent given CORSCOPE_TRACE in its environment, which then declines to load
# and leaves the program to run as it would without it.
source "$(dirname "$0")/lib.sh"

rc=0
a64_cs record --trace=counts -o "$T/t.corscope" -- true > /dev/null 2> "$T/cli.txt" || rc=$?
[ "$rc" -ne 0 ] || fail "the arm64 CLI accepted --trace"
grep -q "^corscope: .*tracing needs an x86-64 machine" "$T/cli.txt" || fail "the CLI's words: $(cat "$T/cli.txt")"
[ "$(wc -l < "$T/cli.txt")" -eq 1 ] || fail "more than one line: $(cat "$T/cli.txt")"

rc=0
CORSCOPE_TRACE=counts CORECLR_ENABLE_PROFILING=1 CORECLR_PROFILER='{14DE3B91-04FE-4EFB-B588-CD7BB380C74A}' \
    CORECLR_PROFILER_PATH="$A64/libcorscope.so" CORSCOPE_OUTPUT="$T/t.corscope" \
    a64 "$A64_APPS/CpuShares" 0.2 > "$T/out.txt" 2> "$T/err.txt" || rc=$?
assert_eq "the program's exit status with the agent declining" "$rc" 0
grep -q "^truth CpuShares.Work.Alpha" "$T/out.txt" || fail "the program did not run as usual: $(cat "$T/out.txt")"
grep -q "tracing needs an x86-64 machine" "$T/err.txt" || fail "the agent did not say why it declined: $(cat "$T/err.txt")"
[ ! -e "$T/t.corscope" ] || fail "a recording was written"
note "--trace refused on arm64, by the CLI and by the agent (the program ran as usual)"
