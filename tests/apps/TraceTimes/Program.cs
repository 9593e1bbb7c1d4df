// TraceTimes: methods whose times the program measures itself (Stopwatch),
// for the truth test of tracing's times (tests/e2e/t_trace_times.sh): does
// `report -f calls` give inclusive and self times within 10% of what the
// program measured, once the tracer's own cost is taken out, even for a
// method that makes many small traced calls?
//
// Usage: TraceTimes [ROUNDS] [CALLS] [SPIN_US]
// Each round Outer.Round spins SPIN_US by its own Stopwatch (its self time),
// makes CALLS calls of Small.Unit itself and calls Many.Run, which makes
// CALLS calls of Small.Unit.  Small.Unit does about 1 us of arithmetic
// between two readings of the clock.  Every time is measured where it is
// spent, so that a busy machine's preemptions land in the measured time
// and in the traced time alike; a reading of the clock costs the method
// about one reading more than what lies between its two (measured at start
// and added).  It prints the totals it measured (ns), which the test
// compares with the report:
//   Small.Unit   inclusive = self = unit_ns, calls = unit_calls
//   Many.Run     inclusive = many_ns (its units), self about 0
//   Outer.Round  self = spin_ns, inclusive = spin_ns + unit_ns
using System.Diagnostics;
using System.Globalization;
using System.Runtime.CompilerServices;

namespace TraceTimesApp;

static class Clock
{
    public static long ReadTicks; // what one reading of the clock costs, ticks

    public static void Measure()
    {
        var costs = new List<double>();
        for (int r = 0; r < 21; r++)
        {
            long t0 = Stopwatch.GetTimestamp(), t = t0;
            for (int i = 0; i < 1000; i++) t = Stopwatch.GetTimestamp();
            costs.Add((t - t0) / 1000.0);
        }
        costs.Sort();
        ReadTicks = (long)Math.Round(costs[costs.Count / 2]);
    }
}

static class Small
{
    public static long Ticks;

    // about 1 us of dependent multiplications, timed: a small method, called a lot
    [MethodImpl(MethodImplOptions.NoInlining | MethodImplOptions.AggressiveOptimization)]
    public static ulong Unit(ulong x)
    {
        long t0 = Stopwatch.GetTimestamp();
        for (int i = 0; i < 400; i++)
            x = (x ^ (x >> 29)) * 0xBF58476D1CE4E5B9UL;
        Ticks += Stopwatch.GetTimestamp() - t0 + Clock.ReadTicks;
        return x;
    }
}

static class Many
{
    public static long Ticks;

    [MethodImpl(MethodImplOptions.NoInlining | MethodImplOptions.AggressiveOptimization)]
    public static ulong Run(ulong x, int calls)
    {
        long before = Small.Ticks;
        for (int k = 0; k < calls; k++)
            x = Small.Unit(x);
        Ticks += Small.Ticks - before;
        return x;
    }
}

static class Outer
{
    public static long SpinTicks;

    [MethodImpl(MethodImplOptions.NoInlining | MethodImplOptions.AggressiveOptimization)]
    public static ulong Round(ulong x, int calls, long spin)
    {
        long t0 = Stopwatch.GetTimestamp(), now;
        do now = Stopwatch.GetTimestamp(); while (now - t0 < spin);
        SpinTicks += now - t0 + Clock.ReadTicks;
        for (int k = 0; k < calls; k++)
            x = Small.Unit(x);
        return Many.Run(x, calls);
    }
}

static class Program
{
    static double Ns(long ticks) => ticks * 1e9 / Stopwatch.Frequency;

    static void Main(string[] args)
    {
        int rounds = args.Length > 0 ? int.Parse(args[0], CultureInfo.InvariantCulture) : 10000;
        int calls = args.Length > 1 ? int.Parse(args[1], CultureInfo.InvariantCulture) : 50;
        double spinUs = args.Length > 2 ? double.Parse(args[2], CultureInfo.InvariantCulture) : 15;
        long spin = (long)(spinUs * 1e-6 * Stopwatch.Frequency);
        Clock.Measure();
        for (int r = 0; r < rounds; r++)
            Outer.Round((ulong)r, calls, spin);
        Console.WriteLine(string.Format(CultureInfo.InvariantCulture,
            "times: rounds {0} calls {1} unit_calls {2} unit_ns {3:F0} many_ns {4:F0} spin_ns {5:F0} clock_read_ns {6:F1}",
            rounds, calls, 2L * calls * rounds, Ns(Small.Ticks), Ns(Many.Ticks), Ns(Outer.SpinTicks),
            Ns(Clock.ReadTicks)));
    }
}
