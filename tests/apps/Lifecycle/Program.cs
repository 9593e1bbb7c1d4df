// Lifecycle: ends in a chosen way after burning CPU for a while, for the tests
// of recordings left by dying processes.
//   return         burn 1 s on the main thread, return 0
//   exit-thread    a worker burns 1 s then calls Environment.Exit(3) while main burns on
//   unhandled      a worker burns 1 s then throws an exception nobody catches
//   spin           print "ready" and burn until killed
// Usage: Lifecycle MODE
using System.Runtime.CompilerServices;

namespace Lifecycle;

static class Work
{
    static double sink;

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static void BurnFor(int ms)
    {
        long until = Environment.TickCount64 + ms;
        double x = sink;
        while (Environment.TickCount64 < until)
            for (int i = 0; i < 100_000; i++) x = x * 1.0000001 + 1e-9;
        sink = x;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static void ExitFromWorker() { BurnFor(1000); Environment.Exit(3); }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static void ThrowFromWorker() { BurnFor(1000); throw new InvalidOperationException("corscope test: unhandled on purpose"); }
}

static class Program
{
    static int Main(string[] args)
    {
        string mode = args.Length > 0 ? args[0] : "return";
        switch (mode)
        {
            case "return":
                Work.BurnFor(1000);
                return 0;
            case "exit-thread":
                new Thread(Work.ExitFromWorker) { Name = "exiter" }.Start();
                while (true) Work.BurnFor(100);
            case "unhandled":
                new Thread(Work.ThrowFromWorker) { Name = "thrower" }.Start();
                while (true) Work.BurnFor(100);
            case "spin":
                Console.WriteLine("ready");
                Console.Out.Flush();
                while (true) Work.BurnFor(100);
            default:
                Console.Error.WriteLine($"unknown mode {mode}");
                return 2;
        }
    }
}
