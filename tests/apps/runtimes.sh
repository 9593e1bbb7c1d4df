#!/bin/sh
# Builds the test programs for older runtimes: `runtimes.sh 8 9` gives, for
# each major version V,
#   build/dotnet-V/             a .NET installation of runtime V alone (the
#                               shared frameworks Microsoft.NETCore.App and
#                               Microsoft.AspNetCore.App and the host), laid
#                               out from the runtime packs NuGet serves, in
#                               the versions the SDK picks for net V.0;
#   build/rtV/apps/NAME/NAME    the programs of tests/apps/runtimes.slnx
#                               (with --all: of apps.slnx), framework-
#                               dependent, for net V.0.
# A program runs there as it does on a machine with that runtime installed:
#   DOTNET_ROOT=build/dotnet-V build/rtV/apps/NAME/NAME
# (tests/e2e/lib.sh does so when CORSCOPE_TEST_RUNTIME=V).  Incremental: a
# second run with nothing changed takes seconds.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 DOTNET_SKIP_FIRST_TIME_EXPERIENCE=1
packages=${NUGET_PACKAGES:-$HOME/.nuget/packages}
solution=runtimes
if [ "${1:-}" = --all ]; then
    solution=apps
    shift
fi

# newest FILE under DIR newer than STAMP? (find prints the first one)
newer() { [ ! -f "$2" ] || [ -n "$(find "$1" -newer "$2" -type f -print -quit)" ]; }

for v in "$@"; do
    case $v in 5|6|7|8|9|10) ;; *) echo "runtimes.sh: not a runtime: $v" >&2; exit 2 ;; esac
    dotnet_root=$root/build/dotnet-$v
    out=$root/build/rt$v/
    # the runtime packs: a restore of a self-contained web app downloads the
    # ones the SDK picks, and its assets file names their versions
    if newer "$here/runtimes" "$dotnet_root/.ready" || [ "$0" -nt "$dotnet_root/.ready" ]; then
        echo "runtimes: .NET $v: runtime packs"
        mkdir -p "$out"
        dotnet restore "$here/runtimes/Packs.csproj" -v quiet -p:CorscopeTargetFramework=net$v.0 \
            -p:CorscopeBuild="$out" > "$out.restore.log" 2>&1 ||
            { tail -5 "$out.restore.log" >&2; exit 1; }
        assets="${out}apps-obj/Packs/project.assets.json"
        pack_version() {
            # "name": "Microsoft.NETCore.App.Runtime.linux-x64", "version": "[8.0.31, 8.0.31]"
            tr -d ' \n' < "$assets" | grep -o "\"name\":\"$1\",\"version\":\"\[[^,]*" | head -1 |
                sed 's/.*\[//'
        }
        core=$(pack_version Microsoft.NETCore.App.Runtime.linux-x64)
        web=$(pack_version Microsoft.AspNetCore.App.Runtime.linux-x64)
        [ -n "$core" ] && [ -n "$web" ] || { echo "runtimes.sh: .NET $v: no runtime pack in $assets" >&2; exit 1; }
        rm -rf "$dotnet_root"
        lay() { # PACK-ID VERSION FRAMEWORK
            src=$packages/$(echo "$1" | tr 'A-Z' 'a-z')/$2/runtimes/linux-x64
            dst=$dotnet_root/shared/$3/$2
            mkdir -p "$dst"
            cp "$src"/lib/net$v.0/* "$dst"/
            if [ -d "$src/native" ]; then cp "$src"/native/* "$dst"/; fi
        }
        lay Microsoft.NETCore.App.Runtime.linux-x64 "$core" Microsoft.NETCore.App
        lay Microsoft.AspNetCore.App.Runtime.linux-x64 "$web" Microsoft.AspNetCore.App
        mkdir -p "$dotnet_root/host/fxr/$core"
        mv "$dotnet_root/shared/Microsoft.NETCore.App/$core/libhostfxr.so" "$dotnet_root/host/fxr/$core/"
        touch "$dotnet_root/.ready"
        echo "runtimes: .NET $v: $core (ASP.NET Core $web) in build/dotnet-$v"
    fi
    mkdir -p "$out"
    if newer "$here" "$out.built-$solution" || [ "$0" -nt "$out.built-$solution" ]; then
        echo "runtimes: .NET $v: building tests/apps/$solution.slnx"
        dotnet build "$here/$solution.slnx" -c Release -nologo -v quiet -clp:ErrorsOnly \
            -p:CorscopeTargetFramework=net$v.0 -p:CorscopeBuild="$out" > "$out.build.log" 2>&1 ||
            { tail -20 "$out.build.log" >&2; exit 1; }
        touch "$out.built-$solution"
    fi
done
