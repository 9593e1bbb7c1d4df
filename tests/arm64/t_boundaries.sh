# Every managed<->native and managed<->runtime transition on arm64, under
# qemu-user: tests/apps/Boundaries (one family of transitions per thread),
# checked by tests/e2e/t_boundaries.sh's rules (99% of each family's
# samples with the exact path from the thread's start, under 0.5% failed
# walks) on a recording made by the arm64 agent.  Left out here:
#   - pinvoke, ilstub: their anchor is libc's memset by name, and the
#     arm64 C library has no symbol file here (the frame reads libc.so.6);
#   - signal: qemu-user's signal trampoline is in a page of its own with no
#     name, and without process_vm_readv the walker cannot read it to know
#     it (it is crossed by the kernel's frame record, which skips the
#     interrupted pc);
#   - hijack: return addresses the runtime hijacked for a GC are not put
#     back on arm64 (README, known limits).
source "$(dirname "$0")/lib.sh"

CORSCOPE_INTERVAL=2ms a64_record "$T/b.corscope" cpu Boundaries all 800 > /dev/null
BOUNDARIES_RECORDING=$T/b.corscope BOUNDARIES_SKIP="pinvoke ilstub signal hijack" \
    bash "$ROOT/tests/e2e/t_boundaries.sh"
