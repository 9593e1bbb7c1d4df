using System.Diagnostics;
using CoverLib;
using Xunit;

namespace CoverTests;

public class BranchTests
{
    [Fact]
    public void Signs()
    {
        Assert.Equal("positive", Branches.Sign(3));
        Assert.Equal("zero", Branches.Sign(0));
        // negative never asked: its line stays uncovered
    }

    [Fact]
    public void OnlyIfNeverTaken() => Assert.Equal(5, Branches.OnlyIf(5));

    [Fact]
    public void Days()
    {
        Assert.Equal("mon", Branches.Day(1));
        Assert.Equal("?", Branches.Day(9));
    }

    [Fact]
    public void Sizes()
    {
        Assert.Equal("small", Branches.Size(3));
        Assert.Equal("large", Branches.Size(500));
    }

    [Fact]
    public void Others()
    {
        Assert.Equal(1, Branches.Ternary(true));
        Assert.Null(Branches.Length(null));
        Assert.Equal("big int", Branches.Kind(9));
        Assert.Equal("other", Branches.Kind(1.5));
    }
}

public class LoopTests
{
    [Fact]
    public void Sums()
    {
        Assert.Equal(10, Loops.SumFor(5));
        Assert.Equal(6, Loops.SumForeach(new List<int> { 1, 2, 3 }));
        Assert.Equal(3, Loops.CountDown(0));
    }
}

public class ErrorTests
{
    [Fact]
    public void Parses()
    {
        Assert.Equal(12, Errors.Parse("12"));
        Assert.Equal(-1, Errors.Parse("x"));
        Assert.Throws<InvalidOperationException>(() => Errors.Throw(true));
        Assert.Equal("one", Errors.Filtered(1));
        Assert.Equal(2, Errors.Using("a\nb"));
    }
}

public class AsyncTests
{
    [Fact]
    public async Task Awaits()
    {
        Assert.Equal(4, await Asyncs.Twice(2));
        Assert.Equal("caught", await Asyncs.Catching(true));
        int n = 0;
        await foreach (int i in Asyncs.Stream(3))
            n += i;
        Assert.Equal(3, n);
    }
}

public class IteratorLambdaTests
{
    [Fact]
    public void Iterates()
    {
        Assert.Equal(new[] { 0, 2, 4 }, Iterators.Evens(5).ToArray());
        Assert.Equal(2, Lambdas.CountBig(new[] { 1, 5, 9 }, 4));
        Assert.Equal(new List<int> { 2, 4 }, Lambdas.Doubled(new List<int> { 1, 2 }));
        Assert.Equal(13, Lambdas.Local(2));
        Assert.Equal(7, Lambdas.Adder(3)(4));
    }
}

public class GenericPropertyTests
{
    [Fact]
    public void Boxes()
    {
        var b = new Box<int>();
        b.Add(3);
        b.Add(8);
        Assert.Equal(8, b.Max());
        Assert.Equal(2, b.Count);
        var s = new Box<string>();
        s.Add("a");
        Assert.Equal("a", s.Max());
    }

    [Fact]
    public void Accounts()
    {
        var a = new Account();
        a.Deposit(10);
        Assert.True(a.TryWithdraw(4));
        Assert.Equal(6, a.Balance);
        Assert.Equal(2, PartlyExcluded.Kept(1));
        Assert.Equal(0, PartlyExcluded.Dropped(3));
        Assert.Equal(4, Excluded.Hidden(4));
    }
}

public class KillTests
{
    // The early-killed host: with COVER_KILL set, runs some of CoverLib and
    // then kills its own test host with SIGKILL, mid-run (no exit, no
    // flush): the lines it ran must still be reported.
    [Fact]
    public void KilledMidRun()
    {
        if (Environment.GetEnvironmentVariable("COVER_KILL") != "1")
            return;
        Assert.Equal(42, Busy.AfterSpin());
        Busy.Spin(1000);
        Process.GetCurrentProcess().Kill();
    }
}

public class MoreTests
{
    [Fact]
    public void Records()
    {
        var p = new Point(2, -3);
        Assert.Equal(5, p.Manhattan);
        Assert.Equal(new Point(4, -6), p.Scale(2));
        Assert.Equal("3.50", (new Money(150) + new Money(200)).ToString());
    }

    [Fact]
    public void ShapeNames()
    {
        Assert.Equal("square", Shapes.Name(new Square { Side = 2 }));
        Assert.Equal("dot", Shapes.Name(new Circle { Radius = 0.5 }));
        Assert.Equal("shape of area 4.0", ((IShape)new Square { Side = 2 }).Describe());
        Shapes.Count("a");
        Shapes.Count("a");
        Assert.Equal(2, Shapes.CountOf("a"));
        Assert.Equal(1, Shapes.Created);
    }

    [Fact]
    public void QueriesRun()
    {
        Assert.Equal(new List<int> { 4, 16 }, Queries.EvenSquares(new[] { 1, 2, 3, 4 }));
        Assert.Equal(int.MaxValue, Queries.Checked(int.MaxValue, 2));
    }

    [Fact]
    public async Task MoreAwaits()
    {
        Assert.Equal(3, await MoreAsync.SumStream(3));
        Assert.Equal(5, await MoreAsync.Disposing());
        Assert.Equal(5, await MoreAsync.WithLocal(2));
        Assert.Equal(new List<int> { 11 }, await MoreAsync.Mapped(new List<int> { 1 }));
    }

    [Fact]
    public void GuardedIterators()
    {
        Assert.Equal(new[] { 0, 1 }, Guarded.Counted(2).ToArray());
        Assert.Equal(1, Guarded.Finished);
        Assert.Equal("b", Guarded.Pick(false, "a", "b"));
    }

    // The line of a stack trace's frame is the source's, instrumented or not
    // (the agent gives the runtime the map of new offsets to old).
    [Fact]
    public void StackTraceLines()
    {
        var e = Assert.Throws<InvalidOperationException>(() => Guarded.Line());
        var frame = new StackTrace(e, true).GetFrame(0);
        Assert.Equal("Line", frame.GetMethod().Name);
        Assert.Equal(154, frame.GetFileLineNumber());
    }
}

// The coverage benchmark's tests (bench/cover.sh sets COVER_BENCH=1): CPU
// bound, a few seconds each run plain; without COVER_BENCH they return at once.
public class BenchTests : IDisposable
{
    private static bool On => Environment.GetEnvironmentVariable("COVER_BENCH") == "1";
    private readonly Stopwatch watch = Stopwatch.StartNew();
    private readonly TimeSpan cpu = Process.GetCurrentProcess().TotalProcessorTime;

    // each test's own wall and CPU time (the process's, JIT and GC threads
    // included: what a busy machine disturbs least), for bench/cover.sh:
    // "wall-ms cpu-ms" lines appended to $COVER_BENCH_TIMES
    public void Dispose()
    {
        string path = Environment.GetEnvironmentVariable("COVER_BENCH_TIMES");
        if (!On || string.IsNullOrEmpty(path))
            return;
        var inv = System.Globalization.CultureInfo.InvariantCulture;
        double used = (Process.GetCurrentProcess().TotalProcessorTime - cpu).TotalMilliseconds;
        File.AppendAllText(path, watch.Elapsed.TotalMilliseconds.ToString("F1", inv) + " " +
                                 used.ToString("F1", inv) + "\n");
    }

    [Fact]
    public void Parsing()
    {
        if (!On)
            return;
        string text = string.Concat(Enumerable.Repeat("let x1 = 42 + foo(bar, 7) * baz; ", 2000));
        int total = 0;
        for (int i = 0; i < 60; i++)
            total += Work.Tokens(text);
        Assert.True(total > 0);
    }

    [Fact]
    public void Sorting()
    {
        if (!On)
            return;
        var rng = new Random(1);
        for (int k = 0; k < 6; k++)
        {
            int[] a = Enumerable.Range(0, 6000).Select(_ => rng.Next()).ToArray();
            Work.InsertionSort(a);
            Assert.True(a[0] <= a[^1]);
        }
    }

    [Fact]
    public void Recursion()
    {
        if (!On)
            return;
        Assert.Equal(9227465, Work.Fib(35));
    }

    [Fact]
    public void Dictionaries()
    {
        if (!On)
            return;
        string[] words = Enumerable.Range(0, 200000).Select(i => "w" + (i % 5000)).ToArray();
        for (int k = 0; k < 10; k++)
            Assert.Equal(5000, Work.WordCounts(words));
    }

    [Fact]
    public void Strings()
    {
        if (!On)
            return;
        for (int k = 0; k < 40; k++)
            Assert.True(Work.Build(50000).Length > 0);
    }

    [Fact]
    public void Numbers()
    {
        if (!On)
            return;
        Assert.True(Work.Collatz(300000) > 100);
    }
}
