#!/bin/sh
# runtime_apps.sh TEST... : fails, naming them, when the e2e tests given use
# a program (`$(app NAME)`) that tests/apps/runtimes.slnx does not build for
# the older runtimes.  make e2e-runtimes runs it first, so that a program
# added to a representative test is added to that solution too, rather than
# found missing by CI half an hour in ("cannot run build/rt8/apps/...").
set -eu
here=$(cd "$(dirname "$0")" && pwd)
missing=
for t in "$@"; do
    for a in $(grep -o 'app [A-Z][A-Za-z0-9]*' "$here/t_$t.sh" | sed 's/^app //' | sort -u); do
        grep -q "\"$a/$a.csproj\"" "$here/../apps/runtimes.slnx" || missing="$missing t_$t:$a"
    done
done
[ -z "$missing" ] || { echo "e2e-runtimes: tests/apps/runtimes.slnx lacks the programs of$missing" >&2; exit 1; }
