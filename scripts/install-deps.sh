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
need curl curl            # t_watch_sessions: a service's answers checked under load
need wrk wrk              # bench/walks.sh, bench/watch_sessions.sh: a service under load
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

# zlib and OpenSSL for arm64, the libraries the CLI links besides the C
# library: from Debian's zlib1g-dev:arm64 and libssl-dev:arm64, unpacked
# into $CROSS_ZLIB, not installed (a multiarch libc6:arm64 beside the cross
# C library makes qemu-aarch64 -L /usr/aarch64-linux-gnu load one's ld.so
# with the other's libc, and programs hang at start).  The arm64 CLI links
# them statically (OpenSSL: its uploads over https, docs/push.md).
CROSS_ZLIB=${CROSS_ZLIB:-/usr/local/aarch64-linux-gnu}
arm64_updated=
# unpack_arm64 PACKAGE: Debian's PACKAGE:arm64 downloaded and unpacked into
# $tmp/x (a new temporary directory; the caller removes $tmp)
unpack_arm64() {
    [ "$(id -u)" -eq 0 ] && SUDO= || SUDO=sudo
    arches="-o APT::Architectures::=$(dpkg --print-architecture) -o APT::Architectures::=arm64"
    tmp=$(mktemp -d)
    # shellcheck disable=SC2086
    [ -n "$arm64_updated" ] || $SUDO apt-get $arches update -qq
    arm64_updated=1
    # shellcheck disable=SC2086
    (cd "$tmp" && chmod 777 . && $SUDO apt-get $arches download -qq "$1:arm64" > /dev/null)
    dpkg-deb -x "$tmp/$1"_*_arm64.deb "$tmp/x"
    $SUDO mkdir -p "$CROSS_ZLIB/include" "$CROSS_ZLIB/lib"
}
if command -v dpkg > /dev/null 2>&1 && [ ! -f "$CROSS_ZLIB/lib/libz.a" ]; then
    echo "corscope: unpacking zlib for arm64 into $CROSS_ZLIB"
    unpack_arm64 zlib1g-dev
    $SUDO cp "$tmp/x/usr/include/zlib.h" "$tmp/x/usr/include/zconf.h" "$CROSS_ZLIB/include/"
    $SUDO cp "$tmp/x/usr/lib/aarch64-linux-gnu/libz.a" "$CROSS_ZLIB/lib/"
    rm -rf "$tmp"
fi
if command -v dpkg > /dev/null 2>&1 && [ ! -f "$CROSS_ZLIB/lib/libssl.a" ]; then
    echo "corscope: unpacking OpenSSL for arm64 into $CROSS_ZLIB"
    unpack_arm64 libssl-dev
    $SUDO mkdir -p "$CROSS_ZLIB/include/openssl"
    $SUDO cp -r "$tmp/x/usr/include/openssl/." "$tmp/x/usr/include/aarch64-linux-gnu/openssl/." \
        "$CROSS_ZLIB/include/openssl/"
    $SUDO cp "$tmp/x/usr/lib/aarch64-linux-gnu/libssl.a" "$tmp/x/usr/lib/aarch64-linux-gnu/libcrypto.a" \
        "$CROSS_ZLIB/lib/"
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
