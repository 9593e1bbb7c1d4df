// Unloading: code that lives a few milliseconds and goes away, again and
// again, so that the runtime reuses the addresses of its code, its
// FunctionIDs and its ModuleIDs.  Each round builds one method that burns
// CPU, runs it, and drops it:
//   Plugin.Heavy.Burn, Plugin.Light.Burn  emitted into an assembly of its
//                                         own in a collectible
//                                         AssemblyLoadContext, then unloaded
//   HeavyDyn, LightDyn                    DynamicMethods, then collected
// Heavy methods burn three times the iterations of light ones.  A GC after
// every round frees what the round left, so the next round's code and ids
// land where the last one's were.  A profiler that names a sample by an id
// it cached before the unload shows the wrong method (or crashes).  The
// program measures the CPU time of each method with its own thread clock
// and prints the shares of the four, the truth the tests compare with:
//   truth Plugin.Heavy.Burn 37.41
// Usage: Unloading [rounds of the four]
using System.Globalization;
using System.Reflection;
using System.Reflection.Emit;
using System.Runtime.CompilerServices;
using System.Runtime.Loader;

namespace Unloading;

static class Program
{
    const long LightIterations = 1_500_000;

    // for (i = 0; i < n; i++) acc = acc * 3 + i;  return acc;
    static void EmitBurn(ILGenerator il)
    {
        var acc = il.DeclareLocal(typeof(long));
        var i = il.DeclareLocal(typeof(long));
        var loop = il.DefineLabel();
        var test = il.DefineLabel();
        il.Emit(OpCodes.Br, test);
        il.MarkLabel(loop);
        il.Emit(OpCodes.Ldloc, acc); il.Emit(OpCodes.Ldc_I8, 3L); il.Emit(OpCodes.Mul);
        il.Emit(OpCodes.Ldloc, i); il.Emit(OpCodes.Add); il.Emit(OpCodes.Stloc, acc);
        il.Emit(OpCodes.Ldloc, i); il.Emit(OpCodes.Ldc_I8, 1L); il.Emit(OpCodes.Add); il.Emit(OpCodes.Stloc, i);
        il.MarkLabel(test);
        il.Emit(OpCodes.Ldloc, i); il.Emit(OpCodes.Ldarg_0); il.Emit(OpCodes.Blt, loop);
        il.Emit(OpCodes.Ldloc, acc); il.Emit(OpCodes.Ret);
    }

    // Runs burn twice: once to compile it, once measured.
    static long Measure(Func<long, long> burn, long n, ref long sink)
    {
        sink += burn(1);
        long before = Native.ThreadCpuNs();
        sink += burn(n);
        return Native.ThreadCpuNs() - before;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    static long CollectibleRound(string type, int round, long n, ref long sink)
    {
        var alc = new AssemblyLoadContext("plugin-" + round, isCollectible: true);
        long used;
        using (alc.EnterContextualReflection())
        {
            var ab = AssemblyBuilder.DefineDynamicAssembly(new AssemblyName("Plugin" + round), AssemblyBuilderAccess.RunAndCollect);
            var tb = ab.DefineDynamicModule("m").DefineType("Plugin." + type, TypeAttributes.Public);
            var mb = tb.DefineMethod("Burn", MethodAttributes.Public | MethodAttributes.Static, typeof(long), new[] { typeof(long) });
            EmitBurn(mb.GetILGenerator());
            var burn = tb.CreateType().GetMethod("Burn")!.CreateDelegate<Func<long, long>>();
            used = Measure(burn, n, ref sink);
        }
        alc.Unload();
        return used;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    static long DynamicRound(string name, long n, ref long sink)
    {
        var dm = new DynamicMethod(name, typeof(long), new[] { typeof(long) }, typeof(Program).Module);
        EmitBurn(dm.GetILGenerator());
        return Measure(dm.CreateDelegate<Func<long, long>>(), n, ref sink);
    }

    static int Main(string[] args)
    {
        int rounds = args.Length > 0 ? int.Parse(args[0], CultureInfo.InvariantCulture) : 100;
        string[] names = { "Plugin.Heavy.Burn", "Plugin.Light.Burn", "HeavyDyn", "LightDyn" };
        var cpu = new long[4];
        long sink = 0;
        for (int r = 0; r < rounds; r++)
        {
            cpu[0] += CollectibleRound("Heavy", 2 * r, 3 * LightIterations, ref sink);
            cpu[1] += CollectibleRound("Light", 2 * r + 1, LightIterations, ref sink);
            cpu[2] += DynamicRound("HeavyDyn", 3 * LightIterations, ref sink);
            cpu[3] += DynamicRound("LightDyn", LightIterations, ref sink);
            GC.Collect();
            GC.WaitForPendingFinalizers();
        }
        double all = cpu[0] + cpu[1] + cpu[2] + cpu[3];
        for (int k = 0; k < 4; k++)
            Console.WriteLine(string.Format(CultureInfo.InvariantCulture, "truth {0} {1:F2}", names[k], 100.0 * cpu[k] / all));
        Console.WriteLine(string.Format(CultureInfo.InvariantCulture, "rounds {0} burned {1:F0} ms sink {2}", rounds, all / 1e6, sink & 0xff));
        return 0;
    }
}
