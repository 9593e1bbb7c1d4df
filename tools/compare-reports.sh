#!/bin/bash
# compare-reports.sh OLD_CLI NEW_CLI RECORDING...
#
# Proof that a change to the CLI changed no report: every report format (and
# `check`) of every recording given, made by the old and by the new corscope,
# compared byte for byte (pprof after gunzip, since gzip's header is the
# only part allowed to differ; it holds no time here, but a different zlib
# could pack the same bytes differently).  The exit status and the
# messages on stderr are compared too, so a format a recording cannot give
# (-f gc of a recording without -e gc) must fail the same way.  Each
# event's view (-f top and tree --event NAME, live --at) is compared as
# well, and, given several recordings, every format of them all at once
# (merged as a tree of processes).
#
# Exit status 0 when everything is identical; 1 with the differences shown
# otherwise.  KEEP=DIR keeps every output under DIR/old and DIR/new.
#
# tools/record-samples.sh makes a set of recordings to compare on.
set -uo pipefail

[ $# -ge 3 ] || { echo "usage: $0 OLD_CLI NEW_CLI RECORDING..." >&2; exit 2; }
old=$1 new=$2
shift 2
for cli in "$old" "$new"; do
    [ -x "$cli" ] || { echo "$0: $cli is not executable" >&2; exit 2; }
done

FORMATS="top tree collapsed flamegraph speedscope pprof chrome gc exceptions locks jit threads calls"
work=${KEEP:-$(mktemp -d "${TMPDIR:-/tmp}/compare-reports.XXXXXX")}
[ -n "${KEEP:-}" ] || trap 'rm -rf "$work"' EXIT
mkdir -p "$work/old" "$work/new"

# run SIDE CLI NAME ARGS...: output, stderr (with the CLI's path taken out)
# and exit status of one command under $work/SIDE/NAME.*
run() {
    local side=$1 cli=$2 name=$3
    shift 3
    local base=$work/$side/$name
    "$cli" "$@" > "$base.out" 2> "$base.err"
    echo $? > "$base.rc"
    sed -i "s|$cli|CORSCOPE|g" "$base.err"
}

# compare TAG NAME...: the outputs of runs NAME of both sides
differ=0 compared=0
compare() {
    local tag=$1 name part a b
    shift
    for name in "$@"; do
        for part in file out err rc; do
            a=$work/old/$tag.$name.$part b=$work/new/$tag.$name.$part
            [ -e "$a" ] || [ -e "$b" ] || continue
            compared=$((compared + 1))
            if ! cmp -s "$a" "$b"; then
                differ=$((differ + 1))
                echo "DIFFERS: $tag $name ($part)"
                diff <(head -c 200000 "$a" 2> /dev/null) <(head -c 200000 "$b" 2> /dev/null) | head -20
            fi
        done
    done
}

# formats SIDE CLI TAG RECORDING...: every format of the recordings
formats() {
    local side=$1 cli=$2 tag=$3 f
    shift 3
    for f in $FORMATS; do
        run $side "$cli" "$tag.$f" report -f "$f" -o "$work/$side/$tag.$f.file" "$@"
        if [ $f = pprof ] && [ -s "$work/$side/$tag.$f.file" ]; then
            gzip -dc < "$work/$side/$tag.$f.file" > "$work/$side/$tag.$f.raw" &&
                mv "$work/$side/$tag.$f.raw" "$work/$side/$tag.$f.file"
        fi
    done
}

for rec in "$@"; do
    [ -f "$rec" ] || { echo "$0: no recording $rec" >&2; exit 2; }
    tag=$(basename "$rec" .corscope)
    # every event's own view too (the default view is one of them), and
    # the live view as of a moment (at 80% of the run) when there is one
    facts=$("$old" check "$rec" 2> /dev/null)
    events=$(sed -n 's/^  event  *\([^ :]*\).*/\1/p' <<< "$facts" | tr '\n' ' ')
    at=$(awk '/^  duration/ { printf "%.3fs", $2 * 0.8 }' <<< "$facts")
    case " $events " in *" live-scan "*) events="$events live" ;; esac
    views=""
    for side in old new; do
        cli=$old
        [ $side = new ] && cli=$new
        formats $side "$cli" "$tag" "$rec"
        run $side "$cli" "$tag.check" check "$rec"
        for e in $events; do
            run $side "$cli" "$tag.top-$e" report -f top --event "$e" "$rec"
            run $side "$cli" "$tag.tree-$e" report -f tree --event "$e" "$rec"
            [ $side = old ] && views="$views top-$e tree-$e"
        done
        case " $events " in
        *" live "*)
            run $side "$cli" "$tag.live-at" report -f top --event live --at "${at:-1s}" "$rec" ;;
        esac
    done
    compare "$tag" $FORMATS check $views live-at
    printf '%-28s %s\n' "$tag" "$(cat "$work/old/$tag.check.rc") (check's status)"
done
# all of them as one (merged: a tree of processes); an error (events
# recorded differently) must be the same error
if [ $# -gt 1 ]; then
    formats old "$old" merged "$@"
    formats new "$new" merged "$@"
    compare merged $FORMATS
fi
echo "compared $compared outputs of $# recordings: $differ differ"
[ $differ = 0 ]
