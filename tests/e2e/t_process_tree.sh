# Processes that start processes: every .NET process of the tree under
# `record` gets its own recording (the first at -o, the others beside it
# with their pid), nothing is truncated, record lists what it wrote, and
# report draws several recordings together (a root frame per process) or
# one (--pid).  --no-children records the first .NET process only.
# `dotnet build` of a small project records MSBuild and the compiler (run
# as a process of its own: no compiler server or MSBuild node outlives the
# recording); `dotnet run` records the application, not the SDK.
source "$(dirname "$0")/lib.sh"
A="$APPS/CpuShares/CpuShares.dll"

# roots FILE...: the process root frames of a collapsed report
roots() { cs report -f collapsed "$@" 2> /dev/null | awk -F';' '{ print $1 }' | sed 's/ [0-9]*$//' | sort -u; }

# 1. two programs at once
mkdir "$T/two"
cs record -o "$T/two/r.corscope" -- sh -c "dotnet $A 0.5 > /dev/null & dotnet $A 0.5 > /dev/null; wait" 2> "$T/two.err"
files=$(ls "$T/two")
assert_eq "two at once: recordings" "$(echo "$files" | wc -l)" 2
for f in "$T"/two/*; do
    cs check "$f" > /dev/null || fail "two at once: $f is not whole: $(cs check "$f" 2>&1 | grep status)"
done
grep -q "^corscope: 2 processes recorded" "$T/two.err" || fail "record did not list them: $(cat "$T/two.err")"
assert_eq "two at once: summary lines" "$(grep -c -- '-> .*/two/r.*\.corscope$' "$T/two.err")" 2
assert_eq "two at once: process roots in one report" "$(roots "$T"/two/* | grep -c '^\[process [0-9]*\] dotnet')" 2
other=$(ls "$T/two" | grep -- '-[0-9]*\.corscope$')
pid=${other#r-}; pid=${pid%.corscope}
assert_eq "--pid $pid: roots" "$(roots --pid "$pid" "$T"/two/*)" "$(roots "$T/two/$other")"
note "two at once: r.corscope and $other, both whole, listed by record, drawn together or one by --pid"

# 2. one after the other: the second does not overwrite the first, and
# each summary line gives its process's own time, not the command's (which
# the 3 s between them makes longer than either)
mkdir "$T/seq"
cs record -o "$T/seq/r.corscope" -- sh -c "dotnet $A 0.3 > /dev/null; sleep 3; dotnet $A 0.3 > /dev/null" 2> "$T/seq.err"
assert_eq "one after the other: recordings" "$(ls "$T/seq" | wc -l)" 2
for f in "$T"/seq/*; do cs check "$f" > /dev/null || fail "one after the other: $f is not whole"; done
times=$(sed -n 's/^corscope: process [0-9]* (.*): \([0-9.]*\) s, .*/\1/p' "$T/seq.err")
assert_eq "one after the other: summary lines with a time" "$(echo "$times" | grep -c .)" 2
for s in $times; do
    assert_ge "one after the other: a process's time (s)" "$s" 0.2
    awk -v s="$s" 'BEGIN { exit !(s < 3) }' || fail "one after the other: a process said ${s} s, the command's time, not its own: $(cat "$T/seq.err")"
done
note "one after the other: $(ls "$T/seq" | tr '\n' ' '), each $(echo $times | sed 's/ / and /') s"

# 3. --no-children: the first only
mkdir "$T/first"
cs record -o "$T/first/r.corscope" --no-children -- sh -c "dotnet $A 0.5 > /dev/null & dotnet $A 0.5 > /dev/null; wait" 2> "$T/first.err"
assert_eq "--no-children: recordings" "$(ls "$T/first")" "r.corscope"
cs check "$T/first/r.corscope" > /dev/null || fail "--no-children: the recording is not whole"
grep -q "is another process's recording; this process ([0-9]*) is not recorded" "$T/first.err" ||
    fail "--no-children: the other process did not say it is not recorded: $(cat "$T/first.err")"
note "--no-children: one recording; the other process said it is not recorded"

# 4. dotnet build of a small project
mkdir "$T/proj"
cat > "$T/proj/proj.csproj" <<'XML'
<Project Sdk="Microsoft.NET.Sdk">
  <PropertyGroup>
    <OutputType>Exe</OutputType>
    <TargetFramework>net10.0</TargetFramework>
  </PropertyGroup>
</Project>
XML
cat > "$T/proj/Program.cs" <<'CS'
static class Program
{
    static int Main()
    {
        double x = 0;
        long until = System.Environment.TickCount64 + 500;
        while (System.Environment.TickCount64 < until)
            for (int i = 0; i < 100000; i++) x = x * 1.0000001 + 1;
        System.Console.WriteLine(x > 0 ? "hello" : "?");
        return 0;
    }
}
CS
(cd "$T/proj" && CS_TIMEOUT=300 cs record -o "$T/build.corscope" -- dotnet build -nologo -v q > "$T/build.out" 2> "$T/build.err") ||
    fail "dotnet build under record: $(tail -5 "$T/build.out" "$T/build.err")"
builds=$(ls "$T"/build*.corscope)
assert_ge "dotnet build: recordings" "$(echo "$builds" | wc -l)" 2
for f in $builds; do
    cs check "$f" > /dev/null || fail "dotnet build: $f is not whole (a process outlived the build?)"
done
compiler=$(cs report -f collapsed $builds 2> /dev/null | grep 'Microsoft\.CodeAnalysis' | awk '{ s += $NF } END { print s + 0 }')
assert_ge "dotnet build: samples in the compiler's methods" "$compiler" 1
grep -q "csc" "$T/build.err" || fail "dotnet build: the compiler's process is not listed: $(cat "$T/build.err")"
note "dotnet build: $(echo "$builds" | wc -l) processes recorded, all whole; $compiler samples in Microsoft.CodeAnalysis"

# 5. dotnet run: the application, its summary line with its own time (half
# a second of work), not the command's (the SDK's evaluation of the project
# before it, and the command's whole wall time)
t0=$(date +%s%N)
(cd "$T/proj" && CS_TIMEOUT=300 cs record -o "$T/run.corscope" -- dotnet run --no-build > "$T/run.out" 2> "$T/run.err") ||
    fail "dotnet run under record: $(cat "$T/run.err")"
wall=$(( ($(date +%s%N) - t0) / 1000000 ))
own=$(sed -n 's/^corscope: \([0-9.]*\) s, .*/\1/p' "$T/run.err")
assert_ge "dotnet run: the application's time (s)" "${own:-0}" 0.4
awk -v s="$own" -v w="$wall" 'BEGIN { exit !(s * 1000 < w - 200) }' ||
    fail "dotnet run: the application said ${own} s, the command's ${wall} ms, not its own: $(cat "$T/run.err")"
grep -q hello "$T/run.out" || fail "dotnet run: the application did not run"
assert_eq "dotnet run: recordings" "$(ls "$T" | grep -c '^run.*\.corscope$')" 1
cs report -f top "$T/run.corscope" > "$T/run.top" 2> /dev/null
grep -q " Program\.Main$" "$T/run.top" || fail "dotnet run: the application's Main is not in the report"
if grep -q "Microsoft\.Build\|Microsoft\.DotNet\.Cli" "$T/run.top"; then fail "dotnet run: the SDK was recorded"; fi
grep -q "the application was recorded, not the .NET SDK's own processes" "$T/run.err" || fail "dotnet run: $(cat "$T/run.err")"
note "dotnet run: one recording, the application's (Program.Main, ${own} s of the command's ${wall} ms), not the SDK's"
