#!/usr/bin/env bash
# Attach and detach, again and again, while a stress program runs: threads
# coming and going, collectible code being unloaded, DynamicMethods
# collected, exceptions, forced collections (the hard cases of
# tests/stress/programs, at three times their scale so that each runs for
# several seconds; nine times when a busy machine let fewer than two
# attaches happen).  corscope attaches for ATTACH_MS, detaches, waits a
# moment and attaches again until the program ends.  The program's output
# and exit status must be those of a run without corscope, and every
# recording whose attach was not cut short by the program's end must be
# complete.  Results go to build/stress/attach.tsv.
#
#   tests/stress/attach.sh [NAME]     (default: the programs in ATTACH_PROGRAMS,
#                                     "threads alc dynamic")
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$here/../.." && pwd)
CORSCOPE=${CORSCOPE:-$ROOT/build/corscope}
STRESS="dotnet $ROOT/build/apps/Stress/Stress.dll"
OUT=$ROOT/build/stress
ATTACH_MS=${ATTACH_MS:-500}
mkdir -p "$OUT"
T=$(mktemp -d "${TMPDIR:-/tmp}/corscope-stress-attach.XXXXXX")
trap 'rm -rf "$T"' EXIT
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1
results=$OUT/attach.tsv
printf 'program\tresult\tattaches\tcomplete\tdetail\n' > "$results"
pass=0 failed=()

while read -r name mode scale; do
    case $name in ''|'#'*) continue ;; esac
    if [ -n "${1:-}" ]; then
        [[ "$name" != *"$1"* ]] && continue
    elif [[ " ${ATTACH_PROGRAMS:-threads alc dynamic} " != *" $name "* ]]; then
        continue
    fi
    # a busy machine slows the attaches more than the program: a run that
    # ended before a second attach is run again, three times as long
    for times in 3 9; do
        args="$mode $((scale * times))"
        # shellcheck disable=SC2086
        timeout -k 5 300 $STRESS $args > "$T/plain.out" 2> "$T/plain.err"
        plain_rc=$?
        # shellcheck disable=SC2086
        $STRESS $args > "$T/prof.out" 2> "$T/prof.err" &
        pid=$!
        sleep 0.5
        attaches=0 complete=0 detail=""
        while kill -0 "$pid" 2> /dev/null; do
            rc=0
            timeout -k 5 60 "$CORSCOPE" record -q -p "$pid" -d "${ATTACH_MS}ms" -o "$T/a.corscope" --force \
                2> "$T/a.err" || rc=$?
            kill -0 "$pid" 2> /dev/null || break # it ended: that attach may have been cut short
            if [ "$rc" != 0 ]; then
                # refused because the program was ending, or a real failure
                grep -q "no process\|not a .NET\|ended during\|cannot look at" "$T/a.err" && break
                # the runtime removes its diagnostics socket as it exits:
                # found without it, a program that ends within 2 s was ending
                if grep -q "without a diagnostics socket" "$T/a.err"; then
                    for _ in $(seq 20); do kill -0 "$pid" 2> /dev/null || break; sleep 0.1; done
                    kill -0 "$pid" 2> /dev/null || break
                fi
                detail="attach $((attaches + 1)): exit $rc: $(head -2 "$T/a.err" | tr '\n' ' ')"
                break
            fi
            attaches=$((attaches + 1))
            if "$CORSCOPE" check "$T/a.corscope" 2> /dev/null | grep -q "status       complete"; then
                complete=$((complete + 1))
            else
                detail="attach $attaches: recording not complete"
                break
            fi
            sleep 0.2
        done
        rc=0; wait "$pid" || rc=$?
        result=ok
        if [ -n "$detail" ]; then
            result=FAIL
        elif [ "$rc" != "$plain_rc" ]; then
            result=FAIL detail="exit status $rc, without corscope $plain_rc"
        elif ! cmp -s "$T/plain.out" "$T/prof.out"; then
            result=FAIL detail="output differs: $(diff "$T/plain.out" "$T/prof.out" | head -3 | tr '\n' ' ')"
        elif [ "$attaches" -lt 2 ]; then
            result=FAIL detail="only $attaches attaches before the program ended"
            [ "$times" = 3 ] && continue
        fi
        break
    done
    printf '%s\t%s\t%s\t%s\t%s\n' "$name" "$result" "$attaches" "$complete" "$detail" >> "$results"
    if [ "$result" = ok ]; then
        pass=$((pass + 1))
        echo "ok attach $name ($attaches attaches, all complete)"
    else
        failed+=("$name")
        echo "FAILED attach $name: $detail"
    fi
done < "$here/programs"
echo "stress attach: $pass passed, ${#failed[@]} failed ${failed[*]:-}"
[ ${#failed[@]} -eq 0 ]
