// Core31: a program for .NET Core 3.1, the oldest runtime corscope loads in.
// Burns CPU in two methods (2:1), prints a line, and exits with status 3, so
// a test sees that the program ran as without the profiler.
// Usage: Core31 [seconds]
using System;
using System.Diagnostics;
using System.Runtime.CompilerServices;

static class Work
{
    static double sink;

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static void Heavy(long n) { double x = sink; for (long i = 0; i < n; i++) x = x * 1.0000001 + 1e-9; sink = x; }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static void Light(long n) { double x = sink; for (long i = 0; i < n; i++) x = x * 1.0000001 + 1e-9; sink = x; }
}

static class Program
{
    static int Main(string[] args)
    {
        double seconds = args.Length > 0 ? double.Parse(args[0], System.Globalization.CultureInfo.InvariantCulture) : 1.0;
        var clock = Stopwatch.StartNew();
        while (clock.Elapsed.TotalSeconds < seconds)
        {
            Work.Heavy(2_000_000);
            Work.Light(1_000_000);
        }
        Console.WriteLine("core31 done");
        return 3;
    }
}
