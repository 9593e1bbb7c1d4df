#!/bin/sh
# Installs what building and testing corscope needs and the machine lacks:
# a C compiler, make, zlib, the C library's debug symbols, Node.js and
# Chromium for the report tests, the arm64 cross compiler, qemu-user and an
# arm64 zlib (make arm64 and its tests), and the .NET SDK (which must already
# be there: it is not in Debian's archive). Idempotent and quiet when nothing
# is missing.
set -eu

missing=""
need() { command -v "$1" > /dev/null 2>&1 || missing="$missing $2"; }
need cc gcc
need make make
need timeout coreutils
need pgrep procps
need /usr/bin/time time   # bench/: wall and CPU time of each run
need strace strace        # t_thread_costs: which thread grows the descriptor table
need python3 python3      # t_attach (a process group of its own), t_ps (a silent diagnostics socket)
# the C library's full symbol table, so native frames inside it have names
# (its waits and sorts live in functions it does not export)
pkg() { dpkg -s "$1" > /dev/null 2>&1 || missing="$missing $1"; }
if command -v dpkg > /dev/null 2>&1; then
    pkg libc6-dbg
    pkg zlib1g-dev   # the pprof report is gzip-compressed
    # the report tests: Node.js runs the consumers, Chromium shows the flame graph
    need node nodejs
    need npm npm
    need chromium chromium
    # make fuzz: clang with libFuzzer
    need clang-14 clang-14
    pkg libclang-rt-14-dev
    # make arm64: the cross compiler and C library; its tests run under qemu-user
    need aarch64-linux-gnu-gcc gcc-aarch64-linux-gnu
    pkg libc6-dev-arm64-cross
    need qemu-aarch64 qemu-user
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

# zlib for arm64, the one library the CLI links besides the C library: from
# Debian's zlib1g-dev:arm64, unpacked into $CROSS_ZLIB, not installed (a
# multiarch libc6:arm64 beside the cross C library makes qemu-aarch64 -L
# /usr/aarch64-linux-gnu load one's ld.so with the other's libc, and
# programs hang at start).  The arm64 CLI links it statically.
CROSS_ZLIB=${CROSS_ZLIB:-/usr/local/aarch64-linux-gnu}
if command -v dpkg > /dev/null 2>&1 && [ ! -f "$CROSS_ZLIB/lib/libz.a" ]; then
    echo "corscope: unpacking zlib for arm64 into $CROSS_ZLIB"
    [ "$(id -u)" -eq 0 ] && SUDO= || SUDO=sudo
    arches="-o APT::Architectures::=$(dpkg --print-architecture) -o APT::Architectures::=arm64"
    tmp=$(mktemp -d)
    # shellcheck disable=SC2086
    $SUDO apt-get $arches update -qq
    # shellcheck disable=SC2086
    (cd "$tmp" && chmod 777 . && $SUDO apt-get $arches download -qq zlib1g-dev:arm64 > /dev/null)
    dpkg-deb -x "$tmp"/zlib1g-dev_*_arm64.deb "$tmp/x"
    $SUDO mkdir -p "$CROSS_ZLIB/include" "$CROSS_ZLIB/lib"
    $SUDO cp "$tmp/x/usr/include/zlib.h" "$tmp/x/usr/include/zconf.h" "$CROSS_ZLIB/include/"
    $SUDO cp "$tmp/x/usr/lib/aarch64-linux-gnu/libz.a" "$CROSS_ZLIB/lib/"
    rm -rf "$tmp"
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
