// WatchApp: known calls with known arguments, for `corscope watch`
// (tests/e2e/t_watch.sh).
//   WatchApp run        a fixed sequence of calls, each result printed; the
//                       output is the same with or without the probes
//   WatchApp bench N    N calls of Pricing.Mix, timed (bench/watch.sh):
//                       wall ns per call, and the calling thread's own CPU
//                       ns per call (its clock: the probes' work on this
//                       thread, not the agent's loop or corscope's)
//   WatchApp serve SEC  prints "ready PID", then calls Pricing.Quote every
//                       10 ms (and every fourth time Pricing.Check, which
//                       throws) for SEC seconds, checking every result (prints
//                       "wrong" and exits 1 at the first wrong one), and
//                       at the end "served N"
//   WatchApp kinds      calls whose values need the runtime's layouts
//                       (tests/e2e/t_watch_fields.sh): `this` of a class,
//                       a struct and a generic class, objects' and structs'
//                       fields, generic methods' T, enums of another
//                       assembly (WatchLib) and of CoreLib
//   WatchApp kinds-serve SEC  prints "ready PID", then every 10 ms a
//                       Basket.Add, a Holder<int>.Swap and Kinds.Echo of an
//                       int and a string, each result checked ("wrong" and
//                       exit 1 at the first wrong one), "served N" at the end
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using WatchLib;

namespace WatchApp;

public sealed class Order
{
    public int Id;
    public Order(int id) { Id = id; }
}

public static class Pricing
{
    public static decimal Quote(string sku, int qty)
    {
        decimal unit = sku.Length > 4 ? 2.25m : 1.50m;
        return unit * qty;
    }

    public static string Describe(bool rush, char grade, double weight, long id)
    {
        return (rush ? "rush-" : "slow-") + grade + "-" + weight.ToString("0.0") + "-" + id;
    }

    public static int Tax(int cents) => cents / 10;
    public static decimal Tax(decimal amount) => amount / 10m;

    public static int Total(int[] items, Order? order, string? note)
    {
        int sum = 0;
        foreach (int i in items)
            sum += i;
        return sum + (order?.Id ?? 0) + (note?.Length ?? 0);
    }

    public static void Log(string message)
    {
        Logged += message.Length;
    }

    public static int Logged;

    public static int Check(int qty)
    {
        if (qty < 0)
            throw new ArgumentOutOfRangeException(nameof(qty));
        return qty * 2;
    }

    public static string Long(string text) => text.ToUpperInvariant();

    public static T First<T>(T[] items, int skip) => items[skip];

    public static async Task<int> Fetch(int id)
    {
        await Task.Delay(5);
        return id * 10;
    }

    // bench/watch.sh: a call with a few primitive arguments (never inlined,
    // so that plain and watched runs make the same call)
    [MethodImpl(MethodImplOptions.NoInlining)]
    public static long Mix(int a, long b, double c) => a + b + (long)c;
}

public enum Color { Red = 1, Green = 2, Blue = 4 }

[Flags]
public enum Access { None = 0, Read = 1, Write = 2, Exec = 4 }

public enum Level : byte { Low, High = 200 }

public struct Point
{
    public int X;
    public int Y;
}

public sealed class Box<T>
{
    public T Value;
    public Box(T value) { Value = value; }
}

// Values of every kind `watch` reads (issue 22 item 2): each shown from
// bytes in place, never by running the program's code.
public static class Values
{
    public static int Paint(Color c, Access a, Level l) => (int)c + (int)a + (int)l;

    public static DateTime Later(DateTime at, TimeSpan by) => at + by;

    public static int Tag(Guid id, DateTime plain) => id.ToString().Length + plain.Year;

    public static int Sum(int[] xs, string?[] names, long[] big)
    {
        int s = 0;
        foreach (int x in xs)
            s += x;
        return s + names.Length + (int)(big[0] >> 40);
    }

    public static int Count(ReadOnlySpan<char> text, Span<int> cells) => text.Length + cells.Length;

    public static void Bump(ref int n, in long k, out string s)
    {
        n += (int)k;
        s = "done";
    }

    public static int Area(Point p) => p.X * p.Y;

    public static int Peek(object o, Box<int> bi, Box<string> bs) => bi.Value + bs.Value.Length + (o is List<int> ? 1 : 0);

    public static T Pick<T>(T[] items) => items[items.Length - 1];

    public static int Fail(int code)
    {
        if (code > 5)
            throw new InvalidOperationException($"code {code} is not allowed here");
        return code;
    }
}

public sealed class Cart
{
    private int items;
    public int Add(int n, float weight)
    {
        items += n;
        return items;
    }
}

// `this`, fields, T and enums of other assemblies (WatchApp kinds).
public sealed class Basket
{
    public int Count;
    public double Total;
    public bool Open = true;
    public char Grade = 'B';
    public Color Tint = Color.Green;
    public Shade Shade = Shade.Dark;
    public string Owner = "ann";
    public string? Note;
    public Order? Last;
    public long Big = 1L << 40;

    public int Add(string sku, int qty)
    {
        Count += qty;
        Total += qty * 1.5;
        Last = new Order(Count);
        return Count;
    }
}

public struct Vec
{
    public int X;
    public int Y;
    public int Len2() => X * X + Y * Y;
}

public sealed class Holder<T>
{
    public T Item;
    public Holder(T item) { Item = item; }
    public T Swap(T next)
    {
        T old = Item;
        Item = next;
        return old;
    }
}

public static class Kinds
{
    public static int Area(Vec v) => v.X * v.Y;
    public static Basket Keep(Basket b) => b;
    public static T Echo<T>(T value) => value;
    public static int Day(DayOfWeek d, Shade s, Finish f) => (int)d + (int)s + (int)f;

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static void Run()
    {
        var b = new Basket();
        Console.WriteLine($"add {b.Add("a", 2)}");
        Console.WriteLine($"add {b.Add("b", 3)}");
        var v = new Vec { X = 3, Y = 4 };
        Console.WriteLine($"len2 {v.Len2()}");
        Console.WriteLine($"area {Kinds.Area(v)}");
        Console.WriteLine($"keep {Kinds.Keep(b).Count}");
        Console.WriteLine($"echo {Kinds.Echo(42)} {Kinds.Echo("hi")} {Kinds.Echo(2.5)} {Kinds.Echo(Color.Blue)} {Kinds.Echo(new Order(9)).Id}");
        var h = new Holder<int>(1);
        Console.WriteLine($"swap {h.Swap(5)} {h.Swap(6)}");
        var hs = new Holder<string>("x");
        Console.WriteLine($"swap {hs.Swap("y")}");
        Console.WriteLine($"day {Kinds.Day(DayOfWeek.Friday, Shade.Deep, Finish.Matte | Finish.Waxed)}");
    }
}

public static class Program
{
    [MethodImpl(MethodImplOptions.NoInlining)]
    static void Run()
    {
        Console.WriteLine($"quote {Pricing.Quote("sku-1", 4)}");
        Console.WriteLine($"quote {Pricing.Quote("abc", 2)}");
        Console.WriteLine($"describe {Pricing.Describe(true, 'A', 2.5, 1234567890123L)}");
        Console.WriteLine($"tax {Pricing.Tax(250)} {Pricing.Tax(12.5m)}");
        Console.WriteLine($"total {Pricing.Total(new[] { 1, 2, 3 }, new Order(7), null)}");
        Pricing.Log("hello");
        Console.WriteLine($"logged {Pricing.Logged}");
        Console.WriteLine($"check {Pricing.Check(3)}");
        try
        {
            Pricing.Check(-1);
        }
        catch (ArgumentOutOfRangeException)
        {
            Console.WriteLine("check threw");
        }
        Console.WriteLine($"long {Pricing.Long(new string('x', 60)).Length}");
        Console.WriteLine($"first {Pricing.First(new[] { 5, 6 }, 1)} {Pricing.First(new[] { "a", "b" }, 0)}");
        Console.WriteLine($"fetch {Pricing.Fetch(4).GetAwaiter().GetResult()}");
        Console.WriteLine($"paint {Values.Paint(Color.Blue, Access.Read | Access.Write, Level.High)} {Values.Paint((Color)3, (Access)8, Level.Low)}");
        Console.WriteLine($"later {Values.Later(new DateTime(2024, 2, 29, 13, 45, 0, DateTimeKind.Utc), TimeSpan.FromMinutes(90)):o}");
        Console.WriteLine($"tag {Values.Tag(new Guid("0f8fad5b-d9cb-469f-a165-70867728950e"), new DateTime(2001, 1, 1))}");
        Console.WriteLine($"sum {Values.Sum(new[] { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 }, new[] { "a", null, "ccc", "d" }, new[] { 1L << 40 })}");
        Span<int> cells = stackalloc int[3];
        Console.WriteLine($"count {Values.Count("hello".AsSpan(), cells)}");
        int n = 5;
        long k = 7;
        Values.Bump(ref n, in k, out string done);
        Console.WriteLine($"bump {n} {done}");
        Console.WriteLine($"area {Values.Area(new Point { X = 3, Y = 4 })}");
        Console.WriteLine($"peek {Values.Peek(new List<int>(), new Box<int>(1), new Box<string>("x"))}");
        Console.WriteLine($"pick {Values.Pick(new[] { 5, 6 })} {Values.Pick(new[] { "a", "b" })}");
        Console.WriteLine($"fail {Values.Fail(2)}");
        try
        {
            Values.Fail(7);
        }
        catch (InvalidOperationException)
        {
            Console.WriteLine("fail threw");
        }
        var cart = new Cart();
        cart.Add(2, 1.5f);
        Console.WriteLine($"cart {cart.Add(3, 0.25f)}");
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    static bool Step(int n)
    {
        int qty = n % 5;
        string sku = "sku-" + (n % 3);
        decimal got = Pricing.Quote(sku, qty);
        if (got != 2.25m * qty)
        {
            Console.WriteLine($"wrong {sku} {qty} {got}");
            return false;
        }
        if (n % 4 == 0)
        {
            // a bad request: thrown and handled
            try
            {
                Pricing.Check(-n - 1);
                Console.WriteLine("wrong: no throw");
                return false;
            }
            catch (ArgumentOutOfRangeException)
            {
            }
        }
        return true;
    }

    static int Serve(int seconds)
    {
        Console.WriteLine($"ready {Environment.ProcessId}");
        var until = DateTime.UtcNow.AddSeconds(seconds);
        int n = 0;
        while (DateTime.UtcNow < until)
        {
            // a request: a method entered anew each time (a loop that
            // inlined Quote would keep its old code until it is left)
            if (!Step(n))
                return 1;
            n++;
            Thread.Sleep(10);
        }
        Console.WriteLine($"served {n}");
        return 0;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    static bool KindsStep(int n, Basket b, Holder<int> h)
    {
        int before = b.Count;
        if (b.Add("k", n % 3 + 1) != before + n % 3 + 1)
            return false;
        if (h.Swap(n) != n - 1)
            return false;
        return Kinds.Echo(n) == n && Kinds.Echo("e" + (n % 10)) == "e" + (n % 10);
    }

    static int KindsServe(int seconds)
    {
        Console.WriteLine($"ready {Environment.ProcessId}");
        var until = DateTime.UtcNow.AddSeconds(seconds);
        var b = new Basket();
        var h = new Holder<int>(-1);
        int n = 0;
        while (DateTime.UtcNow < until)
        {
            if (!KindsStep(n, b, h))
            {
                Console.WriteLine($"wrong at {n}");
                return 1;
            }
            n++;
            Thread.Sleep(10);
        }
        Console.WriteLine($"served {n}");
        return 0;
    }

    [StructLayout(LayoutKind.Sequential)]
    struct Timespec
    {
        public long Sec;
        public long Nsec;
    }

    [DllImport("libc", EntryPoint = "clock_gettime")]
    static extern int ClockGettime(int clock, out Timespec ts);

    static long ThreadCpuNs()
    {
        ClockGettime(3 /* CLOCK_THREAD_CPUTIME_ID */, out Timespec ts);
        return ts.Sec * 1_000_000_000 + ts.Nsec;
    }

    static int Bench(long calls)
    {
        long sum = 0;
        for (int i = 0; i < 100000; i++) // warm up: tier 1
            sum += Pricing.Mix(i, i, 0.5);
        var sw = System.Diagnostics.Stopwatch.StartNew();
        long cpu0 = ThreadCpuNs();
        for (long i = 0; i < calls; i++)
            sum += Pricing.Mix((int)i, i, 1.5);
        long cpu = ThreadCpuNs() - cpu0;
        sw.Stop();
        Console.WriteLine($"ns/call {sw.Elapsed.TotalNanoseconds / calls:F1} (sum {sum})");
        Console.WriteLine($"cpu-ns/call {(double)cpu / calls:F1}");
        return 0;
    }

    public static int Main(string[] args)
    {
        if (args.Length >= 2 && args[0] == "bench")
            return Bench(long.Parse(args[1]));
        if (args.Length >= 2 && args[0] == "serve")
            return Serve(int.Parse(args[1]));
        if (args.Length >= 2 && args[0] == "kinds-serve")
            return KindsServe(int.Parse(args[1]));
        if (args.Length >= 1 && args[0] == "kinds")
        {
            Kinds.Run();
            return 0;
        }
        Run();
        return 0;
    }
}
