// NativeGaps: spends its time in two native libraries the unwinder cannot
// wholly follow (tests/apps/NativeGaps/native, built by tests/apps/build.sh):
// libgapexpr.so, whose function's frame address is a DWARF expression, and
// libgapdebug.so, which has no .eh_frame_hdr (its CFI in .debug_frame only).
// Usage: NativeGaps [ms]: about that long in each (default 600).
using System.Diagnostics;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;

namespace NativeGaps;

static class Native
{
    [DllImport("gapexpr")] public static extern long gap_spin_expr(long n);
    [DllImport("gapdebug")] public static extern long gap_spin_debug(long n);
}

static class Program
{
    [MethodImpl(MethodImplOptions.NoInlining)]
    static void InExpr(long ms)
    {
        var sw = Stopwatch.StartNew();
        while (sw.ElapsedMilliseconds < ms)
            Native.gap_spin_expr(2_000_000);
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    static void InDebugFrame(long ms)
    {
        var sw = Stopwatch.StartNew();
        long sum = 0;
        while (sw.ElapsedMilliseconds < ms)
            sum += Native.gap_spin_debug(2_000_000);
        GC.KeepAlive(sum);
    }

    static void Main(string[] args)
    {
        long ms = args.Length > 0 ? long.Parse(args[0]) : 600;
        InExpr(ms);
        InDebugFrame(ms);
        Console.WriteLine("done");
    }
}
