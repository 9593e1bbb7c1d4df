// AllocBench: allocation-heavy work of the ordinary kind, for the memory
// overhead benchmark (bench/memory.sh): each unit builds a line of text,
// splits it into words, counts them in a dictionary, formats a summary and
// keeps one result in fifty in a bounded cache (the last KEEP of them), so
// that collections of every generation happen.  Prints the work's wall time,
// its thread's CPU time (what the work cost the thread, whatever else the
// machine runs: the allocation callbacks run on it, and so do the
// collections it triggers), the bytes allocated and the collections per
// generation:
//   allocbench ms 1234.5 cpu_ms 1200.3 allocated 2147483648 gcs 812 40 3
// Usage: AllocBench [units] [keep]
using System.Diagnostics;
using System.Globalization;
using System.Runtime.CompilerServices;
using System.Text;

namespace AllocBench;

static class Work
{
    static readonly string[] Vocabulary =
        "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma tau upsilon phi chi psi omega".Split(' ');

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static string Unit(int seed)
    {
        var line = new StringBuilder();
        for (int i = 0; i < 40; i++)
            line.Append(Vocabulary[(seed * 31 + i * 7) % Vocabulary.Length]).Append(' ');
        string[] words = line.ToString().Split(' ', StringSplitOptions.RemoveEmptyEntries);
        var counts = new Dictionary<string, int>();
        foreach (var w in words)
            counts[w] = counts.TryGetValue(w, out int n) ? n + 1 : 1;
        var top = counts.OrderByDescending(kv => kv.Value).Take(3).Select(kv => $"{kv.Key}={kv.Value}");
        return string.Join(",", top) + $" #{seed}";
    }
}

static class Program
{
    static int Main(string[] args)
    {
        int units = args.Length > 0 ? int.Parse(args[0], CultureInfo.InvariantCulture) : 200_000;
        int keep = args.Length > 1 ? int.Parse(args[1], CultureInfo.InvariantCulture) : 20_000;
        var cache = new Queue<string>();
        long before = GC.GetTotalAllocatedBytes(true);
        int g0 = GC.CollectionCount(0), g1 = GC.CollectionCount(1), g2 = GC.CollectionCount(2);
        long cpu0 = Native.ThreadCpuNs();
        var sw = Stopwatch.StartNew();
        long sum = 0;
        for (int u = 0; u < units; u++)
        {
            string r = Work.Unit(u);
            sum += r.Length;
            if (u % 50 == 0)
            {
                cache.Enqueue(r);
                if (cache.Count > keep) cache.Dequeue();
            }
        }
        sw.Stop();
        double cpuMs = (Native.ThreadCpuNs() - cpu0) / 1e6;
        long allocated = GC.GetTotalAllocatedBytes(true) - before;
        Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"allocbench ms {sw.Elapsed.TotalMilliseconds:F1} cpu_ms {cpuMs:F1} allocated {allocated} gcs {GC.CollectionCount(0) - g0} {GC.CollectionCount(1) - g1} {GC.CollectionCount(2) - g2} sum {sum}"));
        return 0;
    }
}
