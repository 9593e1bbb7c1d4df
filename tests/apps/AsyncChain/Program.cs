// AsyncChain: async code whose logical stacks are known, for corscope's
// --async.  Each scenario resumes an async method on the thread pool (it
// yields first) and burns CPU there in a leaf of its own (Work.BurnX), so
// that every sample of that leaf has a known chain of awaiting methods.
// Before it burns it also awaits a gate the caller opens once its call has
// returned: by then every method of the chain has hooked its continuation,
// so no sample falls in the moment between a resumption and the awaiters'
// registrations (which a loaded machine stretches to milliseconds):
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
// And, not in "all":
//   events      Events.A -> B -> C: C throws and catches, allocates, and takes
//               a lock another thread holds often (EventC.Throw, EventC.Alloc,
//               EventC.Lock), for events' logical stacks
//   nested      Nested.Level(19) awaits Level(18) ... awaits Level(0), which
//               awaits the gate only: when it completes, each caller is
//               resumed inline, inside the MoveNext of the one it awaited,
//               20 resumptions deep on one thread; Level(10) burns
//               (Work.BurnNestedMid, 11 deep), then Level(19) (Work.BurnNested,
//               20 deep); prints "nested calls N" at the end
// and operations left pending, for `corscope async -p`:
//   pending     3 x Pending.Root -> Mid -> Leaf, Leaf at its first await of a
//               task that never completes; Pending.Fan awaiting Task.WhenAll
//               of 2 Pending.Branch, each at its second await; and a thread
//               blocked in Wait() on one more Pending.Root; prints "ready"
//               and waits [seconds] (default 60)
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
    [MethodImpl(MethodImplOptions.NoInlining)] public static void BurnNested(double ms) { long t = Native.ThreadCpuNs(); Spin(ms); Count(t); }
    [MethodImpl(MethodImplOptions.NoInlining)] public static void BurnNestedMid(double ms) { long t = Native.ThreadCpuNs(); Spin(ms); Count(t); }
}

static class Chain
{
    public static async Task A(double ms) { await B(ms); }
    static async Task B(double ms) { await C(ms); }
    static async Task C(double ms) { await Task.Yield(); await Program.Gate; Work.BurnC(ms); }
}

static class Fan
{
    public static async Task All(double ms) { await Task.WhenAll(Left(ms / 2), Right(ms / 2)); }
    static async Task Left(double ms) { await Task.Yield(); await Program.Gate; Work.BurnLeft(ms); }
    static async Task Right(double ms) { await Task.Yield(); await Program.Gate; Work.BurnRight(ms); }
}

static class Configure
{
    public static async Task A(double ms) { await B(ms).ConfigureAwait(false); }
    static async Task<int> B(double ms) { return await C(ms).ConfigureAwait(false); }
    static async Task<int> C(double ms)
    {
        await Task.Delay(1).ConfigureAwait(false);
        await Program.Gate.ConfigureAwait(false);
        Work.BurnConfigured(ms);
        return 1;
    }
}

static class ValueTasks
{
    public static async ValueTask A(double ms) { await B(ms); }
    static async ValueTask<int> B(double ms) { return await C(ms); }
    static async ValueTask<int> C(double ms) { await Task.Yield(); await Program.Gate; Work.BurnValueTask(ms); return 2; }
}

static class Pooling
{
    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder))]
    public static async ValueTask A(double ms) { await B(ms); }
    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder<>))]
    static async ValueTask<int> B(double ms) { return await C(ms); }
    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder<>))]
    static async ValueTask<int> C(double ms) { await Task.Yield(); await Program.Gate; Work.BurnPooling(ms); return 3; }
}

static class Stream
{
    public static async Task Consume(double ms)
    {
        int sum = 0;
        await foreach (int x in Produce(ms))
            sum += x;
        if (sum < 0) Console.WriteLine(sum);
    }

    static async IAsyncEnumerable<int> Produce(double ms)
    {
        await Task.Yield();
        await Program.Gate;
        Work.BurnProduce(ms);
        yield return 1;
    }
}

static class Lambdas
{
    public static Task Run(double ms)
    {
        Func<double, Task> work = async m => { await Task.Yield(); await Program.Gate; Work.BurnLambda(m); };
        return Outer(work, ms);
    }

    static async Task Outer(Func<double, Task> work, double ms) { await work(ms); }
}

static class Runs
{
    public static async Task Outer(double ms)
    {
        await Task.Run(() => { Program.Gate.Wait(); Work.BurnRun(ms); });
    }

    public static async Task OuterAsync(double ms)
    {
        await Task.Run(async () => { await Task.Yield(); await Program.Gate; Work.BurnRunAsync(ms); });
    }
}

static class Timers
{
    public static async Task Outer(double ms) { await Tick(ms); }

    static async Task Tick(double ms)
    {
        using var timer = new PeriodicTimer(TimeSpan.FromMilliseconds(1));
        await timer.WaitForNextTickAsync();
        await Program.Gate;
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
    static async Task<int> B(double ms) { await Task.Yield(); await Program.Gate; Work.BurnSync(ms); return 1; }
}

static class Events
{
    static readonly object contended = new();
    static volatile bool stop;

    public static async Task A(double ms) { await B(ms); }
    static async Task B(double ms) { await C(ms); }
    static async Task C(double ms)
    {
        await Task.Yield();
        await Program.Gate;
        long start = Native.ThreadCpuNs(), end = start + (long)(ms * 1e6);
        while (Native.ThreadCpuNs() < end)
        {
            EventC.Throw();
            EventC.Alloc();
            EventC.Lock();
        }
        Interlocked.Add(ref Work.Spent, Native.ThreadCpuNs() - start);
    }

    // A thread that holds the lock half of the time.
    public static Thread Holder()
    {
        var t = new Thread(() =>
        {
            while (!stop)
            {
                lock (contended) Thread.Sleep(1);
                Thread.Sleep(1);
            }
        }) { IsBackground = true };
        t.Start();
        return t;
    }

    public static void Stop() => stop = true;

    public static class EventC
    {
        static object? kept;

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static void Throw()
        {
            try { throw new InvalidOperationException("async"); }
            catch (InvalidOperationException e) { kept = e; }
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static void Alloc()
        {
            for (int i = 0; i < 16; i++) kept = new byte[8192];
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static void Lock()
        {
            lock (contended) kept = null;
        }
    }
}

static class Pending
{
    public static async Task Root(Task never) { await Mid(never); }
    static async Task Mid(Task never) { await Leaf(never); }
    static async Task Leaf(Task never) { await never; }

    public static async Task Fan(Task never) { await Task.WhenAll(Branch(never), Branch(never)); }
    static async Task Branch(Task never) { await Task.Yield(); await never; }

    public static int Run(double seconds)
    {
        var never = new TaskCompletionSource();
        var roots = new List<Task>();
        for (int i = 0; i < 3; i++)
            roots.Add(Root(never.Task));
        roots.Add(Fan(never.Task));
        // blocked until the program ends, so that a snapshot taken at any
        // time of the run (the last one too) finds it blocked
        var blocked = new Thread(() => Root(never.Task).Wait()) { IsBackground = true };
        blocked.Start();
        Thread.Sleep(200); // the branches past their first await, the thread blocked
        Console.WriteLine("ready");
        Console.Out.Flush();
        Thread.Sleep(TimeSpan.FromSeconds(seconds));
        GC.KeepAlive(roots);
        return 0;
    }
}

// Resumptions nested on one thread: Level(0) is resumed by the thread pool
// once the gate opens (every caller has hooked its continuation by then),
// and its completion runs Level(1)'s continuation inline, whose completion
// runs Level(2)'s, and so on: Level(n) runs n + 1 resumptions deep.
static class Nested
{
    public const int Depth = 20;
    public static long Calls;

    public static Task Top(double ms)
    {
        Interlocked.Increment(ref Calls);
        return Level(Depth - 1, ms);
    }
    static async Task Level(int n, double ms)
    {
        if (n == 0)
        {
            await Program.Gate;
            return;
        }
        await Level(n - 1, ms);
        if (n == Depth / 2)
            Work.BurnNestedMid(ms / 2);
        if (n == Depth - 1)
            Work.BurnNested(ms / 2);
    }
}

static class Program
{
    // Opened by the caller once the scenario's call returned (see above).
    public static Task Gate = Task.CompletedTask;

    // Calls start (which awaits the gate somewhere down), opens the gate,
    // and waits for the result.
    static void Gated(Func<Task> start)
    {
        var gate = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        Gate = gate.Task;
        Task t = start();
        gate.SetResult();
        t.GetAwaiter().GetResult();
    }
    // Runs one scenario for about `total` ms of the leaves' CPU time, in
    // slices of `slice` ms (each a fresh call, so each resumes anew).
    static void Scenario(string name, double total, double slice)
    {
        long before = Interlocked.Read(ref Work.Spent);
        while (Interlocked.Read(ref Work.Spent) - before < total * 1e6)
        {
            switch (name)
            {
                case "chain": Gated(() => Chain.A(slice)); break;
                case "whenall": Gated(() => Fan.All(slice)); break;
                case "configure": Gated(() => Configure.A(slice)); break;
                case "valuetask": Gated(() => ValueTasks.A(slice).AsTask()); break;
                case "pooling": Gated(() => Pooling.A(slice).AsTask()); break;
                case "stream": Gated(() => Stream.Consume(slice)); break;
                case "lambda": Gated(() => Lambdas.Run(slice)); break;
                case "run":
                    Gated(() => Runs.Outer(slice / 2));
                    Gated(() => Runs.OuterAsync(slice / 2));
                    break;
                case "timer":
                    Gated(() => Timers.Outer(slice / 2));
                    Timers.Delay(slice / 2).GetAwaiter().GetResult();
                    break;
                case "events": Gated(() => Events.A(slice)); break;
                case "nested": Gated(() => Nested.Top(slice)); break;
                case "syncwait":
                {
                    // the gate opens 30 ms later, on a timer: by then this
                    // thread has spun and blocked in .Result
                    var gate = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
                    Gate = gate.Task;
                    Task<int> t = SyncOver.A(slice);
                    using var opener = new Timer(_ => gate.SetResult(), null, 30, Timeout.Infinite);
                    _ = t.Result;
                    break;
                }
                default: throw new ArgumentException("unknown scenario " + name);
            }
        }
        Console.WriteLine($"cpu {name} {Interlocked.Read(ref Work.Spent) - before}");
    }

    static readonly string[] All =
        { "chain", "whenall", "configure", "valuetask", "pooling", "stream", "lambda", "run", "timer", "syncwait" };

    static int Main(string[] args)
    {
        if (args.Length > 0 && args[0] == "events")
        {
            Events.Holder();
            Scenario("events", 20, 2);
            Scenario("events", args.Length > 1 ? double.Parse(args[1], CultureInfo.InvariantCulture) : 1000, 20);
            Events.Stop();
            return 0;
        }
        if (args.Length > 0 && args[0] == "pending")
            return Pending.Run(args.Length > 1 ? double.Parse(args[1], CultureInfo.InvariantCulture) : 60);
        string[] which = args.Length > 0 && args[0] != "all" ? args[0].Split(',') : All;
        double total = args.Length > 1 ? double.Parse(args[1], CultureInfo.InvariantCulture) : 1000;
        // warm-up: every path compiled (and tiered) before it is measured
        foreach (string s in which)
            Scenario(s, 20, 2);
        foreach (string s in which)
            Scenario(s, total, 20);
        if (Nested.Calls > 0)
            Console.WriteLine($"nested calls {Nested.Calls}");
        return 0;
    }
}
