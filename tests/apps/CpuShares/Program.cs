// CpuShares: three methods burn CPU in a known proportion (5:3:2 by default),
// interleaved in slices of varying length on one thread. The program measures
// the CPU time each method really used with its own thread CPU clock and prints
// that truth as shares of the three, for the tests to compare with the report:
//   truth CpuShares.Work.Alpha 50.02
// Usage: CpuShares [seconds of CPU] [weightA weightB weightC]
using System.Globalization;
using System.Runtime.CompilerServices;

namespace CpuShares;

static class Work
{
    static double sink;

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static void Alpha(long n) { double x = sink; for (long i = 0; i < n; i++) x = x * 1.0000001 + 1e-9; sink = x; }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static void Beta(long n) { double x = sink; for (long i = 0; i < n; i++) x = x * 1.0000001 + 1e-9; sink = x; }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static void Gamma(long n) { double x = sink; for (long i = 0; i < n; i++) x = x * 1.0000001 + 1e-9; sink = x; }
}

static class Program
{
    static int Main(string[] args)
    {
        double seconds = args.Length > 0 ? double.Parse(args[0], CultureInfo.InvariantCulture) : 3.0;
        double[] weights = args.Length > 3
            ? new[] { double.Parse(args[1], CultureInfo.InvariantCulture), double.Parse(args[2], CultureInfo.InvariantCulture), double.Parse(args[3], CultureInfo.InvariantCulture) }
            : new[] { 5.0, 3.0, 2.0 };
        Action<long>[] methods = { Work.Alpha, Work.Beta, Work.Gamma };
        string[] names = { "CpuShares.Work.Alpha", "CpuShares.Work.Beta", "CpuShares.Work.Gamma" };

        // Calibrate: iterations per millisecond of CPU (after warm-up, so tier-1 code is measured).
        long warm = Native.ThreadCpuNs();
        for (int i = 0; i < 50; i++) foreach (var m in methods) m(20_000);
        long t0 = Native.ThreadCpuNs();
        Work.Alpha(5_000_000);
        double perMs = 5_000_000.0 / ((Native.ThreadCpuNs() - t0) / 1e6);
        long calibration = Native.ThreadCpuNs() - warm; // in the three methods too, before the truth

        var cpu = new long[3];
        var rng = new Random(12345);
        long budget = (long)(seconds * 1e9), spent = 0;
        while (spent < budget)
        {
            for (int k = 0; k < 3; k++)
            {
                // slices of 0.5..1.5 x weight ms, so that no period lines up with the sampler's
                double ms = weights[k] * (0.5 + rng.NextDouble());
                long before = Native.ThreadCpuNs();
                methods[k]((long)(ms * perMs));
                long used = Native.ThreadCpuNs() - before;
                cpu[k] += used;
                spent += used;
            }
        }
        double all = cpu[0] + cpu[1] + cpu[2];
        for (int k = 0; k < 3; k++)
            Console.WriteLine(string.Format(CultureInfo.InvariantCulture, "truth {0} {1:F2}", names[k], 100.0 * cpu[k] / all));
        // the three methods' CPU and the whole process's (start-up, the
        // runtime's threads, a profiler's own thread included), apart from
        // the output that runs compare
        Console.Error.WriteLine(string.Format(CultureInfo.InvariantCulture, "cpu_ns methods {0} process {1}",
            (long)all, (long)(System.Diagnostics.Process.GetCurrentProcess().TotalProcessorTime.TotalMilliseconds * 1e6)));
        Console.Error.WriteLine(string.Format(CultureInfo.InvariantCulture, "calibration_ns {0}", calibration));
        return 0;
    }
}
