// Naming: runtime work with a known name on known threads, for t_naming.sh.
//   "jitter"    compiles a new DynamicMethod named HotJit (a large body) and
//               calls it once, over and over: nearly all of its time is the
//               JIT compiling HotJit, under Naming.Jitter.CompileOne;
//   "collector" calls GC.Collect(2) over and over on a heap of live objects:
//               nearly all of its time is induced gen2 collections, under
//               Naming.Collector.Run (sleeping between collections, which
//               costs no CPU, so that the jitter runs too).
//   "stubs"     (alone: `Naming stubs [seconds]`) stores references into
//               the fields of old objects in a loop, through the write
//               barrier the runtime copies into memory of its own at start,
//               and calls an interface method at a call site that sees two
//               classes, through a virtual dispatch stub: code that is no
//               method and lies in no library; it prints "stubs done".
// Each thread measures the share of its own CPU time, from its start, spent
// in that work (thread CPU time around the compiling call, around
// GC.Collect) and prints it as "jitter work=0.93" / "collector work=0.97",
// the truth the test compares the labels of that thread's samples with.
// Usage: Naming [seconds]
using System.Reflection.Emit;

namespace Naming;

static class Jitter
{
    // A body the JIT takes a while over: many locals, arithmetic, branches.
    static DynamicMethod Build(int round)
    {
        var dm = new DynamicMethod("HotJit", typeof(long), new[] { typeof(long) }, typeof(Jitter).Module);
        var il = dm.GetILGenerator();
        var locals = new LocalBuilder[16];
        for (int i = 0; i < locals.Length; i++)
        {
            locals[i] = il.DeclareLocal(typeof(long));
            il.Emit(OpCodes.Ldarg_0);
            il.Emit(OpCodes.Ldc_I8, (long)(i + round));
            il.Emit(OpCodes.Add);
            il.Emit(OpCodes.Stloc, locals[i]);
        }
        for (int k = 0; k < 300; k++)
        {
            var skip = il.DefineLabel();
            var a = locals[k % 16];
            var b = locals[(k * 7 + 3) % 16];
            il.Emit(OpCodes.Ldloc, a);
            il.Emit(OpCodes.Ldloc, b);
            il.Emit(OpCodes.Bgt, skip);
            il.Emit(OpCodes.Ldloc, a);
            il.Emit(OpCodes.Ldloc, b);
            il.Emit(k % 3 == 0 ? OpCodes.Mul : k % 3 == 1 ? OpCodes.Xor : OpCodes.Sub);
            il.Emit(OpCodes.Stloc, a);
            il.MarkLabel(skip);
        }
        il.Emit(OpCodes.Ldloc, locals[0]);
        for (int i = 1; i < locals.Length; i++)
        {
            il.Emit(OpCodes.Ldloc, locals[i]);
            il.Emit(OpCodes.Add);
        }
        il.Emit(OpCodes.Ret);
        return dm;
    }

    // The first call compiles it.
    [System.Runtime.CompilerServices.MethodImpl(System.Runtime.CompilerServices.MethodImplOptions.NoInlining)]
    static long CompileOne(Func<long, long> f, long x) => f(x);

    public static void Run(double seconds)
    {
        long sum = 0, work = 0;
        var until = DateTime.UtcNow.AddSeconds(seconds);
        for (int round = 0; DateTime.UtcNow < until; round++)
        {
            var f = (Func<long, long>)Build(round).CreateDelegate(typeof(Func<long, long>));
            long t0 = Native.ThreadCpuNs();
            sum += CompileOne(f, round);
            work += Native.ThreadCpuNs() - t0;
        }
        Console.WriteLine($"jitter tid={Native.GetTid()} work={(double)work / Native.ThreadCpuNs():F3} sum={sum & 1}");
    }
}

static class Collector
{
    [System.Runtime.CompilerServices.MethodImpl(System.Runtime.CompilerServices.MethodImplOptions.NoInlining)]
    public static void Run(double seconds)
    {
        var live = new List<object[]>();
        for (int i = 0; i < 20000; i++)
            live.Add(new object[] { new byte[32], i.ToString(), new int[4] });
        long work = 0;
        var until = DateTime.UtcNow.AddSeconds(seconds);
        while (DateTime.UtcNow < until)
        {
            long t0 = Native.ThreadCpuNs();
            GC.Collect(2);
            work += Native.ThreadCpuNs() - t0;
            Thread.Sleep(4); // room for the jitter, which every collection stops
        }
        GC.KeepAlive(live);
        Console.WriteLine($"collector tid={Native.GetTid()} work={(double)work / Native.ThreadCpuNs():F3}");
    }
}

interface IShape { int Sides(); }
sealed class Square : IShape { public int Sides() => 4; }
sealed class Triangle : IShape { public int Sides() => 3; }
sealed class Holder { public object? A, B; }

static class Stubs
{
    [System.Runtime.CompilerServices.MethodImpl(System.Runtime.CompilerServices.MethodImplOptions.NoInlining)]
    static void Store(Holder[] holders, object[] values, int rounds)
    {
        for (int r = 0; r < rounds; r++)
            for (int i = 0; i < holders.Length; i++)
            {
                holders[i].A = values[(i + r) & 1023];
                holders[i].B = values[(i + r + 1) & 1023];
            }
    }

    [System.Runtime.CompilerServices.MethodImpl(System.Runtime.CompilerServices.MethodImplOptions.NoInlining)]
    static long Dispatch(IShape[] shapes, int rounds)
    {
        long sides = 0;
        for (int r = 0; r < rounds; r++)
            foreach (var s in shapes)
                sides += s.Sides();
        return sides;
    }

    public static void Run(double seconds)
    {
        var holders = new Holder[4096];
        for (int i = 0; i < holders.Length; i++)
            holders[i] = new Holder();
        GC.Collect(2); // the holders are old: each store of a young value marks a card
        var values = new object[1024];
        for (int i = 0; i < values.Length; i++)
            values[i] = new object();
        var shapes = new IShape[4096];
        for (int i = 0; i < shapes.Length; i++)
            shapes[i] = i % 2 == 0 ? new Square() : new Triangle();
        long sides = 0;
        var until = DateTime.UtcNow.AddSeconds(seconds);
        while (DateTime.UtcNow < until)
        {
            Store(holders, values, 20);
            sides += Dispatch(shapes, 20);
        }
        Console.WriteLine($"stubs done {sides & 1}");
    }
}

// Threads racing to load the same assemblies (a barrier before each),
// then spinning in the runtime's own code (Thread.SpinWait), as a pool's
// workers do when they wait for work.  The runtime finishes a load on whichever
// thread takes it through its last step, so a load begun on one thread
// may end on another: a thread's samples must not be named after a load
// that is over.  Prints when the last load returned, since the start.
static class LoadRace
{
    static readonly string[] Names =
    {
        "System.Private.Xml", "System.Private.Xml.Linq", "System.Data.Common", "System.Net.Http",
        "System.Collections.Immutable", "System.Formats.Asn1", "System.IO.Compression",
        "System.Threading.Channels", "System.Reflection.Metadata", "System.Diagnostics.Process",
        "System.ComponentModel.TypeConverter", "System.Formats.Tar", "System.IO.Pipes",
        "System.Transactions.Local", "System.Web.HttpUtility", "System.Net.Mail",
        "System.Runtime.Numerics", "System.Security.Cryptography", "System.Net.Security",
        "System.IO.Compression.Brotli", "System.Net.WebSockets", "System.Xml.XDocument",
    };

    public static void Run(int threads, double seconds)
    {
        Console.Out.Flush(); /* the console's assemblies loaded before, not after */
        var start = System.Diagnostics.Stopwatch.StartNew();
        var barrier = new Barrier(threads);
        long loadsDoneMs = 0;
        var workers = new Thread[threads];
        for (int t = 0; t < threads; t++)
        {
            workers[t] = new Thread(() =>
            {
                foreach (var name in Names)
                {
                    barrier.SignalAndWait();
                    try { System.Reflection.Assembly.Load(new System.Reflection.AssemblyName(name)); }
                    catch (System.IO.FileNotFoundException) { }
                }
                barrier.SignalAndWait();
                Interlocked.CompareExchange(ref loadsDoneMs, start.ElapsedMilliseconds, 0);
                var until = start.Elapsed.TotalSeconds + seconds;
                while (start.Elapsed.TotalSeconds < until)
                    Thread.SpinWait(1000); /* in the runtime's code, on the CPU */
            }) { Name = "loader" };
            workers[t].Start();
        }
        foreach (var w in workers)
            w.Join();
        Console.WriteLine($"loadrace loads_done_ms={Interlocked.Read(ref loadsDoneMs)} assemblies={Names.Length} threads={threads}");
    }
}

static class Program
{
    static void Main(string[] args)
    {
        if (args.Length > 0 && args[0] == "loadrace")
        {
            LoadRace.Run(8, args.Length > 1 ? double.Parse(args[1], System.Globalization.CultureInfo.InvariantCulture) : 1.5);
            return;
        }
        if (args.Length > 0 && args[0] == "stubs")
        {
            Stubs.Run(args.Length > 1 ? double.Parse(args[1], System.Globalization.CultureInfo.InvariantCulture) : 2);
            return;
        }
        double seconds = args.Length > 0 ? double.Parse(args[0], System.Globalization.CultureInfo.InvariantCulture) : 2;
        var jitter = new Thread(() => Jitter.Run(seconds)) { Name = "jitter" };
        var collector = new Thread(() => Collector.Run(seconds)) { Name = "collector" };
        jitter.Start();
        collector.Start();
        jitter.Join();
        collector.Join();
    }
}
