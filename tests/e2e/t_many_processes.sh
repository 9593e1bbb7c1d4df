# More .NET processes under one `record` than it follows at once before
# (64), one after the other, as a script, `dotnet test` or a build with
# many steps makes them: each connects to record's control socket, and the
# slot of one that ended is taken by the next.  Before (issue 20.2) the
# 65th and later were hung up on at once, which their agents took for a
# stop: 6 of 70 recordings ended before the program's work.  Every
# recording here is whole, with samples of the program's work, and record
# lists them all.
source "$(dirname "$0")/lib.sh"
A="$APPS/CpuShares/CpuShares.dll"
n=70

cs record -o "$T/r.corscope" -- bash -c "for i in \$(seq $n); do dotnet $A 0.05 > /dev/null || exit 1; done" 2> "$T/err.txt" ||
    fail "record of $n processes: $(tail -3 "$T/err.txt")"
assert_eq "recordings" "$(ls "$T"/r*.corscope | wc -l)" $n
grep -q "^corscope: $n processes recorded" "$T/err.txt" || fail "record did not list them: $(grep -v ' -> ' "$T/err.txt")"
for f in "$T"/r*.corscope; do
    cs check "$f" > /dev/null || fail "$f is not whole: $(cs check "$f" 2>&1 | grep status)"
done
# the processes with samples of the work: their root frames ([process PID] ...)
worked=$(cs report -f collapsed "$T"/r*.corscope 2> /dev/null | grep 'CpuShares\.Work\.' | awk -F';' '{ print $1 }' | sort -u | wc -l)
assert_eq "recordings with samples of the program's work" "$worked" $n
! grep -q "warning" "$T/err.txt" || fail "record warned: $(grep warning "$T/err.txt")"
note "$n processes one after the other: $n whole recordings, each with samples of the work"
