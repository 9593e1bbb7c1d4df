// Trace: programs with exactly known calls, for tracing mode (record --trace).
// Every mode prints what it did, so a test can compare the report with it.
// Usage: Trace MODE[+MODE...] [ARGS]   (the modes one after another, ARGS to each)
//   counts           Calls.Leaf 1,000,000 times from Calls.CallerA and 250,000
//                    times from Calls.CallerB (through Calls.Middle); Leaf is
//                    small enough to be inlined unless the tracer refuses it
//   throws [N]       N rounds of exceptions through traced frames (caught two
//                    levels up, through a finally, through a filter, thrown
//                    again from a finally), then Throws.After from Main
//   threads [N]      threads worker-0..N-1, worker-k calls Work.Unit (k+1)*10,000 times
//   race [N]         two threads call Race.Hit (small, inlined) N times each at once
//   recursion [D]    Recur.Down D deep (calls D+1) and Recur.Ping/Pong D deep,
//                    each 3 times, on a thread with a 256 MiB stack; then Recur.After
//   async [N]        N async chains that resume on other threads; then Async.After
//   tail [N]         Tail.A N times, which calls Tail.B in tail position; then Tail.After
//   blocked          a background thread still inside Blocked.Wait when Main returns
//   agree [SECONDS]  Spin.Three and Spin.One burn CPU 3:1, in turns, for SECONDS of
//                    CPU; prints Three's share of their wall time
//   loop [N]         Loop.Empty (an empty method) called N times (benchmark)
//   abi [N]          N rounds of calls whose arguments and return values fill
//                    every register kind (Abi.cs); prints the results, which
//                    tracing must leave unchanged
//   json [SECONDS]   System.Text.Json round trips of a small object graph for SECONDS;
//                    the rate of the last third (benchmark)
using System.Diagnostics;
using System.Globalization;
using System.Runtime.CompilerServices;
using System.Text.Json;

namespace TraceApp;

static class Calls
{
    public static long Sum;

    public static void Leaf(int i) { Sum += i; }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static void Middle(int i) { Leaf(i); }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static void CallerA(int n) { for (int i = 0; i < n; i++) Leaf(i); }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static void CallerB(int n) { for (int i = 0; i < n; i++) Middle(i); }

    public static void Run()
    {
        CallerA(1_000_000);
        CallerB(250_000);
        Console.WriteLine($"counts: Leaf 1000000 from CallerA, 250000 from CallerB through Middle (sum {Sum})");
    }
}

sealed class TestException : Exception { public TestException(string m) : base(m) { } }

static class Throws
{
    public static int Caught, Filtered, FinallyRuns;

    [MethodImpl(MethodImplOptions.NoInlining)]
    static void Thrower(int i) { if (i >= 0) throw new TestException("round " + i); }

    [MethodImpl(MethodImplOptions.NoInlining)]
    static void FinallyWork() { FinallyRuns++; }

    [MethodImpl(MethodImplOptions.NoInlining)]
    static void Mid(int i) { try { Thrower(i); } finally { FinallyWork(); } }

    [MethodImpl(MethodImplOptions.NoInlining)]
    static void Mid2(int i) { Mid(i); }

    [MethodImpl(MethodImplOptions.NoInlining)]
    static bool Filter(Exception e) { Filtered++; return e is TestException; }

    [MethodImpl(MethodImplOptions.NoInlining)]
    static void Handler() { Caught++; }

    [MethodImpl(MethodImplOptions.NoInlining)]
    static void Catcher(int i)
    {
        try { Mid2(i); }
        catch (Exception e) when (Filter(e)) { Handler(); }
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    static void ThrowInFinally(int i)
    {
        try { try { Thrower(i); } finally { Thrower(i + 1); } }
        catch (TestException) { Handler(); }
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    static void Rethrow(int i)
    {
        try { Thrower(i); }
        catch (TestException) { throw; }
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    static void CatchRethrown(int i)
    {
        try { Rethrow(i); } catch (TestException) { Handler(); }
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static void After() { }

    public static void Run(int rounds)
    {
        for (int i = 0; i < rounds; i++)
        {
            Catcher(i);
            ThrowInFinally(i);
            CatchRethrown(i);
        }
        After();
        Console.WriteLine($"throws: {rounds} rounds, caught {Caught}, filtered {Filtered}, finally {FinallyRuns}");
    }
}

// Race: two threads call one small method at the same time, as fast as
// they can (the worst case for a counter that is not atomic).
static class Race
{
    static long sum;

    public static void Hit(int i) { sum += i; }

    [MethodImpl(MethodImplOptions.NoInlining)]
    static void Body(int calls, Barrier start) { start.SignalAndWait(); for (int i = 0; i < calls; i++) Hit(i); }

    public static void Run(int calls)
    {
        using var start = new Barrier(2);
        var a = new Thread(() => Body(calls, start));
        var b = new Thread(() => Body(calls, start));
        a.Start(); b.Start(); a.Join(); b.Join();
        Console.WriteLine($"race: 2 threads called Race.Hit {calls} times each");
    }
}

static class Work
{
    static long sum;

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static void Unit(int i) { Interlocked.Add(ref sum, i); }

    [MethodImpl(MethodImplOptions.NoInlining)]
    static void Body(int calls) { for (int i = 0; i < calls; i++) Unit(i); }

    public static void Run(int threads)
    {
        var all = new List<Thread>();
        using var finish = new ManualResetEventSlim(false);
        for (int k = 0; k < threads; k++)
        {
            int calls = (k + 1) * 10_000;
            // each worker lives on a moment after its calls, long enough for
            // its name to be seen
            var t = new Thread(() => { Body(calls); finish.Wait(); }) { Name = "worker-" + k };
            all.Add(t);
            t.Start();
        }
        Thread.Sleep(300);
        finish.Set();
        foreach (var t in all) t.Join();
        Console.WriteLine($"threads: {threads}, worker-k called Unit (k+1)*10000 times");
    }
}

static class Recur
{
    [MethodImpl(MethodImplOptions.NoInlining)]
    public static int Down(int n) => n == 0 ? 0 : Down(n - 1) + 1;

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static int Ping(int n) => n == 0 ? 0 : Pong(n - 1) + 1;

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static int Pong(int n) => n == 0 ? 0 : Ping(n - 1) + 1;

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static void After() { }

    public static void Run(int depth)
    {
        int got = 0;
        var t = new Thread(() =>
        {
            for (int r = 0; r < 3; r++) got += Down(depth) + Ping(depth);
        }, 256 << 20);
        t.Start();
        t.Join();
        After();
        Console.WriteLine($"recursion: depth {depth}, Down {3 * (depth + 1)} calls, Ping+Pong {3 * (depth + 1)} calls ({got})");
    }
}

static class Tail
{
    static long sum;

    [MethodImpl(MethodImplOptions.NoInlining)]
    static long B(long n) { sum += n; return sum; }

    // a call in tail position: the JIT makes it a jump where it can, and
    // the profiler then sees A's Tailcall hook and B entered in A's place
    static long A(long n) => B(n + 1);

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static void After() { }

    [MethodImpl(MethodImplOptions.NoInlining)]
    static long Loop(int n) { long t = 0; for (int i = 0; i < n; i++) t += A(i); return t; }

    public static void Run(int n)
    {
        long t = Loop(n);
        After();
        Console.WriteLine($"tail: A and B {n} calls each ({t})");
    }
}

static class Async
{
    static int steps;

    [MethodImpl(MethodImplOptions.NoInlining)]
    static void Step() { Interlocked.Increment(ref steps); }

    static async Task Chain(int n)
    {
        for (int i = 0; i < n; i++)
        {
            Step();
            await Task.Yield();
            Step();
            await Task.Delay(1);
        }
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static void After() { }

    public static void Run(int chains)
    {
        var tasks = new List<Task>();
        for (int c = 0; c < chains; c++) tasks.Add(Task.Run(() => Chain(20)));
        Task.WaitAll(tasks.ToArray());
        After();
        Console.WriteLine($"async: {chains} chains, Step {steps} calls");
    }
}

static class Blocked
{
    static readonly ManualResetEventSlim never = new(false);
    static readonly ManualResetEventSlim started = new(false);

    [MethodImpl(MethodImplOptions.NoInlining)]
    static void Wait() { started.Set(); never.Wait(); }

    public static void Run()
    {
        var t = new Thread(Wait) { IsBackground = true, Name = "blocked" };
        t.Start();
        started.Wait();
        Thread.Sleep(300);
        Console.WriteLine("blocked: Blocked.Wait still running at exit");
    }
}

static class Spin
{
    static double sink;
    static long threeWall, oneWall;

    [MethodImpl(MethodImplOptions.NoInlining)]
    static void Burn(long ns)
    {
        long until = Native.ThreadCpuNs() + ns;
        double x = sink;
        while (Native.ThreadCpuNs() < until)
            for (int i = 0; i < 2000; i++) x = x * 1.0000001 + 1e-9;
        sink = x;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    static void Three() { Burn(30_000_000); }

    [MethodImpl(MethodImplOptions.NoInlining)]
    static void One() { Burn(10_000_000); }

    public static void Run(double seconds)
    {
        long until = Native.ThreadCpuNs() + (long)(seconds * 1e9);
        int rounds = 0;
        while (Native.ThreadCpuNs() < until)
        {
            long t0 = Stopwatch.GetTimestamp();
            Three();
            long t1 = Stopwatch.GetTimestamp();
            One();
            long t2 = Stopwatch.GetTimestamp();
            threeWall += t1 - t0;
            oneWall += t2 - t1;
            rounds++;
        }
        // the truth for the two views: CPU 3:1 by construction; wall time
        // as this thread saw it (more than CPU time when it was preempted)
        Console.WriteLine($"agree: {rounds} rounds of Three (30 ms CPU) and One (10 ms CPU); wall share of Three {100.0 * threeWall / (threeWall + oneWall):F1}");
    }
}

static class Loop
{
    [MethodImpl(MethodImplOptions.NoInlining)]
    public static void Empty() { }

    [MethodImpl(MethodImplOptions.NoInlining)]
    static void Run(long n) { for (long i = 0; i < n; i++) Empty(); }

    // The program's own timer (wall) and, steadier on a loaded machine, the
    // loop thread's CPU time: the calls in PARTS parts, each timed by the
    // thread's CPU clock, the median part per call (a part in which the
    // kernel took the CPU for other work shows in its wall time, hardly in
    // its CPU time).
    const int Parts = 9;

    public static void Bench(long n)
    {
        Run(1_000_000); // warm up: tier 1 code
        Thread.Sleep(200);
        var cpu = new double[Parts];
        var sw = Stopwatch.StartNew();
        for (int p = 0; p < Parts; p++)
        {
            long calls = p < Parts - 1 ? n / Parts : n - (Parts - 1) * (n / Parts);
            long c0 = Native.ThreadCpuNs();
            Run(calls);
            cpu[p] = calls > 0 ? (double)(Native.ThreadCpuNs() - c0) / calls : 0;
        }
        sw.Stop();
        Array.Sort(cpu);
        Console.WriteLine($"loop: {n} calls in {sw.Elapsed.TotalMilliseconds:F1} ms, {sw.Elapsed.TotalMilliseconds * 1e6 / n:F2} ns per call; thread CPU {cpu[Parts / 2]:F2} ns per call (median of {Parts} parts)");
    }
}

static class Program
{
    static int Arg(string[] a, int i, int d) => a.Length > i ? int.Parse(a[i], CultureInfo.InvariantCulture) : d;

    static int Main(string[] args)
    {
        // several modes one after another: "counts+abi"
        foreach (string mode in (args.Length > 0 ? args[0] : "counts").Split('+'))
        {
            switch (mode)
            {
                case "counts": Calls.Run(); break;
                case "throws": Throws.Run(Arg(args, 1, 1000)); break;
                case "threads": Work.Run(Arg(args, 1, 4)); break;
                case "race": Race.Run(Arg(args, 1, 10_000_000)); break;
                case "recursion": Recur.Run(Arg(args, 1, 10_000)); break;
                case "async": Async.Run(Arg(args, 1, 8)); break;
                case "tail": Tail.Run(Arg(args, 1, 200_000)); break;
                case "blocked": Blocked.Run(); break;
                case "agree": Spin.Run(args.Length > 1 ? double.Parse(args[1], CultureInfo.InvariantCulture) : 1.2); break;
                case "loop": Loop.Bench(args.Length > 1 ? long.Parse(args[1], CultureInfo.InvariantCulture) : 100_000_000); break;
                case "abi": Abi.Run(Arg(args, 1, 20_000)); break;
                case "json": TraceApp.Shop.RoundTrip.Run(args.Length > 1 ? double.Parse(args[1], CultureInfo.InvariantCulture) : 6); break;
                default: Console.Error.WriteLine("unknown mode " + mode); return 2;
            }
        }
        return 0;
    }
}
