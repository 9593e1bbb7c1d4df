// WallClock: one thread sleeps (Sleeper.Nap, in Thread.Sleep), one burns CPU
// (Spinner.Spin), and main waits for both, for SECONDS. In wall-clock mode every
// thread is sampled whatever it does; in CPU mode only the spinner should count.
// Usage: WallClock [seconds]
//        WallClock parked SECONDS THREADS: THREADS threads (parked-00 ...) wait
//        on an event nobody sets, 16 calls deep in Parked.Down, for SECONDS,
//        while main sleeps: in wall mode each is sampled at every tick and,
//        having not run, never needs a signal after its first sample.
using System.Globalization;
using System.Runtime.CompilerServices;

namespace WallClock;

static class Sleeper
{
    [MethodImpl(MethodImplOptions.NoInlining)]
    public static void Nap(long until)
    {
        while (Environment.TickCount64 < until) Thread.Sleep(20);
    }
}

static class Spinner
{
    static double sink;

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static void Spin(long until)
    {
        double x = sink;
        while (Environment.TickCount64 < until)
            for (int i = 0; i < 100_000; i++) x = x * 1.0000001 + 1e-9;
        sink = x;
    }
}

static class Parked
{
    [MethodImpl(MethodImplOptions.NoInlining)]
    public static int Down(int depth, ManualResetEventSlim never, int ms)
    {
        if (depth > 0)
            return Down(depth - 1, never, ms) + 1;
        never.Wait(ms);
        return 0;
    }

    public static int Run(double seconds, int count)
    {
        using var never = new ManualResetEventSlim();
        int ms = (int)(seconds * 1000);
        var threads = new Thread[count];
        for (int i = 0; i < count; i++)
        {
            threads[i] = new Thread(() => Down(16, never, ms)) { Name = $"parked-{i:D2}" };
            threads[i].Start();
        }
        Thread.Sleep(ms);
        foreach (var t in threads) t.Join();
        Console.WriteLine("done");
        return 0;
    }
}

static class Program
{
    static int Main(string[] args)
    {
        if (args.Length > 0 && args[0] == "parked")
            return Parked.Run(double.Parse(args[1], CultureInfo.InvariantCulture),
                              int.Parse(args[2], CultureInfo.InvariantCulture));
        double seconds = args.Length > 0 ? double.Parse(args[0], CultureInfo.InvariantCulture) : 2.0;
        long until = Environment.TickCount64 + (long)(seconds * 1000);
        var sleeper = new Thread(() => Sleeper.Nap(until)) { Name = "sleeper" };
        var spinner = new Thread(() => Spinner.Spin(until)) { Name = "spinner" };
        sleeper.Start();
        spinner.Start();
        sleeper.Join();
        spinner.Join();
        Console.WriteLine("done");
        return 0;
    }
}
