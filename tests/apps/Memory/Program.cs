// Memory: allocations, collections and live objects whose truth the program
// knows, for the tests of -e alloc, -e gc and -e live to compare with.
//   split MB      Alpha and Beta allocate byte arrays in a 3:1 proportion of
//                 bytes (MB in all); prints the bytes each really allocated
//                 (GC.GetAllocatedBytesForCurrentThread around each call):
//                   truth alloc Memory.Work.Alpha 786432000
//   exact N       Alpha allocates N byte[100], Beta N/2 Node objects and N/4
//                 List<int>; prints the bytes and objects of each (exact, for
//                 --alloc exact)
//   gcs G0 G1 G2 MB BG  forces G0 gen0, G1 gen1 and G2 gen2 collections
//                 (GC.Collect(gen, Forced, blocking)), then allocates MB, then
//                 asks for BG background collections (blocking: false); prints
//                 the collections of each generation the runtime counted:
//                   truth gcs 9 4 6
//   live KEEP DROP  Keep allocates KEEP MB of 4 KiB arrays and keeps them,
//                 Drop allocates DROP MB and drops them; a full collection
//                 follows and the kept ones stay reachable to the end
//   gcwork N      N full blocking collections of a heap of a million
//                 objects (CPU time spent in the GC), gen0 ones between
//   types         allocates the generic types the name test looks for
using System.Globalization;
using System.Runtime.CompilerServices;

namespace Memory;

sealed class Node
{
    public long A = 1, B = 2, C = 3;
    public Node? Next = null;
}

static class Work
{
    public static object? Sink;

    // Each array is filled, as a program fills what it allocates: about
    // 1-2 GB/s of allocation on one core, heavy but not a bare loop.
    [MethodImpl(MethodImplOptions.NoInlining)]
    public static void Alpha(long bytes, int size)
    {
        for (long done = 0; done < bytes; done += size)
        {
            var a = new byte[size];
            a.AsSpan().Fill(1);
            Sink = a;
        }
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static void Beta(long bytes, int size)
    {
        for (long done = 0; done < bytes; done += size)
        {
            var a = new byte[size];
            a.AsSpan().Fill(2);
            Sink = a;
        }
    }

    // the bytes they allocated, measured around their own loops
    [MethodImpl(MethodImplOptions.NoInlining)]
    public static long ExactAlpha(int n)
    {
        long before = GC.GetAllocatedBytesForCurrentThread();
        for (int i = 0; i < n; i++)
            Sink = new byte[100];
        return GC.GetAllocatedBytesForCurrentThread() - before;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static long ExactBeta(int n)
    {
        long before = GC.GetAllocatedBytesForCurrentThread();
        for (int i = 0; i < n / 2; i++)
            Sink = new Node();
        for (int i = 0; i < n / 4; i++)
            Sink = new List<int>();
        return GC.GetAllocatedBytesForCurrentThread() - before;
    }

    public static readonly List<byte[]> Kept = new();

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static void Keep(long bytes)
    {
        for (long done = 0; done < bytes; done += 4096)
        {
            var a = new byte[4096 - 24];
            a.AsSpan().Fill(3);
            Kept.Add(a);
        }
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static void Drop(long bytes)
    {
        for (long done = 0; done < bytes; done += 4096)
        {
            var a = new byte[4096 - 24];
            a.AsSpan().Fill(4);
            Sink = a;
        }
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static void Generics(int n)
    {
        var keep = new List<object>();
        for (int i = 0; i < n; i++)
        {
            keep.Add(new Dictionary<string, int>(16));
            keep.Add(new List<int>(64));
            keep.Add(new int[8, 8]);
            if (keep.Count > 3000) keep.Clear();
        }
        Sink = keep;
    }
}

static class Program
{
    static long Measure(Action a)
    {
        long before = GC.GetAllocatedBytesForCurrentThread();
        a();
        return GC.GetAllocatedBytesForCurrentThread() - before;
    }

    static int Main(string[] args)
    {
        string mode = args.Length > 0 ? args[0] : "split";
        long Arg(int i, long d) => args.Length > i ? long.Parse(args[i], CultureInfo.InvariantCulture) : d;
        switch (mode)
        {
        case "split":
        {
            long mb = Arg(1, 1000);
            long alpha = 0, beta = 0;
            // interleaved rounds with sizes that vary, so that no period lines up with the sampler's
            var rng = new Random(7);
            for (int round = 0; round < 40; round++)
            {
                int size = 64 + rng.Next(4000);
                long a = mb * 1024 * 1024 * 3 / 4 / 40, b = mb * 1024 * 1024 / 4 / 40;
                alpha += Measure(() => Work.Alpha(a, size));
                beta += Measure(() => Work.Beta(b, size));
            }
            Console.WriteLine($"truth alloc Memory.Work.Alpha {alpha}");
            Console.WriteLine($"truth alloc Memory.Work.Beta {beta}");
            break;
        }
        case "exact":
        {
            int n = (int)Arg(1, 20000);
            // the types' one-time work (List<int>'s static empty array) out of the way
            Work.Sink = new List<int>();
            Work.Sink = new Node();
            long alpha = Work.ExactAlpha(n);
            long beta = Work.ExactBeta(n);
            Console.WriteLine($"truth alloc Memory.Work.ExactAlpha {alpha} {n}");
            Console.WriteLine($"truth alloc Memory.Work.ExactBeta {beta} {n / 2 + n / 4}");
            break;
        }
        case "gcs":
        {
            // forced collections of each generation, then some the
            // allocations trigger; the runtime's own counts are the truth
            // (a forced gen0 collection may be raised to gen1 or gen2 by the
            // GC itself: the counts say what it did)
            for (int gen = 0; gen <= 2; gen++)
            {
                long n = Arg(1 + gen, 5);
                for (int i = 0; i < n; i++)
                {
                    Work.Sink = new byte[1000];
                    GC.Collect(gen, GCCollectionMode.Forced, blocking: true);
                }
                Console.WriteLine($"truth forced {gen} {n}");
            }
            Work.Drop(Arg(4, 64) * 1024 * 1024);
            // background collections run beside the program (when the
            // runtime has concurrent GC, the default): ask, and wait for each
            long background = Arg(5, 0);
            var retained = new List<byte[]>();
            if (background > 0) // a heap worth collecting in the background
                for (int i = 0; i < 400_000; i++) retained.Add(new byte[200]);
            for (int i = 0; i < background; i++)
            {
                int before = GC.CollectionCount(2);
                GC.Collect(2, GCCollectionMode.Forced, blocking: false);
                for (int w = 0; w < 200 && GC.CollectionCount(2) == before; w++) Thread.Sleep(5);
            }
            Console.WriteLine($"truth background {background}");
            GC.KeepAlive(retained);
            if (background > 0) // waits for a background collection still under way
                GC.Collect(2, GCCollectionMode.Forced, blocking: true);
            int c0 = GC.CollectionCount(0), c1 = GC.CollectionCount(1), c2 = GC.CollectionCount(2);
            Console.WriteLine($"truth gcs {c0 - c1} {c1 - c2} {c2}");
            break;
        }
        case "live":
        {
            long keep = Arg(1, 40), drop = Arg(2, 160);
            for (int round = 0; round < 8; round++)
            {
                Work.Keep(keep * 1024 * 1024 / 8);
                Work.Drop(drop * 1024 * 1024 / 8);
            }
            Work.Sink = null;
            GC.Collect(2, GCCollectionMode.Forced, blocking: true, compacting: true);
            GC.WaitForPendingFinalizers();
            GC.Collect(2, GCCollectionMode.Forced, blocking: true, compacting: true);
            Thread.Sleep(300); // the agent looks at its handles after a collection, within 100 ms
            long kept = 0;
            foreach (var a in Work.Kept) kept += a.Length + 24;
            Console.WriteLine($"truth live Memory.Work.Keep {kept}");
            GC.KeepAlive(Work.Kept);
            break;
        }
        case "gcwork":
        {
            // collections that take CPU time: a heap of many small objects,
            // collected fully N times, and gen0 collections between
            var heap = new List<object>();
            for (int i = 0; i < 1_000_000; i++) heap.Add(new Node());
            long n = Arg(1, 10);
            for (int i = 0; i < n; i++)
            {
                GC.Collect(2, GCCollectionMode.Forced, blocking: true);
                for (int k = 0; k < 5; k++) GC.Collect(0, GCCollectionMode.Forced, blocking: true);
            }
            GC.KeepAlive(heap);
            Console.WriteLine($"truth gcwork {n}");
            break;
        }
        case "types":
            Work.Generics((int)Arg(1, 200000));
            break;
        default:
            Console.Error.WriteLine("usage: Memory split|exact|gcs|live|types ...");
            return 2;
        }
        return 0;
    }
}
