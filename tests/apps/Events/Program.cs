// Events: programs whose runtime events are known exactly, for the tests of
// -e exceptions, lock, jit and the threads report.  Each mode prints its own
// truth (counts it made, times it measured, thread ids) for the test to
// compare with corscope's report.
//   exceptions N   N throws of two types from known methods, caught in known
//                  methods: plain catches, `throw;` rethrows, `when` filters
//   lock MS        a holder thread keeps a lock MS ms while a waiter waits for
//                  it, three times with Monitor and three with System.Threading.Lock
//   jit            compiles a known set of methods: five once (tier 0), one
//                  with AggressiveOptimization, one hot (tier 1), one long loop (OSR)
//   threads        named threads with known CPU, one renamed
//   jit-trickle N  compiles N methods of its own, one every millisecond
//                  (a generic method over N value types made at run time,
//                  each its own code), and uses little CPU otherwise: a
//                  process whose runtime compiles now and then while it
//                  mostly waits
// For the benchmark of the events' cost (bench/events.sh), each printing the
// CPU time of its own threads and the wall time of its work:
//   throw-bench N  N iterations of a little work and one throw caught five
//                  frames up (about 100,000 throws a second here)
//   lock-bench N   four threads taking one lock N times each, holding it about
//                  20 us (a contention storm: most takes wait)
//   handoff N      two threads passing a turn back and forth N times, each
//                  waiting for it (AutoResetEvent): prints the context
//                  switches the two made (the kernel's count of each)
// Usage: Events MODE [N]
using System.Diagnostics;
using System.Globalization;
using System.Runtime.CompilerServices;

namespace Events;

class BadStateException : Exception { public BadStateException() : base("state") { } }
class BadInputException : Exception
{
    public int Code;
    public BadInputException(int code) : base("input") { Code = code; }
}

static class Throwers
{
    [MethodImpl(MethodImplOptions.NoInlining)]
    public static void ThrowState() => throw new BadStateException();
    [MethodImpl(MethodImplOptions.NoInlining)]
    public static void ThrowInput(int code) => throw new BadInputException(code);
}

static class Catchers
{
    public static int State, Rethrown, FilteredIn, Outer;

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static void CatchState()
    {
        try { Throwers.ThrowState(); }
        catch (BadStateException) { State++; }
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static void Rethrow()
    {
        try { Throwers.ThrowState(); }
        catch (BadStateException) { throw; }
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static void CatchRethrown()
    {
        try { Rethrow(); }
        catch (BadStateException) { Rethrown++; }
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static void CatchInputFiltered(int i)
    {
        try { Throwers.ThrowInput(i); }
        catch (BadInputException e) when (e.Code % 2 == 0) { FilteredIn++; }
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static void CatchInputOuter(int i)
    {
        try { CatchInputFiltered(i); }
        catch (BadInputException) { Outer++; }
    }
}

static class JitMethods
{
    [MethodImpl(MethodImplOptions.NoInlining)] public static int JitA(int x) => x + 1;
    [MethodImpl(MethodImplOptions.NoInlining)] public static int JitB(int x) => x * 2;
    [MethodImpl(MethodImplOptions.NoInlining)] public static int JitC(int x) => x - 3;
    [MethodImpl(MethodImplOptions.NoInlining)] public static int JitD(int x) => x ^ 5;
    [MethodImpl(MethodImplOptions.NoInlining)] public static int JitE(int x) => x % 7;
    [MethodImpl(MethodImplOptions.NoInlining | MethodImplOptions.AggressiveOptimization)]
    public static int JitOptimized(int x) => x * 31 + 7;
    [MethodImpl(MethodImplOptions.NoInlining)] public static int JitHot(int x) => (x * 7) >> 1;
    [MethodImpl(MethodImplOptions.NoInlining)]
    public static long JitLoop(int n)
    {
        long s = 0;
        for (int i = 0; i < n; i++) s += i ^ (s >> 3);
        return s;
    }
}

// Value types over value types: 8 to start with, and pairs of them
// (64), pairs of those (4096): each a type of its own, so that a generic
// method instantiated over it is compiled anew (value types share no code)
struct B0 { } struct B1 { } struct B2 { } struct B3 { }
struct B4 { } struct B5 { } struct B6 { } struct B7 { }
struct Pair<TA, TB> where TA : struct where TB : struct { }

static class Trickle
{
    [MethodImpl(MethodImplOptions.NoInlining)]
    public static int Size<T>() where T : struct => Unsafe.SizeOf<T>() + typeof(T).Name.Length;

    public static IEnumerable<Type> Types()
    {
        var bases = new[] { typeof(B0), typeof(B1), typeof(B2), typeof(B3), typeof(B4), typeof(B5), typeof(B6), typeof(B7) };
        var pairs = new List<Type>();
        foreach (var a in bases)
            foreach (var b in bases)
                pairs.Add(typeof(Pair<,>).MakeGenericType(a, b));
        foreach (var p in pairs)
            yield return p;
        foreach (var a in pairs)
            foreach (var b in pairs)
                yield return typeof(Pair<,>).MakeGenericType(a, b);
    }
}

static class Program
{
    static string F(FormattableString s) => s.ToString(CultureInfo.InvariantCulture);

    static void JitTrickle(int n)
    {
        var size = typeof(Trickle).GetMethod(nameof(Trickle.Size))!;
        var sw = Stopwatch.StartNew();
        int made = 0;
        long sum = 0;
        foreach (var t in Trickle.Types())
        {
            if (made == n)
                break;
            sum += (int)size.MakeGenericMethod(t).Invoke(null, null)!;
            made++;
            Thread.Sleep(1);
        }
        Console.WriteLine(F($"jit-trickle: {made} methods compiled in {sw.Elapsed.TotalSeconds:F2} s ({sum})"));
    }

    static void Exceptions(int n)
    {
        // 40% plain, 10% thrown and rethrown (two throws each), 40% filtered:
        // n throws in all
        int plain = n * 4 / 10, rethrows = n / 10, inputs = n - plain - 2 * rethrows;
        for (int i = 0; i < plain; i++) Catchers.CatchState();
        for (int i = 0; i < rethrows; i++) Catchers.CatchRethrown();
        for (int i = 0; i < inputs; i++) Catchers.CatchInputOuter(i);
        Console.WriteLine(F($"thrown {plain + 2 * rethrows + inputs} rethrown {rethrows}"));
        Console.WriteLine(F($"BadStateException {plain + 2 * rethrows} BadInputException {inputs}"));
        Console.WriteLine(F($"caught CatchState {Catchers.State} Rethrow {rethrows} CatchRethrown {Catchers.Rethrown} CatchInputFiltered {Catchers.FilteredIn} CatchInputOuter {Catchers.Outer}"));
        Console.WriteLine(F($"filters {inputs}"));
    }

    static readonly object Gate = new();
#if NET9_0_OR_GREATER
    static readonly Lock NewGate = new();
#else
    // .NET 8 has no System.Threading.Lock: Monitor again (tests/apps/runtimes.sh)
    static readonly object NewGate = new();
#endif

    [MethodImpl(MethodImplOptions.NoInlining)]
    static void HoldMonitor(ManualResetEventSlim held, int ms)
    {
        lock (Gate) { held.Set(); Thread.Sleep(ms); }
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    static void HoldLock(ManualResetEventSlim held, int ms)
    {
        lock (NewGate) { held.Set(); Thread.Sleep(ms); }
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    static long WaitMonitor()
    {
        var sw = Stopwatch.StartNew();
        lock (Gate) { }
        return sw.ElapsedTicks;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    static long WaitLock()
    {
        var sw = Stopwatch.StartNew();
        lock (NewGate) { }
        return sw.ElapsedTicks;
    }

    static void Locks(int ms)
    {
        long waitedMonitor = 0, waitedLock = 0;
        int holderTid = 0, waiterTid = 0;
        for (int round = 0; round < 6; round++)
        {
            bool monitor = round < 3;
            using var held = new ManualResetEventSlim();
            var holder = new Thread(() =>
            {
                holderTid = Native.GetTid();
                if (monitor) HoldMonitor(held, ms); else HoldLock(held, ms);
            }) { Name = "holder" };
            long ticks = 0;
            var waiter = new Thread(() =>
            {
                waiterTid = Native.GetTid();
                held.Wait();
                ticks = monitor ? WaitMonitor() : WaitLock();
            }) { Name = "waiter" };
            holder.Start();
            waiter.Start();
            holder.Join();
            waiter.Join();
            if (monitor) waitedMonitor += ticks; else waitedLock += ticks;
        }
        double toMs = 1000.0 / Stopwatch.Frequency;
        Console.WriteLine(F($"waited monitor {waitedMonitor * toMs:F1} ms lock {waitedLock * toMs:F1} ms"));
    }

    static void Jit()
    {
        int s = JitMethods.JitA(1) + JitMethods.JitB(2) + JitMethods.JitC(3) + JitMethods.JitD(4) +
                JitMethods.JitE(5) + JitMethods.JitOptimized(6);
        // hot: called in bursts until the runtime's background tiering had time
        // to promote it (30 calls, then 100 ms without new tier-0 work)
        var sw = Stopwatch.StartNew();
        while (sw.ElapsedMilliseconds < 1500)
        {
            for (int i = 0; i < 1000; i++) s += JitMethods.JitHot(i);
            Thread.Sleep(20);
        }
        long l = JitMethods.JitLoop(100_000_000);
        Console.WriteLine(F($"jit {s} {l}"));
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    static long Burn(long ns)
    {
        long start = Native.ThreadCpuNs(), x = 1;
        while (Native.ThreadCpuNs() - start < ns)
            for (int i = 0; i < 10000; i++) x = x * 6364136223846793005L + 1442695040888963407L;
        return x;
    }

    static void Threads()
    {
        var lines = new string[3];
        var ts = new List<Thread>();
        for (int k = 0; k < 3; k++)
        {
            int id = k;
            var t = new Thread(() =>
            {
                Burn((id + 1) * 100_000_000L);
                if (id == 2) Thread.CurrentThread.Name = "renamed-2";
                lines[id] = F($"thread {Native.GetTid()} cpu {Native.ThreadCpuNs()}");
            }) { Name = $"worker-{id}" };
            ts.Add(t);
        }
        foreach (var t in ts) { t.Start(); t.Join(); }
        foreach (var l in lines) Console.WriteLine(l);
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    static int Deep(int depth, int k)
    {
        if (depth == 0) throw new InvalidOperationException("bench");
        return Deep(depth - 1, k) + 1;
    }

    // about 7 us of arithmetic: with the throw, 10 us an iteration
    [MethodImpl(MethodImplOptions.NoInlining | MethodImplOptions.AggressiveOptimization)]
    static long Work(long x)
    {
        for (int k = 0; k < 7000; k++) x = x * 6364136223846793005L + 1442695040888963407L;
        return x;
    }

    static void ThrowBench(int n)
    {
        long caught = 0, x = 0;
        for (int i = 0; i < 2000; i++) { try { Deep(5, i); } catch (InvalidOperationException) { caught++; } }
        var sw = Stopwatch.StartNew();
        long cpu0 = Native.ThreadCpuNs();
        for (int i = 0; i < n; i++)
        {
            x = Work(x);
            try { Deep(5, i); } catch (InvalidOperationException) { caught++; }
        }
        long cpu = Native.ThreadCpuNs() - cpu0;
        Console.WriteLine(F($"throw-bench {n} throws cpu_ms {cpu / 1e6:F1} wall_ms {sw.Elapsed.TotalMilliseconds:F1} rate {n / sw.Elapsed.TotalSeconds:F0}/s ({caught} {x & 1})"));
    }

    // about 20 us of arithmetic: long enough that a contender stops spinning and waits
    [MethodImpl(MethodImplOptions.NoInlining | MethodImplOptions.AggressiveOptimization)]
    static long Hold(long x)
    {
        for (int k = 0; k < 20000; k++) x = x * 6364136223846793005L + 1;
        return x;
    }

    static void LockBench(int n)
    {
        long shared = 0, cpu = 0;
        var sw = Stopwatch.StartNew();
        var ts = Enumerable.Range(0, 4).Select(_ => new Thread(() =>
        {
            long c0 = Native.ThreadCpuNs(), x = 1;
            for (int i = 0; i < n; i++)
            {
                lock (Gate) { x = Hold(x); shared++; }
                x = Hold(x);
            }
            Interlocked.Add(ref cpu, Native.ThreadCpuNs() - c0 + (x & 0));
        })).ToList();
        ts.ForEach(t => t.Start());
        ts.ForEach(t => t.Join());
        Console.WriteLine(F($"lock-bench {4 * n} sections cpu_ms {cpu / 1e6:F1} wall_ms {sw.Elapsed.TotalMilliseconds:F1} ({shared})"));
    }

    // multicore JIT: SetProfileRoot(dir) and StartProfile, so that the
    // runtime writes dir/events.profile at the end (unless a profiler
    // follows compilations: it ignores SetProfileRoot then); without ask,
    // StartProfile alone (ProfileOptimization's type loaded, no root given:
    // multicore JIT stays off, whoever watches)
    static void MulticoreJit(string dir, bool ask)
    {
        System.IO.Directory.CreateDirectory(dir);
        if (ask)
            System.Runtime.ProfileOptimization.SetProfileRoot(dir);
        System.Runtime.ProfileOptimization.StartProfile("events.profile");
        Console.WriteLine(JitMethods.JitA(1) + JitMethods.JitB(2) + JitMethods.JitC(3));
    }

    static void Handoff(int n)
    {
        var toB = new AutoResetEvent(false);
        var toA = new AutoResetEvent(false);
        long bSwitches = 0;
        var b = new Thread(() =>
        {
            long s0 = Native.ThreadSwitches();
            for (int i = 0; i < n; i++) { toB.WaitOne(); toA.Set(); }
            bSwitches = Native.ThreadSwitches() - s0;
        }) { Name = "handoff-b" };
        b.Start();
        var sw = Stopwatch.StartNew();
        long a0 = Native.ThreadSwitches();
        for (int i = 0; i < n; i++) { toB.Set(); toA.WaitOne(); }
        long aSwitches = Native.ThreadSwitches() - a0;
        b.Join();
        Console.WriteLine(F($"handoff {n} switches {aSwitches + bSwitches} wall_ms {sw.Elapsed.TotalMilliseconds:F1}"));
    }

    static int Main(string[] args)
    {
        string mode = args.Length > 0 ? args[0] : "";
        if (mode.StartsWith("multicore-jit", StringComparison.Ordinal) && args.Length > 1)
        {
            MulticoreJit(args[1], mode == "multicore-jit");
            return 0;
        }
        int n = args.Length > 1 ? int.Parse(args[1], CultureInfo.InvariantCulture) : 0;
        switch (mode)
        {
            case "exceptions": Exceptions(n > 0 ? n : 1000); break;
            case "lock": Locks(n > 0 ? n : 200); break;
            case "jit": Jit(); break;
            case "threads": Threads(); break;
            case "jit-trickle": JitTrickle(n > 0 ? n : 1000); break;
            case "throw-bench": ThrowBench(n > 0 ? n : 100000); break;
            case "lock-bench": LockBench(n > 0 ? n : 20000); break;
            case "handoff": Handoff(n > 0 ? n : 20000); break;
            default: Console.Error.WriteLine("usage: Events exceptions|lock|jit|jit-trickle|threads|throw-bench|lock-bench|handoff [N] | multicore-jit[-touch] DIR"); return 2;
        }
        return 0;
    }
}
