# Every managed<->native and managed<->runtime transition walks whole, in
# the exact frame order: tests/apps/Boundaries runs one family per thread
# (b-MODE), each spending its CPU under one known stack.  For each family,
# of the samples holding its anchor frame, at least 99% must show the exact
# path from the thread's start (Thread.StartCallback, the lambda, the
# mode's Run ...) down to that anchor; and under 0.5% of all samples may be
# failed walks.  Then the GC family in wall mode, where threads wait inside
# the runtime's hijack stub, and the return addresses it replaced must be
# put right (hijacked_returns > 0).
#
# tests/arm64/t_boundaries.sh runs the same checks on a recording made on
# arm64: BOUNDARIES_RECORDING names it (then the wall part is left out),
# BOUNDARIES_SKIP the families not checked there.
source "$(dirname "$0")/lib.sh"

MS=${BOUNDARIES_MS:-400}
if [ -n "${BOUNDARIES_RECORDING:-}" ]; then
    cp "$BOUNDARIES_RECORDING" "$T/b.corscope"
else
    # the precise clock asked for by name: at 1 ms the agent would choose
    # POSIX timers where interrupts are dear, which fire at the kernel's
    # tick (a quarter of the samples, each weighing four)
    cs record -q -i 1ms --cpu-clock perf -o "$T/b.corscope" -- $(app Boundaries) all "$MS" > /dev/null
fi
cs report -f collapsed --threads "$T/b.corscope" > "$T/b.txt" 2> /dev/null
cs check "$T/b.corscope" > "$T/check.txt"

# counter NAME -> its value in `check`'s counters line (0 if absent)
counter() { grep -o " $1=[0-9]*" "$T/check.txt" | head -1 | cut -d= -f2 | grep . || echo 0; }

# family MODE ANCHOR PATH: of the b-MODE thread's samples with a frame
# matching ANCHOR, the share whose stack is exactly
#   ...;Thread.StartCallback;<the lambda>;PATH(;...)
# (a PATH ending in $ is the whole rest of the stack)
family() {
    local mode=$1 anchor=$2 path=$3 tail='(;| [0-9]+$)'
    [[ "$path" == *'$' ]] && path=${path%'$'} && tail=' [0-9]+$'
    THREAD="[b-$mode tid=" ANCHOR="(^|;)$anchor(;| [0-9]+\$)" \
    FULL="^\\[b-$mode tid=[0-9]+\\];([^;]*;)*System\\.Threading\\.Thread\\.StartCallback;Boundaries\\.Program\\+[^;]*;$path$tail" \
    awk 'index($0, ENVIRON["THREAD"]) == 1 {
            all += $NF
            if ($0 ~ ENVIRON["ANCHOR"]) {
                hot += $NF
                if ($0 ~ ENVIRON["FULL"]) ok += $NF
                else if (shown++ < 3) print "    not exact: " substr($0, 1, 400) > "/dev/stderr"
            }
        }
        END { printf "%d %d %d\n", all, hot, ok }' "$T/b.txt"
}

# check_family MODE ANCHOR PATH [MIN%]: the anchor holds at least MIN% of
# the thread's samples (default 50), and 99% of those are exact
check_family() {
    local mode=$1 anchor=$2 path=$3 min=${4:-50}
    [[ " ${BOUNDARIES_SKIP:-} " == *" $mode "* ]] && return
    read -r all hot ok < <(family "$mode" "$anchor" "$path")
    local pct
    pct=$(awk -v o="$ok" -v h="$hot" 'BEGIN { printf "%.1f", h ? 100 * o / h : 0 }')
    note "$mode: $ok of $hot samples under ${anchor//\\/} exact ($pct%; the thread has $all)"
    assert_ge "$mode: samples under the anchor ($min% of the thread's at least)" "$hot" "$(( all * min / 100 ))"
    assert_ge "$mode: exact stacks, %" "$pct" 99
}

# libc frames, named or (without a symbol there: the signal trampoline)
# folded into the library's name
L='(libc\.so\.6(![^;]*)?;)+'
# the recursion, then only named frames (the hijack stub's, the runtime's),
# but for a leaf in a stub the runtime generated (unnamed)
HIJACK='Boundaries\.Hijack\.Run;Boundaries\.Hijack\.Compute;(Boundaries\.Hijack\.Fib;)*Boundaries\.Hijack\.Fib(;([^[;][^;]*|\[[^u;][^;]*))*(;\[unknown\])?$'
check_family uco 'Boundaries\.Uco\.Compare' "Boundaries\\.Uco\\.Run;${L}Boundaries\\.Uco\\.Compare"
check_family delegate 'Boundaries\.Delegates\.Compare' \
    "Boundaries\\.Delegates\\.Run;${L}[^;]*IL_STUB_ReversePInvoke;Boundaries\\.Delegates\\.Compare"
check_family pinvoke 'libc\.so\.6!__memset[^;]*' 'Boundaries\.PInvoke\.Run;libc\.so\.6!__memset[^;]*'
check_family ilstub 'libc\.so\.6!__memset[^;]*' \
    'Boundaries\.IlStub\.Run;[^;]*IL_STUB_PInvoke;libc\.so\.6!__memset[^;]*'
check_family alloc 'Boundaries\.Alloc\.Make' 'Boundaries\.Alloc\.Run;Boundaries\.Alloc\.Make'
check_family cast 'Boundaries\.Cast\.Work' 'Boundaries\.Cast\.Run;Boundaries\.Cast\.Work'
check_family stubs 'Boundaries\.Stubs\.Work' 'Boundaries\.Stubs\.Run;Boundaries\.Stubs\.Work'
check_family tailcall 'Boundaries\.TailCall\.Target' \
    'Boundaries\.TailCall\.Run;[^;]*TailCaller;System\.Runtime\.CompilerServices\.RuntimeHelpers\.DispatchTailCalls;[^;]*IL_STUB_CallTailCallTarget;Boundaries\.TailCall\.Target'
check_family catch 'Boundaries\.Util\.Spin' \
    'Boundaries\.Funclets\.RunCatch;Boundaries\.Funclets\.InCatch;Boundaries\.Util\.Spin'
check_family finally 'Boundaries\.Util\.Spin' \
    'Boundaries\.Funclets\.RunFinally;Boundaries\.Funclets\.InFinally;Boundaries\.Util\.Spin'
check_family filter 'Boundaries\.Util\.Spin' \
    'Boundaries\.Funclets\.RunFilter;Boundaries\.Funclets\.InFilter;Boundaries\.Funclets\.Filter;Boundaries\.Util\.Spin'
check_family prolog 'Boundaries\.Prolog\.(Pushy|Probed)' \
    'Boundaries\.Prolog\.Run;Boundaries\.Prolog\.(Pushy|Probed)'
check_family signal 'Boundaries\.Signals\.Handler' \
    "Boundaries\\.Signals\\.Run;${L}Boundaries\\.Signals\\.Handler"
check_family hijack 'Boundaries\.Hijack\.Fib' \
    "$HIJACK"

samples=$(counter samples)
failed=$(counter failed_walks)
note "failed walks: $failed of $samples samples (guessed: $(counter guessed_walks))"
assert_ge "samples" "$samples" 1000
awk -v f="$failed" -v s="$samples" 'BEGIN { exit !(f < 0.005 * s) }' ||
    fail "failed walks: $failed of $samples, expected under 0.5%"
[ -z "${BOUNDARIES_RECORDING:-}" ] || exit 0

# The GC family in wall mode: threads sampled while they wait in the hijack
# stub for a collection to end (the rest of the time the thread waits for
# it at the end of its P/Invoke calls)
cs record -q -e wall -i 1ms -o "$T/w.corscope" -- $(app Boundaries) hijack "$MS" > /dev/null
cs report -f collapsed --threads "$T/w.corscope" > "$T/b.txt" 2> /dev/null
cs check "$T/w.corscope" > "$T/check.txt"
check_family hijack 'Boundaries\.Hijack\.Fib' \
    "$HIJACK" 20
hijacked=$(counter hijacked_returns)
samples=$(counter samples)
failed=$(counter failed_walks)
note "wall: $hijacked hijacked return addresses put right; failed walks: $failed of $samples"
assert_ge "hijacked return addresses put right" "$hijacked" 1
awk -v f="$failed" -v s="$samples" 'BEGIN { exit !(f < 0.005 * s) }' ||
    fail "failed walks: $failed of $samples, expected under 0.5%"
