#!/bin/sh
# Packages the built corscope (build/corscope, build/libcorscope.so, and the
# arm64 pair build/aarch64/ when `make arm64` built it):
#
#   package.sh nupkg VERSION   build/corscope.VERSION.nupkg, a .NET tool
#   package.sh dist VERSION    build/corscope-VERSION-linux-ARCH.tar.gz
#
# The .NET tool is one package holding a native build per runtime
# identifier, tools/net10.0/linux-x64/ and tools/net10.0/linux-arm64/, each
# with a DotnetToolSettings.xml whose command runs the executable itself
# (Runner="executable", format 2, .NET 10 SDK): `dotnet tool install`
# restores the package for the machine's RID, takes that folder, and links
# its command to the executable (a symbolic link, no launcher in between),
# so corscope finds libcorscope.so beside itself (its own path, read from
# /proc/self/exe, is the package's folder).  `dnx corscope` runs the same
# executable.  A nupkg is a zip with the .nuspec at its root; nothing here
# needs the network.
#
# The tarball holds bin/corscope and lib/corscope/libcorscope.so (where
# corscope looks for the agent when installed as PREFIX/bin/corscope).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
build=$root/build
what=${1:-}
version=${2:-}
[ -n "$what" ] && [ -n "$version" ] || { echo "usage: package.sh nupkg|dist VERSION" >&2; exit 2; }

# the builds there are: "RID DIR" lines
builds() {
    echo "linux-x64 $build"
    if [ -x "$build/aarch64/corscope" ] && [ -f "$build/aarch64/libcorscope.so" ]; then
        echo "linux-arm64 $build/aarch64"
    fi
}

check_build() { # DIR RID
    [ -x "$1/corscope" ] && [ -f "$1/libcorscope.so" ] || { echo "package.sh: no build in $1" >&2; exit 1; }
    machine=$(od -An -tx1 -j18 -N2 "$1/corscope" | tr -d ' \n')
    case "$2:$machine" in
        linux-x64:3e00|linux-arm64:b700) ;;
        *) echo "package.sh: $1/corscope is not a $2 executable (ELF machine $machine)" >&2; exit 1 ;;
    esac
}

stage=$(mktemp -d "$build/package.XXXXXX")
trap 'rm -rf "$stage"' EXIT

case $what in
nupkg)
    mkdir -p "$stage/_rels"
    builds | while read -r rid dir; do
        check_build "$dir" "$rid"
        t=$stage/tools/net10.0/$rid
        mkdir -p "$t"
        install -m 0755 "$dir/corscope" "$t/corscope"
        install -m 0644 "$dir/libcorscope.so" "$t/libcorscope.so"
        cat > "$t/DotnetToolSettings.xml" <<EOF
<?xml version="1.0" encoding="utf-8"?>
<DotNetCliTool Version="2">
  <Commands>
    <Command Name="corscope" EntryPoint="corscope" Runner="executable" />
  </Commands>
</DotNetCliTool>
EOF
    done
    rids=$(builds | cut -d' ' -f1 | tr '\n' ' ' | sed 's/ $//')
    cat > "$stage/corscope.nuspec" <<EOF
<?xml version="1.0" encoding="utf-8"?>
<package xmlns="http://schemas.microsoft.com/packaging/2013/05/nuspec.xsd">
  <metadata>
    <id>corscope</id>
    <version>$version</version>
    <authors>corscope</authors>
    <description>A sampling profiler for .NET on Linux, in C: CPU and wall time with mixed managed and native stacks, allocations, GC, exceptions, locks, JIT, exact call tracing; launch or attach (containers too); flame graphs, speedscope, pprof, Chrome traces. Native build for $rids; needs the .NET 10 SDK to install as a tool.</description>
    <tags>profiler diagnostics flamegraph performance linux</tags>
    <packageTypes>
      <packageType name="DotnetTool" />
    </packageTypes>
  </metadata>
</package>
EOF
    # the package's parts and their types (OPC): the executables have no
    # extension, so each is named
    overrides=$(for rid in $rids; do
        printf '<Override PartName="/tools/net10.0/%s/corscope" ContentType="application/octet" />' "$rid"
    done)
    cat > "$stage/[Content_Types].xml" <<EOF
<?xml version="1.0" encoding="utf-8"?>
<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml" /><Default Extension="nuspec" ContentType="application/octet" /><Default Extension="xml" ContentType="application/octet" /><Default Extension="so" ContentType="application/octet" />$overrides</Types>
EOF
    cat > "$stage/_rels/.rels" <<'EOF'
<?xml version="1.0" encoding="utf-8"?>
<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Type="http://schemas.microsoft.com/packaging/2010/07/manifest" Target="/corscope.nuspec" Id="R1" /></Relationships>
EOF
    out=$build/corscope.$version.nupkg
    rm -f "$out"
    # the nuspec first, as NuGet writes it; -X: no extra attributes
    (cd "$stage" && zip -q -X -D -r "$out" corscope.nuspec '[Content_Types].xml' _rels tools)
    echo "$out ($rids)"
    ;;
dist)
    builds | while read -r rid dir; do
        check_build "$dir" "$rid"
        name=corscope-$version-$rid
        d=$stage/$name
        mkdir -p "$d/bin" "$d/lib/corscope"
        install -m 0755 "$dir/corscope" "$d/bin/corscope"
        install -m 0644 "$dir/libcorscope.so" "$d/lib/corscope/libcorscope.so"
        install -m 0644 "$root/README.md" "$d/README.md"
        out=$build/$name.tar.gz
        tar -C "$stage" --owner=0 --group=0 --numeric-owner -czf "$out" "$name"
        echo "$out"
    done
    ;;
*)
    echo "usage: package.sh nupkg|dist VERSION" >&2
    exit 2
    ;;
esac
