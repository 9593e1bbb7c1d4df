// ExprLoop: a program that compiles code in a loop for as long as it runs,
// as rule engines, serializers and query layers do: expression trees, each
// compiled under a name of its own (a DynamicMethod with a unique name),
// called, and dropped; and now and then a Regex compiled to IL from a new
// pattern.  Everything it compiles is collected again, so its own memory
// stays flat; a profiler that keeps something per compiled method, per
// name or per stack grows without end.  Prints what it did:
//   compiled 123456 expressions, 78 regexes, checksum 42
// Usage: ExprLoop [seconds] [expressions]   (stops at whichever comes first)
using System.Diagnostics;
using System.Globalization;
using System.Linq.Expressions;
using System.Runtime.CompilerServices;
using System.Text.RegularExpressions;

namespace ExprLoop;

static class Program
{
    [MethodImpl(MethodImplOptions.NoInlining)]
    static long CompileAndRun(long i)
    {
        var x = Expression.Parameter(typeof(long), "x");
        var body = Expression.Add(Expression.Multiply(x, Expression.Constant(i % 7 + 1)), Expression.Constant(i));
        var f = Expression.Lambda<Func<long, long>>(body, "expr_" + i.ToString(CultureInfo.InvariantCulture), new[] { x }).Compile();
        long acc = 0;
        for (long k = 0; k < 2000; k++)
            acc += f(k);
        return acc;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    static long CompileRegex(long i)
    {
        var re = new Regex("^a{" + (i % 50 + 1).ToString(CultureInfo.InvariantCulture) + "}b$", RegexOptions.Compiled);
        return re.IsMatch(new string('a', (int)(i % 50 + 1)) + "b") ? 1 : 0;
    }

    static int Main(string[] args)
    {
        double seconds = args.Length > 0 ? double.Parse(args[0], CultureInfo.InvariantCulture) : 5;
        long limit = args.Length > 1 ? long.Parse(args[1], CultureInfo.InvariantCulture) : long.MaxValue;
        var sw = Stopwatch.StartNew();
        long expressions = 0, regexes = 0, checksum = 0;
        while (sw.Elapsed.TotalSeconds < seconds && expressions < limit)
        {
            checksum += CompileAndRun(expressions++);
            if (expressions % 200 == 0)
                checksum += CompileRegex(regexes++);
            if (expressions % 2000 == 0)
                GC.Collect();
        }
        Console.WriteLine(string.Format(CultureInfo.InvariantCulture, "compiled {0} expressions, {1} regexes, checksum {2}",
            expressions, regexes, checksum & 0xffff));
        return 0;
    }
}
