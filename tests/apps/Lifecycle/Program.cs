// Lifecycle: ends in a chosen way after burning CPU for a while, for the tests
// of recordings left by dying processes.
//   return         burn 1 s on the main thread, return 0
//   exit-thread    a worker burns 1 s then calls Environment.Exit(3) while main burns on
//   unhandled      a worker burns 1 s then throws an exception nobody catches
//   unhandled-main the main thread burns 1 s then throws an exception nobody catches
//   raise          burns 0.5 s, raises AppDomain.UnhandledException by hand
//                  (ExceptionHandling.RaiseAppDomainUnhandledExceptionEvent, .NET 10 and
//                  later, by reflection: "raise absent" before), burns 0.5 s more, returns 0
//   typeinit       a worker burns 1 s then touches a class whose static constructor
//                  throws: the runtime catches that itself, and the caller catches the
//                  TypeInitializationException; returns 0
//   crash          a worker burns 1 s then crashes in native code (strlen(NULL))
//   abort          a worker burns 1 s then calls the C library's abort()
//   spin           print "ready" and burn until killed
//   graceful       as spin, but SIGTERM is handled as ASP.NET Core's host does
//                  (PosixSignalRegistration, cancelled): Main returns 0
// The modes that end the process from a worker first print the worker's CPU
// time on stderr ("worker_cpu_ms 1000.2"), the truth of what a recording
// keeps up to the end.  Their worker sleeps 100 ms before it burns: the
// agent's loop arms a new thread's CPU clock after the runtime announces
// it, which on a machine busier than its cores can wait tens of ms for a
// core, and CPU used before that is in the truth but no clock could see it
// (the likely cause of one t_lifecycle run on .NET 8 beside two CPU hogs
// keeping 53 ms less than the truth, in one of some 30); these tests are
// of the recording's end, not of a thread's first moments.
// Usage: Lifecycle MODE
using System.Globalization;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;

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

    [DllImport("libc", EntryPoint = "strlen")]
    static extern nint StrLen(nint s);

    [DllImport("libc", EntryPoint = "abort")]
    static extern void Abort();

    // (see the top: before the CPU the recording must keep)
    static void LetTheClockArm() => Thread.Sleep(100);

    static void SayCpu() =>
        Console.Error.WriteLine(string.Format(CultureInfo.InvariantCulture, "worker_cpu_ms {0:F1}", Native.ThreadCpuNs() / 1e6));

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static void ThrowFromWorker() { LetTheClockArm(); BurnFor(1000); SayCpu(); throw new InvalidOperationException("corscope test: unhandled on purpose"); }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static void ThrowFromMain() { BurnFor(1000); SayCpu(); throw new ArgumentException("corscope test: unhandled on main"); }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static int TouchBrokenType()
    {
        BurnFor(1000);
        try { return Broken.Value; }
        catch (TypeInitializationException) { return -1; }
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static void CrashFromWorker() { LetTheClockArm(); BurnFor(1000); SayCpu(); StrLen(0); }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static void AbortFromWorker() { LetTheClockArm(); BurnFor(1000); SayCpu(); Abort(); }
}

static class Broken
{
    public static readonly int Value = Fail();
    static int Fail() => throw new InvalidOperationException("corscope test: a static constructor's");
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
            case "unhandled-main":
                Work.ThrowFromMain();
                return 1;
            case "raise":
                {
                    Work.BurnFor(500);
                    var raise = Type.GetType("System.Runtime.ExceptionServices.ExceptionHandling")
                        ?.GetMethod("RaiseAppDomainUnhandledExceptionEvent");
                    raise?.Invoke(null, new object[] { new InvalidOperationException("corscope test: raised by hand") });
                    Console.WriteLine(raise == null ? "raise absent" : "raised");
                    Work.BurnFor(500);
                    return 0;
                }
            case "typeinit":
                {
                    int got = 0;
                    var t = new Thread(() => got = Work.TouchBrokenType()) { Name = "typeinit" };
                    t.Start();
                    t.Join();
                    Console.WriteLine($"typeinit {got}");
                    return got == -1 ? 0 : 1;
                }
            case "crash":
                new Thread(Work.CrashFromWorker) { Name = "crasher" }.Start();
                while (true) Work.BurnFor(100);
            case "abort":
                new Thread(Work.AbortFromWorker) { Name = "aborter" }.Start();
                while (true) Work.BurnFor(100);
            case "graceful":
                {
                    bool stop = false;
                    using var term = PosixSignalRegistration.Create(PosixSignal.SIGTERM, ctx => { ctx.Cancel = true; Volatile.Write(ref stop, true); });
                    Console.WriteLine("ready");
                    Console.Out.Flush();
                    while (!Volatile.Read(ref stop)) Work.BurnFor(100);
                    Console.WriteLine("stopped");
                    return 0;
                }
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
