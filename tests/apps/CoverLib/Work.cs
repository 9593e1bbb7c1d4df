using System.Text;

namespace CoverLib;

/// CPU-bound work of the coverage benchmark (bench/cover.sh): the kind of
/// code unit tests run -- parsing, sorting, dictionaries, recursion, string
/// building -- in loops that execute many probes per call.
public static class Work
{
    public static int Tokens(string text)
    {
        int count = 0;
        int i = 0;
        while (i < text.Length)
        {
            char c = text[i];
            if (char.IsWhiteSpace(c))
            {
                i++;
                continue;
            }
            if (char.IsDigit(c))
            {
                while (i < text.Length && char.IsDigit(text[i]))
                    i++;
            }
            else if (char.IsLetter(c))
            {
                while (i < text.Length && char.IsLetterOrDigit(text[i]))
                    i++;
            }
            else
            {
                i++;
            }
            count++;
        }
        return count;
    }

    public static void InsertionSort(int[] a)
    {
        for (int i = 1; i < a.Length; i++)
        {
            int v = a[i];
            int j = i - 1;
            while (j >= 0 && a[j] > v)
            {
                a[j + 1] = a[j];
                j--;
            }
            a[j + 1] = v;
        }
    }

    public static int Fib(int n) => n < 2 ? n : Fib(n - 1) + Fib(n - 2);

    public static int WordCounts(string[] words)
    {
        var counts = new Dictionary<string, int>();
        foreach (string w in words)
        {
            if (counts.TryGetValue(w, out int n))
                counts[w] = n + 1;
            else
                counts[w] = 1;
        }
        return counts.Count;
    }

    public static string Build(int n)
    {
        var sb = new StringBuilder();
        for (int i = 0; i < n; i++)
        {
            if (i % 3 == 0)
                sb.Append("fizz");
            else if (i % 5 == 0)
                sb.Append("buzz");
            else
                sb.Append(i);
        }
        return sb.ToString();
    }

    public static long Collatz(long limit)
    {
        long longest = 0;
        for (long start = 1; start < limit; start++)
        {
            long n = start, steps = 0;
            while (n != 1)
            {
                n = (n % 2 == 0) ? n / 2 : 3 * n + 1;
                steps++;
            }
            if (steps > longest)
                longest = steps;
        }
        return longest;
    }
}
