// Bench: a fixed amount of CPU-bound work (UNITS units of arithmetic and small
// allocations) split over THREADS threads, for the overhead benchmark. Prints
// the wall time the work took; the benchmark also times the whole process.
// With IDLE > 0, that many more threads start first and wait, blocked, until
// the work is done (a server's idle pool), so the benchmark can show whether
// the profiler's cost grows with threads that do nothing.
// With SECONDS > 0 the threads work until that much wall time has passed
// instead of stopping after UNITS (the long runs of bench/long.sh).
// Usage: Bench [threads] [units] [idle] [seconds]
using System.Diagnostics;
using System.Globalization;
using System.Runtime.CompilerServices;

namespace Bench;

static class Kernel
{
    [MethodImpl(MethodImplOptions.NoInlining)]
    public static double Unit(int seed)
    {
        // a little of everything a real program does: arithmetic, calls, a small allocation
        double x = seed;
        for (int i = 0; i < 20_000; i++) x = Step(x, i);
        var list = new List<int>(64);
        for (int i = 0; i < 64; i++) list.Add(i ^ seed);
        return x + list.Sum();
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    static double Step(double x, int i) => x * 1.0000001 + (i & 7);
}

static class Program
{
    static int Main(string[] args)
    {
        int threads = args.Length > 0 ? int.Parse(args[0], CultureInfo.InvariantCulture) : 1;
        int units = args.Length > 1 ? int.Parse(args[1], CultureInfo.InvariantCulture) : 2000;
        int idle = args.Length > 2 ? int.Parse(args[2], CultureInfo.InvariantCulture) : 0;
        double seconds = args.Length > 3 ? double.Parse(args[3], CultureInfo.InvariantCulture) : 0;
        long deadline = seconds > 0 ? Environment.TickCount64 + (long)(seconds * 1000) : long.MaxValue;
        var done = new ManualResetEventSlim(false);
        var idlers = new Thread[idle];
        for (int i = 0; i < idle; i++)
        {
            idlers[i] = new Thread(() => done.Wait(), 256 * 1024) { Name = $"idle-{i}", IsBackground = true };
            idlers[i].Start();
        }
        var sw = Stopwatch.StartNew();
        var workers = new Thread[threads];
        double total = 0;
        for (int t = 0; t < threads; t++)
        {
            int k = t;
            workers[t] = new Thread(() =>
            {
                double s = 0;
                if (seconds > 0)
                    for (int u = k; Environment.TickCount64 < deadline; u += threads) s += Kernel.Unit(u);
                else
                    for (int u = k; u < units; u += threads) s += Kernel.Unit(u);
                lock (workers) total += s;
            }) { Name = $"bench-{t}" };
            workers[t].Start();
        }
        foreach (var w in workers) w.Join();
        done.Set();
        foreach (var t in idlers) t.Join();
        Console.WriteLine(string.Format(CultureInfo.InvariantCulture, "bench threads {0} units {1} ms {2:F1} check {3}", threads, units, sw.Elapsed.TotalMilliseconds, total > 0));
        return 0;
    }
}
