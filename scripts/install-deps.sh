#!/bin/sh
# Installs what building and testing corscope needs and the machine lacks:
# a C compiler, make, zlib, the C library's debug symbols, Node.js and
# Chromium for the report tests, and the .NET SDK (which must already be there: it is
# not in Debian's archive). Idempotent and quiet when nothing is missing.
set -eu

missing=""
need() { command -v "$1" > /dev/null 2>&1 || missing="$missing $2"; }
need cc gcc
need make make
need timeout coreutils
need pgrep procps
need /usr/bin/time time   # bench/: wall and CPU time of each run
need strace strace        # t_thread_costs: which thread grows the descriptor table
# the C library's full symbol table, so native frames inside it have names
# (its waits and sorts live in functions it does not export)
pkg() { dpkg -s "$1" > /dev/null 2>&1 || missing="$missing $1"; }
if command -v dpkg > /dev/null 2>&1; then
    pkg libc6-dbg
    pkg zlib1g-dev   # the pprof report is gzip-compressed
    pkg libssl-dev   # record --push over https (OpenSSL, which .NET needs anyway)
    need openssl openssl              # t_push: a certificate of the test's own
    need protoc protobuf-compiler     # t_push: the push requests checked on the wire
    # the report tests: Node.js runs the consumers, Chromium shows the flame graph
    need node nodejs
    need npm npm
    need chromium chromium
    # make fuzz: clang with libFuzzer
    need clang-14 clang-14
    pkg libclang-rt-14-dev
fi

if [ -n "$missing" ]; then
    echo "corscope: installing:$missing"
    if [ "$(id -u)" -ne 0 ]; then
        command -v sudo > /dev/null || { echo "corscope: need root (or sudo) to install:$missing" >&2; exit 1; }
        SUDO=sudo
    else
        SUDO=
    fi
    $SUDO apt-get update -qq
    # shellcheck disable=SC2086
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $missing > /dev/null
fi

# the consumers the report tests run (versions pinned by package-lock.json)
viewers=$(cd "$(dirname "$0")/../tests/viewers" && pwd)
if [ ! -d "$viewers/node_modules/playwright-core" ] || [ "$viewers/package-lock.json" -nt "$viewers/node_modules" ]; then
    echo "corscope: installing the report tests' node packages"
    (cd "$viewers" && npm ci --no-audit --no-fund --loglevel=error > /dev/null)
fi

if ! command -v dotnet > /dev/null 2>&1; then
    echo "corscope: the .NET SDK (dotnet) is not installed; install .NET 8 or later from https://dot.net" >&2
    exit 1
fi
