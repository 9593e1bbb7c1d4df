using System.Diagnostics.CodeAnalysis;

namespace CoverLib;

public static class Branches
{
    public static string Sign(int x)
    {
        if (x > 0)
        {
            return "positive";
        }
        else if (x < 0)
        {
            return "negative";
        }
        return "zero";
    }

    public static int OnlyIf(int x)
    {
        int y = x;
        if (x > 100)
            y = 100;
        return y;
    }

    public static string Day(int d)
    {
        switch (d)
        {
            case 0: return "sun";
            case 1: return "mon";
            case 2: return "tue";
            case 3: return "wed";
            case 4: return "thu";
            case 5: return "fri";
            case 6: return "sat";
            default: return "?";
        }
    }

    public static string Size(int n) => n switch
    {
        < 10 => "small",
        < 100 => "medium",
        _ => "large",
    };

    public static int Ternary(bool b) => b ? 1 : 2;

    public static int? Length(string? s) => s?.Length;

    public static string Kind(object o)
    {
        if (o is int i && i > 5)
            return "big int";
        if (o is string)
            return "string";
        return "other";
    }
}

public static class Loops
{
    public static int SumFor(int n)
    {
        int s = 0;
        for (int i = 0; i < n; i++)
            s += i;
        return s;
    }

    public static int SumForeach(List<int> items)
    {
        int s = 0;
        foreach (int i in items)
        {
            s += i;
        }
        return s;
    }

    public static int CountDown(int n)
    {
        int steps = 0;
        while (n > 0)
        {
            n--;
            steps++;
        }
        do
        {
            steps++;
        } while (steps < 3);
        return steps;
    }
}

public static class Errors
{
    public static int Parse(string s)
    {
        try
        {
            return int.Parse(s);
        }
        catch (FormatException)
        {
            return -1;
        }
        finally
        {
            Calls++;
        }
    }

    public static int Calls { get; private set; }

    public static void Throw(bool yes)
    {
        if (yes)
            throw new InvalidOperationException("asked to");
    }

    public static string Filtered(int code)
    {
        try
        {
            throw new ArgumentException("code", code.ToString());
        }
        catch (ArgumentException e) when (e.ParamName == "1")
        {
            return "one";
        }
        catch (ArgumentException)
        {
            return "another code";
        }
    }

    public static int Using(string text)
    {
        using var reader = new StringReader(text);
        int lines = 0;
        while (reader.ReadLine() != null)
            lines++;
        return lines;
    }
}

public static class Asyncs
{
    public static async Task<int> Twice(int x)
    {
        await Task.Yield();
        int y = x * 2;
        if (y > 10)
        {
            await Task.Delay(1);
            return y - 1;
        }
        return y;
    }

    public static async Task<string> Catching(bool fail)
    {
        try
        {
            await Task.Yield();
            if (fail)
                throw new InvalidOperationException("async");
            return "ok";
        }
        catch (InvalidOperationException)
        {
            return "caught";
        }
    }

    public static async IAsyncEnumerable<int> Stream(int n)
    {
        for (int i = 0; i < n; i++)
        {
            await Task.Yield();
            yield return i;
        }
    }
}

public static class Iterators
{
    public static IEnumerable<int> Evens(int max)
    {
        for (int i = 0; i <= max; i++)
        {
            if (i % 2 == 0)
                yield return i;
        }
    }

    public static IEnumerable<string> Never()
    {
        yield return "never";
    }
}

public static class Lambdas
{
    public static int CountBig(IEnumerable<int> xs, int limit)
    {
        return xs.Count(x => x > limit);
    }

    public static List<int> Doubled(List<int> xs) => xs.Select(x =>
    {
        int d = x * 2;
        return d;
    }).ToList();

    public static int Local(int n)
    {
        return Square(n) + Square(n + 1);

        static int Square(int v)
        {
            return v * v;
        }
    }

    public static Func<int, int> Adder(int k) => v => v + k;

    public static int Unused(int x)
    {
        Func<int, int> f = v => v * x;
        return f(3);
    }
}

public class Box<T> where T : IComparable<T>
{
    private readonly List<T> items = new();

    public int Count => items.Count;

    public string Name { get; set; } = "box";

    public void Add(T item)
    {
        items.Add(item);
    }

    public T Max()
    {
        if (items.Count == 0)
            throw new InvalidOperationException("empty");
        T best = items[0];
        foreach (T item in items)
        {
            if (item.CompareTo(best) > 0)
                best = item;
        }
        return best;
    }
}

public class Account
{
    private decimal balance;

    public decimal Balance
    {
        get { return balance; }
        private set
        {
            if (value < 0)
                throw new ArgumentOutOfRangeException(nameof(value));
            balance = value;
        }
    }

    public void Deposit(decimal amount) => Balance += amount;

    public bool TryWithdraw(decimal amount)
    {
        if (amount > balance)
            return false;
        Balance -= amount;
        return true;
    }
}

[ExcludeFromCodeCoverage]
public static class Excluded
{
    public static int Hidden(int x)
    {
        if (x > 0)
            return x;
        return -x;
    }
}

public static class PartlyExcluded
{
    public static int Kept(int x) => x + 1;

    [ExcludeFromCodeCoverage]
    public static int Dropped(int x)
    {
        Func<int, int> f = v => v - x;
        return f(x);
    }
}

public static class Busy
{
    // a CPU-bound loop for the early-kill test: runs until killed
    public static long Spin(long n)
    {
        long acc = 0;
        for (long i = 0; i < n; i++)
            acc += i % 7;
        return acc;
    }

    public static int AfterSpin() => 42;
}
