#!/bin/sh
# Publishes the test programs the arm64 tests run (tests/arm64/run.sh) as
# self-contained linux-arm64 applications, all into build/aarch64/apps (they
# share one copy of the runtime, from NuGet's linux-arm64 runtime pack), with
# their own intermediate files, so the x86-64 builds of the same programs
# (build/apps) are left alone.  Incremental: a program is published again only
# when its sources are newer than its last publication.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=$root/build/aarch64/apps
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 DOTNET_SKIP_FIRST_TIME_EXPERIENCE=1
mkdir -p "$out"
for name in ${ARM64_APPS:-CpuShares MixedStack WallClock Memory Events AsyncChain Trace}; do
    src=$root/tests/apps/$name
    stamp=$out/.$name.published
    if [ -f "$stamp" ] && [ -z "$(find "$src" "$root/tests/apps/Common" "$root/tests/apps/Directory.Build.props" \
            -newer "$stamp" -type f 2>/dev/null | head -1)" ]; then
        continue
    fi
    echo "  PUBLISH linux-arm64 $name"
    dotnet publish "$src/$name.csproj" -r linux-arm64 --self-contained -c Release -nologo -v quiet \
        -clp:ErrorsOnly -o "$out" \
        -p:BaseIntermediateOutputPath="$root/build/aarch64/apps-obj/$name/" \
        -p:OutputPath="$root/build/aarch64/apps-bin/$name/"
    touch "$stamp"
done
