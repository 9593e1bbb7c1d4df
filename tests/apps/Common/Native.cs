// What the test programs measure about themselves, straight from the kernel:
// the calling thread's CPU time (CLOCK_THREAD_CPUTIME_ID), its context
// switches (getrusage RUSAGE_THREAD) and the OS thread id.
// These are the "truth" the tests compare corscope's reports with.
using System.Runtime.InteropServices;

static class Native
{
    [StructLayout(LayoutKind.Sequential)]
    struct Timespec { public long Sec; public long Nsec; }

    [DllImport("libc", EntryPoint = "clock_gettime")]
    static extern int ClockGettime(int clock, out Timespec ts);

    [DllImport("libc", EntryPoint = "gettid")]
    public static extern int GetTid();

    [DllImport("libc", EntryPoint = "clock_getres")]
    static extern int ClockGetres(int clock, out Timespec ts);

    [DllImport("libc", EntryPoint = "clock_nanosleep")]
    static extern int ClockNanosleep(int clock, int flags, ref Timespec request, System.IntPtr remain);

    const int CLOCK_MONOTONIC = 1;
    const int CLOCK_THREAD_CPUTIME_ID = 3;
    const int CLOCK_MONOTONIC_COARSE = 6;
    const int TIMER_ABSTIME = 1;

    static long Ns(in Timespec ts) => ts.Sec * 1_000_000_000L + ts.Nsec;

    static long Now(int clock)
    {
        ClockGettime(clock, out var ts);
        return Ns(ts);
    }

    public static long MonotonicNs() => Now(CLOCK_MONOTONIC);

    // The coarse clock, which moves at the scheduler's tick, and its step
    // (the tick's period).
    public static long CoarseNs() => Now(CLOCK_MONOTONIC_COARSE);

    public static long TickNs()
    {
        ClockGetres(CLOCK_MONOTONIC_COARSE, out var ts);
        return Ns(ts);
    }

    // Sleeps until CLOCK_MONOTONIC reads `ns`.
    public static void SleepUntil(long ns)
    {
        var ts = new Timespec { Sec = ns / 1_000_000_000L, Nsec = ns % 1_000_000_000L };
        while (ClockNanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, ref ts, System.IntPtr.Zero) != 0) { }
    }

    // CPU time of the calling thread, in nanoseconds.
    public static long ThreadCpuNs() => Now(CLOCK_THREAD_CPUTIME_ID);

    // struct rusage: two timevals, then 14 longs of which ru_nvcsw and
    // ru_nivcsw are the last two (x86-64 and arm64 alike)
    [DllImport("libc", EntryPoint = "getrusage")]
    static extern int GetRusage(int who, [Out] long[] usage);

    const int RUSAGE_THREAD = 1;

    // Context switches of the calling thread, voluntary and involuntary.
    public static long ThreadSwitches()
    {
        var u = new long[18];
        return GetRusage(RUSAGE_THREAD, u) == 0 ? u[16] + u[17] : -1;
    }
}
