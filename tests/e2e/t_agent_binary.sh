# The agent as a binary: it exports DllGetClassObject alone, and it is linked
# with -z now (every symbol bound at load: the signal handler's calls into
# the C library never go through lazy binding, which takes the loader's
# lock and may allocate) and -z relro.
source "$(dirname "$0")/lib.sh"

so=$ROOT/build/libcorscope.so
exports=$(nm -D --defined-only "$so" | awk '$2 ~ /^[TDBRVW]$/ { print $3 }' | sort | tr '\n' ' ')
assert_eq "exported symbols" "$exports" "DllGetClassObject "
readelf -d "$so" | grep -q 'FLAGS.*BIND_NOW' || fail "the agent is not linked with -z now"
readelf -lW "$so" | grep -q GNU_RELRO || fail "the agent has no RELRO segment"
note "exports: $exports; BIND_NOW and RELRO"

# Its thread-locals fit glibc's static TLS surplus (the Makefile's
# AGENT_TLS_BUDGET, tools/static_tls.sh): the same check, and that it
# refuses a library over the budget with one line.
budget=$(awk '$1 == "AGENT_TLS_BUDGET" && $2 == "?=" { print $3 }' "$ROOT/Makefile")
[ -n "$budget" ] || fail "no AGENT_TLS_BUDGET in the Makefile"
"$ROOT/tools/static_tls.sh" "$so" "$budget" || fail "the agent's PT_TLS is over $budget bytes"
for arch_so in "$ROOT/build/aarch64/libcorscope.so"; do
    [ -f "$arch_so" ] && { "$ROOT/tools/static_tls.sh" "$arch_so" "$budget" || fail "arm64 agent over budget"; }
done
tls_lib() { # NAME BYTES: a library with BYTES of initial-exec thread-locals
    printf '__attribute__((tls_model("initial-exec"))) __thread char pad[%d];\nchar *at(void) { return pad; }\n' \
        "$2" > "$T/$1.c"
    cc -shared -fPIC -O1 -o "$T/$1.so" "$T/$1.c" || fail "cannot build $1.so"
}
tls_lib small $((budget - 64))
"$ROOT/tools/static_tls.sh" "$T/small.so" "$budget" 2> "$T/small.err" || fail "refused a library under the budget"
[ -s "$T/small.err" ] && fail "said something about a library under the budget: $(cat "$T/small.err")"
tls_lib big $((budget + 16))
"$ROOT/tools/static_tls.sh" "$T/big.so" "$budget" 2> "$T/big.err" && fail "took a library over the budget"
assert_eq "lines said of a library over the budget" "$(wc -l < "$T/big.err")" 1
grep -q "^corscope: .*big.so: $((budget + 16)) bytes of thread-locals (PT_TLS), over the budget of $budget" \
    "$T/big.err" || fail "unexpected message: $(cat "$T/big.err")"
note "static TLS: agent $(readelf -lW "$so" | awk '$1 == "TLS" { print $6 }') of $budget bytes; a library over it refused"
