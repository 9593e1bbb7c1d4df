#!/usr/bin/env bash
# Seeds for the agent's parsers' fuzzers, from real files on this machine:
#   cfi     the .eh_frame (and .eh_frame_hdr) of every shared library in
#           /lib/x86_64-linux-gnu, of the .NET runtime's own, of a Rust and a
#           Go shared object and of small C/C++ libraries built here by gcc
#           and clang: small ones whole, big ones sampled (their CIEs and a
#           spread of FDEs, the CIE pointers rewritten);
#   elfsym  small libraries built here (with and without .symtab, stripped
#           with a .gnu_debuglink, their debug files, versioned symbols, no
#           build id) and the small debug files under /usr/lib/debug;
#   leaf    the code bytes of JIT-compiled methods, from the runtime's own
#           listing (DOTNET_JitDisasmWithCodeBytes) of the demo and stress
#           programs, tiered and fully optimised: each method's first 256
#           bytes and, for longer ones, their last 96 (the epilogue);
#   config  settings lines, good and bad;
#   il      the method bodies of tests/unit/data/il_corpus.bin (real bodies of
#           our test programs and of the framework: tools/ilcorpus select);
#   pdb     our test programs' assemblies with their PDBs appended (the
#           harness's "PDB:" trailer), and small framework assemblies.
# Thousands of candidates are written under OUT (default build/seeds); with
# the fuzzers built (make fuzz), each is then merged into
# tests/fuzz/corpus/NAME by libFuzzer (-merge=1), which keeps only the
# candidates that add coverage, under their descriptive names.
#
#   tests/fuzz/seeds.sh [OUT]      needs python3, gcc, clang-14; cargo, go,
#                                  dotnet and build/apps when there
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$here/../.." && pwd)
OUT=${1:-$ROOT/build/seeds}
rm -rf "$OUT"
mkdir -p "$OUT"/{cfi,elfsym,leaf,config,il,pdb,work}
W=$OUT/work

# ---- libraries built here ------------------------------------------------
cat > "$W/seed.c" <<'EOF'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static int cmp(const void *a, const void *b) { return *(const int *)a - *(const int *)b; }
int seed_sort(int *v, int n) { qsort(v, (size_t)n, sizeof *v, cmp); return v[0]; }
int seed_old(int x) { return x + 1; }
int seed_new(int x) { return x + 2; }
__asm__(".symver seed_old, seed_api@VERS_1");
__asm__(".symver seed_new, seed_api@@VERS_2");
void seed_print(const char *s) { char b[64]; snprintf(b, sizeof b, "%s", s); puts(b); }
long seed_deep(long n) { char *p = __builtin_alloca((size_t)n % 256 + 1); memset(p, 1, 1);
                         return n ? seed_deep(n - 1) + p[0] : 0; }
EOF
cat > "$W/seed.map" <<'EOF'
VERS_1 { global: seed_api; seed_sort; seed_print; seed_deep; local: *; };
VERS_2 { global: seed_api; } VERS_1;
EOF
cat > "$W/seedxx.cc" <<'EOF'
#include <map>
#include <stdexcept>
#include <string>
extern "C" int seedxx(int n) {
    std::map<std::string, int> m;
    try {
        for (int i = 0; i < n; i++) m[std::to_string(i)] = i;
        if (n > 3) throw std::runtime_error("many");
    } catch (const std::exception &) { return -1; }
    return (int)m.size();
}
EOF
so() { # name compiler flags...
    local name=$1 cc=$2; shift 2
    "$cc" -shared -fPIC -o "$W/$name" "$@" 2> /dev/null || echo "seeds: $name not built" >&2
}
so c-O2.so gcc -O2 -g0 -Wl,--version-script="$W/seed.map" "$W/seed.c"
so c-O0-fp.so gcc -O0 -g0 -fno-omit-frame-pointer -Wl,--version-script="$W/seed.map" "$W/seed.c"
so c-Os-nobuildid.so gcc -Os -g0 -Wl,--build-id=none -Wl,--version-script="$W/seed.map" "$W/seed.c"
so c-clang.so clang-14 -O2 -g0 -Wl,--version-script="$W/seed.map" "$W/seed.c"
so c-clang-fp.so clang-14 -O1 -g0 -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer \
    -Wl,--version-script="$W/seed.map" "$W/seed.c"
so cxx-O2.so g++ -O2 -g0 "$W/seedxx.cc"
so cxx-clang.so clang++-14 -O2 -g0 "$W/seedxx.cc"
# stripped, with a debug link to its debug file, and the debug file itself
for f in c-O2.so c-clang.so; do
    [ -f "$W/$f" ] || continue
    objcopy --only-keep-debug "$W/$f" "$W/$f.debug"
    objcopy --strip-all --add-gnu-debuglink="$W/$f.debug" "$W/$f" "$W/stripped-$f"
done
[ -f "$W/cxx-O2.so" ] && strip -o "$W/stripped-cxx-O2.so" "$W/cxx-O2.so"
if command -v cargo > /dev/null; then
    mkdir -p "$W/rust/src"
    cat > "$W/rust/Cargo.toml" <<'EOF'
[package]
name = "seed"
version = "0.1.0"
edition = "2021"
[lib]
crate-type = ["cdylib"]
[profile.release]
panic = "unwind"
EOF
    cat > "$W/rust/src/lib.rs" <<'EOF'
use std::collections::HashMap;
#[no_mangle]
pub extern "C" fn seed_sum(n: u64) -> u64 {
    let mut m: HashMap<u64, u64> = HashMap::new();
    for i in 0..n { *m.entry(i % 7).or_insert(0) += i; }
    let r = std::panic::catch_unwind(|| if n == 3 { panic!("three") } else { n });
    m.values().sum::<u64>() + r.unwrap_or(0)
}
EOF
    (cd "$W/rust" && cargo build --release -q --offline 2> /dev/null &&
        cp target/release/libseed.so "$W/rust.so") || echo "seeds: no Rust object" >&2
fi
if command -v go > /dev/null; then
    mkdir -p "$W/go"
    cat > "$W/go/main.go" <<'EOF'
package main

import "C"
import "sort"

//export SeedSort
func SeedSort(n C.int) C.int {
	v := make([]int, int(n))
	for i := range v { v[i] = (i * 7919) % int(n+1) }
	sort.Ints(v)
	return C.int(len(v))
}

func main() {}
EOF
    (cd "$W/go" && GOFLAGS=-mod=mod GO111MODULE=off go build -buildmode=c-shared -o "$W/go.so" main.go \
        2> /dev/null) || echo "seeds: no Go object" >&2
fi

# ---- cfi: .eh_frame sections, whole or sampled -----------------------------
libs=()
for f in /lib/x86_64-linux-gnu/*.so* /usr/share/dotnet/shared/Microsoft.NETCore.App/*/*.so \
         /usr/lib/dotnet/shared/Microsoft.NETCore.App/*/*.so "$W"/*.so; do
    [ -f "$f" ] && [ ! -L "$f" ] && libs+=("$f")
done
python3 - "$OUT/cfi" "${libs[@]}" <<'PY'
import os, struct, sys
out, libs = sys.argv[1], sys.argv[2:]
WHOLE, SAMPLE = 6000, 24   # sections up to WHOLE bytes kept whole; else SAMPLE FDEs

def sections(data):
    if data[:4] != b"\x7fELF" or data[4] != 2:
        return {}
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3a)
    if shoff == 0 or shstrndx >= shnum or shoff + shnum * 64 > len(data):
        return {}
    sh = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * 64) for i in range(shnum)]
    stro = sh[shstrndx][4]
    res = {}
    for s in sh:
        end = data.index(b"\0", stro + s[0])
        res[data[stro + s[0]:end].decode("latin-1")] = (s[3], s[4], s[5], s[1])  # addr, off, size, type
    return res

def records(sec):
    """(offset, bytes, cie_offset or None) of each CIE/FDE up to the terminator"""
    p, res = 0, []
    while p + 8 <= len(sec):
        n, = struct.unpack_from("<I", sec, p)
        if n == 0 or n == 0xffffffff or p + 4 + n > len(sec):
            break
        cid, = struct.unpack_from("<I", sec, p + 4)
        res.append((p, sec[p:p + 4 + n], None if cid == 0 else p + 4 - cid))
        p += 4 + n
    return res

def sample(sec):
    recs = records(sec)
    fdes = [r for r in recs if r[2] is not None]
    if not fdes:
        return None
    step = max(1, len(fdes) // SAMPLE)
    picked = fdes[::step][:SAMPLE]
    cies = sorted({r[2] for r in picked})
    byoff = {r[0]: r for r in recs}
    if any(c not in byoff for c in cies):
        return None
    buf, where = bytearray(), {}
    for c in cies:
        where[c] = len(buf)
        buf += byoff[c][1]
    for off, body, cie in picked:
        body = bytearray(body)
        struct.pack_into("<I", body, 4, len(buf) + 4 - where[cie])   # the CIE pointer, rewritten
        buf += body
    return bytes(buf) + b"\0\0\0\0"

def hdr_only(eh):
    # an .eh_frame_hdr without its table (counts omitted), the section right after
    return bytes([1, 0x1b, 0xff, 0xff]) + struct.pack("<i", 4) + eh

for lib in libs:
    try:
        data = open(lib, "rb").read()
        sec = sections(data)
    except (OSError, ValueError, struct.error):
        continue
    if ".eh_frame" not in sec or sec[".eh_frame"][3] != 1:
        continue
    name = os.path.basename(lib)
    addr, off, size, _ = sec[".eh_frame"]
    eh = data[off:off + size]
    if size <= WHOLE:
        open(f"{out}/eh-{name}", "wb").write(eh)
        if ".eh_frame_hdr" in sec:
            ha, ho, hs, _ = sec[".eh_frame_hdr"]
            if ho < off and ho + hs <= off and addr - ha == off - ho:
                open(f"{out}/hdr-{name}", "wb").write(data[ho:off + size])   # as mapped
    else:
        s = sample(eh)
        if s:
            open(f"{out}/eh-sampled-{name}", "wb").write(s)
            open(f"{out}/hdr-sampled-{name}", "wb").write(hdr_only(s))
PY

# ---- elfsym: small ELF files -------------------------------------------------
for f in "$W"/*.so "$W"/*.debug; do
    [ -f "$f" ] && [ "$(stat -c %s "$f")" -le 65536 ] && cp "$f" "$OUT/elfsym/$(basename "$f")"
done
mapfile -t small < <(find /usr/lib/debug/.build-id -type f -name '*.debug' -size -48k 2> /dev/null | sort)
for f in "${small[@]:0:40}"; do cp "$f" "$OUT/elfsym/debug-$(basename "$f")"; done
mapfile -t small < <(find /lib/x86_64-linux-gnu -maxdepth 1 -type f -name '*.so*' -size -24k | sort)
for f in "${small[@]:0:40}"; do cp "$f" "$OUT/elfsym/lib-$(basename "$f")"; done

# ---- leaf: JIT-compiled code --------------------------------------------------
jit() { # label dll args... (environment before)
    local label=$1; shift
    env DOTNET_JitDisasm='*' DOTNET_JitDisasmWithCodeBytes=1 DOTNET_JitStdOutFile="$W/jit-$label.txt" \
        timeout 120 dotnet "$@" > /dev/null 2>&1 || true
}
if command -v dotnet > /dev/null && [ -f "$ROOT/build/apps/Demo/Demo.dll" ]; then
    jit demo "$ROOT/build/apps/Demo/Demo.dll"
    DOTNET_TieredCompilation=0 jit demo-opt "$ROOT/build/apps/Demo/Demo.dll"
    for p in tiering exceptions recursion; do
        jit "stress-$p" "$ROOT/build/apps/Stress/Stress.dll" "$p"
    done
    python3 - "$OUT/leaf" "$W"/jit-*.txt <<'PY'
import hashlib, re, sys
out, files = sys.argv[1], sys.argv[2:]
line = re.compile(r"^\s+([0-9A-F]{2,})\s{2,}\S")
seen = set()
def keep(label, code):
    if len(code) < 2 or code in seen:
        return
    seen.add(code)
    h = hashlib.sha1(code).hexdigest()[:10]
    open(f"{out}/{label}-{h}", "wb").write(code)
for f in files:
    label = f.rsplit("/", 1)[1][4:-4]
    code, inside = bytearray(), False
    def flush():
        if code:
            keep(label, bytes(code[:256]))
            if len(code) > 256:
                keep(label + "-end", bytes(code[-96:]))
    for text in open(f, errors="replace"):
        if text.startswith("; Assembly listing for method"):
            flush()
            code, inside = bytearray(), True
        elif text.startswith("; Total bytes of code"):
            flush()
            code, inside = bytearray(), False
        elif inside:
            m = line.match(text)
            if m and len(m.group(1)) % 2 == 0:
                code += bytes.fromhex(m.group(1))
    flush()
PY
else
    echo "seeds: no dotnet or build/apps: no JIT code for leaf" >&2
fi

# ---- config: settings lines --------------------------------------------------
c=$OUT/config
printf 'interval=10ms\nevent=cpu\nsampler=signal\nmax_depth=4096\nlog=warn\n' > "$c/defaults"
printf 'interval=1ms\nevent=wall\nsignal=SIGVTALRM\ncpu_clock=posix\n' > "$c/wall-1ms"
printf 'sampler=suspend\ninterval=1s\nmax_depth=8\nlog=debug\n' > "$c/suspend"
printf 'output=/tmp/app-%%p.corscope\n' > "$c/output-pid"
printf 'output=a%%%%b%%p%%q%%\n' > "$c/output-percent"
printf 'signal=USR2\nsignal=37\nsignal=SIGRTMIN\nsignal=34\nsignal=SIGSEGV\n' > "$c/signals"
printf 'interval=abc\ninterval=10\ninterval=5s\ninterval=1.5ms\ninterval=.5s\ninterval=999us\n' > "$c/intervals"
printf 'interval=0.001s\ninterval=1000000ns\ninterval=0.0166667m\ninterval=99999999999999999999s\n' > "$c/intervals-2"
printf 'max_depth=-1\nmax_depth=7\nmax_depth=65536\nmax_depth=18446744073709551616\n' > "$c/depths"
printf 'event=gpu\nsampler=magic\nlog=loud\ncpu_clock=tsc\nnonsense=1\noutput=\n' > "$c/bad"

# ---- il: method bodies -------------------------------------------------------------
python3 - "$ROOT/tests/unit/data/il_corpus.bin" "$OUT/il" <<'EOF'
import struct, sys
data = open(sys.argv[1], 'rb').read()
at = n = 0
while at + 4 <= len(data):
    size, = struct.unpack_from('<I', data, at)
    at += 4
    open('%s/body-%04d' % (sys.argv[2], n), 'wb').write(data[at:at + size])
    at += size
    n += 1
EOF

# ---- pdb: assemblies, with their PDBs after them -----------------------------------
with_pdb() { # DLL PDB OUT: the image, the PDB, its size (u32 LE) and "PDB:"
    python3 - "$1" "$2" "$3" <<'EOF'
import struct, sys
image = open(sys.argv[1], 'rb').read()
pdb = open(sys.argv[2], 'rb').read() if sys.argv[2] != '-' else b''
open(sys.argv[3], 'wb').write(image + pdb + (struct.pack('<I', len(pdb)) + b'PDB:' if pdb else b''))
EOF
}
for dll in "$ROOT"/build/apps/*/*.dll; do
    [ -f "$dll" ] || continue
    name=$(basename "$dll" .dll)
    pdb=${dll%.dll}.pdb
    if [ -f "$pdb" ]; then with_pdb "$dll" "$pdb" "$OUT/pdb/app-$name"; else with_pdb "$dll" - "$OUT/pdb/app-$name"; fi
done
for dll in "$(dirname "$(readlink -f "$(command -v dotnet)")")"/shared/Microsoft.NETCore.App/*/System.{Runtime,Console,Collections}.dll; do
    [ -f "$dll" ] && cp "$dll" "$OUT/pdb/framework-$(basename "$dll" .dll)"
done

# ---- merge: what adds coverage, under its own name ------------------------------
# and, whatever coverage says, the objects the agent meets most (the C
# library, the runtime's, other toolchains') and the libraries built here
declare -A keep=(
    [cfi]='^(eh|hdr)(-sampled)?-(libc\.so|ld-linux|libstdc\+\+|libgcc_s|libcoreclr\.so|libclrjit|libSystem\.Native|rust|go|cxx-O2|c-O2)'
    [elfsym]='^(c-O2\.so|stripped-c-O2\.so|c-O2\.so\.debug|c-Os-nobuildid\.so|stripped-cxx-O2\.so)$'
    [leaf]='^$' [config]='^$' [il]='^$' [pdb]='^app-(Demo|CoverLib|CoverLibEmbedded)$')
for f in cfi elfsym leaf config il pdb; do
    fuzzer=$ROOT/build/fuzz/$f/fuzzer
    [ -x "$fuzzer" ] || { echo "seeds: $fuzzer not built (make fuzz): $OUT/$f not merged" >&2; continue; }
    rm -rf "$W/merged-$f"
    mkdir -p "$W/merged-$f" "$ROOT/tests/fuzz/corpus/$f"
    "$fuzzer" -merge=1 -timeout=10 "$W/merged-$f" "$ROOT/tests/fuzz/corpus/$f" "$OUT/$f" \
        > "$W/merge-$f.log" 2>&1 || { echo "seeds: merge of $f failed, see $W/merge-$f.log" >&2; continue; }
    # the merged files are named by their SHA-1: back to the candidates' names
    (cd "$OUT/$f" && sha1sum -- *) > "$W/sums-$f"
    added=0
    for m in "$W/merged-$f"/*; do
        [ -f "$m" ] || continue
        name=$(awk -v s="$(basename "$m")" '$1 == s { print $2; exit }' "$W/sums-$f")
        [ -n "$name" ] && [ ! -e "$ROOT/tests/fuzz/corpus/$f/$name" ] &&
            cp "$OUT/$f/$name" "$ROOT/tests/fuzz/corpus/$f/$name" && added=$((added + 1))
    done
    for name in $(ls "$OUT/$f" | grep -E "${keep[$f]}"); do
        [ -e "$ROOT/tests/fuzz/corpus/$f/$name" ] ||
            { cp "$OUT/$f/$name" "$ROOT/tests/fuzz/corpus/$f/$name"; added=$((added + 1)); }
    done
    echo "seeds: $f: $(ls "$OUT/$f" | wc -l) candidates, $added added to tests/fuzz/corpus/$f"
done
