// DeepRecursion: descends DEPTH calls of Recursion.Descend, then burns CPU in
// Recursion.Leaf at the bottom, again and again for SECONDS. Every sample of the
// leaf must show all DEPTH Descend frames between Main and Leaf.
// Usage: DeepRecursion [depth] [seconds]
using System.Globalization;
using System.Runtime.CompilerServices;

namespace DeepRecursion;

static class Recursion
{
    static double sink;

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static double Descend(int depth, long work)
    {
        if (depth == 0)
            return Leaf(work);
        return Descend(depth - 1, work) + 1; // not a tail call: the frame stays
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    static double Leaf(long work)
    {
        double x = sink;
        for (long i = 0; i < work; i++) x = x * 1.0000001 + 1e-9;
        sink = x;
        return x;
    }
}

static class Program
{
    static int Main(string[] args)
    {
        int depth = args.Length > 0 ? int.Parse(args[0], CultureInfo.InvariantCulture) : 1000;
        double seconds = args.Length > 1 ? double.Parse(args[1], CultureInfo.InvariantCulture) : 2.0;
        long until = Environment.TickCount64 + (long)(seconds * 1000);
        double total = 0;
        while (Environment.TickCount64 < until)
            total += Recursion.Descend(depth, 2_000_000);
        Console.WriteLine($"depth {depth} done {(total > 0 ? "yes" : "no")}");
        return 0;
    }
}
