#!/usr/bin/env bash
# Runs the end-to-end tests (tests/e2e/t_*.sh), one after another (they
# measure CPU shares, so they must not compete for the two cores), each with
# a time limit. `run.sh NAME` runs the tests whose file name contains NAME.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
pass=0 failed=()
start=$(date +%s)
for t in "$here"/t_*.sh; do
    name=$(basename "$t" .sh)
    [ $# -gt 0 ] && [[ "$name" != *"$1"* ]] && continue
    t0=$(date +%s)
    echo "== $name"
    if timeout -k 10 600 bash "$t"; then
        pass=$((pass + 1))
        echo "ok $name ($(( $(date +%s) - t0 )) s)"
    else
        failed+=("$name")
        echo "FAILED $name ($(( $(date +%s) - t0 )) s)"
    fi
done
echo "e2e: $pass passed, ${#failed[@]} failed in $(( $(date +%s) - start )) s ${failed[*]:-}"
[ ${#failed[@]} -eq 0 ]
