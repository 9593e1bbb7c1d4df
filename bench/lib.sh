# Shared by the benchmarks in bench/: sourced, not run.

# median [DECIMALS]: the median of the numbers on standard input, one per
# line (the mean of the middle two for an even count, with DECIMALS places,
# default 4; an odd count prints the middle number as it was).
median() {
    sort -n | awk -v d="${1:-4}" '{ v[NR] = $1 } END {
        if (NR % 2) print v[(NR + 1) / 2]; else printf "%.*f\n", d, (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# machine: "N cores, CPU model, kernel", for the header of a table.
machine() {
    echo "$(nproc) cores, $(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo), $(uname -r)"
}

# base_agent REV: REV's agent, built once under build/bench-base/REV from a
# copy of its tree (git archive); prints the path of its libcorscope.so.
base_agent() {
    local b=$ROOT/build/bench-base/$1
    if [ ! -f "$b/build/libcorscope.so" ]; then
        rm -rf "$b" && mkdir -p "$b"
        git -C "$ROOT" archive "$1" | tar -x -C "$b"
        make -C "$b" -s build/libcorscope.so > /dev/null
    fi
    echo "$b/build/libcorscope.so"
}
