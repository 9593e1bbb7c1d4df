#!/usr/bin/env bash
# Runs the end-to-end tests (tests/e2e/t_*.sh), one after another (they
# measure CPU shares, so they must not compete for the two cores), each with
# a time limit. `run.sh NAME` runs the tests whose file name contains NAME.
# tests/arm64/run.sh runs its own tests through this file: E2E_DIR names
# the folder, E2E_LABEL the summary's word, E2E_QUICK the first line that
# marks the tests `run.sh quick` runs.
set -uo pipefail
here=${E2E_DIR:-$(cd "$(dirname "$0")" && pwd)}
label=${E2E_LABEL:-e2e}
pass=0 failed=()
start=$(date +%s)
for t in "$here"/t_*.sh; do
    name=$(basename "$t" .sh)
    if [ -n "${E2E_QUICK:-}" ] && [ "${1:-}" = quick ]; then
        [ "$(head -1 "$t")" = "$E2E_QUICK" ] || continue
    elif [ $# -gt 0 ] && [[ "$name" != *"$1"* ]]; then
        continue
    fi
    t0=$(date +%s)
    echo "== $label $name"
    if timeout -k 10 "${E2E_TIMEOUT:-600}" bash "$t"; then
        pass=$((pass + 1))
        echo "ok $name ($(( $(date +%s) - t0 )) s)"
    else
        failed+=("$name")
        echo "FAILED $name ($(( $(date +%s) - t0 )) s)"
    fi
done
echo "$label: $pass passed, ${#failed[@]} failed in $(( $(date +%s) - start )) s ${failed[*]:-}"
[ ${#failed[@]} -eq 0 ]
