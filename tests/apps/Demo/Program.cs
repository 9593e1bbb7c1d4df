// Demo: the program `make demo` profiles. A small order pipeline: the main
// thread generates CSV orders, parses them, prices them with LINQ, sorts them
// and signs receipts with SHA-256; an "imaging" thread blurs a picture; a
// "reporting" thread formats text. Runs for SECONDS (default 4).
// Usage: Demo [seconds]
using System.Globalization;
using System.Security.Cryptography;
using System.Text;

namespace Demo;

record Order(int Id, string Customer, string Sku, int Quantity, decimal Price);

static class Generator
{
    static readonly string[] Customers = { "ada", "brian", "grace", "ken", "linus", "margaret", "dennis", "barbara" };

    public static string[] MakeCsv(int count, Random rng)
    {
        var lines = new string[count];
        for (int i = 0; i < count; i++)
            lines[i] = string.Create(CultureInfo.InvariantCulture,
                $"{i},{Customers[rng.Next(Customers.Length)]},SKU-{rng.Next(1000):D4},{rng.Next(1, 20)},{rng.Next(100, 100000) / 100m}");
        return lines;
    }
}

static class Parser
{
    public static List<Order> Parse(string[] lines)
    {
        var orders = new List<Order>(lines.Length);
        foreach (var line in lines)
        {
            var f = line.Split(',');
            orders.Add(new Order(int.Parse(f[0], CultureInfo.InvariantCulture), f[1], f[2],
                int.Parse(f[3], CultureInfo.InvariantCulture), decimal.Parse(f[4], CultureInfo.InvariantCulture)));
        }
        return orders;
    }
}

static class Pricing
{
    public static Dictionary<string, decimal> TotalsByCustomer(List<Order> orders) =>
        orders.GroupBy(o => o.Customer).ToDictionary(g => g.Key, g => g.Sum(o => o.Quantity * o.Price));

    public static List<Order> MostValuable(List<Order> orders) =>
        orders.OrderByDescending(o => o.Quantity * o.Price).ThenBy(o => o.Id).Take(100).ToList();
}

static class Receipts
{
    public static byte[] Sign(List<Order> orders)
    {
        var sb = new StringBuilder();
        foreach (var o in orders) sb.Append(o.Id).Append(':').Append(o.Sku).Append(';');
        byte[] digest = Encoding.UTF8.GetBytes(sb.ToString());
        for (int i = 0; i < 50; i++) digest = SHA256.HashData(digest);
        return digest;
    }
}

static class Imaging
{
    public static float Blur(float[] img, float[] tmp, int w, int h)
    {
        for (int y = 1; y < h - 1; y++)
            for (int x = 1; x < w - 1; x++)
                tmp[y * w + x] = (img[(y - 1) * w + x] + img[(y + 1) * w + x] + img[y * w + x - 1] + img[y * w + x + 1] + 4 * img[y * w + x]) / 8;
        Array.Copy(tmp, img, img.Length);
        return img[w + 1];
    }
}

static class Reporting
{
    public static int Render(Random rng)
    {
        var sb = new StringBuilder();
        for (int i = 0; i < 2000; i++)
            sb.AppendFormat(CultureInfo.InvariantCulture, "{0,8} {1,-12} {2,10:N2}\n", i, "item" + rng.Next(100), rng.NextDouble() * 1000);
        return sb.ToString().Length;
    }
}

static class Program
{
    static int Main(string[] args)
    {
        double seconds = args.Length > 0 ? double.Parse(args[0], CultureInfo.InvariantCulture) : 4.0;
        long until = Environment.TickCount64 + (long)(seconds * 1000);
        var imaging = new Thread(() =>
        {
            int w = 256, h = 256;
            var img = new float[w * h];
            var tmp = new float[w * h];
            new Random(1).NextBytes(new byte[1]);
            for (int i = 0; i < img.Length; i++) img[i] = i % 251;
            while (Environment.TickCount64 < until) Imaging.Blur(img, tmp, w, h);
        }) { Name = "imaging" };
        var reporting = new Thread(() =>
        {
            var rng = new Random(2);
            while (Environment.TickCount64 < until) { Reporting.Render(rng); Thread.Sleep(5); }
        }) { Name = "reporting" };
        imaging.Start();
        reporting.Start();

        var random = new Random(42);
        int batches = 0;
        while (Environment.TickCount64 < until)
        {
            var orders = Parser.Parse(Generator.MakeCsv(5000, random));
            var totals = Pricing.TotalsByCustomer(orders);
            var best = Pricing.MostValuable(orders);
            Receipts.Sign(best);
            batches += totals.Count > 0 ? 1 : 0;
        }
        imaging.Join();
        reporting.Join();
        Console.WriteLine($"demo: {batches} batches of 5000 orders priced and signed");
        return 0;
    }
}
