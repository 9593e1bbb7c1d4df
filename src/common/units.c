/*
 * units: see units.h.  Parsing is strict: the whole string must be consumed,
 * values must fit, and the error says which of those failed.
 */
#include "common/units.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int units_parse_count(const char *text, uint64_t max, uint64_t *out, const char **why)
{
    if (!text || !*text) {
        *why = "empty";
        return -1;
    }
    uint64_t v = 0;
    for (const char *p = text; *p; p++) {
        if (*p < '0' || *p > '9') {
            *why = "not a whole number";
            return -1;
        }
        unsigned d = (unsigned)(*p - '0');
        if (v > (UINT64_MAX - d) / 10) {
            *why = "too large";
            return -1;
        }
        v = v * 10 + d;
    }
    if (v > max) {
        *why = "too large";
        return -1;
    }
    *out = v;
    return 0;
}

static const struct {
    const char *name;
    uint64_t bytes;
} size_units[] = {
    {"", 1},          {"B", 1},          {"K", 1024},       {"KB", 1024},
    {"KiB", 1024},    {"M", 1u << 20},   {"MB", 1u << 20},  {"MiB", 1u << 20},
    {"G", 1u << 30},  {"GB", 1u << 30},  {"GiB", 1u << 30},
};

int units_parse_size(const char *text, uint64_t max, uint64_t *out, const char **why)
{
    if (!text || !*text) {
        *why = "empty";
        return -1;
    }
    const char *p = text;
    uint64_t v = 0;
    while (*p >= '0' && *p <= '9') {
        unsigned d = (unsigned)(*p - '0');
        if (v > (UINT64_MAX - d) / 10) {
            *why = "too large";
            return -1;
        }
        v = v * 10 + d;
        p++;
    }
    if (p == text) {
        *why = "not a size (expected e.g. 512KiB)";
        return -1;
    }
    for (size_t i = 0; i < sizeof size_units / sizeof size_units[0]; i++) {
        if (strcmp(p, size_units[i].name) == 0) {
            if (v > UINT64_MAX / size_units[i].bytes || v * size_units[i].bytes > max) {
                *why = "too large";
                return -1;
            }
            *out = v * size_units[i].bytes;
            return 0;
        }
    }
    *why = "unknown unit (use B, KiB, MiB, GiB)";
    return -1;
}

static const struct {
    const char *name;
    uint64_t ns;
} duration_units[] = {
    {"ns", 1}, {"us", 1000}, {"ms", 1000000}, {"s", 1000000000ull}, {"m", 60000000000ull},
};

int units_parse_duration(const char *text, uint64_t default_unit_ns, uint64_t *out_ns,
                         const char **why)
{
    if (!text || !*text) {
        *why = "empty";
        return -1;
    }
    const char *p = text;
    while (*p >= '0' && *p <= '9')
        p++;
    if (*p == '.') {
        p++;
        while (*p >= '0' && *p <= '9')
            p++;
    }
    if (p == text || (p == text + 1 && text[0] == '.')) {
        *why = "not a duration (expected e.g. 10ms)";
        return -1;
    }
    char number[64];
    size_t len = (size_t)(p - text);
    if (len >= sizeof number) {
        *why = "too large";
        return -1;
    }
    memcpy(number, text, len);
    number[len] = '\0';

    uint64_t unit = 0;
    if (*p == '\0') {
        if (!default_unit_ns) {
            *why = "needs a unit (ns, us, ms, s)";
            return -1;
        }
        unit = default_unit_ns;
    } else {
        for (size_t i = 0; i < sizeof duration_units / sizeof duration_units[0]; i++)
            if (strcmp(p, duration_units[i].name) == 0)
                unit = duration_units[i].ns;
        if (!unit) {
            *why = "unknown unit (use ns, us, ms, s)";
            return -1;
        }
    }
    errno = 0;
    double v = strtod(number, NULL);
    if (errno || !isfinite(v) || v * (double)unit >= 1.8e19) {
        *why = "too large";
        return -1;
    }
    /* rounded without llround: its long long ends at 9.2e18, and longer
     * durations that fit came out as 2^63 ns (found by review) */
    *out_ns = (uint64_t)(v * (double)unit + 0.5);
    return 0;
}

int units_parse_percent(const char *text, double *out, const char **why)
{
    if (!text || !*text) {
        *why = "empty";
        return -1;
    }
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (end == text || errno || !isfinite(v)) {
        *why = "not a number (expected e.g. 0.5%)";
        return -1;
    }
    if (*end == '%')
        end++;
    if (*end) {
        *why = "not a number (expected e.g. 0.5%)";
        return -1;
    }
    if (v < 0 || v > 100) {
        *why = "not between 0% and 100%";
        return -1;
    }
    *out = v;
    return 0;
}

void units_format_duration(uint64_t ns, char *out, size_t size)
{
    if (ns >= 1000000000ull && ns % 1000000000ull == 0)
        snprintf(out, size, "%llus", (unsigned long long)(ns / 1000000000ull));
    else if (ns >= 1000000000ull)
        snprintf(out, size, "%.3gs", (double)ns / 1e9);
    else if (ns >= 1000000 && ns % 1000000 == 0)
        snprintf(out, size, "%llums", (unsigned long long)(ns / 1000000));
    else if (ns >= 1000000)
        snprintf(out, size, "%.3gms", (double)ns / 1e6);
    else if (ns >= 1000 && ns % 1000 == 0)
        snprintf(out, size, "%lluus", (unsigned long long)(ns / 1000));
    else
        snprintf(out, size, "%lluns", (unsigned long long)ns);
}
