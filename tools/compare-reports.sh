#!/bin/bash
# compare-reports.sh OLD_CLI NEW_CLI RECORDING...
#
# Proof that a change to the CLI changed no report: every report format (and
# `check`) of every recording given, made by the old and by the new corscope,
# compared byte for byte (pprof after gunzip, since gzip's header is the
# only part allowed to differ; it holds no time here, but a different zlib
# could pack the same bytes differently).  The exit status and the
# messages on stderr are compared too, so a format a recording cannot give
# (-f gc of a recording without -e gc) must fail the same way.
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

differ=0 compared=0
for rec in "$@"; do
    [ -f "$rec" ] || { echo "$0: no recording $rec" >&2; exit 2; }
    tag=$(basename "$rec" .corscope)
    for side in old new; do
        cli=$old
        [ $side = new ] && cli=$new
        for f in $FORMATS; do
            run $side "$cli" "$tag.$f" report -f "$f" -o "$work/$side/$tag.$f.file" "$rec"
            if [ $f = pprof ] && [ -s "$work/$side/$tag.$f.file" ]; then
                gzip -dc < "$work/$side/$tag.$f.file" > "$work/$side/$tag.$f.raw" &&
                    mv "$work/$side/$tag.$f.raw" "$work/$side/$tag.$f.file"
            fi
        done
        run $side "$cli" "$tag.check" check "$rec"
    done
    for f in $FORMATS check; do
        for part in file out err rc; do
            a=$work/old/$tag.$f.$part b=$work/new/$tag.$f.$part
            [ -e "$a" ] || [ -e "$b" ] || continue
            compared=$((compared + 1))
            if ! cmp -s "$a" "$b"; then
                differ=$((differ + 1))
                echo "DIFFERS: $tag -f $f ($part)"
                diff <(head -c 200000 "$a" 2> /dev/null) <(head -c 200000 "$b" 2> /dev/null) | head -20
            fi
        done
    done
    printf '%-28s %s\n' "$tag" "$(cat "$work/old/$tag.check.rc") (check's status)"
done
echo "compared $compared outputs of $# recordings: $differ differ"
[ $differ = 0 ]
