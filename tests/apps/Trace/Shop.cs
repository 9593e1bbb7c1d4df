// The JSON round trip of `Trace json`: a realistic call-heavy loop for the
// tracing benchmark (bench/trace.sh), in a namespace of its own for --include.
using System.Diagnostics;
using System.Runtime.CompilerServices;
using System.Text.Json;

namespace TraceApp.Shop;

public sealed class Item { public string Name { get; set; } = ""; public decimal Price { get; set; } public int[] Tags { get; set; } = []; }
public sealed class Order { public int Id { get; set; } public string Customer { get; set; } = ""; public List<Item> Items { get; set; } = new(); public DateTime When { get; set; } }

public static class RoundTrip
{
    static Order Make(int i)
    {
        var o = new Order { Id = i, Customer = "customer " + i, When = new DateTime(2024, 1, 1).AddMinutes(i) };
        for (int k = 0; k < 8; k++) o.Items.Add(new Item { Name = "item " + k, Price = k * 1.25m, Tags = [k, k + 1, k + 2] });
        return o;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static int Once(int i)
    {
        string text = JsonSerializer.Serialize(Make(i));
        var back = JsonSerializer.Deserialize<Order>(text)!;
        return back.Items.Count + text.Length;
    }

    public static void Run(int n)
    {
        for (int i = 0; i < 2000; i++) Once(i); // warm up
        var sw = Stopwatch.StartNew();
        long total = 0;
        for (int i = 0; i < n; i++) total += Once(i);
        sw.Stop();
        Console.WriteLine($"json: {n} round trips in {sw.Elapsed.TotalMilliseconds:F1} ms, {sw.Elapsed.TotalMilliseconds * 1000 / n:F2} us each ({total})");
    }
}
