// Aliasing: work that repeats with a fixed period of CPU time.  Each period
// spends its first part in Phase.A and the rest in Phase.B, both ending on
// the thread's own CPU clock, so when the period equals the profiler's
// sampling interval, a sampler that fires after exactly one interval of CPU
// time lands at the same phase every time and sees only one of the two.
// Prints the measured truth: each phase's share of the thread's CPU time.
// Usage: Aliasing PERIOD_US A_PERCENT CPU_MS
//
// Aliasing dodge BURST_US SECONDS: work in bursts that fall between the
// scheduler's ticks.  The thread finds the tick's phase (the coarse clock
// moves at each tick), then every tick sleeps until a sixteenth of a tick
// after it and spins BURST_US in Dodge.Burst (less than most of a tick), so
// it is asleep whenever a tick comes: a CPU timer checked at the tick never
// finds it running.  Then three ticks of CPU in Dodge.Settle, which a tick
// does find.  Prints "dodge burst_ms=... bursts=..." (the thread's CPU time
// in Dodge.Burst, measured by its own clock).
//
// Aliasing dodge BURST_US SECONDS PIECES: the same, each tick's work in
// PIECES bursts of BURST_US with a sleep of BURST_US between two (all of
// them before the next tick): a thread that switches often (4 pieces of
// 60 us: about 16,000 times a CPU-second) and that no tick finds running.
using System.Globalization;
using System.Runtime.CompilerServices;

static class Phase
{
    public static long Sink;

    // spins until the thread's CPU clock reaches `until` (ns)
    [MethodImpl(MethodImplOptions.NoInlining)]
    public static void A(long until)
    {
        long x = 1;
        while (Native.ThreadCpuNs() < until) x = x * 31 + 7;
        Sink += x;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static void B(long until)
    {
        long x = 3;
        while (Native.ThreadCpuNs() < until) x = x * 17 + 5;
        Sink += x;
    }
}

static class Dodge
{
    public static long Sink;

    // spins until CLOCK_MONOTONIC reaches `until` (ns)
    [MethodImpl(MethodImplOptions.NoInlining)]
    public static void Burst(long until)
    {
        long x = 5;
        while (Native.MonotonicNs() < until) x = x * 13 + 3;
        Sink += x;
    }

    public static int Run(long burstNs, long seconds, long pieces)
    {
        long tick = Native.TickNs();
        if (tick <= 0 || pieces < 1 || burstNs > tick / 2 || tick / 16 + (2 * pieces - 1) * burstNs >= tick)
        {
            Console.Error.WriteLine($"dodge: a {burstNs / 1000} us burst does not fit between {tick / 1000} us ticks");
            return 2;
        }
        Burst(Native.MonotonicNs() + 1_000_000); // compiled before the timed part
        // the tick's phase: the coarse clock just moved
        long c0 = Native.CoarseNs();
        while (Native.CoarseNs() == c0) { }
        long phase = Native.MonotonicNs();
        long end = phase + seconds * 1_000_000_000L, cpu = 0, bursts = 0;
        for (long k = 1; phase + k * tick < end; k++)
        {
            for (long i = 0; i < pieces; i++)
            {
                long start = phase + k * tick + tick / 16 + 2 * i * burstNs;
                Native.SleepUntil(start);
                long t0 = Native.ThreadCpuNs();
                Burst(start + burstNs);
                cpu += Native.ThreadCpuNs() - t0;
                bursts++;
            }
        }
        Settle(Native.ThreadCpuNs() + 3 * tick);
        Console.WriteLine(string.Format(CultureInfo.InvariantCulture,
            "dodge burst_ms={0:F1} bursts={1} tick_us={2}", cpu / 1e6, bursts, tick / 1000));
        return 0;
    }

    // The last act: three ticks of CPU in one run, so that a tick finds
    // the thread running and a POSIX timer's sample carries what the ticks
    // missed (the console's first use, relied on before, took less than a
    // tick in one run beside two CPU hogs: nothing was carried)
    [MethodImpl(MethodImplOptions.NoInlining)]
    static void Settle(long until)
    {
        long x = 7;
        while (Native.ThreadCpuNs() < until) x = x * 29 + 1;
        Sink += x;
    }
}

static class Program
{
    static int Main(string[] args)
    {
        if ((args.Length == 3 || args.Length == 4) && args[0] == "dodge")
            return Dodge.Run(long.Parse(args[1], CultureInfo.InvariantCulture) * 1000,
                             long.Parse(args[2], CultureInfo.InvariantCulture),
                             args.Length == 4 ? long.Parse(args[3], CultureInfo.InvariantCulture) : 1);
        long periodNs = long.Parse(args[0], CultureInfo.InvariantCulture) * 1000;
        long aNs = periodNs * long.Parse(args[1], CultureInfo.InvariantCulture) / 100;
        long cpuNs = long.Parse(args[2], CultureInfo.InvariantCulture) * 1_000_000;
        // warm up both phases (the JIT), then run on exact period boundaries
        Phase.A(Native.ThreadCpuNs() + 1_000_000);
        Phase.B(Native.ThreadCpuNs() + 1_000_000);
        long inA = 0, inB = 0;
        long start = Native.ThreadCpuNs(), end = start + cpuNs;
        for (long k = 0; start + k * periodNs < end; k++)
        {
            long t0 = Native.ThreadCpuNs();
            Phase.A(start + k * periodNs + aNs);
            long t1 = Native.ThreadCpuNs();
            Phase.B(start + (k + 1) * periodNs);
            long t2 = Native.ThreadCpuNs();
            inA += t1 - t0;
            inB += t2 - t1;
        }
        double all = inA + inB;
        Console.WriteLine(string.Format(CultureInfo.InvariantCulture,
            "truth A={0:F2} B={1:F2} cpu_ms={2}", 100 * inA / all, 100 * inB / all, (inA + inB) / 1_000_000));
        return 0;
    }
}
