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

# paired A B KIND SCALE: from $T/A.KIND and $T/B.KIND (one number per run,
# line by line), the median of the run-by-run differences A - B divided by
# SCALE (each run of A beside the run of B made just before it; the
# machine's drift over a bench moves both alike) and their quartiles,
# "+4.5 (+2.1 .. +7.0)"
paired() {
    paste "$T/$1.$3" "$T/$2.$3" | awk -v s="$4" '{ print ($1 - $2) / s }' | spread
}

# spread [UNIT]: the median of the numbers on standard input and their
# quartiles, "+4.5UNIT (+2.1 .. +7.0)"
spread() {
    sort -n | awk -v u="${1:-}" '{ v[NR] = $1 } END { q1 = v[int((NR + 3) / 4)]; q3 = v[int((3 * NR + 3) / 4)]
        m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
        printf "%+.1f%s (%+.1f .. %+.1f)\n", m, u, q1, q3 }'
}

# bench_tree: the four-project solution bench/build.sh and bench/compiler.sh
# build (Lib1; Lib2 and Lib3 on Lib1; App on Lib2 and Lib3), generated once
# with `dotnet new` under build/bench-build/tree and restored offline (no
# package source but the local NuGet cache: a classlib and a console need
# only the SDK's own packs); prints its path.
bench_tree() {
    local w=$ROOT/build/bench-build/tree
    if [ ! -f "$w/.ready" ]; then
        rm -rf "$w" && mkdir -p "$w"
        (
            cd "$w"
            for lib in Lib1 Lib2 Lib3; do dotnet new classlib -o $lib > /dev/null; done
            dotnet new console -o App > /dev/null
            dotnet add Lib2 reference Lib1 > /dev/null
            dotnet add Lib3 reference Lib1 > /dev/null
            dotnet add App reference Lib2 Lib3 > /dev/null
            # some code on the references, so each csc has work
            printf 'namespace Lib2;\npublic static class Two { public static int Of(int x) => Lib1.Class1Ext.Twice(x) + 2; }\n' > Lib2/Two.cs
            printf 'namespace Lib3;\npublic static class Three { public static int Of(int x) => Lib1.Class1Ext.Twice(x) + 3; }\n' > Lib3/Three.cs
            printf 'namespace Lib1;\npublic static class Class1Ext { public static int Twice(int x) => 2 * x; }\n' > Lib1/Twice.cs
            printf 'System.Console.WriteLine(Lib2.Two.Of(1) + Lib3.Three.Of(2));\n' > App/Program.cs
            dotnet new sln -n Tree > /dev/null
            dotnet sln add App Lib1 Lib2 Lib3 > /dev/null
            dotnet restore --source "${NUGET_PACKAGES:-$HOME/.nuget/packages}" > /dev/null
        )
        touch "$w/.ready"
    fi
    echo "$w"
}
