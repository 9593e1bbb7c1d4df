#!/usr/bin/env bash
# What installing corscope as a .NET tool adds to its start-up: the same
# command (`corscope --version`, which does nothing else) run as built
# (build/corscope), as `dotnet tool install --tool-path` installed it (a
# symbolic link into the package's folder), from the tarball, and through
# `dotnet dnx` (the SDK resolves the package, then runs it), interleaved:
# BATCHES batches of N runs of each, the wall time of a batch divided by N,
# medians of the batches.  dnx is slower by the SDK's own start, so it runs
# N/20 times a batch.  The package comes from a local feed of the build's
# nupkg, into a NuGet package folder of this run's own.
#
#   bench/tool.sh [BATCHES] [N]        (default 7, 200)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BATCHES=${1:-7}
N=${2:-200}
source "$ROOT/bench/lib.sh"
T=$(mktemp -d "${TMPDIR:-/tmp}/corscope-bench.XXXXXX")
trap 'rm -rf "$T"' EXIT
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 NUGET_PACKAGES=$T/packages HOME=$T/home
mkdir -p "$T/feed" "$T/home" "$T/opt"
make -C "$ROOT" -s nupkg dist > /dev/null
VERSION=$(sed -n 's/^VERSION := //p' "$ROOT/Makefile")
cp "$ROOT/build/corscope.$VERSION.nupkg" "$T/feed/"
dotnet tool install --tool-path "$T/tools" corscope --add-source "$T/feed" > /dev/null
tar -C "$T/opt" -xzf "$ROOT/build/corscope-$VERSION-linux-x64.tar.gz"
dotnet dnx --yes --add-source "$T/feed" corscope -- --version > /dev/null # the package, fetched once

# batch N COMMAND...: microseconds per run of COMMAND, over N runs
batch() {
    local n=$1 t0 t1 i
    shift
    t0=$(date +%s%N)
    for ((i = 0; i < n; i++)); do "$@" > /dev/null; done
    t1=$(date +%s%N)
    echo $(((t1 - t0) / n / 1000))
}
dnx_n=$((N / 20 > 0 ? N / 20 : 1))
: > "$T/built" && : > "$T/tool" && : > "$T/tar" && : > "$T/dnx"
for ((b = 0; b < BATCHES; b++)); do
    batch "$N" "$ROOT/build/corscope" --version >> "$T/built"
    batch "$N" "$T/tools/corscope" --version >> "$T/tool"
    batch "$N" "$T/opt/corscope-$VERSION-linux-x64/bin/corscope" --version >> "$T/tar"
    batch "$dnx_n" dotnet dnx --yes --add-source "$T/feed" corscope -- --version >> "$T/dnx"
done
echo "# corscope --version: start-up by how it was installed ($(machine); load $(cut -d' ' -f1 /proc/loadavg))"
echo "# medians of $BATCHES batches of $N runs (dnx: $dnx_n), microseconds per run"
printf '%-40s %10s\n' "how" "us/run"
printf '%-40s %10s\n' "build/corscope (as built)" "$(median 0 < "$T/built")"
printf '%-40s %10s\n' "dotnet tool install --tool-path (link)" "$(median 0 < "$T/tool")"
printf '%-40s %10s\n' "the tarball's bin/corscope" "$(median 0 < "$T/tar")"
printf '%-40s %10s\n' "dotnet dnx corscope" "$(median 0 < "$T/dnx")"
