// UnloadStall: a program whose code keeps going away while it measures how
// long it is held up, to show that a profiler's unload callbacks never stall
// it (whatever the profiler's disk does).  Each round compiles and runs five
// DynamicMethods and one method of a collectible AssemblyLoadContext, drops
// them, and waits for the collector and the finalizers (GC.Collect,
// GC.WaitForPendingFinalizers: the runtime reports the unloads from there).
// Meanwhile another thread allocates in a loop and measures the longest gap
// between two of its iterations.  Standard output is the same for every run
// with the same arguments; the measurements go to standard error:
//   stdout: result 1234567
//   stderr: max_wait_ms 3.1  max_gap_ms 12.0  elapsed_ms 812.4
// Usage: UnloadStall [rounds]
using System.Diagnostics;
using System.Globalization;
using System.Reflection;
using System.Reflection.Emit;
using System.Runtime.CompilerServices;
using System.Runtime.Loader;

namespace UnloadStall;

static class Program
{
    // return x * k + k
    static void EmitAffine(ILGenerator il, long k)
    {
        il.Emit(OpCodes.Ldarg_0); il.Emit(OpCodes.Ldc_I8, k); il.Emit(OpCodes.Mul);
        il.Emit(OpCodes.Ldc_I8, k); il.Emit(OpCodes.Add); il.Emit(OpCodes.Ret);
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    static long DynamicRound(int round, int i)
    {
        var dm = new DynamicMethod("Dyn" + round + "_" + i, typeof(long), new[] { typeof(long) }, typeof(Program).Module);
        EmitAffine(dm.GetILGenerator(), round * 5 + i + 1);
        return dm.CreateDelegate<Func<long, long>>()(round);
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    static long CollectibleRound(int round)
    {
        var alc = new AssemblyLoadContext("stall-" + round, isCollectible: true);
        long value;
        using (alc.EnterContextualReflection())
        {
            var ab = AssemblyBuilder.DefineDynamicAssembly(new AssemblyName("Stall" + round), AssemblyBuilderAccess.RunAndCollect);
            var tb = ab.DefineDynamicModule("m").DefineType("Stall.P" + round, TypeAttributes.Public);
            var mb = tb.DefineMethod("Affine", MethodAttributes.Public | MethodAttributes.Static, typeof(long), new[] { typeof(long) });
            EmitAffine(mb.GetILGenerator(), round + 7);
            value = tb.CreateType().GetMethod("Affine")!.CreateDelegate<Func<long, long>>()(round);
        }
        alc.Unload();
        return value;
    }

    static volatile bool stop;
    static double maxGapMs;

    static void Allocate()
    {
        var keep = new byte[64][];
        var sw = Stopwatch.StartNew();
        double last = 0;
        for (int i = 0; !stop; i++)
        {
            keep[i & 63] = new byte[256 + (i & 1023)];
            if ((i & 255) == 0)
            {
                double now = sw.Elapsed.TotalMilliseconds;
                maxGapMs = Math.Max(maxGapMs, now - last);
                last = now;
            }
        }
    }

    static int Main(string[] args)
    {
        int rounds = args.Length > 0 ? int.Parse(args[0], CultureInfo.InvariantCulture) : 40;
        var total = Stopwatch.StartNew();
        var allocator = new Thread(Allocate) { Name = "allocator", IsBackground = true };
        allocator.Start();
        long result = 0;
        double maxWaitMs = 0;
        for (int r = 0; r < rounds; r++)
        {
            for (int i = 0; i < 5; i++)
                result += DynamicRound(r, i);
            result += CollectibleRound(r);
            var sw = Stopwatch.StartNew();
            GC.Collect();
            GC.WaitForPendingFinalizers();
            GC.Collect();
            maxWaitMs = Math.Max(maxWaitMs, sw.Elapsed.TotalMilliseconds);
        }
        stop = true;
        allocator.Join();
        Console.WriteLine("result " + result.ToString(CultureInfo.InvariantCulture));
        Console.Error.WriteLine(string.Format(CultureInfo.InvariantCulture,
            "max_wait_ms {0:F1}  max_gap_ms {1:F1}  elapsed_ms {2:F1}", maxWaitMs, maxGapMs, total.Elapsed.TotalMilliseconds));
        return 0;
    }
}
