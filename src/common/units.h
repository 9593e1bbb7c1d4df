/*
 * units: parsing and printing of the quantities users type and read:
 * durations ("10ms", "1s", "250us", "5000000ns", "2m"), counts ("4096") and
 * percentages ("0.5%").  One parser serves the CLI's options and the agent's
 * environment, so both accept exactly the same spellings and reject the same
 * mistakes with the same words.
 */
#ifndef CORSCOPE_UNITS_H
#define CORSCOPE_UNITS_H

#include <stddef.h>
#include <stdint.h>

#include "common/visibility.h"

/* Parses a duration with a unit (ns, us, ms, s, m) into nanoseconds.  A bare
 * number is rejected unless `default_unit_ns` is non-zero.  Returns 0, or -1
 * with a short reason in *why. */
HIDDEN int units_parse_duration(const char *text, uint64_t default_unit_ns, uint64_t *out_ns,
                                const char **why);
/* Parses a decimal unsigned integer without sign, spaces or suffix. */
HIDDEN int units_parse_count(const char *text, uint64_t max, uint64_t *out, const char **why);
/* Parses a size in bytes: a whole number with an optional unit, B, KiB,
 * MiB or GiB (K, KB, M, MB, G and GB are read as the same powers of 1024),
 * e.g. "512KiB", "4MB", "100000". */
HIDDEN int units_parse_size(const char *text, uint64_t max, uint64_t *out, const char **why);
/* Parses "12.5%" or "12.5" into a fraction 0..100 (percent points). */
HIDDEN int units_parse_percent(const char *text, double *out, const char **why);
/* Formats ns as "10ms", "1.5s", "250us" (shortest exact-ish form) into out. */
HIDDEN void units_format_duration(uint64_t ns, char *out, size_t size);

#endif
