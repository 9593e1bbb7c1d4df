#!/usr/bin/env bash
# Runs one program many times under each of some profiler modes and counts
# the runs that did not end as without the profiler (exit status, output)
# or left a recording that fails `corscope check`.  A fault that shows once
# in a few hundred runs escapes a suite that runs each case once: this is
# the suite's repeated half, for docs/reliability.md (make reliability).
#
#   tests/stress/repeat.sh RUNS 'MODE OPTIONS;...' PROGRAM ARGS...
# Prints one line per mode: label, runs, failures, and the first failure.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$here/../.." && pwd)
CORSCOPE=${CORSCOPE:-$ROOT/build/corscope}
LIMIT=${STRESS_TIMEOUT:-180}
runs=$1 modes=$2
shift 2
T=$(mktemp -d "${TMPDIR:-/tmp}/corscope-repeat.XXXXXX")
trap 'rm -rf "$T"' EXIT

timeout -k 5 "$LIMIT" "$@" > "$T/plain.out" 2> /dev/null
plain_rc=$?
# outputs that carry measurements differ from run to run: compare the
# lines that do not (the first word of each line, and its count)
shape() { awk '{ print $1, $2 }' "$1"; }
IFS=';' read -ra list <<< "$modes"
for entry in "${list[@]}"; do
    read -r label opts <<< "$entry"
    failed=0 first=""
    for _ in $(seq "$runs"); do
        # shellcheck disable=SC2086
        timeout -k 5 "$LIMIT" "$CORSCOPE" record -q --force $opts -o "$T/r.corscope" -- "$@" \
            > "$T/prof.out" 2> "$T/prof.err"
        rc=$? why=""
        if [ $rc -ne $plain_rc ]; then
            why="exit status $rc, without the profiler $plain_rc"
        elif [ "$(shape "$T/plain.out")" != "$(shape "$T/prof.out")" ]; then
            why="output differs"
        elif ! "$CORSCOPE" check "$T/r.corscope" 2>&1 | grep -q "status       complete"; then
            why="recording not complete"
        fi
        if [ -n "$why" ]; then
            failed=$((failed + 1))
            [ -z "$first" ] && first=$why
        fi
    done
    printf '%s\t%s\t%s\t%s\n' "$label" "$runs" "$failed" "${first:--}"
done
