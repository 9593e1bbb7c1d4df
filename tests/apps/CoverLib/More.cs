namespace CoverLib;

public record Point(int X, int Y)
{
    public int Manhattan => Math.Abs(X) + Math.Abs(Y);

    public Point Scale(int k) => new(X * k, Y * k);
}

public struct Money
{
    private readonly long cents;

    public Money(long cents) => this.cents = cents;

    public static Money operator +(Money a, Money b) => new(a.cents + b.cents);

    public override string ToString() => $"{cents / 100}.{cents % 100:D2}";
}

public interface IShape
{
    double Area();

    string Describe() => $"shape of area {Area():F1}";
}

public sealed class Square : IShape
{
    public double Side { get; init; }

    public double Area() => Side * Side;
}

public sealed class Circle : IShape
{
    public double Radius { get; init; }

    public double Area() => Math.PI * Radius * Radius;
}

public static class Shapes
{
    private static readonly Dictionary<string, int> Counts = new();
    private static int created = Init();

    private static int Init()
    {
        return 1;
    }

    public static string Name(IShape s) => s switch
    {
        Square { Side: > 10 } => "big square",
        Square => "square",
        Circle c when c.Radius < 1 => "dot",
        _ => "other",
    };

    public static int Created => created;

    public static void Count(string kind)
    {
        lock (Counts)
        {
            Counts[kind] = Counts.TryGetValue(kind, out int n) ? n + 1 : 1;
        }
    }

    public static int CountOf(string kind) => Counts.TryGetValue(kind, out int n) ? n : 0;
}

public static class Queries
{
    public static List<int> EvenSquares(IEnumerable<int> xs) =>
        (from x in xs
         where x % 2 == 0
         select x * x).ToList();

    public static int Checked(int a, int b)
    {
        try
        {
            return checked(a * b);
        }
        catch (OverflowException)
        {
            return int.MaxValue;
        }
    }
}

public static class MoreAsync
{
    public static async Task<int> SumStream(int n)
    {
        int sum = 0;
        await foreach (int i in Asyncs.Stream(n))
        {
            sum += i;
        }
        return sum;
    }

    public static async Task<int> Disposing()
    {
        await using var res = new Resource();
        await Task.Yield();
        return res.Value;
    }

    public static async Task<int> WithLocal(int x)
    {
        return await Add(x) + await Add(1);

        async Task<int> Add(int v)
        {
            await Task.Yield();
            return v + 1;
        }
    }

    public static async Task<List<int>> Mapped(List<int> xs)
    {
        await Task.Yield();
        return xs.ConvertAll(x => x + 10);
    }

    private sealed class Resource : IAsyncDisposable
    {
        public int Value => 5;

        public ValueTask DisposeAsync() => ValueTask.CompletedTask;
    }
}

public static class Guarded
{
    public static IEnumerable<int> Counted(int n)
    {
        try
        {
            for (int i = 0; i < n; i++)
                yield return i;
        }
        finally
        {
            Finished++;
        }
    }

    public static int Finished { get; private set; }

    public static int Line() => throw new InvalidOperationException("from Line"); // (the line StackTraceLines expects)

    public static T Pick<T>(bool first, T a, T b) => first ? a : b;
}
