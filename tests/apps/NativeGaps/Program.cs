// NativeGaps: spends its time in two native libraries the unwinder cannot
// wholly follow (tests/apps/NativeGaps/native, built by tests/apps/build.sh):
// libgapexpr.so, whose function's frame address is a DWARF expression, and
// libgapdebug.so, which has no .eh_frame_hdr (its CFI in .debug_frame only).
// Usage: NativeGaps [ms]: about that long in each (default 600).
//        NativeGaps fresh [ms [settle]]: libgapfresh.so's 64 functions (no
//        frame pointers) in turn, about that long each (default 5): most
//        samples are the first in their function (after a first call that
//        loads the library, and settle ms asleep, default 300: 0 spins at
//        once, while the agent has not listed the library yet).
using System.Diagnostics;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;

namespace NativeGaps;

static class Native
{
    [DllImport("gapexpr")] public static extern long gap_spin_expr(long n);
    [DllImport("gapdebug")] public static extern long gap_spin_debug(long n);
    [DllImport("gapfresh")] public static extern long fresh_spin(int which, long n);
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

    [MethodImpl(MethodImplOptions.NoInlining)]
    static void InFresh(long ms, int settle)
    {
        // the library loaded (dlopen) and left a moment: the agent's loop
        // lists a new library at its next cycle, and walks before that
        // cannot know the library at all (not what this mode is about)
        long sum = Native.fresh_spin(0, 1);
        Thread.Sleep(settle);
        for (int k = 0; k < 64; k++) {
            var sw = Stopwatch.StartNew();
            while (sw.ElapsedMilliseconds < ms)
                sum += Native.fresh_spin(k, 100_000);
        }
        GC.KeepAlive(sum);
    }

    static void Main(string[] args)
    {
        if (args.Length > 0 && args[0] == "fresh") {
            InFresh(args.Length > 1 ? long.Parse(args[1]) : 5, args.Length > 2 ? int.Parse(args[2]) : 300);
            Console.WriteLine("done");
            return;
        }
        long ms = args.Length > 0 ? long.Parse(args[0]) : 600;
        InExpr(ms);
        InDebugFrame(ms);
        Console.WriteLine("done");
    }
}
