// Stress: programs the runtime finds hard, for the reliability suite
// (tests/stress). Each mode does a fixed amount of work and prints
// deterministic lines (counts and checksums), so a run under the profiler
// must print exactly what a run without it prints, and exit 0.
//   threads     thousands of short-lived threads, some named
//   exceptions  an exception storm: throw/catch through deep stacks on 4 threads
//   gc          forced GCs (all generations, compacting) while 8 threads allocate
//   async       thread-pool saturation with async/await and Task.Delay
//   pinvoke     libc qsort calling back into C# (UnmanagedCallersOnly) on 4 threads
//   recursion   recursion 10,000 frames deep, on a thread with a big stack
//   alc         collectible AssemblyLoadContexts: an assembly emitted, run, unloaded
//   dynamic     DynamicMethod code generated, called and dropped
//   tiering     tier-0 code, on-stack replacement of long loops, tier-1 promotion
//   contention  8 threads fighting over a Monitor and a System.Threading.Lock,
//               with waits short and long, and exceptions thrown while holding them
// Usage: Stress MODE [scale]
using System.Globalization;
using System.Reflection;
using System.Reflection.Emit;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Runtime.Loader;

namespace Stress;

static class Program
{
    static int scale = 1;
    static string F(FormattableString s) => s.ToString(CultureInfo.InvariantCulture);

    [MethodImpl(MethodImplOptions.NoInlining)]
    static long Spin(long seed, int n)
    {
        long x = seed;
        for (int i = 0; i < n; i++) x = x * 6364136223846793005L + 1442695040888963407L;
        return x & 0xffff;
    }

    static void Threads()
    {
        int total = 2000 * scale;
        var results = new long[total];
        for (int start = 0; start < total; start += 50)
        {
            var batch = new List<Thread>();
            for (int i = start; i < Math.Min(total, start + 50); i++)
            {
                int k = i;
                var t = new Thread(() => results[k] = Spin(k, 5000));
                if (k % 2 == 0) t.Name = $"short-{k}";
                t.Start();
                batch.Add(t);
            }
            foreach (var t in batch) t.Join();
        }
        Console.WriteLine(F($"threads {total} sum {results.Sum()}"));
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    static int Thrower(int depth, int k)
    {
        if (depth == 0) throw new InvalidOperationException("storm " + k);
        return Thrower(depth - 1, k) + 1;
    }

    static void Exceptions()
    {
        int perThread = 5000 * scale;
        var caught = new int[4];
        var ts = Enumerable.Range(0, 4).Select(t => new Thread(() =>
        {
            for (int i = 0; i < perThread; i++)
            {
                try { Thrower(i % 20, i); }
                catch (InvalidOperationException e) when (e.Message.StartsWith("storm")) { caught[t]++; }
            }
        }) { Name = $"thrower-{t}" }).ToList();
        ts.ForEach(t => t.Start());
        ts.ForEach(t => t.Join());
        Console.WriteLine(F($"exceptions caught {caught.Sum()} of {4 * perThread}"));
    }

    static void Gc()
    {
        var stop = false;
        long allocated = 0;
        var ts = Enumerable.Range(0, 8).Select(t => new Thread(() =>
        {
            var keep = new List<byte[]>();
            long n = 0;
            while (!Volatile.Read(ref stop))
            {
                keep.Add(new byte[(int)(64 + (n % 4000))]);
                if (keep.Count > 2000) keep.RemoveRange(0, 1000);
                n++;
            }
            Interlocked.Add(ref allocated, n);
        }) { Name = $"alloc-{t}" }).ToList();
        ts.ForEach(t => t.Start());
        int gcs = 50 * scale;
        for (int i = 0; i < gcs; i++)
        {
            GC.Collect(2, GCCollectionMode.Forced, blocking: true, compacting: true);
            Thread.Sleep(5);
        }
        Volatile.Write(ref stop, true);
        ts.ForEach(t => t.Join());
        Console.WriteLine(F($"gc forced {gcs} collections under 8 allocating threads, allocations {(allocated > 0 ? "made" : "none")}"));
    }

    static async Task<long> Chain(int k, int depth)
    {
        if (depth == 0) { await Task.Delay(1); return Spin(k, 2000); }
        await Task.Yield();
        return await Chain(k, depth - 1) + 1;
    }

    static void Async()
    {
        int tasks = 2000 * scale;
        var all = Enumerable.Range(0, tasks).Select(k => Task.Run(() => Chain(k, 8))).ToArray();
        Task.WaitAll(all);
        Console.WriteLine(F($"async {tasks} task chains, sum {all.Sum(t => t.Result)}"));
    }

    [DllImport("libc", EntryPoint = "qsort")]
    static extern unsafe void QSort(void* items, nuint count, nuint size, delegate* unmanaged<void*, void*, int> compare);

    [UnmanagedCallersOnly]
    static unsafe int Compare(void* a, void* b) => (*(int*)a).CompareTo(*(int*)b);

    static unsafe void PInvoke()
    {
        long check = 0;
        var ts = Enumerable.Range(0, 4).Select(t => new Thread(() =>
        {
            var rng = new Random(t);
            long local = 0;
            for (int r = 0; r < 40 * scale; r++)
            {
                var data = new int[5000];
                for (int i = 0; i < data.Length; i++) data[i] = rng.Next();
                fixed (int* p = data) QSort(p, (nuint)data.Length, sizeof(int), &Compare);
                for (int i = 1; i < data.Length; i++) if (data[i - 1] > data[i]) local = -1_000_000;
                local += data[data.Length / 2] & 0xff;
            }
            Interlocked.Add(ref check, local);
        }) { Name = $"sorter-{t}" }).ToList();
        ts.ForEach(t => t.Start());
        ts.ForEach(t => t.Join());
        Console.WriteLine(F($"pinvoke sorted, check {check}"));
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    static long Deep(int depth) => depth == 0 ? Spin(depth, 2_000_000) : Deep(depth - 1) + 1;

    static void Recursion()
    {
        long result = 0;
        var t = new Thread(() => { for (int i = 0; i < 10 * scale; i++) result += Deep(10_000); }, 64 * 1024 * 1024) { Name = "deep" };
        t.Start();
        t.Join();
        Console.WriteLine(F($"recursion 10000 deep, result {result}"));
    }

    // emits an assembly with a type whose method sums 0..n, in a collectible context
    static long RunEmitted(int n)
    {
        var alc = new AssemblyLoadContext("stress-" + n, isCollectible: true);
        long result;
        using (alc.EnterContextualReflection())
        {
            var ab = AssemblyBuilder.DefineDynamicAssembly(new AssemblyName("Emitted" + n), AssemblyBuilderAccess.RunAndCollect);
            var mb = ab.DefineDynamicModule("m");
            var tb = mb.DefineType("Summer", TypeAttributes.Public);
            var m = tb.DefineMethod("Sum", MethodAttributes.Public | MethodAttributes.Static, typeof(long), new[] { typeof(int) });
            var il = m.GetILGenerator();
            var acc = il.DeclareLocal(typeof(long));
            var i = il.DeclareLocal(typeof(int));
            var loop = il.DefineLabel();
            var test = il.DefineLabel();
            il.Emit(OpCodes.Br, test);
            il.MarkLabel(loop);
            il.Emit(OpCodes.Ldloc, acc); il.Emit(OpCodes.Ldloc, i); il.Emit(OpCodes.Conv_I8); il.Emit(OpCodes.Add); il.Emit(OpCodes.Stloc, acc);
            il.Emit(OpCodes.Ldloc, i); il.Emit(OpCodes.Ldc_I4_1); il.Emit(OpCodes.Add); il.Emit(OpCodes.Stloc, i);
            il.MarkLabel(test);
            il.Emit(OpCodes.Ldloc, i); il.Emit(OpCodes.Ldarg_0); il.Emit(OpCodes.Blt, loop);
            il.Emit(OpCodes.Ldloc, acc); il.Emit(OpCodes.Ret);
            var type = tb.CreateType();
            result = (long)type.GetMethod("Sum")!.Invoke(null, new object[] { n })!;
        }
        alc.Unload();
        return result;
    }

    static void Alc()
    {
        long sum = 0;
        int rounds = 100 * scale;
        for (int r = 0; r < rounds; r++)
        {
            sum += RunEmitted(100_000 + r);
            // unloaded contexts are freed by a GC; without one now and then
            // their code mappings pile up to vm.max_map_count
            if (r % 50 == 49) { GC.Collect(); GC.WaitForPendingFinalizers(); }
        }
        for (int i = 0; i < 5; i++) { GC.Collect(); GC.WaitForPendingFinalizers(); }
        Console.WriteLine(F($"alc {rounds} collectible contexts run and unloaded, sum {sum}"));
    }

    static void Dynamic()
    {
        long sum = 0;
        int rounds = 300 * scale;
        for (int r = 0; r < rounds; r++)
        {
            var dm = new DynamicMethod("mul" + r, typeof(long), new[] { typeof(long) }, typeof(Program).Module);
            var il = dm.GetILGenerator();
            il.Emit(OpCodes.Ldarg_0); il.Emit(OpCodes.Ldc_I8, (long)r); il.Emit(OpCodes.Mul); il.Emit(OpCodes.Ret);
            var f = dm.CreateDelegate<Func<long, long>>();
            for (int i = 0; i < 2000; i++) sum += f(i);
            if (r % 50 == 0) GC.Collect();
        }
        Console.WriteLine(F($"dynamic {rounds} methods, sum {sum}"));
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    static long LongLoop(int n)
    {
        long x = 1;
        for (int i = 0; i < n; i++) x = x * 31 + i;   // runs long enough for OSR on its first call
        return x;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    static long Small(int k) => k * 7 + (k >> 3);

    static void Tiering()
    {
        long sum = 0;
        for (int r = 0; r < 5 * scale; r++) sum += LongLoop(50_000_000);
        for (int k = 0; k < 3_000_000 * scale; k++) sum += Small(k);   // call counting, then tier 1
        Console.WriteLine(F($"tiering sum {sum}"));
    }

    static readonly object MonitorGate = new();
#if NET9_0_OR_GREATER
    static readonly Lock LockGate = new();
#else
    // .NET 8 has no System.Threading.Lock: Monitor again (tests/apps/runtimes.sh)
    static readonly object LockGate = new();
#endif

    static void Contention()
    {
        int perThread = 2000 * scale;
        long underMonitor = 0, underLock = 0, thrown = 0;
        var ts = Enumerable.Range(0, 8).Select(t => new Thread(() =>
        {
            for (int i = 0; i < perThread; i++)
            {
                if ((i + t) % 2 == 0)
                {
                    lock (MonitorGate)
                    {
                        underMonitor += Spin(i, i % 100 == 0 ? 20000 : 50);
                        if (i % 97 == 0)
                            try { throw new InvalidOperationException("held"); }
                            catch (InvalidOperationException) { thrown++; }
                    }
                }
                else
                {
                    lock (LockGate) { underLock += Spin(i, i % 100 == 1 ? 20000 : 50); }
                }
                if (i % 500 == 0) Thread.Sleep(1);
            }
        }) { Name = $"contender-{t}" }).ToList();
        ts.ForEach(t => t.Start());
        ts.ForEach(t => t.Join());
        Console.WriteLine(F($"contention {8 * perThread} sections sum {underMonitor + underLock} thrown {thrown}"));
    }

    static int Main(string[] args)
    {
        if (args.Length > 1) scale = int.Parse(args[1], CultureInfo.InvariantCulture);
        switch (args.Length > 0 ? args[0] : "")
        {
            case "threads": Threads(); break;
            case "exceptions": Exceptions(); break;
            case "gc": Gc(); break;
            case "async": Async(); break;
            case "pinvoke": PInvoke(); break;
            case "recursion": Recursion(); break;
            case "alc": Alc(); break;
            case "dynamic": Dynamic(); break;
            case "tiering": Tiering(); break;
            case "contention": Contention(); break;
            default:
                Console.Error.WriteLine("usage: Stress threads|exceptions|gc|async|pinvoke|recursion|alc|dynamic|tiering|contention [scale]");
                return 2;
        }
        return 0;
    }
}
