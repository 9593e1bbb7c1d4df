#!/usr/bin/env bash
# Runs the arm64 tests (tests/arm64/t_*.sh) under qemu-user, one after
# another, each with a time limit.  `run.sh quick` runs those marked
# "# make test" (the representative set make test runs); `run.sh NAME` those
# whose file name contains NAME.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
command -v qemu-aarch64 > /dev/null || { echo "arm64: qemu-aarch64 is not installed (scripts/install-deps.sh)" >&2; exit 1; }
pass=0 failed=()
start=$(date +%s)
for t in "$here"/t_*.sh; do
    name=$(basename "$t" .sh)
    if [ "${1:-}" = quick ]; then
        grep -q "^# make test" "$t" || continue
    elif [ $# -gt 0 ] && [[ "$name" != *"$1"* ]]; then
        continue
    fi
    t0=$(date +%s)
    echo "== arm64 $name"
    if timeout -k 10 900 bash "$t"; then
        pass=$((pass + 1))
        echo "ok $name ($(( $(date +%s) - t0 )) s)"
    else
        failed+=("$name")
        echo "FAILED $name ($(( $(date +%s) - t0 )) s)"
    fi
done
echo "arm64: $pass passed, ${#failed[@]} failed in $(( $(date +%s) - start )) s ${failed[*]:-}"
[ ${#failed[@]} -eq 0 ]
