#!/usr/bin/env bash
# Accuracy of each sampler against the truth the test programs measure with
# their own thread CPU clocks: CpuShares (three methods in a 5:3:2 CPU
# proportion) and SafepointBias (a call-free loop against a loop whose work
# is all in a tiny method it calls).  For each sampler, RUNS runs at 1 ms;
# prints the mean and worst absolute error in percentage points (a method's
# own row: the first in the table, before any label row that ends with its
# name, such as "[JIT] Method"), and for
# SafepointBias the share of Bias.Caller's time charged to Bias.Tiny itself
# (the truth is nearly all of it).
#
#   bench/accuracy.sh [RUNS]          (default 3)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
RUNS=${1:-3}
CORSCOPE=$ROOT/build/corscope
T=$(mktemp -d "${TMPDIR:-/tmp}/corscope-bench.XXXXXX")
trap 'rm -rf "$T"' EXIT
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1

# errors OPTIONS APP SECONDS METHODS... -> one "error" line per method per run
errors() {
    local opts=$1 app=$2 seconds=$3
    shift 3
    # shellcheck disable=SC2086
    "$CORSCOPE" record -q --force $opts -i 1ms -o "$T/a.corscope" -- \
        dotnet "$ROOT/build/apps/$app/$app.dll" "$seconds" > "$T/truth.txt"
    "$CORSCOPE" report -f top --limit 0 "$T/a.corscope" > "$T/top.txt" 2> /dev/null
    awk -v list="$*" '
        BEGIN { n = split(list, m, " ") }
        FILENAME ~ /truth/ && $1 == "truth" { truth[$2] = $3; next }
        { for (i = 1; i <= n; i++) if ($NF == m[i] && !(m[i] in got)) { v = $2; gsub("%", "", v); got[m[i]] = v } }
        /Bias\.Tiny$/ { t = $1; gsub("%", "", t); tiny = t }
        END {
            for (i = 1; i <= n; i++) sum += got[m[i]]
            for (i = 1; i <= n; i++) { e = 100 * got[m[i]] / sum - truth[m[i]]; if (e < 0) e = -e; printf "error %.2f\n", e }
            if (got["SafepointBias.Bias.Caller"] > 0) printf "tiny %.1f\n", 100 * tiny / got["SafepointBias.Bias.Caller"]
        }' "$T/truth.txt" "$T/top.txt"
}

echo "runs: $RUNS per sampler and program, 1 ms interval, 4 s of CPU each"
echo
echo "| program | sampler | mean error | worst error | Bias.Tiny's share of Bias.Caller |"
echo "|---|---|---|---|---|"
for prog in "CpuShares|CpuShares.Work.Alpha CpuShares.Work.Beta CpuShares.Work.Gamma" \
            "SafepointBias|SafepointBias.Bias.CallFree SafepointBias.Bias.Caller"; do
    app=${prog%%|*} methods=${prog#*|}
    for variant in "signal|--sampler signal" "signal, posix clock|--sampler signal --cpu-clock posix" \
                   "suspend|--sampler suspend"; do
        sampler=${variant%%|*}
        : > "$T/all"
        for _ in $(seq "$RUNS"); do
            # shellcheck disable=SC2086
            errors "${variant#*|}" "$app" 4 $methods >> "$T/all"
        done
        awk -v app="$app" -v s="$sampler" '
            $1 == "error" { n++; sum += $2; if ($2 > worst) worst = $2 }
            $1 == "tiny" { tn++; tsum += $2 }
            END { printf "| %s | %s | %.2f pt | %.2f pt | %s |\n", app, s, sum / n, worst, tn ? sprintf("%.1f%%", tsum / tn) : "-" }' "$T/all"
    done
done
