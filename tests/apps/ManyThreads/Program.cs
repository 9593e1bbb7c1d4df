// ManyThreads: N named threads (worker-00 ...) burn CPU in Spin.Burn for SECONDS
// of wall time, all at once, then report the CPU time each really used:
//   thread worker-03 tid 12345 cpu_ms 812.4
// Usage: ManyThreads [threads] [seconds]
using System.Globalization;
using System.Runtime.CompilerServices;

namespace ManyThreads;

static class Spin
{
    [MethodImpl(MethodImplOptions.NoInlining)]
    public static double Burn(long until)
    {
        double x = 1;
        while (Environment.TickCount64 < until)
            for (int i = 0; i < 100_000; i++) x = x * 1.0000001 + 1e-9;
        return x;
    }
}

static class Program
{
    static int Main(string[] args)
    {
        int count = args.Length > 0 ? int.Parse(args[0], CultureInfo.InvariantCulture) : 16;
        double seconds = args.Length > 1 ? double.Parse(args[1], CultureInfo.InvariantCulture) : 2.0;
        var cpuMs = new double[count];
        var tids = new int[count];
        using var start = new ManualResetEventSlim();
        var threads = new Thread[count];
        long until = 0;
        for (int i = 0; i < count; i++)
        {
            int k = i;
            threads[i] = new Thread(() =>
            {
                tids[k] = Native.GetTid();
                start.Wait();
                long c0 = Native.ThreadCpuNs();
                Spin.Burn(Volatile.Read(ref until));
                cpuMs[k] = (Native.ThreadCpuNs() - c0) / 1e6;
            }) { Name = $"worker-{i:D2}" };
            threads[i].Start();
        }
        Volatile.Write(ref until, Environment.TickCount64 + (long)(seconds * 1000));
        start.Set();
        foreach (var t in threads) t.Join();
        for (int i = 0; i < count; i++)
            Console.WriteLine(string.Format(CultureInfo.InvariantCulture, "thread worker-{0:D2} tid {1} cpu_ms {2:F1}", i, tids[i], cpuMs[i]));
        return 0;
    }
}
