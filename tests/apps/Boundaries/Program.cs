// Boundaries: one family of managed<->native and managed<->runtime
// transitions per mode, each spending nearly all of its CPU in one known
// stack, so a test can assert the exact frame order of that stack:
//
//   uco       libc qsort calls an [UnmanagedCallersOnly] comparator through a
//             function pointer; it updates a static and calls a loop
//             (Main;Uco.Run;libc...;Uco.Compare;Uco.Spin)
//   delegate  the same through a delegate marshalled to a function pointer
//             (an IL stub for the reverse P/Invoke)
//   pinvoke   an inlined P/Invoke into a native leaf (libc memset)
//   ilstub    a P/Invoke that needs a marshalling IL stub (SetLastError)
//   alloc     small objects allocated and stored in an array (allocation
//             helpers, the GC, write barriers, StelemRef)
//   cast      interface casts and type checks (the runtime's cast helpers)
//   stubs     interface calls on a polymorphic site and static delegates
//             (virtual stub dispatch, precodes, shuffle thunks)
//   tailcall  explicit tail calls the JIT cannot make fast (tail-call helpers)
//   catch     a loop inside a catch block (a funclet run by the exception
//             dispatch)
//   finally   a loop inside a finally block run while an exception passes
//   filter    a loop inside an exception filter (first pass)
//   prolog    tiny methods called in a loop: samples land in prologues and
//             epilogues, and in a frame big enough for a stack probe
//   signal    a loop inside a signal handler written in C# (sigaction):
//             the walk goes through the kernel's signal frame
//   hijack    a recursion (code the runtime stops for a GC by hijacking a
//             return address) while another thread allocates: many GCs
//
// Each mode runs on its own thread named "b-MODE", one after the other,
// for the given milliseconds of that thread's CPU time.
// Usage: Boundaries MODE[,MODE...]|all [ms]
using System.Globalization;
using System.Reflection.Emit;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;

namespace Boundaries;

static class Util
{
    public static long Deadline;
    public static bool More() => Native.ThreadCpuNs() < Deadline;

    // the common leaf: an integer loop the JIT keeps as a loop
    [MethodImpl(MethodImplOptions.NoInlining)]
    public static int Spin(int v, int n)
    {
        int s = v;
        for (int i = 0; i < n; i++) s = s * 31 + i;
        return s;
    }
}

static unsafe class Uco
{
    [DllImport("libc", EntryPoint = "qsort")]
    static extern void QSort(void* items, nuint count, nuint size, delegate* unmanaged<void*, void*, int> compare);

    public static int Calls;

    [UnmanagedCallersOnly]
    static int Compare(void* a, void* b)
    {
        Calls++;
        return Spin(*(int*)a).CompareTo(Spin(*(int*)b));
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    static int Spin(int v)
    {
        int s = v;
        for (int i = 0; i < 300; i++) s = s * 31 + i;
        return s;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static void Run()
    {
        var data = new int[2000];
        var rng = new Random(1);
        while (Util.More())
        {
            for (int i = 0; i < data.Length; i++) data[i] = rng.Next();
            fixed (int* p = data)
                QSort(p, (nuint)data.Length, sizeof(int), &Compare);
        }
    }
}

static unsafe class Delegates
{
    [UnmanagedFunctionPointer(CallingConvention.Cdecl)]
    delegate int Comparer(IntPtr a, IntPtr b);

    [DllImport("libc", EntryPoint = "qsort")]
    static extern void QSort(void* items, nuint count, nuint size, IntPtr compare);

    static int Compare(IntPtr a, IntPtr b) => Spin(*(int*)a).CompareTo(Spin(*(int*)b));

    [MethodImpl(MethodImplOptions.NoInlining)]
    static int Spin(int v)
    {
        int s = v;
        for (int i = 0; i < 300; i++) s = s * 31 + i;
        return s;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static void Run()
    {
        Comparer keep = Compare;
        IntPtr fn = Marshal.GetFunctionPointerForDelegate(keep);
        var data = new int[2000];
        var rng = new Random(2);
        while (Util.More())
        {
            for (int i = 0; i < data.Length; i++) data[i] = rng.Next();
            fixed (int* p = data)
                QSort(p, (nuint)data.Length, sizeof(int), fn);
        }
        GC.KeepAlive(keep);
    }
}

static unsafe class PInvoke
{
    [DllImport("libc", EntryPoint = "memset")]
    static extern void* MemSet(void* dst, int c, nuint n);

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static void Run()
    {
        var buf = new byte[256 * 1024];
        int k = 0;
        while (Util.More())
        {
            fixed (byte* p = buf)
                for (int i = 0; i < 100; i++) MemSet(p, k++, (nuint)buf.Length);
        }
    }
}

static unsafe class IlStub
{
    [DllImport("libc", EntryPoint = "memset", SetLastError = true)]
    static extern void* MemSet(void* dst, int c, nuint n);

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static void Run()
    {
        var buf = new byte[256 * 1024];
        int k = 0;
        while (Util.More())
        {
            fixed (byte* p = buf)
                for (int i = 0; i < 100; i++) MemSet(p, k++, (nuint)buf.Length);
        }
    }
}

sealed class Node
{
    public Node? Next;
    public long Value;
}

static class Alloc
{
    public static Node?[] Keep = new Node?[4096];

    [MethodImpl(MethodImplOptions.NoInlining)]
    static void Make(int n)
    {
        var keep = Keep;
        for (int i = 0; i < n; i++)
        {
            var node = new Node { Value = i, Next = keep[(i + 1) & 4095] };
            keep[i & 4095] = node;
        }
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static void Run()
    {
        while (Util.More()) Make(10000);
    }
}

interface IShape { int Sides { get; } }
sealed class Tri : IShape { public int Sides => 3; }
sealed class Quad : IShape { public int Sides => 4; }
sealed class Penta : IShape { public int Sides => 5; }
sealed class Plain { public int X = 1; }

static class Cast
{
    [MethodImpl(MethodImplOptions.NoInlining)]
    static long Work(object[] items)
    {
        long sum = 0;
        for (int i = 0; i < items.Length; i++)
        {
            object o = items[i];
            if (o is IShape s) sum += s.Sides;
            else sum += ((Plain)o).X;
        }
        return sum;
    }

    public static long Sink;

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static void Run()
    {
        var items = new object[1024];
        for (int i = 0; i < items.Length; i++)
            items[i] = (i % 4) switch { 0 => new Tri(), 1 => new Quad(), 2 => new Penta(), _ => new Plain() };
        while (Util.More())
            for (int r = 0; r < 100; r++) Sink += Work(items);
    }
}

static class Stubs
{
    static int Twice(int x) => x * 2;
    static int Thrice(int x) => x * 3;

    [MethodImpl(MethodImplOptions.NoInlining)]
    static long Work(IShape[] shapes, Func<int, int>[] fns)
    {
        long sum = 0;
        for (int i = 0; i < shapes.Length; i++)
            sum += fns[i & 1](shapes[i].Sides);
        return sum;
    }

    public static long Sink;

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static void Run()
    {
        var shapes = new IShape[1024];
        for (int i = 0; i < shapes.Length; i++)
            shapes[i] = (i % 3) switch { 0 => new Tri(), 1 => new Quad(), _ => new Penta() };
        var fns = new Func<int, int>[] { Twice, Thrice };
        while (Util.More())
            for (int r = 0; r < 100; r++) Sink += Work(shapes, fns);
    }
}

static class TailCall
{
    // more stack arguments than its caller has: the JIT cannot jump to it
    // directly, so `tail.` goes through the runtime's tail-call helpers
    public static long Target(long a, long b, long c, long d, long e, long f, long g, long h, long i, long j)
        => Util.Spin((int)(a + j), 2000);

    static Func<long, long> MakeCaller()
    {
        var dm = new DynamicMethod("TailCaller", typeof(long), new[] { typeof(long) }, typeof(TailCall).Module);
        var il = dm.GetILGenerator();
        for (int k = 0; k < 10; k++) il.Emit(OpCodes.Ldarg_0);
        il.Emit(OpCodes.Tailcall);
        il.Emit(OpCodes.Call, typeof(TailCall).GetMethod(nameof(Target))!);
        il.Emit(OpCodes.Ret);
        return dm.CreateDelegate<Func<long, long>>();
    }

    public static long Sink;

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static void Run()
    {
        var caller = MakeCaller();
        while (Util.More())
            for (int r = 0; r < 100; r++) Sink += caller(r);
    }
}

sealed class Boom : Exception { }

static class Funclets
{
    public static long Sink;
    static readonly Boom boom = new Boom();

    [MethodImpl(MethodImplOptions.NoInlining)]
    static void Throw() => throw boom;

    [MethodImpl(MethodImplOptions.NoInlining)]
    static void InCatch()
    {
        try { Throw(); }
        catch (Boom) { Sink += Util.Spin((int)Sink, 300000); }
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    static void InFinally()
    {
        try { Throw(); }
        finally { Sink += Util.Spin((int)Sink, 300000); }
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    static bool Filter() { Sink += Util.Spin((int)Sink, 300000); return true; }

    [MethodImpl(MethodImplOptions.NoInlining)]
    static void InFilter()
    {
        try { Throw(); }
        catch (Boom) when (Filter()) { Sink++; }
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static void RunCatch() { while (Util.More()) InCatch(); }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static void RunFinally()
    {
        while (Util.More())
        {
            try { InFinally(); }
            catch (Boom) { Sink++; }
        }
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static void RunFilter() { while (Util.More()) InFilter(); }
}

[StructLayout(LayoutKind.Sequential, Size = 6000)]
struct Big { public long First; }

static class Prolog
{
    public static long Sink;

    // no calls, many live values: callee-saved registers pushed, no frame
    // pointer
    [MethodImpl(MethodImplOptions.NoInlining)]
    static long Pushy(long a, long b)
    {
        long c = a ^ b, d = a + b, e = a - b, f = a * 3, g = b * 5, h = a | b;
        for (int i = 0; i < 4; i++) { c += d * e; d ^= f + g; e += h; f -= c; g ^= d; h += e; }
        return c + d + e + f + g + h;
    }

    // a frame above a page: the prologue calls the stack probe helper
    [MethodImpl(MethodImplOptions.NoInlining)]
    static long Probed(long a)
    {
        Big big = default;
        big.First = a;
        Consume(ref big);
        return big.First;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    static void Consume(ref Big b) => b.First++;

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static void Run()
    {
        long s = 0;
        while (Util.More())
            for (int i = 0; i < 10000; i++) s += Pushy(s, i) + Probed(i);
        Sink = s;
    }
}

static unsafe class Signals
{
    [StructLayout(LayoutKind.Sequential)]
    struct SigAction
    {
        public IntPtr Handler;
        public ulong Mask0, Mask1, Mask2, Mask3, Mask4, Mask5, Mask6, Mask7,
            Mask8, Mask9, Mask10, Mask11, Mask12, Mask13, Mask14, Mask15;
        public int Flags;
        public IntPtr Restorer;
    }

    [DllImport("libc", EntryPoint = "sigaction")]
    static extern int SigActionCall(int sig, SigAction* act, SigAction* old);
    [DllImport("libc", EntryPoint = "raise")]
    static extern int Raise(int sig);

    const int SIGUSR2 = 12;
    public static long Sink;

    [UnmanagedCallersOnly]
    static void Handler(int sig) => Sink += Util.Spin(sig, 200000);

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static void Run()
    {
        SigAction act = default;
        act.Handler = (IntPtr)(delegate* unmanaged<int, void>)&Handler;
        act.Flags = 0x10000000; // SA_RESTART
        if (SigActionCall(SIGUSR2, &act, null) != 0)
            throw new InvalidOperationException("sigaction failed");
        while (Util.More()) Raise(SIGUSR2);
    }
}

static class Hijack
{
    public static object? Sink;
    public static long Total;
    static volatile bool stop;

    // recursion, no loop: partially interruptible code, whose threads the
    // runtime stops for a GC by hijacking a return address
    [MethodImpl(MethodImplOptions.NoInlining)]
    static long Fib(int n) => n < 2 ? n : Fib(n - 1) + Fib(n - 2);

    [MethodImpl(MethodImplOptions.NoInlining)]
    static long Compute()
    {
        long t = 0;
        for (int i = 0; i < 10; i++) t += Fib(20);
        return t;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    static void Churn()
    {
        while (!stop) Sink = new byte[1024];
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static void Run()
    {
        var churn = new Thread(Churn) { Name = "b-hijack-alloc" };
        churn.Start();
        long t = 0;
        while (Util.More()) t += Compute();
        stop = true;
        churn.Join();
        Total = t;
    }
}

static class Program
{
    static readonly (string Name, Action Run)[] Modes =
    {
        ("uco", Uco.Run), ("delegate", Delegates.Run), ("pinvoke", PInvoke.Run),
        ("ilstub", IlStub.Run), ("alloc", Alloc.Run), ("cast", Cast.Run), ("stubs", Stubs.Run),
        ("tailcall", TailCall.Run), ("catch", Funclets.RunCatch), ("finally", Funclets.RunFinally),
        ("filter", Funclets.RunFilter), ("prolog", Prolog.Run), ("signal", Signals.Run),
        ("hijack", Hijack.Run),
    };

    static int Main(string[] args)
    {
        string which = args.Length > 0 ? args[0] : "all";
        long ms = args.Length > 1 ? long.Parse(args[1], CultureInfo.InvariantCulture) : 400;
        var chosen = which == "all" ? Modes.Select(m => m.Name).ToArray() : which.Split(',');
        foreach (var name in chosen)
        {
            var mode = Modes.FirstOrDefault(m => m.Name == name);
            if (mode.Run == null)
            {
                Console.Error.WriteLine($"unknown mode {name}");
                return 2;
            }
            var t = new Thread(() =>
            {
                Util.Deadline = Native.ThreadCpuNs() + ms * 1_000_000;
                mode.Run();
            }) { Name = "b-" + name };
            t.Start();
            t.Join();
            Console.WriteLine($"{name} done");
        }
        return 0;
    }
}
