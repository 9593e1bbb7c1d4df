#!/usr/bin/env bash
# The stress suite: every program of tests/stress/programs (hard cases for
# the runtime, built as build/apps/Stress) under every mode of
# tests/stress/modes, but for the pairs of tests/stress/known (where the
# runtime itself changes the program's behaviour).  For each, the
# program's output and exit status under the profiler must be exactly
# those of a run without it, no run may hang (each has a time limit), and
# the recording must pass `corscope check` as complete.  Results, with
# what each run did (samples, threads recorded, duration), go to
# build/stress/results.tsv for docs/reliability.md.
#
#   tests/stress/run.sh [NAME]        only programs or modes whose name contains NAME
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$here/../.." && pwd)
CORSCOPE=${CORSCOPE:-$ROOT/build/corscope}
STRESS="dotnet $ROOT/build/apps/Stress/Stress.dll"
OUT=$ROOT/build/stress
LIMIT=${STRESS_TIMEOUT:-180}
mkdir -p "$OUT"
T=$(mktemp -d "${TMPDIR:-/tmp}/corscope-stress.XXXXXX")
trap 'rm -rf "$T"' EXIT
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1
filter=${1:-}
results=$OUT/results.tsv
printf 'program\tmode\tresult\tseconds\tsamples\tthreads\tdetail\tevents\n' > "$results"
pass=0 failed=() known=()
# is_known PROGRAM MODE: the pair is in tests/stress/known (the runtime's
# fault, reproduced apart by tests/stress/known.sh)
is_known() {
    local program pattern why
    while read -r program pattern why; do
        case $program in ''|'#'*) continue ;; esac
        # shellcheck disable=SC2053
        [ "$program" = "$1" ] && [[ "$2" == $pattern ]] && return 0
    done < "$here/known"
    return 1
}
start=$(date +%s)

while read -r name args; do
    case $name in ''|'#'*) continue ;; esac
    # shellcheck disable=SC2086
    timeout -k 5 "$LIMIT" $STRESS $args > "$T/plain.out" 2> "$T/plain.err"
    plain_rc=$?
    while read -r mode opts; do
        case $mode in ''|'#'*) continue ;; esac
        [ -n "$filter" ] && [[ "$name $mode" != *"$filter"* ]] && continue
        if is_known "$name" "$mode"; then
            known+=("$name/$mode")
            continue
        fi
        t0=$(date +%s.%N)
        # shellcheck disable=SC2086
        timeout -k 5 "$LIMIT" "$CORSCOPE" record -q $opts -o "$T/r.corscope" -- $STRESS $args \
            > "$T/prof.out" 2> "$T/prof.err"
        rc=$?
        secs=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
        result=ok detail=""
        if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
            result=FAIL detail="timed out after ${LIMIT} s"
        elif [ $rc -ne $plain_rc ]; then
            result=FAIL detail="exit status $rc, without the profiler $plain_rc"
        elif ! cmp -s "$T/plain.out" "$T/prof.out"; then
            result=FAIL detail="output differs: $(diff "$T/plain.out" "$T/prof.out" | head -3 | tr '\n' ' ')"
        elif ! "$CORSCOPE" check "$T/r.corscope" > "$T/check.txt" 2>&1; then
            result=FAIL detail="check: $(head -2 "$T/check.txt" | tr '\n' ' ')"
        elif ! grep -q "status       complete" "$T/check.txt"; then
            result=FAIL detail="recording not complete"
        fi
        samples=$(awk '/^  event/ { for (i = 1; i <= NF; i++) if ($i ~ /^samples,?$/) print $(i - 1) }' "$T/check.txt" 2> /dev/null | head -1)
        threads=$(awk '/^  tables/ { print $2 }' "$T/check.txt" 2> /dev/null)
        # the runtime's events recorded, by event ("exceptions 400000, lock 12")
        events=$(awk '/^  event/ && $2 != "thread:" { for (i = 1; i <= NF; i++) if ($i == "records,") {
                     sub(":", "", $2); printf "%s%s %s", n++ ? ", " : "", $2, $(i - 1) } }' "$T/check.txt" 2> /dev/null)
        [ "$result" = ok ] && detail=$(head -1 "$T/plain.out")
        printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$mode" "$result" "$secs" "${samples:-0}" "${threads:-0}" "$detail" "${events:--}" >> "$results"
        if [ "$result" = ok ]; then
            pass=$((pass + 1))
            echo "ok $name / $mode (${secs} s, ${samples:-0} samples, ${threads:-0} threads)"
        else
            failed+=("$name/$mode")
            echo "FAILED $name / $mode: $detail"
            sed 's/^/    /' "$T/prof.err" | head -5
        fi
        rm -f "$T/r.corscope"
    done < "$here/modes"
done < "$here/programs"
[ ${#known[@]} -gt 0 ] && echo "left out (tests/stress/known: the runtime's faults): ${known[*]}"
echo "stress: $pass passed, ${#failed[@]} failed in $(( $(date +%s) - start )) s ${failed[*]:-}"
[ ${#failed[@]} -eq 0 ]
