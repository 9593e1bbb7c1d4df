// SafepointBias: CPU spent where a stop-the-world sampler cannot see it.
// Two regions get the same CPU in alternating slices of varying length:
//   Bias.CallFree  a long loop without a single call;
//   Bias.Caller    a loop whose work is all inside Bias.Tiny, a small
//                  non-inlined method it calls millions of times.
// The runtime stops a thread for a stack walk only at a GC safe point: in
// Caller that is the return from Tiny, so a sampler that suspends the runtime
// charges Tiny's time to Caller. A sampler that interrupts the thread where it
// is sees Tiny. The program measures each region with its own thread CPU
// clock and prints the truth, as shares of the two regions:
//   truth SafepointBias.Bias.CallFree 50.03
//   truth SafepointBias.Bias.Caller 49.97
// Inside Caller, Tiny does eight dependent multiply-adds per call and the loop
// around it an increment, a compare and the call itself, so most of Caller's
// time is Tiny's own (the tests expect at least 75%).
// Usage: SafepointBias [seconds of CPU]
using System.Globalization;
using System.Runtime.CompilerServices;

namespace SafepointBias;

static class Bias
{
    public static double Sink;

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static void CallFree(long n)
    {
        double x = Sink;
        for (long i = 0; i < n; i++) x = x * 1.0000001 + 1e-9;
        Sink = x;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static void Caller(long n)
    {
        double x = Sink;
        for (long i = 0; i < n; i++) x = Tiny(x);
        Sink = x;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    static double Tiny(double x)
    {
        x = x * 1.0000001 + 1e-9; x = x * 1.0000001 + 1e-9;
        x = x * 1.0000001 + 1e-9; x = x * 1.0000001 + 1e-9;
        x = x * 1.0000001 + 1e-9; x = x * 1.0000001 + 1e-9;
        x = x * 1.0000001 + 1e-9; x = x * 1.0000001 + 1e-9;
        return x;
    }
}

static class Program
{
    // iterations of `work` per millisecond of CPU, after warm-up (tier-1 code)
    static double Calibrate(Action<long> work, long n)
    {
        for (int i = 0; i < 50; i++) work(20_000);
        long t0 = Native.ThreadCpuNs();
        work(n);
        return n / ((Native.ThreadCpuNs() - t0) / 1e6);
    }

    static int Main(string[] args)
    {
        double seconds = args.Length > 0 ? double.Parse(args[0], CultureInfo.InvariantCulture) : 3.0;
        Action<long>[] regions = { Bias.CallFree, Bias.Caller };
        string[] names = { "SafepointBias.Bias.CallFree", "SafepointBias.Bias.Caller" };
        double[] perMs = { Calibrate(regions[0], 20_000_000), Calibrate(regions[1], 2_000_000) };

        var cpu = new long[2];
        var rng = new Random(4242);
        long budget = (long)(seconds * 1e9), spent = 0;
        while (spent < budget)
        {
            for (int k = 0; k < 2; k++)
            {
                double ms = 3 * (0.5 + rng.NextDouble());
                long before = Native.ThreadCpuNs();
                regions[k]((long)(ms * perMs[k]));
                long used = Native.ThreadCpuNs() - before;
                cpu[k] += used;
                spent += used;
            }
        }
        double all = cpu[0] + cpu[1];
        for (int k = 0; k < 2; k++)
            Console.WriteLine(string.Format(CultureInfo.InvariantCulture, "truth {0} {1:F2}", names[k], 100.0 * cpu[k] / all));
        return 0;
    }
}
