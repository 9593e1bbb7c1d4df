// IoHeavy: a program that spends its time in system calls the way real
// servers do, to show that the profiler's signals never make them fail:
// file writes and reads through FileStream, a TCP echo over loopback with
// many small messages, Thread.Sleep, and raw read(2) calls on a pipe through
// libc that count EINTR (SA_RESTART must restart them). Everything it prints
// is deterministic, so a run under the profiler must print exactly what a run
// without it prints; any I/O error is printed and makes it exit 1.
// Usage: IoHeavy [scale]
using System.Globalization;
using System.Net;
using System.Net.Sockets;
using System.Runtime.InteropServices;

namespace IoHeavy;

static unsafe class Program
{
    [DllImport("libc", EntryPoint = "pipe", SetLastError = true)]
    static extern int Pipe(int* fds);
    [DllImport("libc", EntryPoint = "read", SetLastError = true)]
    static extern nint Read(int fd, byte* buf, nint count);
    [DllImport("libc", EntryPoint = "write", SetLastError = true)]
    static extern nint Write(int fd, byte* buf, nint count);
    [DllImport("libc", EntryPoint = "close")]
    static extern int Close(int fd);

    const int EINTR = 4;

    static ulong Fnv(ulong h, ReadOnlySpan<byte> data)
    {
        foreach (byte b in data) h = (h ^ b) * 1099511628211UL;
        return h;
    }

    static string Files(int scale)
    {
        string path = Path.Combine(Path.GetTempPath(), $"ioheavy-{Environment.ProcessId}.bin");
        var rng = new Random(1);
        var chunk = new byte[65536];
        ulong wrote = 14695981039346656037UL, read = wrote;
        long bytes = 0;
        try
        {
            for (int round = 0; round < scale; round++)
            {
                using (var f = new FileStream(path, FileMode.Create, FileAccess.Write, FileShare.None, 1))
                {
                    for (int i = 0; i < 256; i++)
                    {
                        int n = 512 + rng.Next(chunk.Length - 512);
                        rng.NextBytes(chunk.AsSpan(0, n));
                        f.Write(chunk, 0, n);
                        wrote = Fnv(wrote, chunk.AsSpan(0, n));
                        bytes += n;
                    }
                }
                using (var f = new FileStream(path, FileMode.Open, FileAccess.Read, FileShare.None, 1))
                {
                    var buf = new byte[4096 + round];
                    int got;
                    while ((got = f.Read(buf, 0, buf.Length)) > 0) read = Fnv(read, buf.AsSpan(0, got));
                }
            }
        }
        finally { File.Delete(path); }
        return string.Format(CultureInfo.InvariantCulture, "files: {0} bytes, written {1:x16}, read back {2}", bytes, wrote, wrote == read ? "identical" : "DIFFERENT");
    }

    static string Sockets(int scale)
    {
        var listener = new TcpListener(IPAddress.Loopback, 0);
        listener.Start();
        int port = ((IPEndPoint)listener.LocalEndpoint).Port;
        var server = new Thread(() =>
        {
            using var s = listener.AcceptSocket();
            var buf = new byte[8192];
            int n;
            while ((n = s.Receive(buf)) > 0) s.Send(buf, 0, n, SocketFlags.None);
        }) { Name = "echo-server" };
        server.Start();
        using var client = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        client.NoDelay = true;
        client.Connect(IPAddress.Loopback, port);
        var rng = new Random(2);
        ulong sent = 14695981039346656037UL, echoed = sent;
        long total = 0;
        var msg = new byte[4096];
        var back = new byte[4096];
        for (int i = 0; i < 4000 * scale; i++)
        {
            int n = 1 + rng.Next(msg.Length);
            rng.NextBytes(msg.AsSpan(0, n));
            client.Send(msg, 0, n, SocketFlags.None);
            sent = Fnv(sent, msg.AsSpan(0, n));
            int got = 0;
            while (got < n) got += client.Receive(back, got, n - got, SocketFlags.None);
            echoed = Fnv(echoed, back.AsSpan(0, n));
            total += n;
        }
        client.Shutdown(SocketShutdown.Send);
        server.Join();
        listener.Stop();
        return string.Format(CultureInfo.InvariantCulture, "sockets: {0} bytes echoed, {1:x16}, {2}", total, sent, sent == echoed ? "identical" : "DIFFERENT");
    }

    // A writer that trickles bytes into a pipe with pauses, and a reader
    // blocked in raw read(2) between them: the profiler's signals land while
    // it waits, and with SA_RESTART the kernel restarts the call.
    static string Pipes(int scale)
    {
        int* fds = stackalloc int[2];
        if (Pipe(fds) != 0) throw new IOException("pipe failed");
        int rfd = fds[0], wfd = fds[1];
        int messages = 200 * scale;
        var writer = new Thread(() =>
        {
            byte b = 7;
            for (int i = 0; i < messages; i++)
            {
                if (i % 10 == 0) Thread.Sleep(2);
                Write(wfd, &b, 1);
            }
            Close(wfd);
        }) { Name = "pipe-writer" };
        writer.Start();
        int received = 0, eintr = 0, other = 0;
        byte buf;
        while (true)
        {
            nint n = Read(rfd, &buf, 1);
            if (n == 1) { received++; continue; }
            if (n == 0) break;
            if (Marshal.GetLastPInvokeError() == EINTR) eintr++; else { other++; break; }
        }
        writer.Join();
        Close(rfd);
        return string.Format(CultureInfo.InvariantCulture, "pipes: {0} bytes read, {1} EINTR, {2} other errors", received, eintr, other);
    }

    static string Sleeps(int scale)
    {
        int n = 0;
        for (int i = 0; i < 100 * scale; i++) { Thread.Sleep(1); n++; }
        return string.Format(CultureInfo.InvariantCulture, "sleeps: {0}", n);
    }

    static int Main(string[] args)
    {
        int scale = args.Length > 0 ? int.Parse(args[0], CultureInfo.InvariantCulture) : 2;
        try
        {
            var results = new string[4];
            var jobs = new Thread[]
            {
                new Thread(() => results[0] = Files(scale)) { Name = "files" },
                new Thread(() => results[1] = Sockets(scale)) { Name = "sockets" },
                new Thread(() => results[2] = Pipes(scale)) { Name = "pipes" },
                new Thread(() => results[3] = Sleeps(scale)) { Name = "sleeps" },
            };
            foreach (var j in jobs) j.Start();
            foreach (var j in jobs) j.Join();
            foreach (var r in results) Console.WriteLine(r);
            return 0;
        }
        catch (Exception e)
        {
            Console.WriteLine($"error: {e.GetType().Name}: {e.Message}");
            return 1;
        }
    }
}
