// Abi: methods whose arguments and return values fill every register the
// JIT passes them in (integer and floating-point, more than fit, so some
// go on the stack), with every kind of return: a struct too big for
// registers (returned through a buffer: x8 on arm64, a hidden pointer on
// x86-64), a 16-byte struct (two integer registers), a homogeneous
// aggregate of four doubles (d0-d3 on arm64), a vector (q0 / xmm0), float,
// double.  The tracing hooks run at every entry and return of these
// methods: anything they changed in those registers changes the printed
// results.  A test compares them with an untraced run's.
using System.Globalization;
using System.Runtime.CompilerServices;
using System.Runtime.Intrinsics;

namespace TraceApp;

struct Big { public long A, B, C; public double D, E; public float F; public int G; }
struct Pair { public long A, B; }
struct Quad { public double X, Y, Z, W; }

static class Abi
{
    [MethodImpl(MethodImplOptions.NoInlining)]
    static Big Mix(int a, float b, long c, double d, int e, float f, long g, double h, int i, float j,
                   long k, double l, int m, float n, long o, double p, int q, float r, long s, double t)
    {
        Big x;
        x.A = a * 3L + c * 5 + e * 7 + g * 11 + i * 13 + k * 17 + m * 19 + o * 23 + q * 29 + s * 31;
        x.B = a ^ c ^ (e << 3) ^ (g << 5) ^ (i << 7) ^ (k << 9) ^ (m << 11) ^ (o << 13) ^ (q << 15) ^ (s << 17);
        x.C = s - a + q - c;
        x.D = b * 1.5 + d * 2.25 + f * 3.125 + h * 4.0625 + j * 5.5 + l * 6.75 + n * 7.875 + p * 8.5 + r * 9.25 + t * 10.125;
        x.E = d / (1 + Math.Abs(t)) - h * l + p / (2 + Math.Abs(b));
        x.F = b * f - j * n + r;
        x.G = a + e + i + m + q;
        return x;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    static Pair Split(long a, long b, double c, float d) => new Pair { A = a * 7 + (long)c, B = b - (long)(d * 3) };

    [MethodImpl(MethodImplOptions.NoInlining)]
    static Quad Spread(double a, double b, double c, double d, double e, double f, double g, double h, double i)
        => new Quad { X = a + b * i, Y = c - d / i, Z = e * f + i, W = g - h * i };

    [MethodImpl(MethodImplOptions.NoInlining)]
    static Vector128<float> Blend(Vector128<float> a, Vector128<float> b, float k, Vector128<float> c)
        => a * k + b - c * 0.5f;

    [MethodImpl(MethodImplOptions.NoInlining)]
    static float Fsum(float a, float b, float c, float d, float e, float f, float g, float h, float i, float j)
        => a + b * 2 + c * 3 + d * 4 + e * 5 + f * 6 + g * 7 + h * 8 + i * 9 + j * 10;

    [MethodImpl(MethodImplOptions.NoInlining)]
    static double Dsum(int n, double a, long m, double b, double c, double d, double e, double f, double g, double h, double i)
        => n * a + m * b + c - d + e * f - g / (1 + Math.Abs(h)) + i;

    static string R(double v) => v.ToString("R", CultureInfo.InvariantCulture);

    // Rounds of calls with arguments that change each round; prints a few
    // results in full and a checksum of all of them.
    public static void Run(int rounds)
    {
        double check = 0;
        long icheck = 0;
        Big big = default;
        Pair pair = default;
        Quad quad = default;
        Vector128<float> vec = default;
        float fs = 0;
        double ds = 0;
        for (int r = 0; r < rounds; r++)
        {
            float fr = r * 0.25f + 0.5f;
            double dr = r * 0.125 + 0.75;
            big = Mix(r + 1, fr, r * 3L - 7, dr, r + 2, fr * 2, r * 5L, dr * 3, r + 3, fr + 1, r * 7L + 1, dr - 2,
                      r + 4, fr - 3, r * 11L, dr * 0.5, r + 5, fr * 0.5f, r * 13L - 2, dr + 9);
            pair = Split(r * 17L, r - 40L, dr * 4, fr);
            quad = Spread(dr, dr + 1, dr + 2, dr + 3, dr + 4, dr + 5, dr + 6, dr + 7, dr + 8);
            vec = Blend(Vector128.Create(fr, fr + 1, fr + 2, fr + 3), Vector128.Create(1f, 2f, 3f, 4f), fr * 0.5f,
                        Vector128.Create(dr > 5 ? 1f : 2f, 3f, 5f, 7f));
            fs = Fsum(fr, fr + 1, fr + 2, fr + 3, fr + 4, fr + 5, fr + 6, fr + 7, fr + 8, fr + 9);
            ds = Dsum(r, dr, r * 3L, dr + 1, dr + 2, dr + 3, dr + 4, dr + 5, dr + 6, dr + 7, dr + 8);
            icheck += big.A ^ big.B ^ big.C ^ big.G ^ pair.A ^ pair.B;
            check += big.D + big.E + big.F + quad.X + quad.Y + quad.Z + quad.W +
                     vec.GetElement(0) + vec.GetElement(1) + vec.GetElement(2) + vec.GetElement(3) + fs + ds;
        }
        Console.WriteLine($"abi: big {big.A} {big.B} {big.C} {R(big.D)} {R(big.E)} {R(big.F)} {big.G}");
        Console.WriteLine($"abi: pair {pair.A} {pair.B}; quad {R(quad.X)} {R(quad.Y)} {R(quad.Z)} {R(quad.W)}");
        Console.WriteLine($"abi: vec {R(vec.GetElement(0))} {R(vec.GetElement(1))} {R(vec.GetElement(2))} {R(vec.GetElement(3))}; float {R(fs)}; double {R(ds)}");
        Console.WriteLine($"abi: {rounds} rounds, checksums {icheck} {R(check)}");
    }
}
