# Shared helpers of the arm64 tests: the end-to-end helpers (tests/e2e/lib.sh:
# the x86-64 CLI `cs`, assertions, temporary directory) and the arm64 side:
# the self-contained arm64 test programs (tests/arm64/apps.sh) run under
# qemu-user with the arm64 agent in their environment, as a user would set it
# by hand, and the arm64 CLI run under qemu-user too.
source "$(dirname "${BASH_SOURCE[0]}")/../e2e/lib.sh"

A64=$ROOT/build/aarch64
A64_APPS=$A64/apps
QEMU=${QEMU:-qemu-aarch64}
A64_SYSROOT=${A64_SYSROOT:-/usr/aarch64-linux-gnu}

# qemu-user is slow (8 to 40 times native): generous time limits
a64() { timeout -k 5 "${A64_TIMEOUT:-300}" "$QEMU" -L "$A64_SYSROOT" "$@"; }

# a64_record OUT EVENTS APP ARGS...: APP under qemu with the agent loaded
# by the runtime's own variables and configured by CORSCOPE_* (more settings
# in the caller's environment: CORSCOPE_INTERVAL=1ms ...)
a64_record() {
    local out=$1 events=$2 name=$3
    shift 3
    rm -f "$out"
    CORECLR_ENABLE_PROFILING=1 CORECLR_PROFILER='{14DE3B91-04FE-4EFB-B588-CD7BB380C74A}' \
        CORECLR_PROFILER_PATH="$A64/libcorscope.so" CORSCOPE_OUTPUT="$out" CORSCOPE_EVENT="$events" \
        a64 "$A64_APPS/$name" "$@"
    [ -s "$out" ] || fail "$name under qemu wrote no recording"
}

# the arm64 CLI under qemu
a64_cs() { a64 "$A64/corscope" "$@"; }

# counter FILE NAME: a counter of `check`'s counters line
counter() { grep -o " $2=[0-9]*" "$1" | head -1 | cut -d= -f2; }

# assert_walks CHECKFILE WHAT: fewer than 0.5% of the samples' walks failed
assert_walks() {
    local samples failed
    samples=$(counter "$1" samples)
    failed=$(counter "$1" failed_walks)
    note "$2: ${failed:-0} failed walks of ${samples:-0} samples"
    assert_ge "$2: samples" "${samples:-0}" 1
    awk -v f="${failed:-0}" -v s="$samples" 'BEGIN { exit !(f < 0.005 * s) }' ||
        fail "$2: ${failed:-0} of $samples walks failed (0.5% allowed)"
}
