# The oldest runtime the agent loads in: .NET Core 3.1 (ICorProfilerInfo11),
# tests/apps/Core31 published self-contained from the 3.1.3 runtime pack
# (cached in build/core31).  What it has, works (cpu samples, launched and
# attached; -e jit without tiers); what needs a later runtime (the runtime's
# events in process: -e gc, lock, alloc) gets one line from the agent, and
# the program runs on as without it: its output and its exit status (3).
source "$(dirname "$0")/lib.sh"

OUT=$ROOT/build/core31
PROG=$OUT/bin/Core31
if [ ! -x "$PROG" ] || [ -n "$(find "$ROOT/tests/apps/Core31" -newer "$PROG" -type f -print -quit)" ]; then
    dotnet publish "$ROOT/tests/apps/Core31/Core31.csproj" -c Release -nologo -v quiet -clp:ErrorsOnly \
        -p:CorscopeBuild="$OUT/" -o "$OUT/bin" > "$T/publish.txt" 2>&1 ||
        fail "cannot publish the .NET Core 3.1 program: $(tail -3 "$T/publish.txt")"
fi

# ---- cpu, launched ----------------------------------------------------------------
# (--cpu-clock perf: at 1 ms this VM's default is the POSIX timer, which
# samples at the 250 Hz scheduler tick: a fourth of the samples, in steps
# that can fall in with the program's rounds of Heavy then Light)
rc=0; cs record -q -i 1ms --cpu-clock perf -o "$T/c.corscope" -- "$PROG" 1 > "$T/out.txt" 2> "$T/err.txt" || rc=$?
assert_eq "cpu: exit status" "$rc" 3
grep -qx "core31 done" "$T/out.txt" || fail "cpu: output: $(cat "$T/out.txt")"
cs check "$T/c.corscope" > "$T/check.txt" || fail "check: $(tail -3 "$T/check.txt")"
# 3.1 answers GetRuntimeInformation with the CLR version, 4.0.30319
grep -q "^  runtime      .*ICorProfilerInfo11$" "$T/check.txt" || fail "not Info11: $(grep runtime "$T/check.txt")"
cs report -f top --limit 0 "$T/c.corscope" > "$T/top.txt" 2> /dev/null
heavy=$(top_total "$T/top.txt" Work.Heavy)
light=$(top_total "$T/top.txt" Work.Light)
# Heavy does twice Light's work
assert_near "cpu: Heavy's share of the two" "$(awk -v h="$heavy" -v l="$light" 'BEGIN { printf "%.1f", 100 * h / (h + l + 1e-9) }')" 66.7 12

# ---- what needs .NET 5: one line, and the program runs on ------------------------------
for e in gc lock alloc; do
    rc=0; cs record -e $e -o "$T/$e.corscope" -- "$PROG" 0.2 > "$T/out.txt" 2> "$T/err.txt" || rc=$?
    assert_eq "-e $e: exit status" "$rc" 3
    grep -qx "core31 done" "$T/out.txt" || fail "-e $e: output: $(cat "$T/out.txt")"
    assert_eq "-e $e: lines from the agent" "$(grep -c "need .NET 5 or later" "$T/err.txt")" 1
    grep -q "the program runs without the profiler" "$T/err.txt" || fail "-e $e: $(cat "$T/err.txt")"
    [ ! -e "$T/$e.corscope" ] || fail "-e $e: a recording was left"
done
note "-e gc, lock, alloc: one line each, the program's output and status kept"

# ---- -e jit: compiles without tiers ---------------------------------------------------
rc=0; cs record -q -e jit -o "$T/j.corscope" -- "$PROG" 0.2 > /dev/null 2> "$T/err.txt" || rc=$?
assert_eq "-e jit: exit status" "$rc" 3
grep -q "without their tiers" "$T/err.txt" || fail "-e jit: $(cat "$T/err.txt")"
cs report -f jit --limit 0 "$T/j.corscope" > "$T/jit.txt" 2> /dev/null
grep -q "Work.Heavy$" "$T/jit.txt" || fail "-e jit: no compile of Work.Heavy: $(head -20 "$T/jit.txt")"

# ---- attached -------------------------------------------------------------------------
"$PROG" 30 > /dev/null &
P=$!
trap 'kill $P 2> /dev/null; rm -rf "$T"' EXIT
sleep 0.5
cs record -q -p "$P" -d 2s -i 1ms -o "$T/a.corscope" 2> "$T/a.err" || fail "attach: $(cat "$T/a.err")"
cs report -f top --limit 0 "$T/a.corscope" > "$T/atop.txt" 2> /dev/null
grep -q "Work.Heavy$" "$T/atop.txt" || fail "attach: no Work.Heavy"
kill -0 "$P" || fail "the program ended after the detach"
note ".NET Core 3.1: cpu launched and attached, jit without tiers"
