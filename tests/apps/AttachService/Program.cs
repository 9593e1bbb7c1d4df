// AttachService: a small ASP.NET Core service for the attach tests, and the
// load that drives it.
//
//   AttachService serve            listens on a free loopback port, prints
//                                  "listening on URL", and answers
//                                  GET /work?n=N with Work.Checksum(N); it
//                                  warms that method up first, so it is
//                                  compiled (and tiered up) long before any
//                                  attach.  Ends on SIGTERM/SIGINT, printing
//                                  "stopped".  It prints nothing else.
//   AttachService load URL SECONDS RATE
//                                  sends RATE requests a second (open loop,
//                                  so a slow answer does not slow the load),
//                                  checks every answer against its own
//                                  Work.Checksum, and prints one line per
//                                  100 ms window (latency, and the service's
//                                  own CPU time per request: the measure the
//                                  machine's other work does not move):
//                                    w UNIX_MS COUNT ERRORS P50_US P90_US MAX_US CPU_P50_NS
//                                  then "total COUNT ERRORS SENT".  SIGTERM
//                                  ends it early: no more requests go out,
//                                  and those sent are awaited and counted
//                                  (a test ends the load when its work is
//                                  done, however long a busy machine took).
using System.Diagnostics;
using System.Globalization;
using System.Runtime.CompilerServices;
using Microsoft.AspNetCore.Hosting.Server;
using Microsoft.AspNetCore.Hosting.Server.Features;

namespace AttachService;

static class Work
{
    // About a millisecond of integer work for the n the load uses.
    [MethodImpl(MethodImplOptions.NoInlining)]
    public static ulong Checksum(int n)
    {
        ulong h = 14695981039346656037ul;
        for (int i = 0; i < n; i++)
        {
            h ^= (ulong)i;
            h *= 1099511628211ul;
            h ^= h >> 29;
        }
        return h;
    }
}

static class Program
{
    static readonly int[] Sizes = { 200_000, 300_000, 400_000 };

    static int Main(string[] args)
    {
        if (args.Length >= 1 && args[0] == "serve")
            return Serve();
        if (args.Length >= 4 && args[0] == "load")
            return Load(args[1], double.Parse(args[2], CultureInfo.InvariantCulture),
                        int.Parse(args[3], CultureInfo.InvariantCulture));
        Console.Error.WriteLine("usage: AttachService serve | load URL SECONDS RATE");
        return 2;
    }

    static int Serve()
    {
        // compiled, and tiered up, before anyone attaches
        for (int i = 0; i < 200; i++)
            Work.Checksum(1000);
        var builder = WebApplication.CreateSlimBuilder();
        builder.Logging.ClearProviders();
        builder.WebHost.UseUrls("http://127.0.0.1:0");
        var app = builder.Build();
        app.MapGet("/work", (int n) =>
        {
            long cpu = Native.ThreadCpuNs();
            ulong h = Work.Checksum(n);
            cpu = Native.ThreadCpuNs() - cpu;
            return string.Create(CultureInfo.InvariantCulture, $"{h} {cpu}");
        });
        app.Start();
        var addresses = app.Services.GetRequiredService<IServer>().Features
            .Get<IServerAddressesFeature>()!.Addresses;
        Console.WriteLine($"listening on {addresses.First()}");
        app.WaitForShutdown();
        Console.WriteLine("stopped");
        return 0;
    }

    static int Load(string url, double seconds, int rate)
    {
        var expected = Sizes.ToDictionary(n => n, n => Work.Checksum(n).ToString(CultureInfo.InvariantCulture));
        using var client = new HttpClient(new SocketsHttpHandler { MaxConnectionsPerServer = 64 })
        {
            Timeout = TimeSpan.FromSeconds(30),
        };
        var results = new List<(long start, long micros, bool ok, long cpu)>();
        var pending = new List<Task>();
        var clock = Stopwatch.StartNew();
        long startUnixMs = DateTimeOffset.UtcNow.ToUnixTimeMilliseconds();
        long total = (long)(seconds * rate);
        long sentCount = 0;
        bool stop = false;
        using var term = System.Runtime.InteropServices.PosixSignalRegistration.Create(
            System.Runtime.InteropServices.PosixSignal.SIGTERM, ctx => { ctx.Cancel = true; Volatile.Write(ref stop, true); });
        for (long k = 0; k < total && !Volatile.Read(ref stop); k++, sentCount++)
        {
            // open loop: request k leaves at k/rate seconds, whatever came back
            long due = k * Stopwatch.Frequency / rate;
            while (clock.ElapsedTicks < due)
            {
                long left = (due - clock.ElapsedTicks) * 1000 / Stopwatch.Frequency;
                if (left > 1) Thread.Sleep((int)Math.Min(left - 1, 50));
                else Thread.SpinWait(50);
            }
            int n = Sizes[k % Sizes.Length];
            long sent = clock.ElapsedTicks;
            pending.Add(Task.Run(async () =>
            {
                bool ok;
                long cpu = 0;
                try
                {
                    string[] body = (await client.GetStringAsync($"{url}/work?n={n}")).Split(' ');
                    ok = body.Length == 2 && body[0] == expected[n] &&
                         long.TryParse(body[1], CultureInfo.InvariantCulture, out cpu);
                }
                catch (Exception)
                {
                    ok = false;
                }
                long micros = (clock.ElapsedTicks - sent) * 1_000_000 / Stopwatch.Frequency;
                lock (results) results.Add((sent, micros, ok, cpu));
            }));
        }
        Task.WaitAll(pending.ToArray());
        long window = Stopwatch.Frequency / 10;
        long errors = 0;
        foreach (var g in results.GroupBy(r => r.start / window).OrderBy(g => g.Key))
        {
            var lat = g.Select(r => r.micros).OrderBy(x => x).ToArray();
            var cpu = g.Where(r => r.ok).Select(r => r.cpu).OrderBy(x => x).ToArray();
            int bad = g.Count(r => !r.ok);
            errors += bad;
            long unixMs = startUnixMs + g.Key * 100;
            Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
                $"w {unixMs} {lat.Length} {bad} {lat[lat.Length / 2]} {lat[lat.Length * 9 / 10]} {lat[^1]} {(cpu.Length > 0 ? cpu[cpu.Length / 2] : 0)}"));
        }
        Console.WriteLine($"total {results.Count} {errors} {sentCount}");
        return errors == 0 ? 0 : 1;
    }
}
