// WebStartup: an ASP.NET Core app's start-up, for the benchmark of -e jit
// (bench/events.sh): it starts Kestrel on a free port, serves two requests
// to itself (a text and a JSON endpoint, through routing), and exits.  Most
// of its time is the runtime's start-up, compiling and loading.
var builder = WebApplication.CreateBuilder(args);
builder.Logging.ClearProviders();
builder.WebHost.UseUrls("http://127.0.0.1:0");
var app = builder.Build();
app.MapGet("/", () => "hello");
app.MapGet("/json", () => new { Name = "corscope", Values = new[] { 1, 2, 3 } });
await app.StartAsync();
var url = app.Urls.First();
using var client = new HttpClient();
var text = await client.GetStringAsync(url + "/");
var json = await client.GetStringAsync(url + "/json");
Console.WriteLine($"served {text.Length + json.Length} bytes");
await app.StopAsync();
