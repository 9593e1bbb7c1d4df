#!/bin/sh
# Builds every test program under tests/apps into build/apps/NAME/NAME.dll.
# Incremental: a second run with nothing changed takes a few seconds.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 DOTNET_SKIP_FIRST_TIME_EXPERIENCE=1
dotnet build "$here/apps.slnx" -c Release -nologo -v quiet -clp:ErrorsOnly

# NativeGaps's native libraries, beside its dll (DllImport looks there)
gaps="$here/NativeGaps/native"
out="$here/../../build/apps/NativeGaps"
mkdir -p "$out"
if [ ! -f "$out/libgapexpr.so" ] || [ "$gaps/gapexpr.S" -nt "$out/libgapexpr.so" ]; then
    cc -shared -fPIC -o "$out/libgapexpr.so" "$gaps/gapexpr.S"
fi
if [ ! -f "$out/libgapdebug.so" ] || [ "$gaps/gapdebug.c" -nt "$out/libgapdebug.so" ]; then
    cc -shared -fPIC -O1 -g -fno-omit-frame-pointer -fno-asynchronous-unwind-tables -fno-unwind-tables \
        -nostartfiles -Wl,--no-eh-frame-hdr -o "$out/libgapdebug.so" "$gaps/gapdebug.c"
fi
if [ ! -f "$out/libgapfresh.so" ] || [ "$gaps/gapfresh.c" -nt "$out/libgapfresh.so" ]; then
    cc -shared -fPIC -O2 -fomit-frame-pointer -o "$out/libgapfresh.so" "$gaps/gapfresh.c"
fi
