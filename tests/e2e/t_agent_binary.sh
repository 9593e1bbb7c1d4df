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
