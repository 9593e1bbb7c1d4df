// Aliasing: work that repeats with a fixed period of CPU time.  Each period
// spends its first part in Phase.A and the rest in Phase.B, both ending on
// the thread's own CPU clock, so when the period equals the profiler's
// sampling interval, a sampler that fires after exactly one interval of CPU
// time lands at the same phase every time and sees only one of the two.
// Prints the measured truth: each phase's share of the thread's CPU time.
// Usage: Aliasing PERIOD_US A_PERCENT CPU_MS
using System.Globalization;
using System.Runtime.CompilerServices;

static class Phase
{
    public static long Sink;

    // spins until the thread's CPU clock reaches `until` (ns)
    [MethodImpl(MethodImplOptions.NoInlining)]
    public static void A(long until)
    {
        long x = 1;
        while (Native.ThreadCpuNs() < until) x = x * 31 + 7;
        Sink += x;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static void B(long until)
    {
        long x = 3;
        while (Native.ThreadCpuNs() < until) x = x * 17 + 5;
        Sink += x;
    }
}

static class Program
{
    static int Main(string[] args)
    {
        long periodNs = long.Parse(args[0], CultureInfo.InvariantCulture) * 1000;
        long aNs = periodNs * long.Parse(args[1], CultureInfo.InvariantCulture) / 100;
        long cpuNs = long.Parse(args[2], CultureInfo.InvariantCulture) * 1_000_000;
        // warm up both phases (the JIT), then run on exact period boundaries
        Phase.A(Native.ThreadCpuNs() + 1_000_000);
        Phase.B(Native.ThreadCpuNs() + 1_000_000);
        long inA = 0, inB = 0;
        long start = Native.ThreadCpuNs(), end = start + cpuNs;
        for (long k = 0; start + k * periodNs < end; k++)
        {
            long t0 = Native.ThreadCpuNs();
            Phase.A(start + k * periodNs + aNs);
            long t1 = Native.ThreadCpuNs();
            Phase.B(start + (k + 1) * periodNs);
            long t2 = Native.ThreadCpuNs();
            inA += t1 - t0;
            inB += t2 - t1;
        }
        double all = inA + inB;
        Console.WriteLine(string.Format(CultureInfo.InvariantCulture,
            "truth A={0:F2} B={1:F2} cpu_ms={2}", 100 * inA / all, 100 * inB / all, (inA + inB) / 1_000_000));
        return 0;
    }
}
