/*
 * median: the median of a bench's repeated measurements (sorted in place),
 * the one statistic the C benches print; shared so that each reports it the
 * same way (the mean of the middle two for an even count).
 */
#ifndef CORSCOPE_BENCH_MEDIAN_H
#define CORSCOPE_BENCH_MEDIAN_H

#include <stdlib.h>

static int bench_by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static inline double bench_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, bench_by_value);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

#endif
