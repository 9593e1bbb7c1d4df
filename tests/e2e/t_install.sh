# The ways corscope is installed, from what `make nupkg` and `make dist`
# built, each then recording a program and the recording checked (the
# installed corscope finds its agent from its own path):
#   - the .NET tool from a local feed (a directory): `dotnet tool install -g`
#     (the command is a symbolic link to the package's executable: no
#     launcher), `dotnet tool install --tool-path`, and .NET 10's
#     `dotnet dnx` (= dnx), which runs it from the package without
#     installing it;
#   - the tarball, unpacked anywhere (bin/corscope, lib/corscope/);
#   - `make install PREFIX=... DESTDIR=...`.
# Everything under $T: a home of its own (global tools go to
# $HOME/.dotnet/tools) and a NuGet package folder of its own, so no earlier
# corscope package is taken from a cache.
source "$(dirname "$0")/lib.sh"

VERSION=$(sed -n 's/^VERSION := //p' "$ROOT/Makefile")
NUPKG=$ROOT/build/corscope.$VERSION.nupkg
TARBALL=$ROOT/build/corscope-$VERSION-linux-x64.tar.gz
[ -f "$NUPKG" ] || fail "no $NUPKG (make nupkg)"
[ -f "$TARBALL" ] || fail "no $TARBALL (make dist)"
# what they hold is what was built
unzip -p "$NUPKG" tools/net10.0/linux-x64/corscope | cmp -s - "$CORSCOPE" ||
    fail "$NUPKG does not hold build/corscope (make nupkg)"
tar -xzOf "$TARBALL" "corscope-$VERSION-linux-x64/bin/corscope" | cmp -s - "$CORSCOPE" ||
    fail "$TARBALL does not hold build/corscope (make dist)"

# with an arm64 build (make arm64), both carry it too: the package a folder
# per runtime identifier (the SDK takes the machine's), and a second tarball
if [ -x "$ROOT/build/aarch64/corscope" ]; then
    unzip -p "$NUPKG" tools/net10.0/linux-arm64/corscope | cmp -s - "$ROOT/build/aarch64/corscope" ||
        fail "$NUPKG does not hold build/aarch64/corscope (make nupkg after make arm64)"
    # a listing to a file, then grep: `unzip -l | grep -q` fails under
    # pipefail when grep leaves early and unzip gets SIGPIPE (it did, once)
    unzip -l "$NUPKG" > "$T/nupkg.list"
    grep -q "tools/net10.0/linux-arm64/DotnetToolSettings.xml" "$T/nupkg.list" ||
        fail "no linux-arm64 DotnetToolSettings.xml in $NUPKG"
    tar -xzOf "$ROOT/build/corscope-$VERSION-linux-arm64.tar.gz" "corscope-$VERSION-linux-arm64/bin/corscope" |
        cmp -s - "$ROOT/build/aarch64/corscope" || fail "no arm64 tarball of build/aarch64/corscope (make dist)"
    note "the package and a tarball carry the arm64 build too"
fi

FEED=$T/feed
mkdir -p "$FEED" "$T/home"
cp "$NUPKG" "$FEED/"
export HOME=$T/home DOTNET_CLI_HOME=$T/home NUGET_PACKAGES=$T/packages

# records a short program with the corscope of COMMAND..., and checks the
# recording names the program's methods
recorded_with() { # WHAT COMMAND...
    local what=$1
    shift
    "$@" record -q -o "$T/r.corscope" --force -- $(app CpuShares) 0.3 > /dev/null 2> "$T/r.err" ||
        fail "$what: record: $(cat "$T/r.err")"
    "$CORSCOPE" check "$T/r.corscope" > "$T/check.txt" 2>&1 || fail "$what: check: $(tail -3 "$T/check.txt")"
    "$CORSCOPE" report -f top "$T/r.corscope" > "$T/top.txt" 2> /dev/null
    grep -q "CpuShares.Work.Alpha" "$T/top.txt" || fail "$what: no CpuShares.Work.Alpha in the report"
    rm -f "$T/r.corscope"
}

# ---- dotnet tool install -g ------------------------------------------------------
dotnet tool install -g corscope --add-source "$FEED" > "$T/g.out" 2>&1 ||
    fail "dotnet tool install -g: $(cat "$T/g.out")"
G=$HOME/.dotnet/tools/corscope
[ -L "$G" ] || fail "-g: $G is not a symbolic link: $(ls -la "$HOME/.dotnet/tools")"
target=$(readlink -f "$G")
case $target in
    "$HOME"/.dotnet/tools/.store/corscope/"$VERSION"/*/tools/net10.0/linux-x64/corscope) ;;
    *) fail "-g: the command leads to $target" ;;
esac
cmp -s "$target" "$CORSCOPE" || fail "-g: the installed executable is not build/corscope"
[ -f "$(dirname "$target")/libcorscope.so" ] || fail "-g: no agent beside the executable"
grep -q "^corscope $VERSION " <<< "$("$G" --version)" || fail "-g: --version: $("$G" --version)"
recorded_with "dotnet tool install -g" "$G"
note "dotnet tool install -g: a link to the package's own executable, which records"

# ---- dotnet tool install --tool-path ----------------------------------------------
dotnet tool install --tool-path "$T/tools" corscope --add-source "$FEED" > "$T/p.out" 2>&1 ||
    fail "dotnet tool install --tool-path: $(cat "$T/p.out")"
[ -L "$T/tools/corscope" ] || fail "--tool-path: not a symbolic link"
recorded_with "dotnet tool install --tool-path" "$T/tools/corscope"
dotnet tool uninstall --tool-path "$T/tools" corscope > /dev/null 2>&1 || fail "--tool-path: uninstall"
[ ! -e "$T/tools/corscope" ] || fail "--tool-path: the command is left after uninstall"
note "dotnet tool install --tool-path: records; uninstalls"

# ---- dnx ------------------------------------------------------------------------------
dotnet dnx --yes --add-source "$FEED" corscope -- --version > "$T/dnx.out" 2>&1 ||
    fail "dnx: $(cat "$T/dnx.out")"
grep -q "^corscope $VERSION " "$T/dnx.out" || fail "dnx --version: $(cat "$T/dnx.out")"
recorded_with "dnx" dotnet dnx --yes --add-source "$FEED" corscope
note "dnx corscope: runs from the package, records"

# ---- the tarball and make install ---------------------------------------------------
mkdir -p "$T/opt"
tar -C "$T/opt" -xzf "$TARBALL"
D=$T/opt/corscope-$VERSION-linux-x64
[ -x "$D/bin/corscope" ] && [ -f "$D/lib/corscope/libcorscope.so" ] || fail "tarball: $(tar tzf "$TARBALL")"
recorded_with "the tarball" "$D/bin/corscope"
# from a link elsewhere on the PATH, as a package manager would place it
mkdir -p "$T/bin" && ln -s "$D/bin/corscope" "$T/bin/corscope"
recorded_with "a link to the tarball's corscope" "$T/bin/corscope"
make -s -C "$ROOT" install PREFIX=/usr DESTDIR="$T/root" > "$T/install.out" 2>&1 ||
    fail "make install: $(cat "$T/install.out")"
recorded_with "make install" "$T/root/usr/bin/corscope"
note "the tarball (and a link to it), make install: record"
