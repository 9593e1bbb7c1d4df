// AsyncBench: a fixed time of async work, for bench/async.sh: CONCURRENCY
// loops, each awaiting Level1 -> Level2 -> Level3, where Level3 yields to
// the thread pool and then spins WORK_US microseconds.  Each iteration
// resumes three async methods (Level3 from the thread pool, Level2 and
// Level1 as its continuations).  Prints the resumptions per second over the
// measured window (after one second of warm-up):
//   asyncbench resumes_per_s 101234 iterations 33745 seconds 3.000
// Usage: AsyncBench [seconds] [concurrency] [work us]
//
//   AsyncBench pump ITERATIONS: the resumption's own cost, on one thread
// with no thread pool: an awaiter that keeps its continuation until the
// main thread runs it, so that each iteration resumes four async methods
// (Level3 from the pump, Level2, Level1 and the loop as continuations)
// with nothing else going on; prints the thread's CPU time per resumption:
//   asyncbench pump_ns_per_resume 38.2 resumes 20000000
using System.Diagnostics;
using System.Globalization;
using System.Runtime.CompilerServices;

// An awaiter whose continuation waits for the pump.
sealed class Pump : ICriticalNotifyCompletion
{
    Action? pending;
    public Pump GetAwaiter() => this;
    public bool IsCompleted => false;
    public void GetResult() { }
    public void OnCompleted(Action continuation) => pending = continuation;
    public void UnsafeOnCompleted(Action continuation) => pending = continuation;

    public bool RunOne()
    {
        Action? c = pending;
        pending = null;
        c?.Invoke();
        return c != null;
    }
}

static class Pumped
{
    static async Task Level3(Pump p) { await p; }
    static async Task Level2(Pump p) { await Level3(p); }
    static async Task Level1(Pump p) { await Level2(p); }

    public static async Task Loop(Pump p, long n)
    {
        for (long i = 0; i < n; i++)
            await Level1(p);
    }

    public static int Run(long iterations)
    {
        var warm = new Pump();
        Task w = Loop(warm, 200_000); // tiered compilation settles
        while (warm.RunOne()) { }
        w.GetAwaiter().GetResult();
        var p = new Pump();
        long t0 = Native.ThreadCpuNs();
        Task t = Loop(p, iterations);
        while (p.RunOne()) { }
        long spent = Native.ThreadCpuNs() - t0;
        t.GetAwaiter().GetResult();
        Console.WriteLine(string.Format(CultureInfo.InvariantCulture,
            "asyncbench pump_ns_per_resume {0:F2} resumes {1}", (double)spent / (4 * iterations), 4 * iterations));
        return 0;
    }
}

static class Program
{
    static long iterations;
    static volatile bool stop;
    static double sink;

    [MethodImpl(MethodImplOptions.NoInlining)]
    static void Spin(long ticks)
    {
        long end = Stopwatch.GetTimestamp() + ticks;
        double x = sink;
        while (Stopwatch.GetTimestamp() < end)
            for (int i = 0; i < 20; i++) x = x * 1.0000001 + 1e-9;
        sink = x;
    }

    static async Task Level3(long ticks) { await Task.Yield(); Spin(ticks); }
    static async Task Level2(long ticks) { await Level3(ticks); }
    static async Task Level1(long ticks) { await Level2(ticks); }

    static async Task Loop(long ticks)
    {
        while (!stop)
        {
            await Level1(ticks);
            Interlocked.Increment(ref iterations);
        }
    }

    static int Main(string[] args)
    {
        if (args.Length > 0 && args[0] == "pump")
            return Pumped.Run(args.Length > 1 ? long.Parse(args[1], CultureInfo.InvariantCulture) : 5_000_000);
        double seconds = args.Length > 0 ? double.Parse(args[0], CultureInfo.InvariantCulture) : 3;
        int concurrency = args.Length > 1 ? int.Parse(args[1], CultureInfo.InvariantCulture) : 2;
        double workUs = args.Length > 2 ? double.Parse(args[2], CultureInfo.InvariantCulture) : 10;
        long ticks = (long)(workUs * Stopwatch.Frequency / 1e6);
        var loops = new Task[concurrency];
        for (int i = 0; i < concurrency; i++)
            loops[i] = Task.Run(() => Loop(ticks));
        Thread.Sleep(1000); // warm-up: tiered compilation, the thread pool's threads
        long before = Interlocked.Read(ref iterations);
        var clock = Stopwatch.StartNew();
        Thread.Sleep(TimeSpan.FromSeconds(seconds));
        long done = Interlocked.Read(ref iterations) - before;
        double elapsed = clock.Elapsed.TotalSeconds;
        stop = true;
        Task.WaitAll(loops);
        Console.WriteLine(string.Format(CultureInfo.InvariantCulture,
            "asyncbench resumes_per_s {0:F0} iterations {1} seconds {2:F3}", 3 * done / elapsed, done, elapsed));
        return 0;
    }
}
