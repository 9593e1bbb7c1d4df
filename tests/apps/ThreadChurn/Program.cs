// ThreadChurn: thousands of threads created and destroyed while the profiler
// samples: waves of short-lived threads, each doing a little CPU work, some
// named, some not, some ending while others start. Prints a deterministic
// checksum of their work, so runs with and without the profiler compare.
// With a TRUTH file, writes there what it measured itself: the CPU time
// spent in Work (each thread's own clock) and the process's CPU time.
// Usage: ThreadChurn [threads] [wave] [TRUTH]
using System.Globalization;
using System.Runtime.CompilerServices;

namespace ThreadChurn;

static class Program
{
    [MethodImpl(MethodImplOptions.NoInlining)]
    static long Work(int seed)
    {
        long x = seed;
        for (int i = 0; i < 400_000; i++) x = x * 6364136223846793005L + 1442695040888963407L;
        return x & 0xffff;
    }

    static int Main(string[] args)
    {
        int total = args.Length > 0 ? int.Parse(args[0], CultureInfo.InvariantCulture) : 3000;
        int wave = args.Length > 1 ? int.Parse(args[1], CultureInfo.InvariantCulture) : 64;
        var results = new long[total];
        long workNs = 0;
        for (int start = 0; start < total; start += wave)
        {
            int end = Math.Min(total, start + wave);
            var threads = new Thread[end - start];
            for (int i = start; i < end; i++)
            {
                int k = i;
                threads[i - start] = new Thread(() =>
                {
                    long t0 = Native.ThreadCpuNs();
                    results[k] = Work(k);
                    Interlocked.Add(ref workNs, Native.ThreadCpuNs() - t0);
                });
                if (k % 3 == 0) threads[i - start].Name = $"churn-{k}";
                threads[i - start].Start();
            }
            foreach (var t in threads) t.Join();
        }
        long sum = 0;
        foreach (long r in results) sum += r;
        Console.WriteLine(string.Format(CultureInfo.InvariantCulture, "threads {0} sum {1}", total, sum));
        if (args.Length > 2)
            File.WriteAllText(args[2], string.Format(CultureInfo.InvariantCulture, "work_ns {0}\nprocess_ns {1}\n",
                workNs, (long)(System.Diagnostics.Process.GetCurrentProcess().TotalProcessorTime.TotalMilliseconds * 1e6)));
        return 0;
    }
}
