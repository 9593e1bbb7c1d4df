// WebApp: an ASP.NET Core application of the ordinary kind, for measuring
// the signal sampler's walks on a real server under load (bench/walks.sh
// drives it with wrk): routing, JSON serialization, async handlers, LINQ,
// string formatting, a little CPU work, and the framework's own code (Kestrel,
// the thread pool, sockets) around them.
// Usage: WebApp PORT      (GET /quit stops it)
using System.Globalization;
using System.Security.Cryptography;
using System.Text;

var port = args.Length > 0 ? int.Parse(args[0], CultureInfo.InvariantCulture) : 5080;
var builder = WebApplication.CreateBuilder(args);
builder.Logging.ClearProviders();
builder.WebHost.UseUrls($"http://127.0.0.1:{port}");
var app = builder.Build();

var products = Enumerable.Range(1, 200)
    .Select(i => new Product(i, $"product-{i}", i * 1.25m, i % 7 == 0 ? ["sale", "new"] : ["regular"]))
    .ToArray();

app.MapGet("/", () => "hello");
app.MapGet("/products", (int? take) => products.Take(take ?? 20));
app.MapGet("/search", (string q) =>
    products.Where(p => p.Name.Contains(q, StringComparison.Ordinal))
            .OrderByDescending(p => p.Price)
            .Select(p => new { p.Id, p.Name, Total = p.Price * 1.2m })
            .ToList());
app.MapGet("/hash/{n:int}", async (int n) =>
{
    await Task.Yield();
    var data = Encoding.UTF8.GetBytes(string.Join(',', Enumerable.Range(0, n)));
    return Convert.ToHexString(SHA256.HashData(data));
});
app.MapGet("/primes/{n:int}", (int n) =>
{
    int count = 0;
    for (int i = 2; i < n; i++)
    {
        bool prime = true;
        for (int d = 2; d * d <= i; d++)
            if (i % d == 0) { prime = false; break; }
        if (prime) count++;
    }
    return count;
});
app.MapGet("/quit", (IHostApplicationLifetime life) => { life.StopApplication(); return "bye"; });
app.Run();

record Product(int Id, string Name, decimal Price, string[] Tags);
