#!/bin/bash
# record-samples.sh CLI OUTDIR
#
# Records the test programs (build/apps: run tests/apps/build.sh first) with
# the corscope CLI given and its agent (the libcorscope.so beside it) into
# OUTDIR, one recording per program and set of events: a set that covers
# every event and report of the agent, for tools/compare-reports.sh.  The
# recordings differ from run to run (they are samples of real runs); the
# comparison is of two CLIs over the same recordings.
set -euo pipefail

[ $# = 2 ] || { echo "usage: $0 CLI OUTDIR" >&2; exit 2; }
cli=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
out=$2
root=$(cd "$(dirname "$0")/.." && pwd)
apps=$root/build/apps
mkdir -p "$out"
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1

rec() {
    local name=$1
    shift
    echo "recording $name" >&2
    timeout -k 5 300 "$cli" record -q --force -o "$out/$name.corscope" "$@" > /dev/null
}
app() { echo "dotnet $apps/$1/$1.dll"; }

rec demo -i 1ms -- $(app Demo) 2
rec demo-events -e cpu,alloc,gc,exceptions,lock,jit -- $(app Demo) 2
rec events-exceptions -e cpu,exceptions -- $(app Events) exceptions 1000
rec events-lock -e cpu,lock -- $(app Events) lock 200
rec events-jit -e cpu,jit -- $(app Events) jit
rec events-threads -e cpu -- $(app Events) threads
rec memory-gc -e cpu,alloc,gc -- $(app Memory) gcs 3 4 5 64 2
rec memory-live -e cpu,live -i 1ms -- $(app Memory) live 20 80
rec trace-counts --trace -- $(app Trace) counts
rec trace-calls-only --trace=counts -- $(app Trace) counts
rec trace-throws --trace -- $(app Trace) throws 200
rec boundaries -i 1ms -- $(app Boundaries) all 300
rec boundaries-wall -e wall -i 1ms -- $(app Boundaries) hijack 300
rec mixedstack -i 1ms -- $(app MixedStack) 20
ls "$out"/*.corscope
