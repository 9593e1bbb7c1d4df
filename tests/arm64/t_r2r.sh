# make test
# ReadyToRun on arm64: the arm64 CoreLib's function table (arm64
# RUNTIME_FUNCTION entries, lengths from packed unwind data or .xdata) and
# the prologue of each function, decoded by the walker's decoder.  Under
# qemu-user the agent cannot read these tables (process_vm_readv does not
# exist there, so it leaves ReadyToRun images to the frame-record chain),
# so they are checked here, on the image file mapped as the runtime maps it
# (the unit test mshape_arm64, given the published CoreLib).
source "$(dirname "$0")/lib.sh"

corelib=$A64_APPS/System.Private.CoreLib.dll
[ -f "$corelib" ] || fail "no arm64 CoreLib: $corelib (tests/arm64/apps.sh)"
CORSCOPE_ARM64_CORELIB=$corelib "$ROOT/build/unit-tests" "CoreLib's ReadyToRun" > "$T/out.txt" 2>&1 ||
    fail "the unit test failed: $(cat "$T/out.txt")"
grep -q "CoreLib (arm64): [0-9]* functions" "$T/out.txt" || fail "the test did not read the CoreLib: $(cat "$T/out.txt")"
note "$(grep "CoreLib (arm64)" "$T/out.txt" | sed 's/^ *//')"
