// AsyncChain: async code whose logical stacks are known, for corscope's
// --async.  Each scenario resumes an async method on the thread pool (it
// yields first) and burns CPU there in a leaf of its own (Work.BurnX), so
// that every sample of that leaf has a known chain of awaiting methods:
//
//   chain       Chain.A awaits B awaits C; C yields, then burns (Work.BurnC)
//   whenall     Fan.All awaits Task.WhenAll(Left, Right): BurnLeft, BurnRight
//   configure   Configure.A -> B -> C, every await ConfigureAwait(false)
//   valuetask   ValueTasks.A -> B -> C returning ValueTask and ValueTask<int>
//   pooling     the same with PoolingAsyncValueTaskMethodBuilder
//   stream      Stream.Consume: await foreach over Stream.Produce (an async
//               iterator that yields, burns, yields return)
//   lambda      Lambdas.Outer awaits an async lambda
//   run         Runs.Outer awaits Task.Run(sync lambda), Runs.OuterAsync
//               awaits Task.Run(async lambda)
//   timer       Timers.Outer awaits Timers.Tick: PeriodicTimer, then burn;
//               Timers.Delay: Task.Delay, then burn
//   syncwait    SyncOver.A(...).Result from a plain method: A awaits B
//
// Usage: AsyncChain SCENARIO[,SCENARIO...]|all [ms of CPU per scenario]
// Prints "cpu SCENARIO NS" per scenario: the leaves' CPU time.
using System.Globalization;
using System.Runtime.CompilerServices;

namespace AsyncChain;

static class Work
{
    static double sink;

    // Burns `ms` of this thread's CPU time.
    [MethodImpl(MethodImplOptions.NoInlining)]
    static void Spin(double ms)
    {
        long end = Native.ThreadCpuNs() + (long)(ms * 1e6);
        double x = sink;
        while (Native.ThreadCpuNs() < end)
            for (int i = 0; i < 5000; i++) x = x * 1.0000001 + 1e-9;
        sink = x;
    }

    public static long Spent;
    static void Count(long before) => Interlocked.Add(ref Spent, Native.ThreadCpuNs() - before);

    [MethodImpl(MethodImplOptions.NoInlining)] public static void BurnC(double ms) { long t = Native.ThreadCpuNs(); Spin(ms); Count(t); }
    [MethodImpl(MethodImplOptions.NoInlining)] public static void BurnLeft(double ms) { long t = Native.ThreadCpuNs(); Spin(ms); Count(t); }
    [MethodImpl(MethodImplOptions.NoInlining)] public static void BurnRight(double ms) { long t = Native.ThreadCpuNs(); Spin(ms); Count(t); }
    [MethodImpl(MethodImplOptions.NoInlining)] public static void BurnConfigured(double ms) { long t = Native.ThreadCpuNs(); Spin(ms); Count(t); }
    [MethodImpl(MethodImplOptions.NoInlining)] public static void BurnValueTask(double ms) { long t = Native.ThreadCpuNs(); Spin(ms); Count(t); }
    [MethodImpl(MethodImplOptions.NoInlining)] public static void BurnPooling(double ms) { long t = Native.ThreadCpuNs(); Spin(ms); Count(t); }
    [MethodImpl(MethodImplOptions.NoInlining)] public static void BurnProduce(double ms) { long t = Native.ThreadCpuNs(); Spin(ms); Count(t); }
    [MethodImpl(MethodImplOptions.NoInlining)] public static void BurnLambda(double ms) { long t = Native.ThreadCpuNs(); Spin(ms); Count(t); }
    [MethodImpl(MethodImplOptions.NoInlining)] public static void BurnRun(double ms) { long t = Native.ThreadCpuNs(); Spin(ms); Count(t); }
    [MethodImpl(MethodImplOptions.NoInlining)] public static void BurnRunAsync(double ms) { long t = Native.ThreadCpuNs(); Spin(ms); Count(t); }
    [MethodImpl(MethodImplOptions.NoInlining)] public static void BurnTimer(double ms) { long t = Native.ThreadCpuNs(); Spin(ms); Count(t); }
    [MethodImpl(MethodImplOptions.NoInlining)] public static void BurnDelay(double ms) { long t = Native.ThreadCpuNs(); Spin(ms); Count(t); }
    [MethodImpl(MethodImplOptions.NoInlining)] public static void BurnSync(double ms) { long t = Native.ThreadCpuNs(); Spin(ms); Count(t); }
}

static class Chain
{
    public static async Task A(double ms) { await B(ms); }
    static async Task B(double ms) { await C(ms); }
    static async Task C(double ms) { await Task.Yield(); Work.BurnC(ms); }
}

static class Fan
{
    public static async Task All(double ms) { await Task.WhenAll(Left(ms / 2), Right(ms / 2)); }
    static async Task Left(double ms) { await Task.Yield(); Work.BurnLeft(ms); }
    static async Task Right(double ms) { await Task.Yield(); Work.BurnRight(ms); }
}

static class Configure
{
    public static async Task A(double ms) { await B(ms).ConfigureAwait(false); }
    static async Task<int> B(double ms) { return await C(ms).ConfigureAwait(false); }
    static async Task<int> C(double ms)
    {
        await Task.Delay(1).ConfigureAwait(false);
        Work.BurnConfigured(ms);
        return 1;
    }
}

static class ValueTasks
{
    public static async ValueTask A(double ms) { await B(ms); }
    static async ValueTask<int> B(double ms) { return await C(ms); }
    static async ValueTask<int> C(double ms) { await Task.Yield(); Work.BurnValueTask(ms); return 2; }
}

static class Pooling
{
    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder))]
    public static async ValueTask A(double ms) { await B(ms); }
    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder<>))]
    static async ValueTask<int> B(double ms) { return await C(ms); }
    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder<>))]
    static async ValueTask<int> C(double ms) { await Task.Yield(); Work.BurnPooling(ms); return 3; }
}

static class Stream
{
    public static async Task Consume(double ms)
    {
        int sum = 0;
        await foreach (int x in Produce(ms / 4, 4))
            sum += x;
        if (sum < 0) Console.WriteLine(sum);
    }

    static async IAsyncEnumerable<int> Produce(double ms, int n)
    {
        for (int i = 0; i < n; i++)
        {
            await Task.Yield();
            Work.BurnProduce(ms);
            yield return i;
        }
    }
}

static class Lambdas
{
    public static Task Run(double ms)
    {
        Func<double, Task> work = async m => { await Task.Yield(); Work.BurnLambda(m); };
        return Outer(work, ms);
    }

    static async Task Outer(Func<double, Task> work, double ms) { await work(ms); }
}

static class Runs
{
    public static async Task Outer(double ms) { await Task.Run(() => Work.BurnRun(ms)); }

    public static async Task OuterAsync(double ms)
    {
        await Task.Run(async () => { await Task.Yield(); Work.BurnRunAsync(ms); });
    }
}

static class Timers
{
    public static async Task Outer(double ms) { await Tick(ms); }

    static async Task Tick(double ms)
    {
        using var timer = new PeriodicTimer(TimeSpan.FromMilliseconds(1));
        await timer.WaitForNextTickAsync();
        Work.BurnTimer(ms);
    }

    public static async Task Delay(double ms)
    {
        await Task.Delay(1);
        Work.BurnDelay(ms);
    }
}

static class SyncOver
{
    public static async Task<int> A(double ms) { return await B(ms) + 1; }
    static async Task<int> B(double ms) { await Task.Yield(); Work.BurnSync(ms); return 1; }
}

static class Program
{
    // Runs one scenario for about `total` ms of the leaves' CPU time, in
    // slices of `slice` ms (each a fresh call, so each resumes anew).
    static void Scenario(string name, double total, double slice)
    {
        long before = Interlocked.Read(ref Work.Spent);
        while (Interlocked.Read(ref Work.Spent) - before < total * 1e6)
        {
            switch (name)
            {
                case "chain": Chain.A(slice).GetAwaiter().GetResult(); break;
                case "whenall": Fan.All(slice).GetAwaiter().GetResult(); break;
                case "configure": Configure.A(slice).GetAwaiter().GetResult(); break;
                case "valuetask": ValueTasks.A(slice).AsTask().GetAwaiter().GetResult(); break;
                case "pooling": Pooling.A(slice).AsTask().GetAwaiter().GetResult(); break;
                case "stream": Stream.Consume(slice).GetAwaiter().GetResult(); break;
                case "lambda": Lambdas.Run(slice).GetAwaiter().GetResult(); break;
                case "run":
                    Runs.Outer(slice / 2).GetAwaiter().GetResult();
                    Runs.OuterAsync(slice / 2).GetAwaiter().GetResult();
                    break;
                case "timer":
                    Timers.Outer(slice / 2).GetAwaiter().GetResult();
                    Timers.Delay(slice / 2).GetAwaiter().GetResult();
                    break;
                case "syncwait": _ = SyncOver.A(slice).Result; break;
                default: throw new ArgumentException("unknown scenario " + name);
            }
        }
        Console.WriteLine($"cpu {name} {Interlocked.Read(ref Work.Spent) - before}");
    }

    static readonly string[] All =
        { "chain", "whenall", "configure", "valuetask", "pooling", "stream", "lambda", "run", "timer", "syncwait" };

    static int Main(string[] args)
    {
        string[] which = args.Length > 0 && args[0] != "all" ? args[0].Split(',') : All;
        double total = args.Length > 1 ? double.Parse(args[1], CultureInfo.InvariantCulture) : 1000;
        // warm-up: every path compiled (and tiered) before it is measured
        foreach (string s in which)
            Scenario(s, 20, 2);
        foreach (string s in which)
            Scenario(s, total, 20);
        return 0;
    }
}
