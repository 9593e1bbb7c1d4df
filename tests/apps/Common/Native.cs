// What the test programs measure about themselves, straight from the kernel:
// the calling thread's CPU time (CLOCK_THREAD_CPUTIME_ID) and the OS thread id.
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

    const int CLOCK_THREAD_CPUTIME_ID = 3;

    // CPU time of the calling thread, in nanoseconds.
    public static long ThreadCpuNs()
    {
        ClockGettime(CLOCK_THREAD_CPUTIME_ID, out var ts);
        return ts.Sec * 1_000_000_000L + ts.Nsec;
    }
}
