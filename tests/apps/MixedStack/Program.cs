// MixedStack: managed code calls into native code that calls back into
// managed code. Sorter.Sort hands an array to the C library's qsort with a
// comparator written in C# (an UnmanagedCallersOnly function pointer) that
// does deliberately expensive work, so nearly all CPU is spent in
//   MixedStack.Sorter.Sort -> libc qsort (and its helpers) -> MixedStack.Sorter.Compare
// which a profiler that keeps native frames shows as one continuous stack.
// A second thread blocks in a native wait (a pipe read in libc) under a
// managed frame, Waiter.Block, for the wall-clock view.
// Prints the sorted array's checksum, so runs can be compared.
// Usage: MixedStack [rounds]
using System.Globalization;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;

namespace MixedStack;

static unsafe class Sorter
{
    [DllImport("libc", EntryPoint = "qsort")]
    static extern void QSort(void* items, nuint count, nuint size, delegate* unmanaged<void*, void*, int> compare);

    [UnmanagedCallersOnly]
    static int Compare(void* a, void* b)
    {
        int x = *(int*)a, y = *(int*)b;
        return Weigh(x).CompareTo(Weigh(y));
    }

    // an expensive, deterministic key
    [MethodImpl(MethodImplOptions.NoInlining)]
    static double Weigh(int v)
    {
        double w = v;
        for (int i = 0; i < 200; i++) w = w * 1.0000001 + (v & 3);
        return w;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static long Sort(int[] data)
    {
        fixed (int* p = data)
            QSort(p, (nuint)data.Length, sizeof(int), &Compare);
        long sum = 0;
        for (int i = 0; i < data.Length; i++) sum = sum * 31 + data[i];
        return sum;
    }
}

static unsafe class Waiter
{
    [DllImport("libc", EntryPoint = "pipe")]
    static extern int Pipe(int* fds);
    [DllImport("libc", EntryPoint = "read")]
    static extern nint Read(int fd, byte* buf, nint count);
    [DllImport("libc", EntryPoint = "write")]
    public static extern nint Write(int fd, byte* buf, nint count);

    public static int[] Fds = new int[2];

    public static void Open() { fixed (int* f = Fds) Pipe(f); }

    // blocks in libc's read until the main thread writes a byte
    [MethodImpl(MethodImplOptions.NoInlining)]
    public static void Block()
    {
        byte b;
        Read(Fds[0], &b, 1);
    }
}

static class Program
{
    static unsafe int Main(string[] args)
    {
        int rounds = args.Length > 0 ? int.Parse(args[0], CultureInfo.InvariantCulture) : 20;
        Waiter.Open();
        var waiter = new Thread(Waiter.Block) { Name = "waiter" };
        waiter.Start();
        var rng = new Random(7);
        long check = 0;
        for (int r = 0; r < rounds; r++)
        {
            var data = new int[20_000];
            for (int i = 0; i < data.Length; i++) data[i] = rng.Next(1_000_000);
            check ^= Sorter.Sort(data);
        }
        byte one = 1;
        Waiter.Write(Waiter.Fds[1], &one, 1);
        waiter.Join();
        Console.WriteLine(string.Format(CultureInfo.InvariantCulture, "sorted {0} rounds, check {1}", rounds, check));
        return 0;
    }
}
