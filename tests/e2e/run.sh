#!/usr/bin/env bash
# Runs the end-to-end tests (tests/e2e/t_*.sh), one after another (they
# measure CPU shares, so they must not compete for the two cores), each with
# a time limit. `run.sh NAME...` runs the tests the NAMEs pick (below).
# CORSCOPE_TEST_RUNTIME=8 (or 9) runs them on that runtime (lib.sh; the
# programs built by tests/apps/runtimes.sh).
# tests/arm64/run.sh runs its own tests through this file: E2E_DIR names
# the folder, E2E_LABEL the summary's word, E2E_QUICK the first line that
# marks the tests `run.sh quick` runs.
set -uo pipefail
here=${E2E_DIR:-$(cd "$(dirname "$0")" && pwd)}
label=${E2E_LABEL:-e2e}
pass=0 failed=()
start=$(date +%s)
on=""
[ -n "${CORSCOPE_TEST_RUNTIME:-}" ] && on=" (.NET $CORSCOPE_TEST_RUNTIME)"
# a NAME that is a test's whole name (t_trace, or trace) picks that test
# alone; any other, the tests whose name contains it
wanted() {
    [ $# -eq 1 ] && return 0
    local name=$1 n
    shift
    for n in "$@"; do
        if [ -f "$here/$n.sh" ] || [ -f "$here/t_$n.sh" ]; then
            [ "$name" = "$n" ] || [ "$name" = "t_$n" ] && return 0
        elif [[ "$name" == *"$n"* ]]; then
            return 0
        fi
    done
    return 1
}
for t in "$here"/t_*.sh; do
    name=$(basename "$t" .sh)
    if [ -n "${E2E_QUICK:-}" ] && [ "${1:-}" = quick ]; then
        [ "$(head -1 "$t")" = "$E2E_QUICK" ] || continue
    else
        wanted "$name" "$@" || continue
    fi
    t0=$(date +%s)
    echo "== $label $name$on"
    if timeout -k 10 "${E2E_TIMEOUT:-600}" bash "$t"; then
        pass=$((pass + 1))
        echo "ok $name$on ($(( $(date +%s) - t0 )) s)"
    else
        failed+=("$name$on")
        echo "FAILED $name$on ($(( $(date +%s) - t0 )) s)"
    fi
done
echo "$label: $pass passed, ${#failed[@]} failed in $(( $(date +%s) - start )) s ${failed[*]:-}"
[ ${#failed[@]} -eq 0 ]
