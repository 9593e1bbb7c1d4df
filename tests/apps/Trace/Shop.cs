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

    // Round trips for `seconds`; the rate is that of the last third of the
    // run, when compilation has settled (tracing turns ReadyToRun code off,
    // so everything is compiled first at tier 0, then again at tier 1).
    public static void Run(double seconds)
    {
        var sw = Stopwatch.StartNew();
        long total = 0, trips = 0, markTrips = 0;
        double markTime = 0;
        bool marked = false;
        while (sw.Elapsed.TotalSeconds < seconds)
        {
            for (int k = 0; k < 100; k++) total += Once((int)(trips++ % 1000));
            if (!marked && sw.Elapsed.TotalSeconds >= seconds * 2 / 3)
            {
                marked = true;
                markTrips = trips;
                markTime = sw.Elapsed.TotalMilliseconds;
            }
        }
        double ms = sw.Elapsed.TotalMilliseconds;
        double each = (ms - markTime) * 1000 / Math.Max(1, trips - markTrips);
        Console.WriteLine($"json: {trips} round trips in {ms / 1000:F1} s, last third {each:F2} us each ({total})");
    }
}
