// MiniWeb: a small ASP.NET Core app (minimal API on Kestrel) to profile under
// load: a text endpoint, a JSON endpoint and one that does some LINQ.
// Listens on 127.0.0.1:PORT and stops by itself after SECONDS.
// Usage: MiniWeb [port] [seconds]
using System.Globalization;

var port = args.Length > 0 ? int.Parse(args[0], CultureInfo.InvariantCulture) : 5077;
var seconds = args.Length > 1 ? double.Parse(args[1], CultureInfo.InvariantCulture) : 10;

var builder = WebApplication.CreateBuilder();
builder.Logging.ClearProviders();
builder.WebHost.UseUrls($"http://127.0.0.1:{port}");
var app = builder.Build();

app.MapGet("/", () => "hello");
app.MapGet("/json", () => new Order(42, "ada", new[] { "SKU-0001", "SKU-0042" }, 19.99m));
app.MapGet("/sum/{n:int}", (int n) =>
    Enumerable.Range(0, Math.Clamp(n, 0, 10000)).Where(i => i % 3 == 0).Select(i => (long)i * i).Sum());

var lifetime = app.Services.GetRequiredService<IHostApplicationLifetime>();
lifetime.ApplicationStarted.Register(() => Console.WriteLine($"listening on {port}"));
_ = Task.Delay(TimeSpan.FromSeconds(seconds)).ContinueWith(_ => lifetime.StopApplication());
app.Run();

record Order(int Id, string Customer, string[] Skus, decimal Total);
