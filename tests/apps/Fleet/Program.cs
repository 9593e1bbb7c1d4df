// Fleet: a service's day in small, for the tests of continuous profiling
// (record --push, the agent alone with CORSCOPE_PUSH): for SECONDS it
// repeats, every 100 ms, some CPU work (Fleet.Work.Burn), allocations
// (Fleet.Work.Allocate, byte[1000]), three thrown and caught exceptions
// (Fleet.Work.Fail) and a contended lock (Fleet.Work.Contend, taken while
// another thread holds it), with a collection every second (so that the
// live heap is looked at while it runs, whatever the machine's gen0
// budget), and prints what it did.  It holds 4 MB (Fleet.Work.Hold, 4000
// byte[1000]) from its start to its end, so that the live heap has
// sampled objects in it at every look (about 40 at the runtime's 100 KB
// mean; without it the live heap held whatever startup objects the
// sampling happened to pick, at times none):
//   truth exceptions 123
// With `sigchld` it also counts the SIGCHLD signals it gets (an uploader
// that a profiler started beside it must send none) and prints
//   truth sigchld 0
// With `wait-file PATH` it waits (up to 60 s) for PATH to exist before it
// ends, so that a test can do something while it runs; with `idle-first
// IDLE` it sleeps IDLE seconds before its work (a service that wakes up).
// Usage: Fleet SECONDS [sigchld] [wait-file PATH] [idle-first IDLE]
using System.Diagnostics;
using System.Globalization;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;

namespace Fleet;

sealed class FleetException : Exception { public FleetException() : base("fleet") { } }

static class Work
{
    public static double Sink;
    public static object? Kept;
    public static byte[][]? Held;
    public static readonly object Gate = new();

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static void Burn(TimeSpan cpu)
    {
        var sw = Stopwatch.StartNew();
        double x = Sink;
        while (sw.Elapsed < cpu)
            for (int i = 0; i < 10000; i++)
                x = x * 1.0000001 + 1e-9;
        Sink = x;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static void Allocate(int count)
    {
        for (int i = 0; i < count; i++)
        {
            var a = new byte[1000];
            a[i % 1000] = 1;
            Kept = a;
        }
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static void Hold(int count)
    {
        Held = new byte[count][];
        for (int i = 0; i < count; i++)
            Held[i] = new byte[1000];
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    static void Throw() => throw new FleetException();

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static int Fail(int times)
    {
        int caught = 0;
        for (int i = 0; i < times; i++)
        {
            try { Throw(); }
            catch (FleetException) { caught++; }
        }
        return caught;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static void Contend()
    {
        lock (Gate) { Sink += 1; }
    }
}

static class Program
{
    static int Main(string[] args)
    {
        double seconds = args.Length > 0 ? double.Parse(args[0], CultureInfo.InvariantCulture) : 3;
        bool countSigchld = args.Contains("sigchld");
        int waitAt = Array.IndexOf(args, "wait-file");
        string? waitFile = waitAt >= 0 && waitAt + 1 < args.Length ? args[waitAt + 1] : null;
        int idleAt = Array.IndexOf(args, "idle-first");
        if (idleAt >= 0 && idleAt + 1 < args.Length)
            Thread.Sleep(TimeSpan.FromSeconds(double.Parse(args[idleAt + 1], CultureInfo.InvariantCulture)));
        int sigchld = 0;
        using var reg = countSigchld && OperatingSystem.IsLinux()
            ? PosixSignalRegistration.Create(PosixSignal.SIGCHLD, ctx => { Interlocked.Increment(ref sigchld); ctx.Cancel = true; })
            : null;

        var stop = DateTime.UtcNow.AddSeconds(seconds);
        // the holder says when it holds the lock, and each round contends
        // for it then: a wait every round, whatever the two loops' phases
        // (left to the sleeps, they could drift in step and never meet)
        using var holding = new ManualResetEventSlim(false);
        var holder = new Thread(() =>
        {
            while (DateTime.UtcNow < stop)
            {
                lock (Work.Gate)
                {
                    holding.Set();
                    Thread.Sleep(20);
                    holding.Reset();
                }
                Thread.Sleep(30);
            }
        }) { Name = "holder", IsBackground = true };
        holder.Start();
        Work.Hold(4000);
        int exceptions = 0;
        for (int round = 1; DateTime.UtcNow < stop; round++)
        {
            var tick = Stopwatch.StartNew();
            Work.Burn(TimeSpan.FromMilliseconds(30));
            Work.Allocate(2000);
            exceptions += Work.Fail(3);
            holding.Wait(TimeSpan.FromMilliseconds(100));
            Work.Contend();
            if (round % 10 == 0)
                GC.Collect();
            var left = TimeSpan.FromMilliseconds(100) - tick.Elapsed;
            if (left > TimeSpan.Zero)
                Thread.Sleep(left);
        }
        if (waitFile != null)
        {
            var until = DateTime.UtcNow.AddSeconds(60);
            while (!File.Exists(waitFile) && DateTime.UtcNow < until)
                Thread.Sleep(50);
        }
        holder.Join();
        Console.WriteLine($"truth exceptions {exceptions}");
        if (countSigchld)
            Console.WriteLine($"truth sigchld {Volatile.Read(ref sigchld)}");
        return 0;
    }
}
