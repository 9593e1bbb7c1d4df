// WallClock: one thread sleeps (Sleeper.Nap, in Thread.Sleep), one burns CPU
// (Spinner.Spin), and main waits for both, for SECONDS. In wall-clock mode every
// thread is sampled whatever it does; in CPU mode only the spinner should count.
// Usage: WallClock [seconds]
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

static class Program
{
    static int Main(string[] args)
    {
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
