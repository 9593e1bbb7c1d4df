#!/usr/bin/env bash
# Runs the arm64 tests (tests/arm64/t_*.sh) under qemu-user, one after
# another, each with a time limit (tests/e2e/run.sh does the running).
# `run.sh quick` runs those whose first line is "# make test" (the
# representative set make test runs); `run.sh NAME` those whose file name
# contains NAME.
here=$(cd "$(dirname "$0")" && pwd)
command -v qemu-aarch64 > /dev/null ||
    { echo "corscope: qemu-aarch64 is not installed (scripts/install-deps.sh installs it)" >&2; exit 1; }
E2E_DIR=$here E2E_LABEL=arm64 E2E_QUICK="# make test" E2E_TIMEOUT=900 exec "$here/../e2e/run.sh" "$@"
