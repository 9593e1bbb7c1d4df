#!/bin/sh
# Builds every test program under tests/apps into build/apps/NAME/NAME.dll.
# Incremental: a second run with nothing changed takes a few seconds.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 DOTNET_SKIP_FIRST_TIME_EXPERIENCE=1
dotnet build "$here/apps.slnx" -c Release -nologo -v quiet -clp:ErrorsOnly
